//! The progress of every selected binding of a placement. Over a large fleet the bindings
//! are cut into one run of consecutive bindings per thread, each with its own [`Renders`]:
//! a placement's status over a million clusters computes a million progresses, and nothing
//! one binding's progress reads is changed by another's.

use flotilla_core::State;
use flotilla_core::query::placement::Binding;
use flotilla_core::query::rollout::readiness::ApplyMode;

use super::{Progress, Tally, progress_sharing};
use crate::derived::Owner;
use crate::work::Renders;

/// Bindings from which the work is shared among threads: below it a thread costs more than
/// it saves.
const PARALLEL_FROM: usize = 20_000;

/// Threads at most: beyond a few the bindings' shared reads of the state dominate.
const THREADS_MAX: usize = 8;

/// Each binding with its progress, in the bindings' order.
pub(crate) fn progress_of_all(
    state: &State,
    owner: &Owner<'_>,
    bindings: Vec<Binding>,
) -> Vec<(Binding, Progress)> {
    let threads = threads_for(bindings.len());
    progress_on(state, owner, bindings, threads)
}

/// The placement's conditions summed up over its selected bindings, without keeping each
/// binding's progress: what a table of placements needs.
pub(crate) fn tally_of_all(state: &State, owner: &Owner<'_>, bindings: Vec<Binding>) -> Tally {
    tally_on(state, owner, &bindings, threads_for(bindings.len()))
}

/// [`tally_of_all`] on `threads` threads (the calling one alone below two).
pub(crate) fn tally_on(
    state: &State,
    owner: &Owner<'_>,
    bindings: &[Binding],
    threads: usize,
) -> Tally {
    let mode = ApplyMode::of(owner.placement);
    let tally_of = |run: &[Binding]| {
        let mut renders = Renders::default();
        let mut tally = Tally::new(mode);
        for binding in run {
            let progress = progress_sharing(state, owner, binding, &mut renders);
            tally.add(&progress.cluster, progress.overrides_applied());
        }
        tally
    };
    if threads < 2 || bindings.is_empty() {
        return tally_of(bindings);
    }
    let part = bindings.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = bindings
            .chunks(part)
            .map(|run| scope.spawn(move || tally_of(run)))
            .collect();
        let mut tally = Tally::new(mode);
        for handle in handles {
            tally.merge(joined(handle));
        }
        tally
    })
}

/// Threads to share `bindings` among.
fn threads_for(bindings: usize) -> usize {
    if bindings < PARALLEL_FROM {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(THREADS_MAX)
}

/// [`progress_of_all`] on `threads` threads (the calling one alone below two).
pub(crate) fn progress_on(
    state: &State,
    owner: &Owner<'_>,
    bindings: Vec<Binding>,
    threads: usize,
) -> Vec<(Binding, Progress)> {
    if threads < 2 || bindings.is_empty() {
        return with_progress(state, owner, bindings);
    }
    let part = bindings.len().div_ceil(threads);
    let mut bindings = bindings.into_iter();
    let runs: Vec<Vec<Binding>> = (0..threads)
        .map(|_| bindings.by_ref().take(part).collect())
        .collect();
    let done: Vec<Vec<(Binding, Progress)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .into_iter()
            .map(|run| scope.spawn(move || with_progress(state, owner, run)))
            .collect();
        handles.into_iter().map(joined).collect()
    });
    let mut all = Vec::with_capacity(done.iter().map(Vec::len).sum());
    for mut run in done {
        all.append(&mut run);
    }
    all
}

/// Each of a run of bindings with its progress, sharing one [`Renders`].
fn with_progress(state: &State, owner: &Owner<'_>, run: Vec<Binding>) -> Vec<(Binding, Progress)> {
    let mut renders = Renders::default();
    run.into_iter()
        .map(|binding| {
            let progress = progress_sharing(state, owner, &binding, &mut renders);
            (binding, progress)
        })
        .collect()
}

/// A thread's result; a panic in it is raised again here, as if the work ran in line.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}
