//! Grama's communication cost parameters and routing regime ([`CostModel`]), what every
//! time in `select` is priced with.

use crate::transport::Forwarding;

/// The textbook's communication cost parameters and routing regime (Grama §2.5.1): a
/// message of `m` bytes between neighbours costs `t_s + t_w m`, and one routed over
/// `l ≥ 1` links costs
///
/// - cut-through (eq. 2.3): `t_s + t_w m + (l − 1) t_h`,
/// - store-and-forward (eq. 2.2): `t_s + t_w m + (l − 1)(t_h + t_w m)`.
///
/// These are the book's equations with the first link's header time inside `t_s`: the
/// book's neighbour message (`l = 1`) costs `t_s + t_w m` in chapter 4, where eq. 2.2/2.3
/// give `t_s + t_w m + t_h`, so here `t_h` is charged per link *beyond the first*, and the
/// `t_s` of this model is the book's `t_s + t_h`. Every neighbour-only algorithm then costs
/// exactly its chapter 4 expression in both regimes, and with `t_h = 0` under cut-through
/// the cost does not depend on the distance (chapter 4's assumption). Time units are the
/// caller's (seconds, microseconds, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Start-up time per message (including the first link's header time).
    pub t_s: f64,
    /// Transfer time per byte.
    pub t_w: f64,
    /// Per-hop (header) time of every link of a route beyond the first.
    pub t_h: f64,
    /// The routing regime of messages between non-neighbours.
    pub forwarding: Forwarding,
}

impl CostModel {
    /// `t_s` and `t_w`, no per-hop time, cut-through: every message costs `t_s + t_w m`
    /// whatever the distance (chapter 4's assumption).
    pub const fn new(t_s: f64, t_w: f64) -> CostModel {
        CostModel {
            t_s,
            t_w,
            t_h: 0.0,
            forwarding: Forwarding::CutThrough,
        }
    }

    /// The same model with per-hop time `t_h`.
    pub const fn with_hop(self, t_h: f64) -> CostModel {
        CostModel { t_h, ..self }
    }

    /// The same model under the routing regime `forwarding`.
    pub const fn with_forwarding(self, forwarding: Forwarding) -> CostModel {
        CostModel { forwarding, ..self }
    }

    /// The cost of one message of `len_bytes` between neighbours: `t_s + t_w m`.
    pub fn message(&self, len_bytes: usize) -> f64 {
        self.routed(len_bytes as f64, 1.0, 1.0)
    }

    /// The cost of one message of `len_bytes` over `links` links in this model's regime
    /// (see [`CostModel`]); `links = 0` (a node's message to itself) costs as one link.
    pub fn message_over(&self, len_bytes: usize, links: u32) -> f64 {
        self.routed(len_bytes as f64, 1.0, links.max(1) as f64)
    }

    /// What a route's every link beyond the first adds to a message of `m` bytes: `t_h`
    /// under cut-through, `t_h + t_w m` under store-and-forward.
    fn extra_link(&self, m: f64) -> f64 {
        match self.forwarding {
            Forwarding::CutThrough => self.t_h,
            Forwarding::StoreAndForward => self.t_h + self.t_w * m,
        }
    }

    /// `messages` messages of `m` bytes, one after the other, whose routes have `links`
    /// links in all (at least one each): `messages (t_s + t_w m)` plus the extra links'
    /// cost. The hop terms are linear in the links, so only their sum matters.
    pub(super) fn routed(&self, m: f64, messages: f64, links: f64) -> f64 {
        messages * (self.t_s + self.t_w * m) + (links - messages) * self.extra_link(m)
    }
}
