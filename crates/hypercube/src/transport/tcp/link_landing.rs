//! Landing (`link.rs`): a long `Data` frame for this node whose receive named the memory
//! it goes to (`base/landing.rs`) is read from the socket straight into that memory — in
//! its turn of its pair's stream (`sequence.rs`: no earlier frame of the stream is still to
//! come, so the receive's fill mark is where the frame belongs). Its completion is an
//! [`Item::Landed`]. A receive that takes its memory back while a frame is being read into
//! it ([`LinkIn::take_back`]) leaves the reader a buffer of its own for the rest. A reader
//! writes into the memory only under its claim of the frame (`claim.rs`), which the engine
//! revokes when another copy of the frame is acted on first: then the rest goes to a buffer
//! of its own too.

use std::io;
use std::sync::Arc;

use bytes::{Buf, Bytes};

use super::{Item, LinkIn, ReadError};
use crate::base::landing::Landing;
use crate::transport::tcp::claim::Claim;
use crate::wire::frame::{Header, HEADER_LEN};

/// A `Data` frame for this node being read straight into the memory its receive named.
pub(super) struct Direct {
    h: Header,
    /// Where its payload goes: the landing from byte `at` on (across its pieces' seam, if
    /// it has two), or `own` once the receive took it back.
    to: Landing,
    at: usize,
    own: Option<Vec<u8>>,
    /// Payload bytes read so far.
    got: usize,
    /// Its trailer byte, once read (a frame with one).
    trailer: Option<u8>,
    /// The right to write into `to` (`claim.rs`), held for each write.
    claim: Arc<Claim>,
}

impl Direct {
    pub(super) fn done(&self) -> bool {
        self.got == self.h.frame_len as usize && (!self.h.trailer || self.trailer.is_some())
    }

    /// Where the next payload byte goes, and how many from there on are contiguous (at
    /// most the rest of the frame).
    fn next(&mut self) -> (*mut u8, usize) {
        let left = self.h.frame_len as usize - self.got;
        match &mut self.own {
            // SAFETY: `got <= frame_len`, the buffer's length.
            Some(v) => (unsafe { v.as_mut_ptr().add(self.got) }, left),
            None => {
                let (to, room) = self.to.at(self.at + self.got);
                (to, room.min(left))
            }
        }
    }

    /// The claim was revoked (`revoked`): another copy of the frame completed it, so this
    /// one goes on into a buffer of its own — a duplicate, dropped once whole, so what came
    /// before need not be kept (the memory is the program's again and is not read).
    fn revoked(&mut self, revoked: bool) {
        if revoked && self.own.is_none() {
            self.own = Some(vec![0; self.h.frame_len as usize]);
        }
    }

    /// Take `src` (bytes of the frame's body, in order) as far as the body goes; returns
    /// how many were taken.
    fn take(&mut self, src: &[u8]) -> usize {
        let n = src.len().min(self.h.frame_len as usize - self.got);
        let claim = self.claim.clone();
        let revoked = claim.hold();
        self.revoked(*revoked);
        match &mut self.own {
            Some(v) => v[self.got..self.got + n].copy_from_slice(&src[..n]),
            // The landing's memory, which its receive keeps until it takes it back — which
            // retargets this frame first, under the link's input lock (`LinkIn::take_back`).
            None => self.to.write(self.at + self.got, &src[..n]),
        }
        self.got += n;
        if self.h.trailer && self.trailer.is_none() && src.len() > n {
            self.trailer = Some(src[n]);
            return n + 1;
        }
        n
    }

    /// What the frame is once complete: landed, or a frame of its own bytes.
    fn finish(self) -> Item {
        match self.own {
            None => Item::Landed(self.h, self.trailer.unwrap_or(1)),
            Some(mut v) => {
                v.extend(self.trailer);
                Item::Frame(self.h, Bytes::from(v))
            }
        }
    }
}

/// The memory a receive named for a `Data` frame's message (`base/landing.rs`) and how
/// much of it is filled: the frame's payload goes there from that byte on, under the
/// reader's claim of the frame (`claim.rs`). Asked of the engine for a long frame for this
/// node, in its turn.
pub(crate) type LandingAt<'a> = &'a mut dyn FnMut(&Header) -> Option<(Landing, usize, Arc<Claim>)>;

/// A frame for this node whose payload has at least this many bytes still to come is read
/// into its landing, if its receive named one; a shorter rest is read with the frame.
const LAND_MIN: usize = 32 << 10;

impl LinkIn {
    /// The receive of `l` takes its landing back: a frame being read into it goes on into
    /// a buffer of its own, holding what came so far (and is then an ordinary frame).
    pub fn take_back(&mut self, l: &Landing) {
        let Some(d) = self.landing.as_mut() else {
            return;
        };
        if d.own.is_some() || d.to != *l {
            return;
        }
        let mut own = l.copy_range(d.at, d.got);
        own.resize(d.h.frame_len as usize, 0);
        d.own = Some(own);
    }

    /// Read what the socket has into the frame being landed. `Ok(None)`: nothing now;
    /// `Ok(Some(0))`: the peer closed the connection.
    fn read_landing(&mut self) -> io::Result<Option<usize>> {
        let Some(d) = self.landing.as_mut() else {
            return Ok(Some(0));
        };
        // Held until the read below is done: a revocation waits for it.
        let claim = d.claim.clone();
        let revoked = claim.hold();
        d.revoked(*revoked);
        let left = d.h.frame_len as usize - d.got;
        let mut tb = 0u8;
        let (ptr, cap) = if left > 0 {
            d.next()
        } else {
            (&mut tb as *mut u8, 1)
        };
        // SAFETY: `ptr .. ptr + cap` is writable memory (the target's rest, or `tb`).
        let Some(n) = (unsafe { super::recv_some(&self.stream, ptr, cap)? }) else {
            return Ok(None);
        };
        self.bytes_read += n as u64;
        self.stats.calls += 1;
        if left > 0 {
            d.got += n;
        } else if n == 1 {
            d.trailer = Some(tb);
        }
        Ok(Some(n))
    }

    /// Read more of the frame being landed: `Ok(None)` nothing came, `Ok(Some(item))` the
    /// frame is whole (then acted on before the next is read), `Ok(Some(None))` more came.
    pub(super) fn land_more(&mut self) -> Result<Option<Option<Item>>, ReadError> {
        match self.read_landing().map_err(ReadError::Io)? {
            None => Ok(None),
            Some(0) => {
                self.eof = true;
                Err(ReadError::Protocol(
                    "connection closed in the middle of a frame".into(),
                ))
            }
            Some(_) => Ok(Some(self.landed_whole())),
        }
    }

    /// The frame being landed, if it is whole now (counted as read).
    pub(super) fn landed_whole(&mut self) -> Option<Item> {
        if !self.landing.as_ref().is_some_and(Direct::done) {
            return None;
        }
        let d = self.landing.take()?;
        self.frames_in += 1;
        let item = d.finish();
        self.landed += u64::from(matches!(item, Item::Landed(..)));
        Some(item)
    }

    /// Should `h`, at the head of the buffer and not all there, be read into a landing?
    /// Then start doing so with the bytes of it the buffer has.
    pub(super) fn start_landing(&mut self, h: &Header, land: LandingAt<'_>) -> bool {
        use crate::wire::frame::Kind;
        let len = h.frame_len as usize;
        let have = self.buf.len() - HEADER_LEN;
        let kind = matches!(h.kind, Kind::Data | Kind::Eager);
        if !(self.pass_on && kind && h.dest == self.me && len >= have + LAND_MIN) {
            return false;
        }
        let Some((to, at, claim)) = land(h) else {
            return false;
        };
        if to.len().saturating_sub(at) < len {
            return false;
        }
        self.buf.advance(HEADER_LEN);
        let mut d = Direct {
            h: *h,
            to,
            at,
            own: None,
            got: 0,
            trailer: None,
            claim,
        };
        let n = d.take(&self.buf);
        self.buf.advance(n);
        self.landing = Some(d);
        true
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use bytes::Bytes;

    use super::super::fuzz::{encode, link};
    use super::super::{Item, ReadOutcome};
    use crate::base::landing::Landing;
    use crate::transport::tcp::claim::Claim;
    use crate::wire::frame::{Header, HEADER_LEN};

    /// A `Data` frame for node `dest` of message 9 from node 1: `len` payload bytes of a
    /// pattern from `seed`, with a trailer byte 1 if `trailer`.
    fn data_frame(dest: u32, len: usize, seed: u8, trailer: bool) -> (Header, Bytes) {
        let mut h = Header::control(crate::wire::frame::Kind::Data, 1, dest, 9, 1 << 20);
        h.frame_len = len as u32;
        h.trailer = trailer;
        let mut p: Vec<u8> = (0..len)
            .map(|j| seed.wrapping_add((j % 249) as u8))
            .collect();
        if trailer {
            p.push(1);
        }
        (h, Bytes::from(p))
    }

    /// Long `Data` frames for this node whose receive named memory are read from the socket
    /// straight into it ([`Item::Landed`]), in pieces of any size, the trailer byte included;
    /// a short one, an eager frame and a frame for another node come as before. The reader asks
    /// for the memory once per frame, and the second frame of the message lands after the
    /// first (the mailbox's fill mark, kept here, moves on when the first is taken).
    #[test]
    fn long_data_frames_land_in_the_named_memory() {
        let short = data_frame(0, 1000, 3, false);
        let (a, b) = (
            data_frame(0, 200 << 10, 5, true),
            data_frame(0, 100 << 10, 7, false),
        );
        let other = data_frame(2, 50 << 10, 11, false);
        let mut eager = Header::control(crate::wire::frame::Kind::Eager, 1, 0, 3, 4);
        eager.frame_len = 4;
        let sent = vec![
            (eager, Bytes::from_static(b"abcd")),
            a.clone(),
            other.clone(),
            b.clone(),
            short.clone(),
        ];
        let bytes = encode(&sent);
        let (mut link, mut w) = link();
        let writer = std::thread::spawn(move || {
            for (i, piece) in bytes.chunks(7919).enumerate() {
                w.write_all(piece).expect("write");
                if i % 5 == 0 {
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        });
        // Two pieces, the seam inside the first long frame.
        let (mut memory, mut second) = (vec![0u8; 150 << 10], vec![0u8; 150 << 10]);
        // SAFETY: both outlive the landing and are read only after the reads below.
        let landing = unsafe {
            Landing::split(
                (memory.as_mut_ptr(), memory.len()),
                (second.as_mut_ptr(), second.len()),
            )
        };
        let mut filled = 0usize;
        let (mut asked, mut got) = (0, Vec::new());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let r = link.read_into(4, false, &mut |h| {
                asked += 1;
                assert_eq!(
                    (h.src, h.dest, h.msg_id),
                    (1, 0, 9),
                    "asked for a frame of another"
                );
                Some((landing, filled, Claim::new()))
            });
            let items = match r {
                Ok(ReadOutcome::Frames(f)) => f,
                Ok(ReadOutcome::Eof(f)) => {
                    got.extend(f);
                    break;
                }
                Err(_) => panic!("an error on valid frames"),
            };
            for i in &items {
                if let Item::Landed(h, t) = i {
                    assert_eq!(*t, 1, "trailer");
                    filled += h.frame_len as usize;
                }
            }
            got.extend(items);
            if got.len() == sent.len() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "stuck");
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        writer.join().expect("writer");
        assert_eq!(asked, 2, "asked once per long frame for this node");
        let kinds: Vec<String> = got
            .iter()
            .map(|i| match i {
                Item::Frame(h, p) => format!("frame {} {}", h.msg_id, p.len()),
                Item::Landed(h, _) => format!("landed {}", h.frame_len),
                Item::Start(..) | Item::More(..) => "piece".into(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "frame 3 4".to_string(),
                format!("landed {}", 200 << 10),
                format!("frame 9 {}", 50 << 10),
                format!("landed {}", 100 << 10),
                "frame 9 1000".into(),
            ]
        );
        memory.extend_from_slice(&second);
        assert_eq!(&memory[..200 << 10], &a.1[..200 << 10]);
        assert_eq!(&memory[200 << 10..], &b.1[..]);
    }

    /// Read the rest of a frame whose landing was taken back or revoked (the link must not
    /// ask for a landing again), after `items` so far (none): the one whole frame it is.
    fn the_rest(link: &mut super::LinkIn, mut items: Vec<Item>) -> (Header, Bytes) {
        for _ in 0..1000 {
            match link.read_into(2, false, &mut |_| panic!("asked again")) {
                Ok(ReadOutcome::Frames(f)) => items.extend(f),
                _ => panic!("an error on a valid frame"),
            }
            if !items.is_empty() {
                break;
            }
        }
        match items.pop() {
            Some(Item::Frame(h, body)) if items.is_empty() => (h, body),
            _ => panic!("not one whole frame"),
        }
    }

    /// A receive that takes its memory back while a frame is being read into it
    /// ([`LinkIn::take_back`]): the reader goes on into a buffer of its own, which holds the
    /// bytes read so far, and the frame comes whole as an ordinary one; nothing more is written
    /// into the memory.
    #[test]
    fn a_landing_taken_back_mid_frame_leaves_the_memory_alone() {
        let (h, p) = data_frame(0, 100 << 10, 13, true);
        let bytes = encode(&[(h, p.clone())]);
        let (mut link, mut w) = link();
        let mut memory = vec![0u8; 100 << 10];
        // SAFETY: `memory` outlives the landing and is not touched until taken back.
        let landing = unsafe { Landing::new(&mut memory) };
        let half = HEADER_LEN + (40 << 10);
        w.write_all(&bytes[..half]).expect("write");
        let mut items = Vec::new();
        for _ in 0..100 {
            match link.read_into(2, false, &mut |_| Some((landing, 0, Claim::new()))) {
                Ok(ReadOutcome::Frames(f)) => items.extend(f),
                _ => panic!("an error on a valid frame"),
            }
        }
        assert!(items.is_empty(), "a frame half come");
        link.take_back(&landing);
        assert_eq!(
            &memory[..40 << 10],
            &p[..40 << 10],
            "read into the memory so far"
        );
        memory.fill(0);
        w.write_all(&bytes[half..]).expect("write");
        let (got, body) = the_rest(&mut link, items);
        assert_eq!(got, h);
        assert_eq!(body, p, "the whole body, trailer included");
        assert!(
            memory.iter().all(|&b| b == 0),
            "written after it was taken back"
        );
    }

    /// A reader whose claim of the frame is revoked mid-frame — another copy of it, on
    /// another link, was acted on first (`claim.rs`) — writes nothing more into the memory:
    /// the rest goes to a buffer of its own and the frame comes as an ordinary one (a
    /// duplicate, which the engine drops). Without the claim the rest, here a void copy's
    /// zeros, would be written over memory the program owns again.
    #[test]
    fn a_revoked_claim_leaves_the_memory_alone() {
        use crate::transport::tcp::claim::Claims;
        let (h, p) = data_frame(0, 100 << 10, 17, true);
        let bytes = encode(&[(h, p.clone())]);
        let (mut link, mut w) = link();
        let mut memory = vec![0u8; 100 << 10];
        // SAFETY: `memory` outlives the landing; it is read and cleared only while no read
        // is under way.
        let landing = unsafe { Landing::new(&mut memory) };
        let mut claims = Claims::default();
        let half = HEADER_LEN + (40 << 10);
        w.write_all(&bytes[..half]).expect("write");
        let mut items = Vec::new();
        for _ in 0..100 {
            let r = link.read_into(2, false, &mut |h| {
                claims.take(1, h.seq, 0).map(|c| (landing, 0, c))
            });
            match r {
                Ok(ReadOutcome::Frames(f)) => items.extend(f),
                _ => panic!("an error on a valid frame"),
            }
        }
        assert!(items.is_empty(), "a frame half come");
        assert_eq!(&memory[..40 << 10], &p[..40 << 10], "landed so far");
        assert!(claims.take(1, h.seq, 1).is_none(), "claimed by link 0");
        // The copy that came on link 1 is acted on.
        claims.acted(1, h.seq, 1);
        memory.fill(0);
        w.write_all(&bytes[half..]).expect("write");
        let (got, body) = the_rest(&mut link, items);
        assert_eq!(got, h);
        assert_eq!(body.len(), p.len(), "the whole body, trailer included");
        assert_eq!(&body[40 << 10..], &p[40 << 10..], "the rest as it came");
        assert!(
            memory.iter().all(|&b| b == 0),
            "written after the claim was revoked"
        );
    }

    /// A 40 KiB frame for a receive that named memory, all in the socket at once: read in
    /// one piece with the link's first read (64 KiB), too little of it is left to land
    /// (`LAND_MIN`) and it comes as an ordinary frame, to be copied; with the header read
    /// alone first (`LinkIn::header_first`, while a landing waits) it lands whole.
    #[test]
    fn a_frame_read_header_first_lands_whole() {
        let frame = data_frame(0, 40 << 10, 13, false);
        for header_first in [false, true] {
            let (mut link, mut w) = link();
            link.header_first = header_first;
            w.write_all(&encode(std::slice::from_ref(&frame)))
                .expect("write");
            let mut memory = vec![0u8; 40 << 10];
            // SAFETY: `memory` outlives the landing and is read only after the reads.
            let landing = unsafe { Landing::from_raw(memory.as_mut_ptr(), memory.len()) };
            let mut got = Vec::new();
            for _ in 0..100 {
                match link.read_into(4, false, &mut |_| Some((landing, 0, Claim::new()))) {
                    Ok(ReadOutcome::Frames(f)) => got.extend(f),
                    _ => panic!("an error or end of file on a valid frame"),
                }
                if !got.is_empty() {
                    break;
                }
            }
            match (&got[..], header_first) {
                ([Item::Landed(h, _)], true) => {
                    assert_eq!(h.frame_len, 40 << 10);
                    assert_eq!(&memory[..], &frame.1[..]);
                }
                ([Item::Frame(_, p)], false) => assert_eq!(p, &frame.1),
                _ => panic!("header_first {header_first}: {} items", got.len()),
            }
        }
    }
}
