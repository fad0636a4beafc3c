//! Receiving into the caller's memory: a [`Landing`] is the memory a receive names for its
//! message (`Node::irecv_landing`), so that the transport can put the payload there as it
//! reads it — over TCP straight from the socket (`transport/tcp/link_landing.rs`), so
//! that a typed collective does not copy its result out of message buffers afterwards
//! (issue 25; MPI's buffer semantics).
//!
//! A landing is a raw pointer and a length — or two: the message's first `head` bytes go
//! to one place and the rest to another ([`Landing::split`]; the store-and-forward
//! all-to-all lands the blocks that end at this node in the result and the ones it passes
//! on in a buffer of its own, from one message) — or a table of many, filled in turn
//! ([`Landing::scattered`]; the all-port all-gather lands the parts of several blocks,
//! each where it belongs in the result, from one message). The receive request that made it borrows the
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
    /// The message's bytes `head ..` go to `tail` (`head == len`: one piece).
    head: usize,
    tail: *mut u8,
    /// A landing of many pieces ([`Landing::scattered`]): the caller's table of them, in
    /// message order, `pieces` entries (0: `head` and `tail` describe the landing).
    table: *const (*mut u8, usize),
    pieces: usize,
}

// SAFETY: a `Landing` is addresses and lengths; the memory behind it is written only by
// the thread that holds the transport's lock on the message (the state lock, or the input
// lock of the link reading it and its claim of the frame: `transport/tcp/claim.rs`), while
// the request that lent it keeps it borrowed.
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
        Landing {
            ptr,
            len,
            head: len,
            tail: ptr,
            table: std::ptr::null(),
            pieces: 0,
        }
    }

    /// The landing of a message of `head.1 + tail.1` bytes whose first `head.1` go to
    /// `head.0` and the rest to `tail.0`.
    ///
    /// # Safety
    /// As for [`Landing::from_raw`], for each of the two pieces; they must not overlap.
    pub unsafe fn split(head: (*mut u8, usize), tail: (*mut u8, usize)) -> Landing {
        Landing {
            ptr: head.0,
            len: head.1 + tail.1,
            head: head.1,
            tail: tail.0,
            table: std::ptr::null(),
            pieces: 0,
        }
    }

    /// The landing of a message whose bytes fill the pieces of `table` in turn: the first
    /// `table[0].1` bytes go to `table[0].0`, the next `table[1].1` to `table[1].0`, and so
    /// on. An empty table is the landing of an empty message.
    ///
    /// # Safety
    /// As for [`Landing::from_raw`], for each piece; the pieces must not overlap, and
    /// `table` itself must stay valid and unchanged for as long as the pieces must.
    pub(crate) unsafe fn scattered(table: &[(*mut u8, usize)]) -> Landing {
        let Some(&(ptr, head)) = table.first() else {
            // SAFETY: no bytes at all.
            return unsafe { Landing::from_raw(std::ptr::NonNull::dangling().as_ptr(), 0) };
        };
        Landing {
            ptr,
            len: table.iter().map(|p| p.1).sum(),
            head,
            tail: ptr,
            table: table.as_ptr(),
            pieces: table.len(),
        }
    }

    /// Its length in bytes (both pieces).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Where the message's byte `off` goes (`off <= len`), and how many bytes from there
    /// on are contiguous (to the end of its piece): where the transport writes.
    pub fn at(&self, off: usize) -> (*mut u8, usize) {
        assert!(off <= self.len, "landing offset out of range");
        if self.pieces > 0 {
            // SAFETY: the table has `pieces` entries and is valid while the landing is
            // (`scattered`); the pointer returned lies in a piece, or one past its end.
            let table = unsafe { std::slice::from_raw_parts(self.table, self.pieces) };
            let mut start = 0;
            for &(ptr, len) in table {
                if off < start + len {
                    return (unsafe { ptr.add(off - start) }, start + len - off);
                }
                start += len;
            }
            // `off == len`: the end of the last piece.
            let (ptr, len) = table[self.pieces - 1];
            return (unsafe { ptr.add(len) }, 0);
        }
        // SAFETY: within the landing's memory (or one past a piece's end), by the assert.
        unsafe {
            if off < self.head || self.head == self.len {
                (self.ptr.add(off), self.head - off)
            } else {
                (self.tail.add(off - self.head), self.len - off)
            }
        }
    }

    /// Copy `src` into the landing at `off`, across the pieces' seam if it reaches it.
    /// Panics if it does not fit (the mailbox checks lengths against the announced message
    /// first).
    pub fn write(&self, mut off: usize, mut src: &[u8]) {
        assert!(
            off.checked_add(src.len()).is_some_and(|e| e <= self.len),
            "landing write out of range"
        );
        while !src.is_empty() {
            let (to, room) = self.at(off);
            let n = room.min(src.len());
            // SAFETY: `to .. to + n` is inside one piece of the landing (`at`), which the
            // transport may write (see `from_raw`), and `src` is a different allocation (a
            // message buffer).
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), to, n) };
            (off, src) = (off + n, &src[n..]);
        }
    }

    /// A copy of the message's first `n` bytes (the part of a message that arrived when
    /// its receive took the landing back).
    pub fn copy_of(&self, n: usize) -> Vec<u8> {
        self.copy_range(0, n)
    }

    /// A copy of the message's bytes `off .. off + n`, across the seam if they reach it.
    pub fn copy_range(&self, off: usize, n: usize) -> Vec<u8> {
        assert!(
            off.checked_add(n).is_some_and(|e| e <= self.len),
            "landing read out of range"
        );
        let mut v = Vec::with_capacity(n);
        let mut at = off;
        while at < off + n {
            let (from, room) = self.at(at);
            let k = room.min(off + n - at);
            // SAFETY: `from .. from + k` is inside one piece of the landing (`at`), valid
            // until the transport lets go of it.
            v.extend_from_slice(unsafe { std::slice::from_raw_parts(from, k) });
            at += k;
        }
        v
    }

    /// The landed message as message bytes, without a copy: what the transport hands the
    /// receive of a landed message. Only the receive request looks at it ([`holds`]). It
    /// spans the first piece only (a split landing is not one slice of memory).
    ///
    /// [`holds`]: Landing::holds
    pub fn view(&self) -> Bytes {
        Bytes::from_owner(View(*self))
    }

    /// Is `b` the landing's [`view`](Landing::view) (a landed message's bytes)?
    pub fn holds(&self, b: &Bytes) -> bool {
        b.len() == self.head && std::ptr::eq(b.as_ptr(), self.ptr)
    }
}

/// The owner behind [`Landing::view`].
struct View(Landing);

impl AsRef<[u8]> for View {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: the landing is valid while its receive request lives, and the request
        // drops the view before it returns (module documentation).
        unsafe { std::slice::from_raw_parts(self.0.ptr, self.0.head) }
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
        assert_eq!(l.at(8).1, 0, "no room at the end");
        drop(v);
        assert_eq!(buf, vec![0, 0, 1, 2, 3, 0, 0, 0]);
    }

    /// A split landing: bytes before the seam go to one buffer, the rest to the other, a
    /// write across the seam too; `at` says the room to the end of a piece.
    #[test]
    fn a_split_landing_writes_both_pieces() {
        let (mut a, mut b) = (vec![0u8; 3], vec![0u8; 4]);
        // SAFETY: `a` and `b` outlive the landing and are not touched meanwhile.
        let l = unsafe { Landing::split((a.as_mut_ptr(), 3), (b.as_mut_ptr(), 4)) };
        assert_eq!(l.len(), 7);
        assert_eq!(l.at(1), (a[1..].as_mut_ptr(), 2));
        assert_eq!(l.at(3), (b.as_mut_ptr(), 4));
        l.write(1, &[1, 2, 3, 4]);
        l.write(5, &[5, 6]);
        assert_eq!(l.copy_of(7), vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(l.copy_range(2, 3), vec![2, 3, 4]);
        let v = l.view();
        assert!(l.holds(&v) && v.len() == 3);
        drop(v);
        assert_eq!((a, b), (vec![0, 1, 2], vec![3, 4, 5, 6]));
    }

    /// A scattered landing: the message's bytes fill the pieces in turn, a write across
    /// several of them too (an empty piece is skipped).
    #[test]
    fn a_scattered_landing_fills_its_pieces_in_turn() {
        let (mut a, mut b, mut c) = (vec![0u8; 2], vec![0u8; 3], vec![0u8; 2]);
        let table = [
            (a.as_mut_ptr(), 2),
            (b.as_mut_ptr(), 0),
            (b.as_mut_ptr(), 3),
            (c.as_mut_ptr(), 2),
        ];
        // SAFETY: the buffers and the table outlive the landing, untouched meanwhile.
        let l = unsafe { Landing::scattered(&table) };
        assert_eq!(l.len(), 7);
        assert_eq!(l.at(2), (b.as_mut_ptr(), 3));
        assert_eq!(l.at(7).1, 0, "no room at the end");
        l.write(1, &[1, 2, 3, 4, 5]);
        l.write(6, &[6]);
        assert_eq!(l.copy_of(7), vec![0, 1, 2, 3, 4, 5, 6]);
        let v = l.view();
        assert!(l.holds(&v) && v.len() == 2);
        drop(v);
        assert_eq!((a, b, c), (vec![0, 1], vec![2, 3, 4], vec![5, 6]));
        // SAFETY: no memory.
        assert_eq!(unsafe { Landing::scattered(&[]) }.len(), 0);
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
