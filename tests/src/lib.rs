//! Shared helpers for cross-process tests.
