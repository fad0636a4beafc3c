//! The frames of each (source, destination) pair, numbered end to end: every frame a node
//! sends to another (not the link-local ones) takes the next number of its stream, and the
//! destination acts on them in that order, whatever paths they took — holding a frame that
//! came early until the ones before it are in, and dropping one it has seen (a frame resent
//! after a link died, whose first copy got through after all). Two streams per pair: the
//! messages (`Eager`, `Rts`, `Data`, `Fin`), and the flow control (`Cts`, `Credit`), which
//! overtakes queued data on a link and so must not wait behind it at the other end.
//! See `docs/reliability.md`, "Rerouting".

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use bytes::Bytes;

use crate::wire::frame::{Header, Kind, CONTROL_STREAM};

/// A frame that came before its turn, with its body and the link it came on.
pub(crate) type Early = (Header, Bytes, usize);

/// The numbers of the streams of this node's pairs, both ways.
pub(crate) struct Streams {
    /// Per node slot: the next number of each stream to that node (messages, control).
    next_out: Vec<[u64; 2]>,
    /// Per node slot: the number of the next frame to act on from that node, per stream.
    next_in: Vec<[u64; 2]>,
    /// Frames that came early, per (node slot, stream), by number.
    early: FxHashMap<(usize, usize), BTreeMap<u64, Early>>,
}

/// The stream of a frame kind: 1 for flow control, 0 for messages.
fn stream(kind: Kind) -> usize {
    usize::from(matches!(kind, Kind::Cts | Kind::Credit))
}

/// What to do with an arrived frame.
pub(crate) enum Turn {
    /// Act on it now (then on [`Streams::next_early`] until it returns nothing).
    Now,
    /// It came early: held until its turn.
    Held,
    /// Seen already: drop it.
    Duplicate,
}

impl Streams {
    /// Streams with `slots` nodes (the host included).
    pub fn new(slots: usize) -> Streams {
        Streams {
            next_out: vec![[0; 2]; slots],
            next_in: vec![[0; 2]; slots],
            early: FxHashMap::default(),
        }
    }

    /// Number `h`, a frame this node sends to the node in `slot`.
    pub fn number(&mut self, slot: usize, h: &mut Header) {
        let s = stream(h.kind);
        let n = &mut self.next_out[slot][s];
        h.seq = *n | if s == 1 { CONTROL_STREAM } else { 0 };
        *n += 1;
    }

    /// A frame from the node in `slot` arrived here, on `link`: act on it now, hold it, or
    /// drop it. Only a frame for [`Turn::Now`] advances its stream.
    pub fn arrive(&mut self, slot: usize, h: &Header, body: &Bytes, link: usize) -> Turn {
        let s = stream(h.kind);
        let n = h.seq & !CONTROL_STREAM;
        let next = &mut self.next_in[slot][s];
        if (h.seq & CONTROL_STREAM != 0) != (s == 1) {
            // A number from the other stream: a peer's bug; acting on it would stall the
            // stream, so treat it as seen.
            return Turn::Duplicate;
        }
        if n == *next {
            *next += 1;
            return Turn::Now;
        }
        if n < *next {
            return Turn::Duplicate;
        }
        let held = self.early.entry((slot, s)).or_default();
        if held.contains_key(&n) {
            return Turn::Duplicate;
        }
        held.insert(n, (*h, body.clone(), link));
        Turn::Held
    }

    /// Is `h`, from the node in `slot`, the next frame of its stream to act on?
    pub fn in_turn(&self, slot: usize, h: &Header) -> bool {
        let s = stream(h.kind);
        (h.seq & CONTROL_STREAM != 0) == (s == 1)
            && h.seq & !CONTROL_STREAM == self.next_in[slot][s]
    }

    /// The next held frame of the stream of `kind` from `slot` whose turn has come, if any
    /// (its stream advanced).
    pub fn next_early(&mut self, slot: usize, kind: Kind) -> Option<Early> {
        let s = stream(kind);
        let held = self.early.get_mut(&(slot, s))?;
        let next = &mut self.next_in[slot][s];
        let e = held.remove(next)?;
        *next += 1;
        if held.is_empty() {
            self.early.remove(&(slot, s));
        }
        Some(e)
    }

    /// Frames held, waiting for earlier ones.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.early.values().map(BTreeMap::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: Kind, seq: u64) -> Header {
        let mut h = Header::control(kind, 1, 0, 0, 0);
        h.seq = seq;
        h
    }

    #[test]
    fn frames_are_acted_on_in_number_order_once() {
        let mut out = Streams::new(2);
        let mut hs: Vec<Header> = (0..4).map(|_| frame(Kind::Rts, 0)).collect();
        for h in &mut hs {
            out.number(0, h);
        }
        let mut cts = frame(Kind::Cts, 0);
        out.number(0, &mut cts);
        assert_eq!(cts.seq, CONTROL_STREAM);
        assert_eq!(hs[3].seq, 3);

        let mut inn = Streams::new(2);
        let b = Bytes::new();
        assert!(matches!(inn.arrive(1, &hs[0], &b, 0), Turn::Now));
        assert!(matches!(inn.arrive(1, &hs[2], &b, 0), Turn::Held));
        assert!(matches!(inn.arrive(1, &hs[2], &b, 1), Turn::Duplicate));
        // The control stream does not wait for the messages.
        assert!(matches!(inn.arrive(1, &cts, &b, 0), Turn::Now));
        assert!(inn.next_early(1, Kind::Rts).is_none());
        assert!(matches!(inn.arrive(1, &hs[1], &b, 1), Turn::Now));
        let (h, _, link) = inn.next_early(1, Kind::Eager).expect("frame 2 is due");
        assert_eq!((h.seq, link), (2, 0));
        assert!(inn.next_early(1, Kind::Eager).is_none());
        assert!(matches!(inn.arrive(1, &hs[0], &b, 0), Turn::Duplicate));
        assert!(matches!(inn.arrive(1, &hs[3], &b, 0), Turn::Now));
        assert_eq!(inn.held(), 0);
    }
}
