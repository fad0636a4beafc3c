//! Receives into the caller's memory (`base/landing.rs`): the transport writes the message
//! where the receive says, over TCP straight from the socket, so that a collective that
//! returns its result in the caller's memory (or in a vector it allocates once) does not
//! copy it out of message buffers afterwards.

use super::{Node, RecvRequest};
use crate::base::landing::Landing;
use crate::base::message::Select;
use crate::error::Result;
use crate::transport::RecvToken;

/// Point-to-point receives into the caller's buffer (`Node::recv_into`) of at least this
/// many bytes name it as their landing; shorter messages come eagerly, whole, and are
/// copied as before.
pub(crate) const P2P_FROM: usize = 32 << 10;

/// A posted receive into memory it names ([`Node::irecv_landing`]). Dropping it before it
/// completed withdraws it as [`RecvRequest`]'s drop does, and the transport lets go of the
/// memory before the drop returns.
///
/// Crate-private on purpose: its soundness rests on being dropped (a `mem::forget` would
/// leave the transport writing into memory the caller has freed); the runtime never forgets
/// one.
pub(crate) struct RecvLanding {
    r: RecvRequest,
    to: Landing,
}

/// What a [`RecvLanding`] received.
pub(crate) enum Landed {
    /// A message of the named length, now in the named memory: its tag and sender.
    Here {
        tag: u32,
        source: hypercube_topology::NodeId,
    },
    /// A message of another length, as it came (nothing was written).
    Other(crate::base::message::Message),
}

impl Node {
    /// Post a receive whose message of `head.1 + tail.1` bytes is to be written to `head.0`
    /// (its first `head.1` bytes) and `tail.0` (the rest; `tail.1` = 0 for one piece)
    /// (`Transport::post_recv_landing`).
    ///
    /// # Safety
    /// Both pieces must be writable, must not overlap, and must be neither read nor written
    /// by anyone else until the returned receive has completed or been dropped.
    pub(crate) unsafe fn irecv_landing(
        &self,
        sel: Select,
        head: (*mut u8, usize),
        tail: (*mut u8, usize),
    ) -> Result<RecvLanding> {
        // SAFETY: forwarded: the caller keeps the memory for the transport until the
        // request completes or is dropped, which abandons the receive (the transport then
        // lets go of it) before the drop returns.
        let token = unsafe { self.inner.t.post_recv_landing(sel, head, tail)? };
        // SAFETY: as above; the landing is only used to look at the memory the caller
        // keeps for this request.
        Ok(self.landing_request(token, unsafe { Landing::split(head, tail) }))
    }

    /// Post a receive whose message fills the pieces of `pieces` in turn
    /// (`Transport::post_recv_landing_pieces`).
    ///
    /// # Safety
    /// Every piece must be writable, no two may overlap, and they must be neither read nor
    /// written by anyone else until the returned receive has completed or been dropped;
    /// `pieces` itself must stay valid and unchanged until then.
    pub(crate) unsafe fn irecv_landing_pieces(
        &self,
        sel: Select,
        pieces: &[(*mut u8, usize)],
    ) -> Result<RecvLanding> {
        // SAFETY: forwarded, as in `irecv_landing`.
        let token = unsafe { self.inner.t.post_recv_landing_pieces(sel, pieces)? };
        // SAFETY: as in `irecv_landing`.
        Ok(self.landing_request(token, unsafe { Landing::scattered(pieces) }))
    }

    /// The request of receive `token`, whose message goes to `to`.
    fn landing_request(&self, token: RecvToken, to: Landing) -> RecvLanding {
        RecvLanding {
            r: RecvRequest {
                t: self.inner.t.clone(),
                token,
                done: false,
            },
            to,
        }
    }

    /// Bind the probed message `st` to a receive whose `len` bytes go to `dest`
    /// (`Transport::claim_landing`).
    ///
    /// # Safety
    /// As for [`Node::irecv_landing`].
    pub(crate) unsafe fn claim_landing(
        &self,
        st: &crate::base::message::Status,
        dest: *mut u8,
        len: usize,
    ) -> Result<RecvLanding> {
        // SAFETY: forwarded, as in `irecv_landing`.
        let token = unsafe { self.inner.t.claim_landing(st, dest, len)? };
        // SAFETY: as in `irecv_landing`.
        Ok(self.landing_request(token, unsafe { Landing::from_raw(dest, len) }))
    }
}

impl RecvLanding {
    /// The memory the receive names.
    pub fn memory(&self) -> Landing {
        self.to
    }

    /// Wait for the message: in the named memory, copied there if the transport handed it
    /// over as a buffer of its own (a small message, or a transport that cannot land), or
    /// as it came if its length differs.
    pub fn wait(self) -> Result<Landed> {
        let RecvLanding { r, to } = self;
        // An error drops `r` unfinished: the receive is abandoned and the memory let go.
        let m = r.wait()?;
        let (tag, source) = (m.tag, m.source);
        if to.holds(&m.data) {
            // Landed: the transport's view of the memory, dropped here.
            return Ok(Landed::Here { tag, source });
        }
        if m.data.len() != to.len() {
            return Ok(Landed::Other(m));
        }
        // The message came as a buffer of the transport's own: into the named memory
        // (the contract of `irecv_landing`: the caller's, writable, untouched meanwhile).
        to.write(0, &m.data);
        Ok(Landed::Here { tag, source })
    }
}
