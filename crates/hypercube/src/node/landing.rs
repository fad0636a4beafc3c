//! Receives into the caller's memory (`base/landing.rs`): the transport writes the message
//! where the receive says, over TCP straight from the socket, so that a collective that
//! returns its result in the caller's memory (or in a vector it allocates once) does not
//! copy it out of message buffers afterwards.

use bytes::Bytes;

use super::{Node, RecvRequest};
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
    dest: *mut u8,
    len: usize,
}

/// What a [`RecvLanding`] received.
pub(crate) enum Landed {
    /// A message of the named length, now in the named memory.
    Here { tag: u32 },
    /// A message of another length, as it came (nothing was written).
    Other(crate::base::message::Message),
}

impl Node {
    /// Post a receive whose message of `len` bytes is to be written to `dest`
    /// (`Transport::post_recv_landing`).
    ///
    /// # Safety
    /// `dest .. dest + len` must be writable, and neither read nor written by anyone else,
    /// until the returned receive has completed or been dropped.
    pub(crate) unsafe fn irecv_landing(
        &self,
        sel: Select,
        dest: *mut u8,
        len: usize,
    ) -> Result<RecvLanding> {
        // SAFETY: forwarded: the caller keeps the memory for the transport until the
        // request completes or is dropped, which abandons the receive (the transport then
        // lets go of it) before the drop returns.
        let token = unsafe { self.inner.t.post_recv_landing(sel, dest, len)? };
        Ok(self.landing_request(token, dest, len))
    }

    /// The request of receive `token`, whose message goes to `dest .. dest + len`.
    fn landing_request(&self, token: RecvToken, dest: *mut u8, len: usize) -> RecvLanding {
        RecvLanding {
            r: RecvRequest {
                t: self.inner.t.clone(),
                token,
                done: false,
            },
            dest,
            len,
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
        Ok(self.landing_request(token, dest, len))
    }
}

impl RecvLanding {
    /// The memory the receive names: its address and length.
    pub fn memory(&self) -> (*mut u8, usize) {
        (self.dest, self.len)
    }

    /// Wait for the message: in the named memory, copied there if the transport handed it
    /// over as a buffer of its own (a small message, or a transport that cannot land), or
    /// as it came if its length differs.
    pub fn wait(self) -> Result<Landed> {
        let RecvLanding { r, dest, len } = self;
        // An error drops `r` unfinished: the receive is abandoned and the memory let go.
        let m = r.wait()?;
        if m.data.len() != len {
            return Ok(Landed::Other(m));
        }
        let tag = m.tag;
        if !std::ptr::eq(m.data.as_ptr(), dest) {
            // SAFETY: `dest .. dest + len` is the caller's writable memory (the contract of
            // `irecv_landing`), and the message is a buffer of the transport's own.
            unsafe { std::ptr::copy_nonoverlapping(m.data.as_ptr(), dest, len) };
        }
        drop::<Bytes>(m.data);
        Ok(Landed::Here { tag })
    }
}
