//! The two routing regimes of Grama §2.5.1 ([`Forwarding`]): how an intermediate node of
//! an e-cube route passes on a message that is not its own, and what a message over `l`
//! links costs as a result.
//!
//! - **Store-and-forward** (eq. 2.2): every intermediate node receives the whole frame
//!   before it sends it on, so a message of `m` words over `l` links costs
//!   `t_s + (t_w m + t_h) l`.
//! - **Cut-through** (eq. 2.3): an intermediate node starts passing a frame's bytes on as
//!   they arrive; only the header waits at each hop, so the same message costs
//!   `t_s + l t_h + t_w m`.
//!
//! (The cost model, `collectives::select::CostModel`, counts the first link's `t_h` in
//! `t_s`, so that a message to a neighbour costs chapter 4's `t_s + t_w m` in both regimes.)
//!
//! The TCP transport forwards in the regime in force, and the cost model and the automatic
//! choice of algorithms (`collectives::select`) use the same one, read once per process
//! from `HYPERCUBE_FORWARDING` (`cut-through`, the default, or `store-and-forward`).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// How intermediate nodes pass routed messages on (Grama §2.5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Forwarding {
    /// Pass a frame's bytes on as they arrive (eq. 2.3): `t_s + l t_h + t_w m`.
    #[default]
    CutThrough,
    /// Receive each frame whole, then send it on (eq. 2.2): `t_s + (t_w m + t_h) l`.
    StoreAndForward,
}

impl Forwarding {
    /// The environment variable that sets the regime of a job.
    pub const ENV: &'static str = "HYPERCUBE_FORWARDING";

    /// The regime `HYPERCUBE_FORWARDING` asks for (the default when unset or empty), or
    /// an error naming the value and the accepted ones.
    pub fn from_env() -> Result<Forwarding> {
        match std::env::var(Self::ENV) {
            Ok(v) if !v.trim().is_empty() => v.parse(),
            _ => Ok(Forwarding::default()),
        }
    }

    /// The regime of this process, read once from the environment; an unreadable value
    /// falls back to the default here (the TCP transport reports it as an error when the
    /// job starts, through [`Forwarding::from_env`]).
    pub fn current() -> Forwarding {
        static CURRENT: std::sync::OnceLock<Forwarding> = std::sync::OnceLock::new();
        *CURRENT.get_or_init(|| Forwarding::from_env().unwrap_or_default())
    }

    /// The name `HYPERCUBE_FORWARDING` takes for this regime.
    pub fn name(self) -> &'static str {
        match self {
            Forwarding::CutThrough => "cut-through",
            Forwarding::StoreAndForward => "store-and-forward",
        }
    }
}

impl fmt::Display for Forwarding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Forwarding {
    type Err = Error;

    /// `cut-through` (also `ct`, `cut_through`) or `store-and-forward` (also `sf`,
    /// `store_and_forward`), in any case.
    fn from_str(s: &str) -> Result<Forwarding> {
        let norm = s.trim().to_ascii_lowercase().replace('_', "-");
        match norm.as_str() {
            "cut-through" | "ct" => Ok(Forwarding::CutThrough),
            "store-and-forward" | "sf" => Ok(Forwarding::StoreAndForward),
            _ => Err(Error::Config(format!(
                "{}={s:?} is not a forwarding regime: use cut-through or store-and-forward",
                Forwarding::ENV
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Forwarding;

    #[test]
    fn names_round_trip_and_bad_values_say_what_is_accepted() {
        for f in [Forwarding::CutThrough, Forwarding::StoreAndForward] {
            assert_eq!(f.name().parse::<Forwarding>().unwrap(), f);
        }
        assert_eq!(
            "SF".parse::<Forwarding>().unwrap(),
            Forwarding::StoreAndForward
        );
        assert_eq!(
            " cut_through ".parse::<Forwarding>().unwrap(),
            Forwarding::CutThrough
        );
        let e = "wormhole".parse::<Forwarding>().unwrap_err().to_string();
        assert!(
            e.contains("HYPERCUBE_FORWARDING") && e.contains("store-and-forward"),
            "{e}"
        );
    }
}
