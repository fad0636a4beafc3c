//! Sending borrowed memory without copying it: [`lend`] runs a closure with a [`Lender`]
//! that turns the caller's slices into message bytes ([`Lender::lend`]), and returns only
//! when the transport — and, over the in-process transport, the receiver, which is handed
//! the same bytes — has dropped every copy of them: for TCP, when the kernel has the bytes.
//! So a collective can send part of the caller's `&[T]` as it is (reduce-scatter's first
//! step) where it would otherwise copy it into a message buffer it owns.
//!
//! Over TCP a written frame is also kept until the neighbor acknowledges it (for a resend
//! if the link dies); it keeps the lent memory as it is while the call runs, and when the
//! call is about to return the `Lender` asks the transport to copy what it still keeps of
//! it (`release`, `base::lent`): usually nothing, the acknowledgement having come first.
//!
//! A slice shorter than [`LEND_MIN`] is copied instead: a lent frame asks its receiver for
//! an acknowledgement at once (wire protocol 4), a frame and a wake-up on each side that
//! cost more than copying up to some tens of kilobytes.
//!
//! The wait happens when the `Lender` is dropped, at the end of [`lend`] or while
//! unwinding, and it cannot be skipped: the `Lender` lives on [`lend`]'s stack and is only
//! borrowed by the closure, so no borrowed byte outlives the borrow. (If a copy were never
//! dropped the call would wait forever — a hang, never a use after free.)

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{Arc, Condvar, Mutex};

use bytes::Bytes;

thread_local! {
    /// Message bytes that own their memory, given by the caller for the call under way on
    /// this thread ([`given`]).
    static GIVEN: RefCell<Option<Bytes>> = const { RefCell::new(None) };
}

/// Run `f` with `owner` — message bytes that own their memory: an owned vector the caller
/// gave the call (`alltoall_vec`) — known to every [`Lender`] on this thread. A slice of
/// that memory is then sent as a view of `owner` (which keeps the memory alive by itself),
/// not lent: no acknowledgement asked at once, and no wait for one when the call ends. (The
/// lent last step of an all-to-all waited for it on about 80 % of the 1 MiB calls on 4
/// ranks, 110–220 µs per call on average: `docs/perf/typed.md`, "`alltoall_vec` gives its
/// vector away".)
pub(crate) fn given<R>(owner: &Bytes, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Bytes>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            GIVEN.with(|g| *g.borrow_mut() = before);
        }
    }
    let _restore = Restore(GIVEN.with(|g| g.replace(Some(owner.clone()))));
    f()
}

/// `data` as a view of the given owner ([`given`]), if it lies in that owner's memory.
fn view_of_given(data: &[u8]) -> Option<Bytes> {
    GIVEN.with(|g| {
        let g = g.borrow();
        let owner = g.as_ref()?;
        let start = owner.as_ptr() as usize;
        let at = data.as_ptr() as usize;
        (at >= start && at + data.len() <= start + owner.len()).then(|| owner.slice_ref(data))
    })
}

/// Slices shorter than this are copied, not lent. A lent frame is acknowledged at once, so
/// each lent message costs a frame back, the wake-ups it makes on both sides and the
/// lender's wait; below this length copying is cheaper. Measured with the recursive
/// halving's lent first step (`reduce_scatter/hypercube.rs`) on loopback, lent against
/// copied: 8 B – 1 KiB 10–19 % faster copied; slices of 16 KiB 19 against 24 µs per call
/// copied, 32 KiB 338 against 401 µs (np = 4), 64 KiB even at np = 2 and lent faster at
/// np = 4 (794 against 1005 µs), 512 KiB lent faster (218 against 265 µs)
/// (`docs/perf/analysis.md`, "Small lent slices").
pub(crate) const LEND_MIN: usize = 64 << 10;

/// How many message handles still point at lent memory, and the slices lent (registered
/// with `base::lent` until they are all let go of).
#[derive(Default)]
struct Count {
    /// The handles alive, and whether the `Lender` waits for the last to go (only then
    /// does the last one wake it: a wake-up is a system call).
    live: Mutex<(usize, bool)>,
    gone: Condvar,
    lent: Mutex<Vec<(usize, usize)>>,
}

/// Turns slices that live for `'a` into message bytes; see the module documentation.
pub(crate) struct Lender<'a> {
    count: Arc<Count>,
    /// Asks the transport to copy what it still keeps of lent memory marked returning.
    release: &'a dyn Release,
    _borrow: PhantomData<&'a [u8]>,
}

/// One lent slice, the owner behind a `Bytes`: gives the slice, counts itself.
struct Loan {
    ptr: *const u8,
    len: usize,
    count: Arc<Count>,
}

// SAFETY: a `Loan` only reads memory that the `Lender` keeps borrowed (shared, immutable)
// until the `Loan` is dropped; reading shared memory from any thread is sound.
unsafe impl Send for Loan {}
// SAFETY: as above; `as_ref` only reads.
unsafe impl Sync for Loan {}

impl AsRef<[u8]> for Loan {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr..ptr + len` is a slice borrowed for the `Lender`'s lifetime, and the
        // `Lender` waits in its `Drop` until every `Loan` is gone.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for Loan {
    fn drop(&mut self) {
        let mut live = self.count.live.lock().unwrap_or_else(|p| p.into_inner());
        live.0 -= 1;
        if live.0 == 0 && live.1 {
            self.count.gone.notify_all();
        }
    }
}

impl<'a> Lender<'a> {
    /// Elements `xs` as message bytes: their memory lent ([`Lender::lend`]) where it is
    /// their wire encoding (`Pod::MEMORY_IS_WIRE`), else encoded into a buffer of their own.
    pub(crate) fn lend_elems<T: crate::collectives::pod::Pod>(&self, xs: &'a [T]) -> Bytes {
        if T::MEMORY_IS_WIRE {
            self.lend(crate::collectives::pod::as_bytes(xs))
        } else {
            crate::collectives::element::encode(xs)
        }
    }

    /// `data` as message bytes: a view of the given owner if it lies in one ([`given`]),
    /// else without a copy (lent), or copied if it is shorter than [`LEND_MIN`].
    pub(crate) fn lend(&self, data: &'a [u8]) -> Bytes {
        if let Some(view) = view_of_given(data) {
            return view;
        }
        if data.len() < LEND_MIN {
            return Bytes::copy_from_slice(data);
        }
        self.count.live.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
        crate::base::lent::register(data);
        self.count
            .lent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((data.as_ptr() as usize, data.len()));
        Bytes::from_owner(Loan {
            ptr: data.as_ptr(),
            len: data.len(),
            count: self.count.clone(),
        })
    }
}

impl Drop for Lender<'_> {
    /// Mark the lent ranges returning, have the transport copy what it keeps of them, and
    /// wait until no message handle points at lent memory.
    fn drop(&mut self) {
        for &(start, len) in self
            .count
            .lent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            crate::base::lent::returning(start, len);
        }
        self.release.release();
        let mut live = self.count.live.lock().unwrap_or_else(|p| p.into_inner());
        while live.0 > 0 {
            live.1 = true;
            live = self
                .count
                .gone
                .wait(live)
                .unwrap_or_else(|p| p.into_inner());
        }
        drop(live);
        for (start, len) in self
            .count
            .lent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            crate::base::lent::unregister(start, len);
        }
    }
}

/// What a returning [`Lender`] calls to have the transport copy what it still keeps of lent
/// memory marked returning (`Transport::release_lent`): the node ([`crate::node::Node`]),
/// or any function (the tests').
pub(crate) trait Release {
    /// Copy what is kept of lent memory marked returning.
    fn release(&self);
}

impl<F: Fn()> Release for F {
    fn release(&self) {
        self();
    }
}

impl Release for crate::node::Node {
    fn release(&self) {
        self.release_lent();
    }
}

/// Run `f` with a [`Lender`] of memory that lives for `'a`; return when every byte it lent
/// has been let go of. `release` is called first ([`Release`]). A collective lends through
/// `Ctx::lend`, which also tells the call's members of an error before the wait.
pub(crate) fn lend<'a, R>(release: &'a dyn Release, f: impl FnOnce(&Lender<'a>) -> R) -> R {
    let lender = Lender {
        count: Arc::new(Count::default()),
        release,
        _borrow: PhantomData,
    };
    f(&lender)
}

#[cfg(test)]
mod tests {
    use super::lend;
    use std::time::{Duration, Instant};

    /// `lend` returns only after the last copy of the lent bytes is dropped, on another
    /// thread, 50 ms later.
    #[test]
    fn lend_waits_for_the_last_copy() {
        let data = vec![7u8; super::LEND_MIN + 20];
        let t0 = Instant::now();
        let seen = lend(&|| {}, |l| {
            let b = l.lend(&data[10..10 + super::LEND_MIN]);
            let copy = b.slice(2..5);
            drop(b);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                copy.to_vec()
            })
        });
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert_eq!(seen.join().unwrap(), vec![7u8; 3]);
        // Nothing lent: no wait.
        assert_eq!(lend(&|| {}, |l| l.lend(&[]).len()), 0);
    }

    /// Slices of memory the caller gave (`given`) are views of its owner, whatever their
    /// length: not lent (the lender does not wait for them) and not copied; outside
    /// `given`, or outside the owner's memory, they are lent as before.
    #[test]
    fn slices_of_given_memory_are_views_of_it() {
        let live = |l: &super::Lender<'_>| l.count.live.lock().unwrap().0;
        let owner = bytes::Bytes::from(vec![5u8; super::LEND_MIN * 2]);
        super::given(&owner, || {
            lend(&|| {}, |l| {
                let big = l.lend(&owner[..]);
                let small = l.lend(&owner[3..10]);
                assert_eq!(big.as_ptr(), owner.as_ptr());
                assert_eq!(small.as_ptr(), owner[3..].as_ptr(), "a view, not a copy");
                assert_eq!(live(l), 0, "nothing lent");
            })
        });
        let other = vec![1u8; super::LEND_MIN];
        super::given(&owner, || {
            lend(&|| {}, |l| {
                drop(l.lend(&other));
                assert!(
                    l.count.lent.lock().unwrap().len() == 1,
                    "other memory is lent"
                );
            });
        });
        // Outside `given` the owner's memory is lent again.
        lend(&|| {}, |l| {
            let b = l.lend(&owner[..]);
            assert_eq!(live(l), 1);
            drop(b);
        });
        assert!(super::GIVEN.with(|g| g.borrow().is_none()));
    }

    /// A slice shorter than `LEND_MIN` is copied (another address, and `lend` does not
    /// wait for the copy); one of `LEND_MIN` bytes is lent as it is.
    #[test]
    fn short_slices_are_copied() {
        let data = vec![3u8; super::LEND_MIN];
        let short = lend(&|| {}, |l| l.lend(&data[..super::LEND_MIN - 1]));
        assert_ne!(short.as_ptr(), data.as_ptr());
        assert_eq!(short.len(), super::LEND_MIN - 1);
        drop(short);
        lend(&|| {}, |l| {
            let b = l.lend(&data);
            assert_eq!(b.as_ptr(), data.as_ptr());
        });
    }
}
