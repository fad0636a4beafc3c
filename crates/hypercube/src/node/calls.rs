//! The node's side of collective calls: the per-dimension call counter that draws each
//! call's tag (`base/tags.rs`), and the calls that ended here — failed, whose messages the
//! transport drops (`Transport::discard`), or completed, of which a late message is a
//! stray (`Transport::close`, `collectives/ctx.rs`).

use super::Node;

/// The per-dimension call counters and the keys (`tags::call_key`) of failed calls
/// ([`Node::discard_call`]).
#[derive(Default)]
pub(super) struct Calls {
    pub(super) seq: [u32; 32],
    pub(super) discarded: std::collections::HashSet<u32>,
}

impl Node {
    /// A fresh tag in the reserved type space for one utility/collective call on a subcube
    /// of dimension `dim`, numbered by a per-dimension call counter (see `crate::base::tags`).
    /// Messages of different calls therefore never match each other or a user's message.
    ///
    /// A tag that a failed call had the transport discard ([`Node::discard_call`]) is
    /// delivered again from here on, with its failure notices: it names this new call.
    pub(crate) fn collective_tag(&self, dim: u32) -> u32 {
        let mut calls = self.calls();
        let d = (dim & 0x1F) as usize;
        let n = calls.seq[d];
        calls.seq[d] = n.wrapping_add(1);
        let tag = crate::base::tags::collective(d as u32, n);
        if calls.discarded.remove(&tag) {
            self.inner.t.keep(&[tag]);
        }
        tag
    }

    /// The collective call whose tag is `tag` failed on this node, which takes no part in
    /// it any more: the transport drops every message of the call (`tag`) and every
    /// failure notice of it, queued or arriving later (`Transport::discard`), so that no
    /// member's send of it waits for a receive that will never be posted. No receive can
    /// match these tags again until `collective_tag` draws them for a new call (2^21 calls
    /// on subcubes of the same dimension later). Of any variant: `tag`'s key is recorded.
    pub(crate) fn discard_call(&self, tag: u32) {
        let key = crate::base::tags::call_key(tag);
        self.calls().discarded.insert(key);
        self.inner.t.discard(&[key]);
    }

    /// This node's part of the collective call whose tag is `tag` completed: every message
    /// of the call for it has been taken, so one that comes later (or is queued) was sent
    /// by a member running another algorithm. The transport drops it and sends the call's
    /// other members a failure notice naming it (`Transport::close`, `base/notice.rs`), so
    /// that a member waiting in the call for that sender's message fails instead of waiting
    /// forever.
    pub(crate) fn close_call(&self, tag: u32) {
        self.inner.t.close(tag);
    }

    pub(super) fn calls(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.inner.calls.lock().unwrap_or_else(|p| p.into_inner())
    }
}
