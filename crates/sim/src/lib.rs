//! Cycle-level simulator of many-to-many personalized communication on the
//! binary hypercube, reproducing S. R. Bhatt, *Efficient Hypercube
//! Communications* (NJIT M.S. thesis, 1992; the seed's text of it,
//! `bhatt-1992-efficient-hypercube-communications.txt`).
//!
//! * [`model`] — the thesis's cycle model (§1.3) and the engine with invariant checks;
//! * [`workload`] — the many-to-many generator of chapter 5 / the appendix;
//! * [`bound`] — a lower bound on the number of cycles of any schedule;
//! * [`algorithms`] — brute force (§3.4), RBF (§3.3), ALG I (§4.2), ALG II (§4.3),
//!   the dimension-ordered exchange, the runtime's planned routes and ours;
//! * [`tables`] — the paper's Tables 5.1–5.8 as data;
//! * [`experiment`] — running table rows over many seeds.
//!
//! The `plot` command draws its charts with `hypercube-plot`.
//!
//! See `docs/simulator.md` for the full discussion.
#![deny(missing_docs)]

pub mod algorithms;
pub mod bound;
pub mod experiment;
pub mod model;
pub mod tables;
pub mod workload;

pub use hypercube_topology::NodeId;
