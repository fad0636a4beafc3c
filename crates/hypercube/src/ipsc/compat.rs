//! The seed names (work in progress).
