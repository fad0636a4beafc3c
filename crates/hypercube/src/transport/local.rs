//! In-process transport: one thread per node (work in progress).
