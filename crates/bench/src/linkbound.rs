//! The **link bound** of an operation on a d-cube whose links each carry `B` bytes per
//! second in each direction: the time the busiest link needs for the bytes the operation
//! must move, under the *all-port* model (every node drives its d links at once, in both
//! directions). No algorithm on that network can be faster, whatever its start-ups; the
//! emulated cube (`hcrun --link-rate`, docs/cubenet.md) is where it can be approached.
//!
//! Each bound is the larger of two counts, both exact lower bounds:
//! - **cut**: the bytes that must cross into (or out of) one node, over its `d` links;
//! - **volume**: the total link-bytes (each byte counted once per hop of a shortest path)
//!   over all `p·d` directed links.
//!
//! `m` is the benchmark's SIZE as `osu` defines it (lib.rs, [`crate::Bench`]): per rank for
//! bcast, reduce, allreduce, scan, allgather, scatter, gather, gcat; per pair for
//! all-to-all; per rank's *result* for reduce-scatter.

use crate::Bench;

/// The bytes the busiest directed link of a d-cube must carry for one call of `bench` with
/// SIZE `m` (see the module docs); divide by the link rate in bytes/s for seconds.
/// `None` for benchmarks without a meaningful bound (bandwidth, barrier, the iPSC sparse
/// send).
pub fn busiest_link_bytes(bench: Bench, dim: u32, m: f64) -> Option<f64> {
    let d = f64::from(dim.max(1));
    let p = f64::from(1u32 << dim);
    if dim == 0 {
        return Some(0.0);
    }
    let b = match bench {
        // One message from rank 0 to rank 1: split over the d disjoint paths between them,
        // each link carries m/d.
        Bench::Latency => m / d,
        // Every node must receive m (the root's data, or the reduced result's inputs must
        // leave every leaf): m/d per link of the receiving node.
        Bench::Bcast | Bench::Gsendw | Bench::Reduce | Bench::Gop | Bench::Scan => m / d,
        // Each node must receive the other p-1 nodes' m.
        Bench::Allgather => (p - 1.0) * m / d,
        // The root sends (or receives) p-1 blocks of m over its d links.
        Bench::Scatter | Bench::Gather | Bench::Gcat => (p - 1.0) * m / d,
        // Each node must receive a share of every other node's contribution to its block
        // (reduce-scatter, (p-1)m), and allreduce is at least reduce-scatter of m/p blocks
        // followed by its allgather: 2(p-1)m/p per node.
        Bench::ReduceScatter => (p - 1.0) * m / d,
        Bench::Allreduce => 2.0 * (p - 1.0) * m / (p * d),
        // Volume: every node sends m to each of the others over shortest paths, the sum
        // of their distances is d·p/2, so p·m·d·p/2 link-bytes over p·d links.
        Bench::Alltoall => m * p / 2.0,
        // Every rank sends m to the next in rank order; the paths are disjoint enough that
        // each node's m leaves over one of its d links at best: m/d.
        Bench::Shift => m / d,
        Bench::Bw | Bench::Barrier | Bench::Spgsnw => return None,
    };
    Some(b)
}

/// The link bound in seconds: [`busiest_link_bytes`] over a link rate in bytes/s.
pub fn link_bound_secs(bench: Bench, dim: u32, m: f64, link_bytes_per_sec: f64) -> Option<f64> {
    busiest_link_bytes(bench, dim, m).map(|b| b / link_bytes_per_sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alltoall_is_volume_bound() {
        // 4-cube, 64 KiB blocks at 100 Mbit/s: 16·64 KiB/2 = 512 KiB per link = 41.9 ms
        // (the "link bound is 42 ms").
        let t = link_bound_secs(Bench::Alltoall, 4, 65536.0, 12.5e6).unwrap();
        assert!((t - 0.04194).abs() < 1e-4, "{t}");
    }

    #[test]
    fn allgather_all_port() {
        // 4-cube, 256 KiB per rank: 15·256 KiB/4 over 12.5 MB/s = 78.6 ms (issue: ~79 ms).
        let t = link_bound_secs(Bench::Allgather, 4, 262144.0, 12.5e6).unwrap();
        assert!((t - 0.0786).abs() < 1e-3, "{t}");
    }

    #[test]
    fn no_bound_for_bandwidth_and_barrier() {
        assert!(busiest_link_bytes(Bench::Bw, 3, 1.0).is_none());
        assert!(busiest_link_bytes(Bench::Barrier, 3, 0.0).is_none());
        assert_eq!(busiest_link_bytes(Bench::Bcast, 0, 8.0), Some(0.0));
    }
}
