//! Helpers for cross-process tests: build the real launcher (`hcrun`) once ([`cargo`]), run
//! a node program through it with a deadline ([`job`]), and make sure nothing is left
//! running ([`process`]); the tests' random numbers ([`rng`]); and the correctness suites
//! the node programs and the in-process tests share ([`suites`]).

pub mod cargo;
pub mod cluster;
pub mod emulation;
pub mod job;
pub mod process;
pub mod rng;
pub mod suites;

pub use cargo::{cargo_bin, example, hcrun};
pub use job::{rank_pid_line, run_command, run_hcrun, run_job, stderr_text, JobOutput, LiveJob};
pub use process::{alive, children_of, Guard, KillList, TempDir};
pub use rng::SplitMix64;

/// The checks every rank of `coll_suite` prints (`OK <op> <scope>`): those of
/// [`suites::collectives`].
pub fn collective_checks() -> Vec<String> {
    suites::collectives::check_names()
}

/// The checks every rank of `ipsc_suite` prints (`OK <check>`): those of [`suites::ipsc`].
pub const IPSC_CHECKS: &[&str] = &suites::ipsc::CHECK_NAMES;
