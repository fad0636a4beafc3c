//! The correctness suites of the node programs, one per API, written once for both
//! transports: each is a library function that every node of a cube calls, run over TCP by a
//! node program of `src/bin` (through the launcher, Hydra or Slurm) and on threads by an
//! in-process test (`hypercube::local::run_local`).

pub mod collectives;
pub mod in_place;
pub mod ipsc;
pub mod mismatch;
pub mod typed;
