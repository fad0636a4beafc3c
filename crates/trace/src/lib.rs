//! Message traces of hypercube jobs (`docs/tracing.md`): merge the per-rank files a traced
//! job writes into one Chrome / Perfetto trace ([`merge`]), read it back ([`model`]),
//! summarise it per rank ([`stats`]), draw its space-time diagram ([`timeline`]), one
//! call step by step on the cube ([`steps`]) and the load of every link over time ([`links`]).
//! The `hctrace` binary is the command line over these.

#![deny(missing_docs)]

pub mod links;
pub mod merge;
pub mod model;
pub mod stats;
pub mod steps;
pub mod timeline;

use std::path::{Path, PathBuf};

/// What went wrong with which file.
#[derive(Debug, Clone)]
pub struct Error {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub what: String,
}

impl Error {
    /// An error about `path`.
    pub fn new(path: &Path, what: impl Into<String>) -> Error {
        Error {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

impl std::error::Error for Error {}
