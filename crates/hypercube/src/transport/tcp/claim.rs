//! One reader at a time writes a frame into a receive's memory.
//!
//! A long frame for this node whose receive named its memory is read straight into that
//! memory by its link's reader (`link_landing.rs`), without the engine's state lock. Two
//! copies of one frame can be on their way at once: when a link dies in the middle of a
//! frame that a neighbour passes on, the neighbour pads what is missing with zeros and marks
//! the copy void (`OutFrame::void`), and the sender resends the frame on another route. If
//! both copies were read into the memory, the void copy's zeros could land over the resent
//! copy's bytes, or after the message was complete and the program owned the memory again.
//!
//! So a reader *claims* a frame (its source's slot and its sequence number) before it lands
//! it ([`Claims::take`]): a second copy that begins while the first is being landed is read
//! into a buffer of its own. Whichever copy is acted on first completes the frame; if that
//! is not the claimant's, the claim is revoked ([`Claims::acted`]) before the frame's bytes
//! are copied into the memory. Revoking waits for a write in progress (the claimant writes
//! under the claim's lock, a leaf lock held for one non-blocking read), and the claimant
//! reads the rest of its copy into a buffer; that copy is then a duplicate and is dropped.

use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// A reader's right to write one frame into a receive's memory; see the module
/// documentation. Its lock holds whether the right was revoked.
#[derive(Debug, Default)]
pub(crate) struct Claim(Mutex<bool>);

impl Claim {
    /// A claim of its own (the link reader's tests land frames without an engine).
    #[cfg(test)]
    pub(crate) fn new() -> Arc<Claim> {
        Arc::default()
    }

    /// Hold the claim for one write: the guard says whether it was revoked (then nothing
    /// may be written into the memory). A revocation waits until the guard is dropped.
    pub(crate) fn hold(&self) -> MutexGuard<'_, bool> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Revoke it, after any write in progress.
    fn revoke(&self) {
        *self.hold() = true;
    }
}

/// The frames being landed now, by (source slot, sequence number): the link reading each
/// and its claim. At most one per stream of each source: a frame is landed only in its turn.
#[derive(Default)]
pub(super) struct Claims(FxHashMap<(usize, u64), (usize, Weak<Claim>)>);

impl Claims {
    /// May `link` land frame `seq` from the node in `slot`? Yes, with a new claim, unless
    /// another link's reader is landing a copy of it now.
    pub(crate) fn take(&mut self, slot: usize, seq: u64, link: usize) -> Option<Arc<Claim>> {
        if let Some((l, w)) = self.0.get(&(slot, seq)) {
            if *l != link && w.strong_count() > 0 {
                return None;
            }
        }
        let claim = Arc::new(Claim::default());
        self.0.insert((slot, seq), (link, Arc::downgrade(&claim)));
        Some(claim)
    }

    /// Frame `seq` from `slot`, a copy that came on `link`, is acted on: another link's
    /// claim of it is revoked (its reader may be writing now: this waits for that write).
    pub(crate) fn acted(&mut self, slot: usize, seq: u64, link: usize) {
        if self.0.is_empty() {
            return;
        }
        if let Some((l, w)) = self.0.remove(&(slot, seq)) {
            if l != link {
                if let Some(c) = w.upgrade() {
                    c.revoke();
                }
            }
        }
    }

    /// The copy of frame `seq` from `slot` that `link` landed was void (cut short on its
    /// way): its claim ends; the resent copy may land.
    pub(crate) fn void(&mut self, slot: usize, seq: u64, link: usize) {
        if self.0.get(&(slot, seq)).is_some_and(|(l, _)| *l == link) {
            self.0.remove(&(slot, seq));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    use std::time::Duration;

    use super::Claims;

    /// A revocation from another link waits for the claimant's write in progress (its
    /// guard): the memory is the program's again only after that write has ended.
    #[test]
    fn a_revocation_waits_for_the_write_in_progress() {
        let mut c = Claims::default();
        let claim = c.take(1, 7, 0).expect("the first copy may land");
        let written = Arc::new(AtomicBool::new(false));
        let guard = claim.hold(); // the reader is writing into the memory
        let w = written.clone();
        let other = std::thread::spawn(move || {
            c.acted(1, 7, 1);
            w.load(SeqCst)
        });
        std::thread::sleep(Duration::from_millis(50));
        written.store(true, SeqCst); // the write ends,
        drop(guard); // and the reader lets go
        assert!(
            other.join().expect("the revoking thread"),
            "the revocation returned while a write was in progress"
        );
        assert!(*claim.hold(), "revoked");
    }

    /// A second link may not land a frame another link's reader is landing; it may once
    /// that reader let go of its claim (its link died) or the copy was void. Acting on the
    /// frame from another link revokes the claim; from the claimant's link it does not.
    #[test]
    fn one_reader_lands_a_frame_and_acting_on_another_copy_revokes_it() {
        let mut c = Claims::default();
        let first = c.take(1, 7, 0).expect("the first copy may land");
        assert!(
            c.take(1, 7, 1).is_none(),
            "a second copy while the first lands"
        );
        assert!(c.take(1, 8, 1).is_some(), "another frame");
        assert!(c.take(2, 7, 1).is_some(), "another source");
        c.acted(1, 7, 1);
        assert!(*first.hold(), "acted on from another link: revoked");

        let first = c.take(1, 9, 0).expect("lands");
        c.acted(1, 9, 0);
        assert!(!*first.hold(), "its own copy acted on: not revoked");

        let first = c.take(1, 10, 0).expect("lands");
        drop(first);
        assert!(c.take(1, 10, 1).is_some(), "the first reader let go");

        let _first = c.take(1, 11, 0).expect("lands");
        c.void(1, 11, 1);
        assert!(
            c.take(1, 11, 1).is_none(),
            "another link's void copy ends nothing"
        );
        c.void(1, 11, 0);
        assert!(c.take(1, 11, 1).is_some(), "the claimant's copy was void");
    }
}
