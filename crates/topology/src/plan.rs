//! Route plans for a many-to-many exchange: which minimal path each message (or each part
//! of a large message) takes, chosen so that the busiest link carries as few bytes as
//! possible.
//!
//! The seed is Bhatt, *Efficient Hypercube Communications* (1992), chapter 4: its ALG I
//! (equibalancing) and ALG II (one-step time-lookahead equibalancing) route every packet
//! along a minimal path, choosing at each node the still-to-correct dimension whose
//! neighbour is least loaded. Fixed e-cube order cannot make that choice and congests on
//! the patterns real programs make (matrix transpose, bit reversal): there one link carries
//! `2^(d/2 − 1)` messages while paths in another dimension order exist that load every
//! link once.
//!
//! The thesis's routers decide hop by hop in synchronous cycles of unit packets. Here the
//! whole exchange is known in advance (every node knows every message's size after a
//! cheap exchange of the count matrix), links carry bytes, and all links send at once, so
//! the plan is made offline, identically on every node, by a greedy that keeps the
//! thesis's principle — balance the load over the links of the minimal paths — with the
//! lookahead extended to the whole path:
//!
//! 1. every message of `m` bytes at Hamming distance `h` is cut into
//!    `k = min(h, max_parts, m / min_part)` (at least 1) parts of nearly equal size;
//! 2. parts are placed largest first (ties: longer paths first, then by source and
//!    destination), each on the minimal path — any order of its `h` differing dimensions —
//!    that minimises the busiest link it crosses after adding its bytes, then the sum of
//!    the loads it crosses (a bottleneck shortest path over the `2^h` subcube between its
//!    ends, found by dynamic programming in `O(2^h h)`);
//! 3. ties go to the lowest dimension, so the plan is a pure function of the sizes.
//!
//! The plan's predicted time is its busiest link's bytes over the link rate: a lower
//! bound for any schedule of these routes, reached when every link sends without pause.

use crate::cube::NodeId;

/// The largest cube dimension a plan is made for (2^8 = 256 nodes: the dynamic program is
/// `O(2^h h)` per part, and a route of up to 8 hops fits a frame header).
pub const MAX_PLAN_DIM: u32 = 8;

/// The most hops a [`Route`] lists.
pub const MAX_ROUTE_HOPS: usize = 8;

/// The dimensions a message crosses, in order, for up to [`MAX_ROUTE_HOPS`] hops; after
/// them (or with none, [`Route::ECUBE`]) a message follows its e-cube route. A node that
/// forwards a routed message takes the first hop off ([`Route::rest`]), so a route always
/// lists the hops still to take from where the message is.
///
/// ```
/// use hypercube_topology::Route;
/// let r = Route::from_dims(&[2, 0]).unwrap();
/// assert_eq!(r.first(), Some(2));
/// assert_eq!(r.end(0b000), 0b101);
/// assert_eq!(r.rest().first(), Some(0));
/// assert!(r.rest().rest().is_ecube());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Route {
    /// Hop `i` in bits `4i .. 4i + 4`.
    nibbles: u32,
    len: u8,
}

impl Route {
    /// No listed hops: the e-cube route.
    pub const ECUBE: Route = Route { nibbles: 0, len: 0 };

    /// The route crossing `dims` in order, or `None` if there are more than
    /// [`MAX_ROUTE_HOPS`] or a dimension is 16 or more.
    pub fn from_dims(dims: &[u32]) -> Option<Route> {
        if dims.len() > MAX_ROUTE_HOPS || dims.iter().any(|&k| k >= 16) {
            return None;
        }
        let nibbles = dims
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &k)| acc | (k << (4 * i)));
        Some(Route {
            nibbles,
            len: dims.len() as u8,
        })
    }

    /// The route as carried in a frame header: the number of hops and the hops packed
    /// four bits each, the first in the lowest bits.
    pub fn packed(self) -> (u8, u32) {
        (self.len, self.nibbles)
    }

    /// The route of a frame header's fields, or `None` when they are not one (more than
    /// [`MAX_ROUTE_HOPS`] hops, bits set beyond the last hop, or a hop `>= dim`).
    pub fn from_packed(len: u8, nibbles: u32, dim: u32) -> Option<Route> {
        if len as usize > MAX_ROUTE_HOPS {
            return None;
        }
        let used = if len == 8 {
            u32::MAX
        } else {
            (1u32 << (4 * len)) - 1
        };
        let r = Route { nibbles, len };
        (nibbles & !used == 0 && r.dims().all(|k| k < dim)).then_some(r)
    }

    /// True when no hop is listed: the message follows e-cube order.
    pub fn is_ecube(self) -> bool {
        self.len == 0
    }

    /// The number of listed hops.
    pub fn len(self) -> usize {
        self.len as usize
    }

    /// True when no hop is listed (the same as [`Route::is_ecube`]).
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The dimension of the next hop, if one is listed.
    pub fn first(self) -> Option<u32> {
        (self.len > 0).then_some(self.nibbles & 0xF)
    }

    /// The route after its first hop.
    pub fn rest(self) -> Route {
        if self.len == 0 {
            return self;
        }
        Route {
            nibbles: self.nibbles >> 4,
            len: self.len - 1,
        }
    }

    /// The listed dimensions, in order.
    pub fn dims(self) -> impl Iterator<Item = u32> {
        (0..self.len as u32).map(move |i| (self.nibbles >> (4 * i)) & 0xF)
    }

    /// The node the listed hops lead to from `from`.
    pub fn end(self, from: NodeId) -> NodeId {
        self.dims().fold(from, |at, k| at ^ (1 << k))
    }

    /// Links a message on this route from `from` to `to` crosses: its listed hops, then
    /// the e-cube route from where they end.
    pub fn hops(self, from: NodeId, to: NodeId) -> u32 {
        self.len as u32 + crate::cube::hamming(self.end(from), to)
    }

    /// The e-cube route from `from` to `to`, listed (at most [`MAX_ROUTE_HOPS`] hops, so
    /// `None` beyond).
    pub fn ecube(from: NodeId, to: NodeId) -> Option<Route> {
        let diff = from ^ to;
        let dims: Vec<u32> = (0..32).filter(|k| diff >> k & 1 == 1).collect();
        Route::from_dims(&dims)
    }
}

/// One message, or one part of a message, of a plan: `bytes` bytes of the message from
/// `src` to `dst`, from byte `offset` on, along `route` (a minimal path).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leg {
    /// The source node.
    pub src: NodeId,
    /// The destination node.
    pub dst: NodeId,
    /// Where in the message this part starts.
    pub offset: u64,
    /// The part's length.
    pub bytes: u64,
    /// The dimensions it crosses, in order.
    pub route: Route,
}

/// How a plan may cut messages into parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// No part shorter than this (a part costs a start-up; 0 counts as 1).
    pub min_part: u64,
    /// At most this many parts per message (0 counts as 1; never more than its distance).
    pub max_parts: u32,
}

impl Default for PlanOptions {
    /// Parts of at least 64 KiB, up to one per dimension the message crosses.
    fn default() -> Self {
        PlanOptions {
            min_part: 64 << 10,
            max_parts: MAX_ROUTE_HOPS as u32,
        }
    }
}

/// A route for every byte of a many-to-many exchange on a `dim`-cube, and the bytes it
/// puts on every directed link.
///
/// `sizes[src * p + dst]` is the length of the message from `src` to `dst` (p = 2^dim);
/// messages of 0 bytes and to the sender itself have no legs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    dim: u32,
    /// Sorted by (src, dst, offset).
    legs: Vec<Leg>,
    /// Bytes per directed link: index `node * dim + k` is the link from `node` across
    /// dimension `k`.
    loads: Vec<u64>,
}

impl Plan {
    /// Every message whole along its e-cube route (what the transport does unplanned).
    /// `None` when `sizes` is not p × p for p = 2^dim or `dim` > [`MAX_PLAN_DIM`].
    pub fn ecube(dim: u32, sizes: &[u64]) -> Option<Plan> {
        let p = check(dim, sizes)?;
        let mut plan = Plan::empty(dim);
        for src in 0..p {
            for dst in 0..p {
                let m = sizes[(src * p + dst) as usize];
                if src != dst && m > 0 {
                    let route = Route::ecube(src, dst)?;
                    plan.place(Leg {
                        src,
                        dst,
                        offset: 0,
                        bytes: m,
                        route,
                    });
                }
            }
        }
        plan.legs.sort_by_key(|l| (l.src, l.dst, l.offset));
        Some(plan)
    }

    /// The balanced plan of the module documentation. `None` when `sizes` is not p × p
    /// for p = 2^dim or `dim` > [`MAX_PLAN_DIM`].
    pub fn balanced(dim: u32, sizes: &[u64], opts: PlanOptions) -> Option<Plan> {
        let p = check(dim, sizes)?;
        let mut messages: Vec<(NodeId, NodeId, u64)> = Vec::new();
        for src in 0..p {
            for dst in 0..p {
                let m = sizes[(src * p + dst) as usize];
                if src != dst && m > 0 {
                    messages.push((src, dst, m));
                }
            }
        }
        // Largest part first; then longer paths; then by source and destination.
        let parts_of = |&(src, dst, m): &(NodeId, NodeId, u64)| -> u64 {
            let h = u64::from((src ^ dst).count_ones());
            let by_size = m / opts.min_part.max(1);
            h.min(u64::from(opts.max_parts.max(1))).min(by_size).max(1)
        };
        messages.sort_by_key(|msg| {
            let k = parts_of(msg);
            let (src, dst, m) = *msg;
            (
                std::cmp::Reverse(m.div_ceil(k)),
                std::cmp::Reverse((src ^ dst).count_ones()),
                src,
                dst,
            )
        });
        let mut plan = Plan::empty(dim);
        for msg in &messages {
            let (src, dst, m) = *msg;
            let k = parts_of(msg);
            let mut offset = 0;
            for i in 0..k {
                // Nearly equal parts: the first `m % k` are one byte longer.
                let bytes = m / k + u64::from(i < m % k);
                let route = plan.best_path(src, dst, bytes);
                plan.place(Leg {
                    src,
                    dst,
                    offset,
                    bytes,
                    route,
                });
                offset += bytes;
            }
        }
        plan.legs.sort_by_key(|l| (l.src, l.dst, l.offset));
        Some(plan)
    }

    fn empty(dim: u32) -> Plan {
        Plan {
            dim,
            legs: Vec::new(),
            loads: vec![0; (dim as usize) << dim],
        }
    }

    /// Add a leg and its bytes on every link of its route.
    fn place(&mut self, leg: Leg) {
        let mut at = leg.src;
        for k in leg.route.dims() {
            self.loads[(at * self.dim + k) as usize] += leg.bytes;
            at ^= 1 << k;
        }
        self.legs.push(leg);
    }

    /// The minimal path from `src` to `dst` whose busiest link, with `bytes` more, is
    /// least loaded (then the least total load; then the lowest dimensions first).
    fn best_path(&self, src: NodeId, dst: NodeId, bytes: u64) -> Route {
        let diff = src ^ dst;
        let dims: Vec<u32> = (0..self.dim).filter(|k| diff >> k & 1 == 1).collect();
        let h = dims.len();
        // best[s]: (bottleneck, sum, last index) over paths from src crossing the dims of
        // subset s (bit i = dims[i]).
        let mut best = vec![(u64::MAX, u64::MAX, 0u8); 1 << h];
        best[0] = (0, 0, 0);
        for s in 1usize..(1 << h) {
            let mut at_prev_base = src;
            for (i, &k) in dims.iter().enumerate() {
                if s >> i & 1 == 1 {
                    at_prev_base ^= 1 << k;
                }
            }
            for (i, &k) in dims.iter().enumerate() {
                if s >> i & 1 == 0 {
                    continue;
                }
                let prev = s ^ (1 << i);
                let (pb, ps, _) = best[prev];
                // The node before the last hop: src with the dims of `prev` corrected.
                let from = at_prev_base ^ (1 << k);
                let load = self.loads[(from * self.dim + k) as usize];
                let cand = (pb.max(load + bytes), ps + load, i as u8);
                if (cand.0, cand.1) < (best[s].0, best[s].1) {
                    best[s] = cand;
                }
            }
        }
        let mut order = Vec::with_capacity(h);
        let mut s = (1usize << h) - 1;
        while s != 0 {
            let i = best[s].2 as usize;
            order.push(dims[i]);
            s ^= 1 << i;
        }
        order.reverse();
        // `dim` ≤ MAX_PLAN_DIM, so a minimal path always fits.
        Route::from_dims(&order).unwrap_or_default()
    }

    /// The cube dimension.
    pub fn dim(&self) -> u32 {
        self.dim
    }

    /// Every leg, sorted by source, destination and offset.
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }

    /// The legs that start at `src`, by destination and offset.
    pub fn legs_from(&self, src: NodeId) -> &[Leg] {
        let a = self.legs.partition_point(|l| l.src < src);
        let b = self.legs.partition_point(|l| l.src <= src);
        &self.legs[a..b]
    }

    /// The legs that end at `dst`, by source and offset.
    pub fn legs_to(&self, dst: NodeId) -> impl Iterator<Item = &Leg> {
        self.legs.iter().filter(move |l| l.dst == dst)
    }

    /// The bytes on the link from `node` across dimension `k`.
    pub fn load(&self, node: NodeId, k: u32) -> u64 {
        self.loads[(node * self.dim + k) as usize]
    }

    /// Bytes per directed link, index `node * dim + k`.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }

    /// The busiest link's bytes: the plan's time is at least this over the link rate.
    pub fn busiest(&self) -> u64 {
        self.loads.iter().copied().max().unwrap_or(0)
    }

    /// The most parts any message was cut into.
    pub fn max_parts(&self) -> usize {
        let mut most = 0;
        let mut run = 0;
        for (i, l) in self.legs.iter().enumerate() {
            let same = i > 0 && {
                let prev = &self.legs[i - 1];
                (prev.src, prev.dst) == (l.src, l.dst)
            };
            run = if same { run + 1 } else { 1 };
            most = most.max(run);
        }
        most
    }

    /// A 64-bit digest of every leg (FNV-1a): nodes that computed the same plan have the
    /// same digest.
    pub fn digest(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |x: u64| {
            for b in x.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        };
        eat(u64::from(self.dim));
        for l in &self.legs {
            let (n, nib) = l.route.packed();
            eat(u64::from(l.src) << 32 | u64::from(l.dst));
            eat(l.offset);
            eat(l.bytes);
            eat(u64::from(n) << 32 | u64::from(nib));
        }
        h
    }
}

/// p for a valid (dim, sizes).
fn check(dim: u32, sizes: &[u64]) -> Option<u32> {
    if dim > MAX_PLAN_DIM {
        return None;
    }
    let p = 1u32 << dim;
    (sizes.len() == (p as usize) * (p as usize)).then_some(p)
}

/// The permutations whose e-cube routes congest (Bhatt §5; issue figures): matrix
/// transpose (swap the high and low halves of the node number's bits; `dim` even) and
/// bit reversal. `sizes` for one message of `bytes` from every node to its image.
pub mod patterns {
    use crate::cube::NodeId;

    /// The transpose of node `n` in a `dim`-cube: its high and low `dim / 2` bits swapped
    /// (an odd middle bit stays).
    pub fn transpose(n: NodeId, dim: u32) -> NodeId {
        let half = dim / 2;
        let low = n & ((1 << half) - 1);
        let high = n >> (dim - half);
        let mid = if dim % 2 == 1 { n & (1 << half) } else { 0 };
        (low << (dim - half)) | mid | high
    }

    /// Node `n`'s number with its `dim` bits in reverse order.
    pub fn bit_reversal(n: NodeId, dim: u32) -> NodeId {
        if dim == 0 {
            0
        } else {
            n.reverse_bits() >> (32 - dim)
        }
    }

    /// The size matrix of the permutation `f`: `bytes` from every node `n` to `f(n)`
    /// (nothing where `f(n) = n`).
    pub fn permutation(dim: u32, bytes: u64, f: impl Fn(NodeId) -> NodeId) -> Vec<u64> {
        let p = 1usize << dim;
        let mut s = vec![0; p * p];
        for n in 0..p {
            let to = f(n as NodeId) as usize;
            if to != n {
                s[n * p + to] = bytes;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests;
