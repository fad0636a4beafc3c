//! The in-process transport's virtual clock (its rules are the module docs of
//! `transport/local.rs`): what a send costs a node and when it is over, with one port per
//! node or one per dimension, and links shaped by token buckets or not. A node's
//! [`NodeClock`] keeps its ports, its sends' finish times and its links' buckets; the
//! cube's [`ClockModel`] is the rules they share.

use std::sync::Mutex;

use hypercube_topology::{hamming, NodeId};

use crate::transport::api::SendToken;

/// The virtual clock's charge for a message of `len` bytes over `links` links (the hamming
/// distance from sender to receiver): the send occupies its sender's port that long
/// (`CostModel::message_over`, given by the driver).
pub(crate) type MessageCost = Box<dyn Fn(usize, u32) -> f64 + Send + Sync>;

/// A token bucket on every directed link of a timed cube, as `tc tbf` shapes the emulated
/// cube's links (docs/cubenet.md): it holds up to `burst` bytes of tokens, gains one per
/// `t_w` of virtual time, and the bytes of a message it has tokens for cross the link free
/// (at core speed); the rest at `t_w` a byte. Full at time 0. Only a route's first link
/// has a bucket of its own (the clock has no state for the links beyond it); under
/// store-and-forward, where every link of the route carries the whole message in turn,
/// each further link is taken to save what the first saved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bucket {
    /// Bytes of tokens a full bucket holds.
    pub(crate) burst: f64,
    /// Time per byte of the link (the refill: one token per `t_w`).
    pub(crate) t_w: f64,
    /// Store-and-forward routes: each link of a route pays its own `t_w m`.
    pub(crate) store_and_forward: bool,
}

impl Bucket {
    /// A message of `len` bytes starts over a link whose bucket was `(then, tokens)` at
    /// time `start`: the time its free bytes save, and the bucket after it (empty when the
    /// message ends, if the tokens ran out; else what is left, at `start`).
    fn send(&self, (then, tokens): (f64, f64), start: f64, len: usize) -> (f64, (f64, f64)) {
        let refill = if self.t_w > 0.0 {
            (start - then).max(0.0) / self.t_w
        } else {
            self.burst
        };
        let tokens = (tokens + refill).min(self.burst);
        let m = len as f64;
        if m <= tokens {
            (self.t_w * m, (start, tokens - m))
        } else {
            (self.t_w * tokens, (start + self.t_w * (m - tokens), 0.0))
        }
    }
}

/// A timed cube's clock rules, the same for every node.
pub(crate) struct ClockModel {
    /// The charge for a message of `len` bytes over `links` links.
    pub(crate) cost: MessageCost,
    /// All-port clocks: the start-up `t_s` that stays the node's own work (the rest of a
    /// message's cost occupies a port). `None`: one port.
    pub(crate) all_port: Option<f64>,
    /// Shaped links: every directed link a token bucket.
    pub(crate) bucket: Option<Bucket>,
}

/// One node's side of the clock.
pub(crate) struct NodeClock {
    /// All-port clocks: when each of this node's ports is free again.
    ports: Mutex<Vec<f64>>,
    /// All-port clocks: the finish time of each send, by token.
    sends: Mutex<Vec<f64>>,
    /// Shaped links: each outgoing link's bucket, as (time, tokens then).
    buckets: Mutex<Vec<(f64, f64)>>,
}

impl NodeClock {
    /// A node of a `dim`-cube at time 0: its ports free, its buckets full.
    pub(crate) fn new(dim: u32, model: Option<&ClockModel>) -> NodeClock {
        let burst = model.and_then(|m| m.bucket).map_or(0.0, |b| b.burst);
        NodeClock {
            ports: Mutex::new(vec![0.0; dim as usize]),
            sends: Mutex::new(Vec::new()),
            buckets: Mutex::new(vec![(0.0, burst); dim as usize]),
        }
    }

    /// Charge a send of `len` bytes from `rank` to `dest` to the node's `clock`: returns
    /// the message's stamp (when it has arrived) and the token its wait goes by (0:
    /// nothing to wait for, one port).
    pub(crate) fn send(
        &self,
        model: &ClockModel,
        clock: &Mutex<f64>,
        (rank, dest): (NodeId, NodeId),
        len: usize,
    ) -> (f64, SendToken) {
        let whole = (model.cost)(len, hamming(rank, dest));
        let mut c = clock.lock().unwrap_or_else(|p| p.into_inner());
        let Some(t_s) = model.all_port else {
            *c += whole - self.shaped(model, (rank, dest), *c, len);
            return (*c, 0);
        };
        *c += t_s.min(whole);
        let mut ports = self.ports.lock().unwrap_or_else(|p| p.into_inner());
        let k = (rank ^ dest).trailing_zeros() as usize;
        let done = match ports.get_mut(k) {
            Some(port) => {
                let start = port.max(*c);
                let saved = self.shaped(model, (rank, dest), start, len);
                *port = start + (whole - t_s - saved).max(0.0);
                *port
            }
            None => *c, // a message to itself: no port
        };
        let mut sends = self.sends.lock().unwrap_or_else(|p| p.into_inner());
        sends.push(done);
        (done, sends.len() as SendToken)
    }

    /// Waiting for the send of `token`: on all-port clocks a send is over when its port
    /// has sent it.
    pub(crate) fn wait_send(&self, clock: &Mutex<f64>, token: SendToken) {
        if token == 0 {
            return;
        }
        let done = self
            .sends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(token as usize - 1)
            .copied();
        if let Some(done) = done {
            let mut c = clock.lock().unwrap_or_else(|p| p.into_inner());
            *c = c.max(done);
        }
    }

    /// The time a shaped first link saves a message of `len` bytes to `dest` that starts
    /// over it at `start` (0 on unshaped cubes and to itself); updates its bucket.
    fn shaped(
        &self,
        model: &ClockModel,
        (rank, dest): (NodeId, NodeId),
        start: f64,
        len: usize,
    ) -> f64 {
        let Some(bucket) = model.bucket else {
            return 0.0;
        };
        let k = (rank ^ dest).trailing_zeros() as usize;
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        match buckets.get_mut(k) {
            Some(b) => {
                let (saved, after) = bucket.send(*b, start, len);
                *b = after;
                if bucket.store_and_forward {
                    saved * f64::from(hamming(rank, dest))
                } else {
                    saved
                }
            }
            None => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Bucket;

    /// `tc tbf`'s arithmetic: full at first, drained by what a message takes beyond its
    /// tokens, refilled by idle time up to the burst.
    #[test]
    fn bucket_passes_its_tokens_free_and_refills_while_idle() {
        let b = Bucket {
            burst: 1000.0,
            t_w: 1e-6,
            store_and_forward: false,
        };
        let full = (0.0, 1000.0);
        // 600 bytes out of a full bucket: all free, 400 tokens left at once.
        let (saved, after) = b.send(full, 0.0, 600);
        assert_eq!((saved, after), (600e-6, (0.0, 400.0)));
        // 600 more at once: 400 free, 200 paced; the bucket is empty when they are through.
        let (saved, after) = b.send(after, 0.0, 600);
        assert!((saved - 400e-6).abs() < 1e-12);
        assert!(
            (after.0 - 200e-6).abs() < 1e-12 && after.1 == 0.0,
            "{after:?}"
        );
        // 300 µs idle after that: 300 tokens back.
        let (saved, _) = b.send(after, 500e-6, 1000);
        assert!((saved - 300e-6).abs() < 1e-12, "{saved}");
        // Idle for long: never more than the burst.
        let (saved, _) = b.send(after, 1.0, 5000);
        assert!((saved - 1000e-6).abs() < 1e-12, "{saved}");
    }
}
