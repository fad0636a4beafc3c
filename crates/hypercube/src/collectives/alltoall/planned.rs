//! All-to-all personalized communication along planned routes — Bhatt, *Efficient
//! Hypercube Communications* (1992), ch. 4 (ALG I equibalancing, ALG II one-step
//! time-lookahead equibalancing): route every message along a minimal path chosen to
//! balance the load over the links, instead of the fixed e-cube order that loads one link
//! of a transpose or a bit reversal with `2^(d/2 − 1)` messages.
//!
//! 1. The members exchange their block sizes (an allgather of p lengths each: `d` steps of
//!    `8p`-byte messages, done by the caller), so every member knows the whole p × p size
//!    matrix.
//! 2. Each computes the same two plans (`hypercube_topology::Plan`): every block whole on
//!    its e-cube route, and the balanced plan, which cuts a long block into up to `h`
//!    parts (one per dimension it crosses, none shorter than [`min_part`]) and puts each
//!    part on the minimal path that least loads the busiest link. The one with the
//!    shorter predicted time runs — `t_w` × its busiest link's bytes + `t_s` × the most
//!    messages a member sends — so a plan is followed only when it pays.
//! 3. Every member posts a receive per part it expects, then sends every part at once
//!    along its route (`Transport::isend_routed`: the route travels in the frame header,
//!    and the nodes on the way cut the part through along it), prefixed with the plan's
//!    digest and the part's offset in its block, longest routes first. Empty blocks are
//!    not sent at all.
//!
//! Predicted time (all-port, cut-through): `t_s · max_node(parts sent) + t_w · busiest`,
//! against `(p − 1) t_s + t_w · busiest_ecube` for e-cube. A member whose plan differs
//! (the digest in a part does not match its own) stops with an error naming both digests;
//! since every member sends at least one part to every member it has bytes for, a
//! disagreement is found, never waited on.

use bytes::{Bytes, BytesMut};
use hypercube_topology::{Plan, PlanOptions, MAX_ROUTE_HOPS};

use crate::base::parts::Parts;
use crate::collectives::ctx::Ctx;
use crate::collectives::select::{machine, Machine};
use crate::error::{Error, Result};

/// Bytes before every part: the plan's digest and the part's offset in its block.
const PREFIX: usize = 16;

/// `blocks[t]` goes to relative rank t; `sizes` is the p × p matrix of every member's
/// block lengths (row = sender). Returns the block from each relative rank.
/// `always`: follow the balanced plan even where e-cube is predicted as fast (the caller
/// asked for planned routes by name).
pub(crate) fn alltoall(
    c: &Ctx<'_>,
    blocks: &[Bytes],
    sizes: &[u64],
    always: bool,
) -> Result<Vec<Bytes>> {
    let p = c.p();
    let me = c.me;
    let plan = cached_plan(c.k, sizes, always)?;
    let digest = plan.digest();
    let mut recvs = Vec::new();
    for leg in plan.legs_to(me) {
        recvs.push((leg.src, c.irecv(leg.src)?));
    }
    // Parts with the most hops to go first, so that the links further down their routes
    // get work early (the planned Table 5.4b call on the emulated 6-cube: 403 ms against
    // 440 in XOR order alone); among equals the order of Alg. 4.10 (step j to member
    // me XOR j): at any moment the members send to different members.
    let mut legs: Vec<_> = plan.legs_from(me).iter().collect();
    legs.sort_by_key(|l| (std::cmp::Reverse(l.route.len()), l.dst ^ me, l.offset));
    let mut sends = Vec::new();
    for leg in legs {
        let block = &blocks[leg.dst as usize];
        let (from, to) = (leg.offset as usize, (leg.offset + leg.bytes) as usize);
        if block.len() != sizes[(me * p + leg.dst) as usize] as usize || to > block.len() {
            return Err(Error::InvalidArgument(format!(
                "alltoallv: the block for member {} changed length during the call",
                leg.dst
            )));
        }
        let mut prefix = [0u8; PREFIX];
        prefix[..8].copy_from_slice(&digest.to_le_bytes());
        prefix[8..].copy_from_slice(&leg.offset.to_le_bytes());
        let data = Parts::from(vec![Bytes::copy_from_slice(&prefix), block.slice(from..to)]);
        sends.push(c.isend_routed(leg.dst, data, leg.route)?);
    }
    let mut out = vec![Bytes::new(); p as usize];
    out[me as usize] = blocks[me as usize].clone();
    // The parts the plan sends here, by (source, offset): each must come once, whole.
    let mut expected: std::collections::BTreeMap<(u32, u64), u64> = plan
        .legs_to(me)
        .map(|l| ((l.src, l.offset), l.bytes))
        .collect();
    let mut assembling: Vec<Option<BytesMut>> = vec![None; p as usize];
    for (src, r) in recvs {
        let msg = r.wait()?.into_data();
        let total = sizes[(src * p + me) as usize];
        let (offset, body) = unprefix(&msg, digest, src, total)?;
        if expected.remove(&(src, offset)) != Some(body.len() as u64) {
            return Err(Error::Protocol {
                peer: c.base | src,
                detail: format!(
                    "alltoallv: member {src} sent a part of {} bytes at offset {offset} that \
                     the plan does not have (or sent it twice)",
                    body.len()
                ),
            });
        }
        if body.len() as u64 == total {
            out[src as usize] = body;
            continue;
        }
        let buf = assembling[src as usize].get_or_insert_with(|| BytesMut::zeroed(total as usize));
        buf[offset as usize..offset as usize + body.len()].copy_from_slice(&body);
    }
    // Every expected part came (one receive was posted per part): the blocks are whole.
    for (src, a) in assembling.into_iter().enumerate() {
        if let Some(buf) = a {
            out[src] = buf.freeze();
        }
    }
    for s in sends {
        s.wait()?;
    }
    Ok(out)
}

/// The part's offset and bytes, after checking its prefix: the same plan, and inside the
/// block of `total` bytes.
fn unprefix(msg: &Bytes, digest: u64, src: u32, total: u64) -> Result<(u64, Bytes)> {
    let bad = |detail: String| Error::InvalidArgument(format!("alltoallv: {detail}"));
    if msg.len() < PREFIX {
        return Err(bad(format!(
            "a part from member {src} has {} bytes, less than its {PREFIX}-byte prefix: \
             every member must call alltoallv with the same algorithm",
            msg.len()
        )));
    }
    let theirs = u64::from_le_bytes(msg[..8].try_into().unwrap_or_default());
    let offset = u64::from_le_bytes(msg[8..16].try_into().unwrap_or_default());
    if theirs != digest {
        return Err(bad(format!(
            "member {src} routed by plan {theirs:#018x}, this member by {digest:#018x}: the \
             members disagree on the block sizes or the plan (mixed versions of hypercube?)"
        )));
    }
    let body = msg.slice(PREFIX..);
    if !offset
        .checked_add(body.len() as u64)
        .is_some_and(|end| end <= total)
    {
        return Err(bad(format!(
            "a part from member {src} at offset {offset} of {} bytes overruns its block of \
             {total} bytes",
            body.len()
        )));
    }
    Ok((offset, body))
}

/// The environment variable that sets the shortest part of a block, in bytes (tests and
/// experiments; by default [`min_part`] derives it from the cost model).
pub(crate) const MIN_PART_ENV: &str = "HYPERCUBE_PLAN_MIN_PART";

/// The shortest part worth its own start-up on `m`: a part's bytes take four times its
/// `t_s` on a link (4 KiB to 16 MiB); `HYPERCUBE_PLAN_MIN_PART` overrides it.
pub(crate) fn min_part(m: &Machine) -> u64 {
    if let Some(b) = std::env::var(MIN_PART_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return b.max(1);
    }
    let t = &m.model;
    let bytes = if t.t_w > 0.0 {
        4.0 * t.t_s / t.t_w
    } else {
        f64::INFINITY
    };
    bytes.clamp(4096.0, 16.0 * 1024.0 * 1024.0) as u64
}

/// The predicted time of `plan` on `m` (all-port, cut-through): every member sends its
/// parts at once, each a start-up of its own; the busiest link's bytes bound the rest.
pub(crate) fn predicted(plan: &Plan, m: &Machine) -> f64 {
    let p = 1usize << plan.dim();
    let mut sent = vec![0u32; p];
    for l in plan.legs() {
        sent[l.src as usize] += 1;
    }
    let most = sent.into_iter().max().unwrap_or(0);
    m.model.t_s * f64::from(most) + m.model.t_w * plan.busiest() as f64
}

/// [`choose_plan`] on this machine, remembered for the last sizes seen: an iterative
/// program that exchanges the same sizes every step computes its plan once (a dense
/// 8-cube's plan is 65,280 dynamic programs).
fn cached_plan(k: u32, sizes: &[u64], always: bool) -> Result<std::sync::Arc<Plan>> {
    use std::sync::{Arc, Mutex};
    type Last = Option<(u32, bool, Vec<u64>, Arc<Plan>)>;
    static LAST: Mutex<Last> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((lk, la, ls, plan)) = last.as_ref() {
        if *lk == k && *la == always && ls[..] == *sizes {
            return Ok(plan.clone());
        }
    }
    let plan = Arc::new(choose_plan(k, sizes, &machine(), always)?);
    *last = Some((k, always, sizes.to_vec(), plan.clone()));
    Ok(plan)
}

/// The plan that runs: balanced if `always` or if it is predicted faster than e-cube,
/// else e-cube.
pub(crate) fn choose_plan(k: u32, sizes: &[u64], m: &Machine, always: bool) -> Result<Plan> {
    let too_big = || {
        Error::InvalidArgument(format!(
            "alltoallv: planned routes are made for subcubes of at most {} dimensions, not \
             {k}; use Pairwise or Ecube",
            hypercube_topology::MAX_PLAN_DIM
        ))
    };
    let ecube = Plan::ecube(k, sizes).ok_or_else(too_big)?;
    let opts = PlanOptions {
        min_part: min_part(m),
        max_parts: MAX_ROUTE_HOPS as u32,
    };
    let balanced = Plan::balanced(k, sizes, opts).ok_or_else(too_big)?;
    Ok(
        if always || predicted(&balanced, m) < predicted(&ecube, m) {
            balanced
        } else {
            ecube
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::select::CostModel;

    fn part(digest: u64, offset: u64, body: &[u8]) -> Bytes {
        let mut v = digest.to_le_bytes().to_vec();
        v.extend(offset.to_le_bytes());
        v.extend_from_slice(body);
        Bytes::from(v)
    }

    #[test]
    fn parts_of_another_plan_or_out_of_their_block_are_refused() {
        let ok = unprefix(&part(7, 4, b"abcd"), 7, 1, 8).unwrap();
        assert_eq!(ok, (4, Bytes::from_static(b"abcd")));
        let e = unprefix(&part(8, 0, b"ab"), 7, 1, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("plan") && e.contains("disagree"), "{e}");
        let e = unprefix(&part(7, 6, b"abcd"), 7, 1, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("overruns"), "{e}");
        let e = unprefix(&part(7, u64::MAX, b"a"), 7, 1, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("overruns"), "{e}");
        let e = unprefix(&Bytes::from_static(b"short"), 7, 1, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("prefix"), "{e}");
    }

    /// On slow links a transpose's plan is predicted (and chosen) faster than e-cube; a
    /// complete exchange stays on e-cube, whose routes are balanced already.
    #[test]
    fn the_plan_runs_only_where_it_is_predicted_faster() {
        use hypercube_topology::plan::patterns::{permutation, transpose};
        let mut m = machine();
        m.model = CostModel::new(150e-6, 80e-9);
        let sizes = permutation(4, 256 << 10, |n| transpose(n, 4));
        let chosen = choose_plan(4, &sizes, &m, false).unwrap();
        let ecube = Plan::ecube(4, &sizes).unwrap();
        assert!(chosen.busiest() * 2 <= ecube.busiest());
        let mut dense = vec![64u64 << 10; 256];
        for i in 0..16 {
            dense[i * 16 + i] = 0;
        }
        let chosen = choose_plan(4, &dense, &m, false).unwrap();
        assert_eq!(chosen, Plan::ecube(4, &dense).unwrap());
        assert_eq!(min_part(&m), (4.0f64 * 150e-6 / 80e-9) as u64);
    }

    /// The remembered plan is the one for the sizes and the request of this call, never
    /// the last call's: alternating matrices and requests each get the plan computed
    /// afresh for them.
    #[test]
    fn the_cached_plan_follows_the_sizes_and_the_request() {
        use hypercube_topology::plan::patterns::{bit_reversal, permutation, transpose};
        let a = permutation(3, 1 << 16, |n| transpose(n, 3));
        let b = permutation(3, 1 << 16, |n| bit_reversal(n, 3));
        for (sizes, always) in [(&a, true), (&b, true), (&a, false), (&a, true), (&b, false)] {
            let got = cached_plan(3, sizes, always).unwrap();
            let fresh = choose_plan(3, sizes, &machine(), always).unwrap();
            assert_eq!(*got, fresh);
            // Asked again at once: the same plan.
            assert_eq!(*cached_plan(3, sizes, always).unwrap(), fresh);
        }
    }
}
