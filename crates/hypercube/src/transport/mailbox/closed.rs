//! The collective calls that ended on this node. A call that failed here has its tags
//! *discarded* ([`Mailbox::discard`]: see the mailbox's module
//! docs). A call whose part here has completed is *closed* (`Transport::close`): a
//! message of one of them is a *stray* — its sender ran another algorithm than this node
//! (the members disagree on a length, so their automatic choices differ) — and the call's
//! failure notices are for members still in the call. The mailbox drops both; a stray is
//! also recorded, for the transport to tell the call's members (`base/notice.rs`).
//!
//! Only the last [`CLOSED_CALLS`] calls are remembered: a stray arrives while its sender
//! is still in or just past the call, and a tag is drawn again only 2^21 calls later
//! (`base/tags.rs`). A message of a call forgotten here is queued as before.

use std::collections::VecDeque;

use hypercube_topology::NodeId;
use rustc_hash::FxHashSet;

use super::{Envelope, Mailbox, NeedCts};
use crate::base::tags;

/// How many closed calls the mailbox remembers.
pub(crate) const CLOSED_CALLS: usize = 1024;

/// What a closed tag is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClosedTag {
    /// A call's own tag: a message of it is a stray.
    Call,
    /// A call's failure-notice tag: dropped quietly.
    Notice,
}

/// A message of a closed call: who sent it, on which call's tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stray {
    /// The member that sent it.
    pub(crate) source: NodeId,
    /// The call's tag.
    pub(crate) call: u32,
}

/// The last [`CLOSED_CALLS`] closed calls, by key (`tags::call_key`; a call's failure
/// tag is found from it, `tags::failed_call`).
#[derive(Debug, Default)]
pub(crate) struct Closed {
    keys: FxHashSet<u32>,
    order: VecDeque<u32>,
}

impl Closed {
    /// Remember `call` (a collective call's tag, of any variant: every variant is closed)
    /// and so its failure tag; forget the oldest call past [`CLOSED_CALLS`].
    pub(crate) fn close(&mut self, call: u32) {
        let call = tags::call_key(call);
        if self.order.len() == CLOSED_CALLS {
            if let Some(old) = self.order.pop_front() {
                self.keys.remove(&old);
            }
        }
        if self.keys.insert(call) {
            self.order.push_back(call);
        }
    }

    /// What `tag` is, if it is a closed call's.
    pub(crate) fn get(&self, tag: u32) -> Option<ClosedTag> {
        // (No hashing for a user's message, nor before the first call.)
        if tag <= tags::MAX_USER_TYPE || self.keys.is_empty() {
            return None;
        }
        if let Some(call) = tags::failed_call(tag) {
            return self.keys.contains(&call).then_some(ClosedTag::Notice);
        }
        self.keys
            .contains(&tags::call_key(tag))
            .then_some(ClosedTag::Call)
    }
}

impl Mailbox {
    /// Drop every message of `tags`, queued now or arriving later, until
    /// [`Mailbox::keep`] (see the module docs); a collective tag stands for its call, every
    /// variant (`tags::call_key`) and its failure notices (`tags::failed_call`). Returns the
    /// clear-to-sends to issue: one
    /// for each queued rendezvous message of these tags, whose payload is then dropped as
    /// it arrives. A receive still posted or bound for these tags is left alone (its
    /// message is dropped if the receive is abandoned).
    pub(crate) fn discard(&mut self, tags: &[u32]) -> Vec<NeedCts> {
        self.discarded
            .extend(tags.iter().map(|&t| tags::call_key(t)));
        self.refuse_queued()
    }

    /// Deliver `tags` again (their calls' tags are drawn anew: see `Node::collective_tag`).
    pub(crate) fn keep(&mut self, tags: &[u32]) {
        for &t in tags {
            self.discarded.remove(&tags::call_key(t));
        }
    }

    /// Are messages of `tag` dropped (their call failed: [`Mailbox::discard`])? (The
    /// emptiness test first: no hashing per message while no call has failed.)
    pub(super) fn is_discarded(&self, tag: u32) -> bool {
        !self.discarded.is_empty()
            && (self.discarded.contains(&tags::call_key(tag))
                || tags::failed_call(tag).is_some_and(|call| self.discarded.contains(&call)))
    }

    /// This node's part of the collective call whose tag is `call` completed: drop the
    /// call's messages queued here and arriving later, recording each as a stray, and its
    /// failure notices quietly (see the module docs). Returns the clear-to-sends to issue,
    /// as [`Mailbox::discard`] does.
    pub(crate) fn close(&mut self, call: u32) -> Vec<NeedCts> {
        self.closed.close(call);
        self.refuse_queued()
    }

    /// Drop the queued messages that [`Mailbox::refuse`] refuses now (a tag just discarded
    /// or a call just closed); the clear-to-sends to issue.
    fn refuse_queued(&mut self) -> Vec<NeedCts> {
        if self.unexpected.is_empty() {
            return Vec::new();
        }
        let (gone, kept): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.unexpected)
            .into_iter()
            .partition(|e| self.is_discarded(e.tag) || self.closed.get(e.tag).is_some());
        self.unexpected = kept;
        gone.into_iter()
            .filter_map(|e| self.refuse(e).ok().flatten())
            .collect()
    }

    /// The strays dropped since the last call, for the transport to tell their calls'
    /// members of (`base/notice.rs`).
    pub(crate) fn take_strays(&mut self) -> Vec<Stray> {
        std::mem::take(&mut self.strays)
    }

    /// Drop `env` if its tag is discarded or a closed call's (a stray is recorded):
    /// `Ok` with the clear-to-send to issue; else `Err(env)`, to be delivered.
    pub(super) fn refuse(&mut self, env: Envelope) -> Result<Option<NeedCts>, Envelope> {
        if self.is_discarded(env.tag) {
            return Ok(self.drop_envelope(env));
        }
        match self.closed.get(env.tag) {
            None => Err(env),
            Some(kind) => {
                if kind == ClosedTag::Call {
                    self.strays.push(Stray {
                        source: env.source,
                        call: tags::call_key(env.tag),
                    });
                }
                Ok(self.drop_envelope(env))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_call_is_forgotten_past_the_limit() {
        let mut c = Closed::default();
        let call = |n| tags::collective(3, n);
        for n in 0..=CLOSED_CALLS as u32 {
            c.close(call(n));
        }
        assert_eq!(c.get(call(0)), None);
        assert_eq!(c.get(tags::failure(call(0))), None);
        assert_eq!(c.get(call(1)), Some(ClosedTag::Call));
        let last = call(CLOSED_CALLS as u32);
        assert_eq!(c.get(last), Some(ClosedTag::Call));
        assert_eq!(c.get(tags::failure(last)), Some(ClosedTag::Notice));
        assert_eq!(c.get(call(CLOSED_CALLS as u32 + 1)), None);
    }
}
