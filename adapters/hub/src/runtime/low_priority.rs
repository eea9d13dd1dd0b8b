//! Work that takes only the CPU the hub's writer and fold leave over: a checkpoint's encoding
//! runs on its own thread at the lowest scheduling priority. On a large fleet one encoding takes
//! seconds of a core; at normal priority, begun during a burst, it took the core the fold needed
//! (in a million-cluster `flotilla simulate` run the wave folded at 60–78 k events/s, not
//! 90–100 k; `docs/simulate.md`).

use tokio::sync::oneshot;

/// The nice value background work runs at: the lowest there is.
pub(super) const NICE: i32 = 19;

/// Runs `work` on a new thread named `name` at nice [`NICE`] and waits for its result; `None`
/// when the thread could not be started or did not finish.
pub(super) async fn run<T, W>(name: &str, work: W) -> Option<T>
where
    T: Send + 'static,
    W: FnOnce() -> T + Send + 'static,
{
    let (sender, receiver) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            lower_this_thread();
            // The waiting task may be gone (shutdown): the result is then nobody's.
            let _ = sender.send(work());
        });
    if let Err(error) = spawned {
        tracing::warn!(name, %error, "could not start a background thread");
        return None;
    }
    receiver.await.ok()
}

/// Lowers the calling thread's priority. On Linux a nice value belongs to a thread (the
/// process id 0 means the calling thread), so the writer, the fold and the API keep theirs;
/// elsewhere it would lower the whole process, so the thread keeps normal priority there.
fn lower_this_thread() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::process::setpriority_process(None, NICE) {
        tracing::debug!(%error, "background work runs at normal priority");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use rustix::process::getpriority_process;

    use super::*;

    #[tokio::test]
    async fn background_work_runs_at_the_lowest_priority_and_the_caller_keeps_its_own() {
        let before = getpriority_process(None).expect("reads this thread's nice value");
        let inside = run("priority-test", || getpriority_process(None))
            .await
            .expect("the thread ran")
            .expect("reads the background thread's nice value");
        assert_eq!(inside, NICE);
        assert_eq!(
            getpriority_process(None).expect("reads it again"),
            before,
            "only the background thread was lowered"
        );
    }
}
