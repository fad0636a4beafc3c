//! Routing simulator (in progress).
