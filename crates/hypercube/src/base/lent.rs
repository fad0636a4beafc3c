//! Which memory is lent right now (`collectives/lend.rs`): the transport keeps a frame it
//! has written until the neighbor acknowledges it (for a resend if the link dies,
//! `docs/reliability.md`, "Rerouting"), and must not keep the caller's own memory once the
//! lender wants it back. So a kept frame keeps lent memory as it is while its lender is
//! still inside its call — most are acknowledged before the call ends, and then nothing is
//! copied — and the lender, before it waits for its loans, marks its ranges *returning*
//! ([`returning`]) and asks the transport to copy what it still keeps of them
//! (`Transport::release_lent`); a frame written after that is kept as a copy at once
//! ([`unlent`]). With nothing returning, one atomic load.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use bytes::Bytes;

use super::parts::Parts;

/// Lent ranges registered and marked returning.
static RETURNING: AtomicUsize = AtomicUsize::new(0);
/// Lent ranges registered.
static REGISTERED: AtomicUsize = AtomicUsize::new(0);
/// The lent ranges: start and end addresses, and whether their lender is returning.
static RANGES: Mutex<Vec<(usize, usize, bool)>> = Mutex::new(Vec::new());

fn ranges() -> std::sync::MutexGuard<'static, Vec<(usize, usize, bool)>> {
    RANGES.lock().unwrap_or_else(|p| p.into_inner())
}

/// `data` is lent from now until [`unregister`].
pub(crate) fn register(data: &[u8]) {
    let start = data.as_ptr() as usize;
    ranges().push((start, start + data.len(), false));
    REGISTERED.fetch_add(1, Ordering::SeqCst);
}

/// The lender of the `len` bytes at `start` wants them back: what still points into them
/// is to be copied ([`unlent`]).
pub(crate) fn returning(start: usize, len: usize) {
    let mut r = ranges();
    if let Some(x) = r
        .iter_mut()
        .find(|x| (x.0, x.1) == (start, start + len) && !x.2)
    {
        x.2 = true;
        RETURNING.fetch_add(1, Ordering::SeqCst);
    }
}

/// The `len` bytes at address `start`, [`register`]ed, are no longer lent (nothing points
/// into them any more).
pub(crate) fn unregister(start: usize, len: usize) {
    let mut r = ranges();
    if let Some(i) = r.iter().position(|x| (x.0, x.1) == (start, start + len)) {
        REGISTERED.fetch_sub(1, Ordering::SeqCst);
        if r.swap_remove(i).2 {
            RETURNING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The lent range (of `r`) that `b` points into, as whether its lender is returning;
/// `None` when `b` is empty or points elsewhere. Lent ranges do not overlap.
fn lent_range(r: &[(usize, usize, bool)], b: &Bytes) -> Option<bool> {
    let s = b.as_ptr() as usize;
    if b.is_empty() {
        return None;
    }
    r.iter()
        .find(|&&(lo, hi, _)| s >= lo && s < hi)
        .map(|&(_, _, returning)| returning)
}

/// Does `b` point into lent memory (in `r`, the ranges)?
fn points_into_lent(r: &[(usize, usize, bool)], b: &Bytes) -> bool {
    lent_range(r, b).is_some()
}

/// Does `b` point into lent memory whose lender is returning?
fn points_into_returning(r: &[(usize, usize, bool)], b: &Bytes) -> bool {
    lent_range(r, b) == Some(true)
}

/// Does a part of `p` point into lent memory (its frame asks to be acknowledged at once,
/// so that the lender has it back soon: `wire/frame.rs`, `FLAG_ACK_NOW`)? With nothing
/// lent, one atomic load.
pub(crate) fn any_lent(p: &Parts) -> bool {
    if p.is_empty() || REGISTERED.load(Ordering::SeqCst) == 0 {
        return false;
    }
    let r = ranges();
    p.iter().any(|b| points_into_lent(&r, b))
}

/// The bytes of `p` that point into lent memory whose lender is returning.
pub(crate) fn returning_bytes(p: &Parts) -> usize {
    if RETURNING.load(Ordering::SeqCst) == 0 {
        return 0;
    }
    let r = ranges();
    p.iter()
        .filter(|b| points_into_returning(&r, b))
        .map(Bytes::len)
        .sum()
}

/// `p` with every part that points into lent memory whose lender is returning replaced by
/// a copy of it.
pub(crate) fn unlent(p: Parts) -> Parts {
    if RETURNING.load(Ordering::SeqCst) == 0 {
        return p;
    }
    let r = ranges();
    let lent = |b: &Bytes| points_into_returning(&r, b);
    if !p.iter().any(lent) {
        return p;
    }
    let parts: Vec<Bytes> = p
        .iter()
        .map(|b| {
            if lent(b) {
                Bytes::copy_from_slice(b)
            } else {
                b.clone()
            }
        })
        .collect();
    Parts::from(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lent_parts_are_copied_and_others_shared() {
        let lent_bytes = Bytes::from(vec![7u8; 100]);
        let own = Bytes::from(vec![1u8; 10]);
        register(&lent_bytes);
        let kept = unlent(Parts::from(lent_bytes.slice(10..20)));
        assert_eq!(
            kept.iter().next().map(|x| x.as_ptr()),
            Some(lent_bytes[10..].as_ptr()),
            "kept as it is while the lender is inside its call"
        );
        returning(lent_bytes.as_ptr() as usize, lent_bytes.len());
        let p = unlent(Parts::from(vec![lent_bytes.slice(10..20), own.clone()]));
        let v: Vec<&Bytes> = p.iter().collect();
        assert_ne!(v[0].as_ptr(), lent_bytes[10..].as_ptr());
        assert_eq!(&v[0][..], &lent_bytes[10..20]);
        assert_eq!(v[1].as_ptr(), own.as_ptr());
        unregister(lent_bytes.as_ptr() as usize, lent_bytes.len());
        let p = unlent(Parts::from(lent_bytes.slice(0..5)));
        assert_eq!(
            p.iter().next().map(|x| x.as_ptr()),
            Some(lent_bytes.as_ptr())
        );
    }
}
