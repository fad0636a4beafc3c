//! The names a caller (or a `HYPERCUBE_ALG_<OP>` job setting) uses: the collective
//! [`Operation`]s, the [`Algorithm`]s, and which algorithms implement which operation.

use std::str::FromStr;

use crate::error::{Error, Result};

/// An algorithm for a collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Choose by message size and dimension (the default).
    Auto,
    /// The log p-step hypercube algorithm of the operation (binomial tree: Alg. 4.1–4.3,
    /// §4.4; recursive doubling/halving: Alg. 4.7–4.9, eq. 4.5).
    Hypercube,
    /// p-1 steps on the Gray-code ring (Alg. 4.4, 4.5; §4.5.1).
    Ring,
    /// Rows then columns of the embedded 2-D mesh (Alg. 4.6; §4.5.2).
    Mesh,
    /// Long broadcast: scatter then all-to-all broadcast (§4.7.1, eq. 4.13).
    ScatterAllgather,
    /// Long reduction: all-to-all reduction then gather (§4.7.2, Problem 4.17).
    ReduceScatterGather,
    /// Long all-reduce: all-to-all reduction then all-to-all broadcast (§4.7.3, eq. 4.14).
    ReduceScatterAllgather,
    /// All-to-all personalized in log p store-and-forward exchanges (§4.5.3, eq. 4.9).
    StoreForward,
    /// All-to-all personalized by pairwise XOR exchange (Alg. 4.10, eq. 4.10).
    Pairwise,
    /// Every message sent straight along its e-cube route, all at once: circular shift
    /// (§4.6.2, eq. 4.12), scatter and gather (§4.4's operation), all-to-all personalized
    /// with every block in flight (all-port).
    Ecube,
    /// Circular shift as power-of-two shifts on the Gray-code ring (§4.6.2, eq. 4.11).
    GrayRing,
    /// Prefix sums along the chain of ranks 0 → … → p−1, pipelined in segments of 64 KiB
    /// (larger where ranks share the cores: [`Machine::chain_segments`](super::Machine::chain_segments))
    /// — the linear array of §4.1.1 with the pipelining of §4.2: fewer bytes than Alg. 4.9
    /// (≈ 2m(p−1) instead of m p log p), more steps.
    Chain,
    /// All-to-all personalized with blocks of any lengths along planned routes: after an
    /// exchange of the block sizes every member computes the same plan
    /// (`hypercube_topology::Plan`, after Bhatt's ALG II), a minimal path per block (or
    /// part of a block) chosen to unload the busiest link, and the transport forwards each
    /// along its route (`alltoall/planned.rs`).
    Planned,
    /// For all-port hardware: the message in d parts, each over the log p-step algorithm
    /// with its dimension order rotated (Johnsson & Ho's rotated spanning binomial trees),
    /// so that every step drives all d links of every node: one-to-all broadcast and
    /// reduction, all-to-all broadcast and reduction, and all-reduce as the last two (a
    /// commutative ⊕ for the reductions).
    AllPort,
    /// Barrier up and down the binomial tree: an all-to-one reduction of nothing to node 0,
    /// then a one-to-all broadcast of nothing (Grama §4.1): `2 (p − 1)` messages in all
    /// against the exchange's `p log p`, `2 log p` steps against `log p` — fewer wake-ups
    /// where many ranks share a core.
    Tree,
}

impl Algorithm {
    /// Every algorithm, in declaration order: an algorithm's index here is the *variant*
    /// its messages' tags carry (`base/tags.rs`, [`Algorithm::variant`]).
    const VARIANTS: [Algorithm; 15] = [
        Algorithm::Auto,
        Algorithm::Hypercube,
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::ScatterAllgather,
        Algorithm::ReduceScatterGather,
        Algorithm::ReduceScatterAllgather,
        Algorithm::StoreForward,
        Algorithm::Pairwise,
        Algorithm::Ecube,
        Algorithm::GrayRing,
        Algorithm::Chain,
        Algorithm::Planned,
        Algorithm::AllPort,
        Algorithm::Tree,
    ];

    /// The variant (0..32) of the tags this algorithm's messages carry: members that run
    /// different algorithms for one call never take each other's messages as their own.
    pub(crate) fn variant(self) -> u32 {
        self as u32
    }

    /// The algorithm whose messages carry `variant` ([`Algorithm::variant`]).
    pub(crate) fn of_variant(variant: u32) -> Option<Algorithm> {
        Self::VARIANTS.get(variant as usize).copied()
    }
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Algorithm> {
        Ok(
            match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
                "auto" => Algorithm::Auto,
                "hypercube" => Algorithm::Hypercube,
                "ring" => Algorithm::Ring,
                "mesh" => Algorithm::Mesh,
                "scatter-allgather" => Algorithm::ScatterAllgather,
                "reduce-scatter-gather" => Algorithm::ReduceScatterGather,
                "reduce-scatter-allgather" => Algorithm::ReduceScatterAllgather,
                "store-forward" => Algorithm::StoreForward,
                "pairwise" => Algorithm::Pairwise,
                "ecube" => Algorithm::Ecube,
                "gray-ring" => Algorithm::GrayRing,
                "chain" => Algorithm::Chain,
                "all-port" | "allport" => Algorithm::AllPort,
                "planned" => Algorithm::Planned,
                "tree" => Algorithm::Tree,
                other => {
                    return Err(Error::Config(format!(
                    "unknown collective algorithm {other:?}; use one of auto, hypercube, ring, \
                     mesh, scatter-allgather, reduce-scatter-gather, reduce-scatter-allgather, \
                     store-forward, pairwise, ecube, gray-ring, chain, all-port, planned, tree"
                )))
                }
            },
        )
    }
}

/// A collective operation (for selection and job settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// One-to-all broadcast (`MPI_Bcast`).
    Bcast,
    /// All-to-one reduction (`MPI_Reduce`).
    Reduce,
    /// All-to-all broadcast (`MPI_Allgather`, `MPI_Allgatherv`).
    Allgather,
    /// All-to-all reduction (`MPI_Reduce_scatter`).
    ReduceScatter,
    /// All-reduce (`MPI_Allreduce`).
    Allreduce,
    /// Prefix sums (`MPI_Scan`, `MPI_Exscan`).
    Scan,
    /// Scatter (`MPI_Scatter`).
    Scatter,
    /// Gather (`MPI_Gather`, `MPI_Gatherv`).
    Gather,
    /// All-to-all personalized with blocks of one length (`MPI_Alltoall`).
    Alltoall,
    /// All-to-all personalized with blocks of any lengths (`MPI_Alltoallv`).
    Alltoallv,
    /// Circular q-shift.
    Shift,
    /// Barrier (`MPI_Barrier`).
    Barrier,
}

impl Operation {
    /// The suffix of the job setting `HYPERCUBE_ALG_<OP>`.
    pub fn env_name(self) -> &'static str {
        match self {
            Operation::Bcast => "BCAST",
            Operation::Reduce => "REDUCE",
            Operation::Allgather => "ALLGATHER",
            Operation::ReduceScatter => "REDUCE_SCATTER",
            Operation::Allreduce => "ALLREDUCE",
            Operation::Scan => "SCAN",
            Operation::Scatter => "SCATTER",
            Operation::Gather => "GATHER",
            Operation::Alltoall => "ALLTOALL",
            Operation::Alltoallv => "ALLTOALLV",
            Operation::Shift => "SHIFT",
            Operation::Barrier => "BARRIER",
        }
    }

    /// The algorithms that implement the operation; the first is the default on ties.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            Operation::Bcast => &[Hypercube, ScatterAllgather, AllPort],
            Operation::Reduce => &[Hypercube, ReduceScatterGather, AllPort],
            Operation::Allgather => &[Hypercube, Ring, Mesh, AllPort],
            Operation::ReduceScatter => &[Hypercube, Ring, AllPort],
            Operation::Allreduce => &[Hypercube, ReduceScatterAllgather, Ring, AllPort],
            Operation::Scan => &[Hypercube, Chain],
            Operation::Scatter | Operation::Gather => &[Hypercube, Ecube, AllPort],
            Operation::Barrier => &[Hypercube, Tree],
            Operation::Alltoall => &[StoreForward, Pairwise, Ecube, Ring, Mesh],
            Operation::Alltoallv => &[Pairwise, Ecube, Planned],
            Operation::Shift => &[Ecube, GrayRing],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Algorithm;

    #[test]
    fn every_algorithm_has_its_own_variant_below_32() {
        for (i, &a) in Algorithm::VARIANTS.iter().enumerate() {
            assert_eq!(a.variant(), i as u32, "{a:?}");
            assert_eq!(Algorithm::of_variant(a.variant()), Some(a));
        }
        assert!(Algorithm::VARIANTS.len() <= 32);
        assert_eq!(
            Algorithm::of_variant(Algorithm::VARIANTS.len() as u32),
            None
        );
    }

    /// `VARIANTS` lists every algorithm: the match below is exhaustive (inside the crate
    /// `#[non_exhaustive]` does not excuse a missing arm), so a new algorithm does not
    /// compile here until it is named — and then fails the test until `VARIANTS` names it
    /// too (else its messages' variant would have no name in the mismatch error).
    #[test]
    fn variants_list_every_algorithm() {
        let named = |a: Algorithm| match a {
            Algorithm::Auto
            | Algorithm::Hypercube
            | Algorithm::Ring
            | Algorithm::Mesh
            | Algorithm::ScatterAllgather
            | Algorithm::ReduceScatterGather
            | Algorithm::ReduceScatterAllgather
            | Algorithm::StoreForward
            | Algorithm::Pairwise
            | Algorithm::Ecube
            | Algorithm::GrayRing
            | Algorithm::Chain
            | Algorithm::Planned
            | Algorithm::AllPort
            | Algorithm::Tree => a,
        };
        let last = named(Algorithm::Tree);
        assert_eq!(Algorithm::VARIANTS.len() as u32, last.variant() + 1);
        for a in Algorithm::VARIANTS {
            assert_eq!(named(a), a);
        }
    }
}
