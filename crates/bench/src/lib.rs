//! Benchmarks (in progress).
