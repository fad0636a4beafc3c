//! Receiving into the caller's memory: a [`Landing`] is the memory a receive names for its
//! message (`Node::irecv_landing`), so that the transport can put the payload there as it
//! reads it — over TCP straight from the socket (`transport/tcp/link_landing.rs`), so
//! that a typed collective does not copy its result out of message buffers afterwards
//! (issue 25; MPI's buffer semantics).
//!
//! A landing is a raw pointer and a length. The receive request that made it borrows the
//! memory mutably for as long as it lives (`node::landing::RecvLanding`), and its `Drop` takes the
//! landing back from the transport before the borrow ends (`Transport::abandon_recv`):
//! what of the message arrived is copied into a buffer of the transport's own, and no
//! reader writes into the caller's memory from then on. The transport delivers a landed
//! message as a [`Landing::view`] of that memory, which only the request looks at (it
//! compares its address, [`Landing::holds`]) and drops at once.

use bytes::Bytes;

/// Memory a receive names for its message; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Landing {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a `Landing` is an address and a length; the memory behind it is written only by
// the thread that holds the transport's lock on the message (the state lock, or the input
// lock of the link reading it), while the request that lent it keeps it borrowed.
unsafe impl Send for Landing {}
// SAFETY: as above.
unsafe impl Sync for Landing {}

impl Landing {
    /// The landing of `buf` (the tests' way; the transport takes raw parts).
    ///
    /// # Safety
    /// As for [`Landing::from_raw`].
    #[cfg(test)]
    pub unsafe fn new(buf: &mut [u8]) -> Landing {
        // SAFETY: forwarded.
        unsafe { Landing::from_raw(buf.as_mut_ptr(), buf.len()) }
    }

    /// The landing of the `len` bytes at `ptr`, which may not be initialized yet (a new
    /// vector's capacity): no reference to them is made.
    ///
    /// # Safety
    /// `ptr .. ptr + len` must be one writable allocation that stays valid, and is neither
    /// read nor written by anyone but the transport, until the transport has let go of the
    /// landing: the receive that names it completed and its message was taken, or
    /// `Transport::abandon_recv` returned for it.
    pub unsafe fn from_raw(ptr: *mut u8, len: usize) -> Landing {
        Landing { ptr, len }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The address `off` bytes in (`off <= len`), where the transport writes.
    pub fn at(&self, off: usize) -> *mut u8 {
        assert!(off <= self.len, "landing offset out of range");
        // SAFETY: within the landing's memory (or one past its end), by the assert.
        unsafe { self.ptr.add(off) }
    }

    /// Copy `src` into the landing at `off`. Panics if it does not fit (the mailbox checks
    /// lengths against the announced message first).
    pub fn write(&self, off: usize, src: &[u8]) {
        assert!(
            off.checked_add(src.len()).is_some_and(|e| e <= self.len),
            "landing write out of range"
        );
        // SAFETY: the range is inside the landing (asserted), which the transport may write
        // (see `new`), and `src` is a different allocation (a message buffer).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(off), src.len()) }
    }

    /// A copy of the first `n` bytes (the part of a message that arrived when its receive
    /// took the landing back).
    pub fn copy_of(&self, n: usize) -> Vec<u8> {
        assert!(n <= self.len, "landing read out of range");
        // SAFETY: inside the landing, which is valid until the transport lets go of it.
        unsafe { std::slice::from_raw_parts(self.ptr, n) }.to_vec()
    }

    /// The whole landing as message bytes, without a copy: what the transport hands the
    /// receive of a landed message. Only the receive request looks at it ([`holds`]).
    ///
    /// [`holds`]: Landing::holds
    pub fn view(&self) -> Bytes {
        Bytes::from_owner(View(*self))
    }

    /// Does `b` lie in the landing's memory (a landed message's bytes)?
    pub fn holds(&self, b: &Bytes) -> bool {
        b.len() == self.len && std::ptr::eq(b.as_ptr(), self.ptr)
    }

    /// Does the landing's memory contain address `p`?
    pub fn contains(&self, p: *const u8) -> bool {
        let (s, a) = (self.ptr as usize, p as usize);
        a >= s && a < s + self.len
    }
}

/// The owner behind [`Landing::view`].
struct View(Landing);

impl AsRef<[u8]> for View {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the landing is valid while its receive request lives, and the request
        // drops the view before it returns (module documentation).
        unsafe { std::slice::from_raw_parts(self.0.ptr, self.0.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::Landing;

    #[test]
    fn write_view_and_copy() {
        let mut buf = vec![0u8; 8];
        // SAFETY: `buf` outlives the landing and is not touched meanwhile.
        let l = unsafe { Landing::new(&mut buf) };
        l.write(2, &[1, 2, 3]);
        assert_eq!(l.copy_of(5), vec![0, 0, 1, 2, 3]);
        let v = l.view();
        assert!(l.holds(&v));
        assert!(!l.holds(&v.slice(1..)));
        assert!(l.contains(l.at(7)) && !l.contains(l.at(8)));
        drop(v);
        assert_eq!(buf, vec![0, 0, 1, 2, 3, 0, 0, 0]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn a_write_past_the_end_panics() {
        let mut buf = vec![0u8; 4];
        // SAFETY: as above.
        let l = unsafe { Landing::new(&mut buf) };
        l.write(3, &[1, 2]);
    }
}
