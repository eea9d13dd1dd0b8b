//! The `flotilla` binary.

/// The hub's fold allocates and frees small keys and decisions at every event; glibc's malloc
/// took a third of the writer's time during a million-cluster wave (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    flotilla_adapters::entry::main()
}
