//! Which algorithm runs: a per-call override ([`crate::collectives::Subcube::with`]), else a
//! per-job setting `HYPERCUBE_ALG_<OP>=<name>` (e.g. `HYPERCUBE_ALG_ALLREDUCE=ring`), else
//! the algorithm with the least [`selection_time`] (Grama's expressions, [`model_time`],
//! bounded below by the bytes moved over the cores the ranks share, [`model_work`]) under this
//! [`machine()`]'s parameters: `t_s` = `HYPERCUBE_MODEL_TS_US` (default 150 µs) and `t_w` =
//! `HYPERCUBE_MODEL_TW_NS` per byte (default 1.2 ns), fitted to the `coll_bench` example at
//! p = 8 on the 2-core development VM (see `docs/collectives.md`), `t_h` =
//! `HYPERCUBE_MODEL_TH_US` per link beyond the first (default 0, not measured), the routing
//! regime in force (`HYPERCUBE_FORWARDING`, [`crate::transport::Forwarding`]: the e-cube
//! algorithms cost more under store-and-forward), and the copy costs and core count of
//! [`Machine`]; ties as [`automatic`] says. Every input to the choice is the
//! same on every member, so all members choose alike.
//!
//! The rooms: `names.rs` (what can be asked for: [`Operation`], [`Algorithm`]), `cost.rs`
//! (Grama's parameters: [`CostModel`]), `model.rs` (what each algorithm costs, one-port),
//! `all_port.rs` (what the all-port ones cost where links are wires), `traffic.rs` (the
//! bytes each moves), `pipeline.rs` (the pieces of the pipelined trees), `machine.rs`
//! (this [`Machine`]) and `policy.rs` (the time the choice compares, [`selection_time`],
//! and what runs: [`choose`]).

mod all_port;
mod cost;
mod machine;
mod model;
mod names;
mod pipeline;
mod policy;
mod traffic;

pub use all_port::all_port_time;
pub use cost::CostModel;
pub(crate) use machine::{local_cores, pieces};
pub use machine::{machine, Machine};
pub use model::{chain_segments, mesh_shape, model_time};
pub use names::{Algorithm, Operation};
pub(crate) use pipeline::pieces_for;
pub use policy::{automatic, choose, selection_time};
pub(crate) use policy::{choose_on, not_implemented, requested_or_set};
pub use traffic::{model_traffic, model_work, Traffic};
