//! The timing loop of the append benches' `iter_custom` routines.

use std::time::{Duration, Instant};

/// Times `work` over `iters` inputs made (untimed) by `make`.
pub fn timed<T>(iters: u64, mut make: impl FnMut() -> T, mut work: impl FnMut(T)) -> Duration {
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        let input = make();
        let started = Instant::now();
        work(input);
        spent += started.elapsed();
    }
    spent
}
