//! hypercube runtime (in progress).
