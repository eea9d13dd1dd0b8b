//! The `flotilla` binary.

/// The hub's fold allocates and frees small keys and decisions at every event; glibc's malloc
/// took a third of the writer's time during a million-cluster wave (docs/benchmarks.md).
#[cfg(not(feature = "heap-count"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A measurement build counts every allocation (two atomic additions each, shared by all
/// threads), so `flotilla simulate` can report the heap in use beside the RSS.
#[cfg(feature = "heap-count")]
#[global_allocator]
static ALLOCATOR: stats_alloc::StatsAlloc<mimalloc::MiMalloc> =
    stats_alloc::StatsAlloc::new(mimalloc::MiMalloc);

fn main() -> std::process::ExitCode {
    #[cfg(feature = "heap-count")]
    flotilla_cli::loadgen::stats::count_heap_with(|| {
        let stats = ALLOCATOR.stats();
        u64::try_from(
            stats
                .bytes_allocated
                .saturating_sub(stats.bytes_deallocated),
        )
        .unwrap_or(u64::MAX)
    });
    flotilla_cli::entry::main()
}
