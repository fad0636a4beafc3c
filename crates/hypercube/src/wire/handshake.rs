//! The link handshake: both ends prove they know the job's secret without sending it.
//!
//! ```text
//! dialer   -> acceptor  Hello   "HCUB" ver:u16 0:u16 job:u64 rank:u32 0:u32 nonce_d:[16]   (40 B)
//! acceptor -> dialer    Reply   "HCUB" rank:u32 nonce_a:[16] mac_a:[32]                  (56 B)
//!                               mac_a = SHA-256(secret | "accept" | job | nonce_d | rank_a | rank_d)
//! dialer   -> acceptor  Proof   mac_d:[32]  = SHA-256(secret | "dial" | job | nonce_a | rank_d | rank_a)
//! acceptor -> dialer    Ok      0x01                                                     (1 B)
//! ```
//! A connection that fails any step is closed and logged; the job carries on. The hello's
//! two reserved fields must be zero: a later version may give them a meaning, and a peer
//! that sets them is refused rather than misread.

use std::io::{Read, Write};

use hypercube_topology::NodeId;
use sha2::{Digest, Sha256};

const MAGIC: &[u8; 4] = b"HCUB";
/// 2: frames carry a route (`wire/frame.rs`) and a `Fin` carries its message count; 3: the
/// header grows to 48 bytes (`seq`, the trailer flag) and the kinds `Ack`, `Link`, `Left`
/// come (rerouting, `docs/reliability.md`); 4: the header flag "acknowledge at once" (a
/// frame of lent memory, `wire/frame.rs`).
const VERSION: u16 = 4;

/// Keyed digest of `parts` under the job secret (length-prefixed, so parts cannot slide).
pub(crate) fn mac(secret: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((secret.len() as u64).to_le_bytes());
    h.update(secret);
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

/// Compare digests without an early exit.
pub(crate) fn same(a: &[u8; 32], b: &[u8]) -> bool {
    b.len() == 32 && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn nonce() -> [u8; 16] {
    rand::random()
}

/// Dial side: prove and verify `expect` is at the other end of `s` (a TCP stream with
/// timeouts set; anything that reads and writes in the tests).
pub(crate) fn dial(
    s: &mut (impl Read + Write),
    secret: &[u8],
    job: u64,
    me: NodeId,
    expect: NodeId,
) -> Result<(), String> {
    let nd = nonce();
    let mut hello = [0u8; 40];
    hello[0..4].copy_from_slice(MAGIC);
    hello[4..6].copy_from_slice(&VERSION.to_le_bytes());
    hello[8..16].copy_from_slice(&job.to_le_bytes());
    hello[16..20].copy_from_slice(&me.to_le_bytes());
    hello[24..40].copy_from_slice(&nd);
    s.write_all(&hello)
        .map_err(|e| format!("sending hello: {e}"))?;
    let mut reply = [0u8; 56];
    s.read_exact(&mut reply)
        .map_err(|e| format!("reading the reply (wrong job or secret?): {e}"))?;
    if &reply[0..4] != MAGIC {
        return Err("the peer does not speak the hypercube link protocol".into());
    }
    let ra = u32::from_le_bytes([reply[4], reply[5], reply[6], reply[7]]);
    if ra != expect {
        return Err(format!("expected node {expect} but node {ra} answered"));
    }
    let na = &reply[8..24];
    let want = mac(
        secret,
        &[
            b"accept",
            &job.to_le_bytes(),
            &nd,
            &ra.to_le_bytes(),
            &me.to_le_bytes(),
        ],
    );
    if !same(&want, &reply[24..56]) {
        return Err(format!("node {ra} failed to prove the job secret"));
    }
    let proof = mac(
        secret,
        &[
            b"dial",
            &job.to_le_bytes(),
            na,
            &me.to_le_bytes(),
            &ra.to_le_bytes(),
        ],
    );
    s.write_all(&proof)
        .map_err(|e| format!("sending proof: {e}"))?;
    let mut ok = [0u8; 1];
    s.read_exact(&mut ok)
        .map_err(|e| format!("node {ra} rejected our proof: {e}"))?;
    if ok[0] != 1 {
        return Err(format!("node {ra} rejected our proof"));
    }
    Ok(())
}

/// Accept side: verify the dialer. `allowed` says which dialer ranks are acceptable.
/// Returns the dialer's rank.
pub(crate) fn accept(
    s: &mut (impl Read + Write),
    secret: &[u8],
    job: u64,
    me: NodeId,
    allowed: impl Fn(NodeId) -> bool,
) -> Result<NodeId, String> {
    let mut hello = [0u8; 40];
    s.read_exact(&mut hello)
        .map_err(|e| format!("reading hello: {e}"))?;
    if &hello[0..4] != MAGIC {
        return Err("not a hypercube link hello (bad magic)".into());
    }
    let ver = u16::from_le_bytes([hello[4], hello[5]]);
    if ver != VERSION {
        return Err(format!("protocol version {ver}, expected {VERSION}"));
    }
    if hello[6..8] != [0; 2] || hello[20..24] != [0; 4] {
        return Err(format!(
            "the hello's reserved bytes are not zero ({:02x?} at 6..8, {:02x?} at 20..24): \
             a peer of another protocol revision, or a corrupted hello",
            &hello[6..8],
            &hello[20..24]
        ));
    }
    let their_job = u64::from_le_bytes(hello[8..16].try_into().map_err(|_| "short hello")?);
    if their_job != job {
        return Err(format!("hello for job {their_job:x}, this is job {job:x}"));
    }
    let rd = u32::from_le_bytes([hello[16], hello[17], hello[18], hello[19]]);
    if !allowed(rd) {
        return Err(format!(
            "node {rd} is not a neighbor expected to dial node {me}"
        ));
    }
    let nd = &hello[24..40];
    let na = nonce();
    let mut reply = [0u8; 56];
    reply[0..4].copy_from_slice(MAGIC);
    reply[4..8].copy_from_slice(&me.to_le_bytes());
    reply[8..24].copy_from_slice(&na);
    let m = mac(
        secret,
        &[
            b"accept",
            &job.to_le_bytes(),
            nd,
            &me.to_le_bytes(),
            &rd.to_le_bytes(),
        ],
    );
    reply[24..56].copy_from_slice(&m);
    s.write_all(&reply)
        .map_err(|e| format!("sending reply: {e}"))?;
    let mut proof = [0u8; 32];
    s.read_exact(&mut proof)
        .map_err(|e| format!("reading proof: {e}"))?;
    let want = mac(
        secret,
        &[
            b"dial",
            &job.to_le_bytes(),
            &na,
            &rd.to_le_bytes(),
            &me.to_le_bytes(),
        ],
    );
    if !same(&want, &proof) {
        return Err(format!(
            "a connection claiming to be node {rd} failed to prove the job secret"
        ));
    }
    s.write_all(&[1]).map_err(|e| format!("sending ok: {e}"))?;
    Ok(rd)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::io;
    use std::os::unix::net::UnixStream;

    use proptest::prelude::*;

    use super::*;
    use crate::wire::fuzz;

    /// What a scripted peer answers once the code under test has written a number of bytes;
    /// it sees everything written so far.
    type Answer = Box<dyn FnMut(&[u8]) -> Vec<u8>>;

    /// A scripted peer in memory: `write` collects what the code under test sends and
    /// queues the peer's answers; `read` hands out the queue, then end-of-file (a peer that
    /// has nothing more to say and hung up), so a test never blocks.
    struct Peer {
        input: VecDeque<u8>,
        written: Vec<u8>,
        /// In order: after this many bytes written, queue this answer.
        on: VecDeque<(usize, Answer)>,
    }

    impl Peer {
        fn new(input: Vec<u8>, on: Vec<(usize, Answer)>) -> Peer {
            Peer {
                input: input.into(),
                written: Vec::new(),
                on: on.into(),
            }
        }
    }

    impl Read for Peer {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.input.len());
            for (d, s) in buf.iter_mut().zip(self.input.drain(..n)) {
                *d = s;
            }
            Ok(n)
        }
    }

    impl Write for Peer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            while self
                .on
                .front()
                .is_some_and(|(at, _)| self.written.len() >= *at)
            {
                let (_, mut answer) = self.on.pop_front().expect("checked");
                let a = answer(&self.written);
                self.input.extend(a);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn hello(job: u64, rank: NodeId, nd: &[u8; 16]) -> Vec<u8> {
        let mut h = vec![0u8; 40];
        h[0..4].copy_from_slice(MAGIC);
        h[4..6].copy_from_slice(&VERSION.to_le_bytes());
        h[8..16].copy_from_slice(&job.to_le_bytes());
        h[16..20].copy_from_slice(&rank.to_le_bytes());
        h[24..40].copy_from_slice(nd);
        h
    }

    fn reply(secret: &[u8], job: u64, nd: &[u8], ra: NodeId, rd: NodeId, na: &[u8]) -> Vec<u8> {
        let parts: [&[u8]; 5] = [
            b"accept",
            &job.to_le_bytes(),
            nd,
            &ra.to_le_bytes(),
            &rd.to_le_bytes(),
        ];
        let mut r = MAGIC.to_vec();
        r.extend_from_slice(&ra.to_le_bytes());
        r.extend_from_slice(na);
        r.extend_from_slice(&mac(secret, &parts));
        r
    }

    fn proof(secret: &[u8], job: u64, na: &[u8], rd: NodeId, ra: NodeId) -> Vec<u8> {
        let parts: [&[u8]; 5] = [
            b"dial",
            &job.to_le_bytes(),
            na,
            &rd.to_le_bytes(),
            &ra.to_le_bytes(),
        ];
        mac(secret, &parts).to_vec()
    }

    /// A job secret, a job id, the dialer's and the acceptor's ranks, and a nonce.
    #[allow(clippy::type_complexity)]
    fn setting() -> impl Strategy<Value = (Vec<u8>, u64, NodeId, NodeId, [u8; 16])> {
        (
            prop::collection::vec(any::<u8>(), 0..48),
            any::<u64>(),
            any::<u32>(),
            any::<u32>(),
            any::<[u8; 16]>(),
        )
    }

    /// Up to `n` mutations (none is a valid case too).
    fn some_mutations(n: usize) -> impl Strategy<Value = Vec<fuzz::Mutation>> {
        prop::collection::vec(fuzz::mutation(), 0..=n)
    }

    /// The byte a reader gets after the first `n` bytes of `a` followed by `b`.
    fn byte_after(n: usize, a: &[u8], b: &[u8]) -> Option<u8> {
        a.get(n).or_else(|| b.first()).copied()
    }

    proptest! {
        #![proptest_config(fuzz::config())]

        /// `dial` against an acceptor whose reply and ok byte are mutated on the way: it
        /// succeeds exactly when the authenticated part of the reply (magic, rank, mac)
        /// arrived intact and the next byte is 1. The acceptor's nonce is not covered by
        /// its mac: a changed one makes the proof fail at the acceptor, which then sends no
        /// ok (but a byte 1 after the reply is taken for it).
        #[test]
        fn fuzz_dial_mutated_reply(
            (secret, job, me, ra, na) in setting(),
            reply_muts in some_mutations(3),
            ok_muts in some_mutations(2),
        ) {
            let (s1, s2, rm) = (secret.clone(), secret.clone(), reply_muts.clone());
            let ok = fuzz::mutated(&[1], &ok_muts);
            let ok2 = ok.clone();
            let on: Vec<(usize, Answer)> = vec![
                (40, Box::new(move |w: &[u8]| {
                    fuzz::mutated(&reply(&s1, job, &w[24..40], ra, me, &na), &rm)
                })),
                // The acceptor checks the proof against the nonce it sent; a bad proof
                // gets the connection closed.
                (72, Box::new(move |w: &[u8]| {
                    if w[40..72] == proof(&s2, job, &na, me, ra)[..] { ok2.clone() } else { vec![] }
                })),
            ];
            let mut peer = Peer::new(vec![], on);
            let got = dial(&mut peer, &secret, job, me, ra);
            prop_assert_eq!(&peer.written[..4], MAGIC);
            let valid = reply(&secret, job, &peer.written[24..40], ra, me, &na);
            let sent = fuzz::mutated(&valid, &reply_muts);
            let authentic = sent.len() >= 56 && sent[..8] == valid[..8] && sent[24..56] == valid[24..56];
            let proof_accepted = authentic && sent[8..24] == valid[8..24];
            let next = byte_after(56, &sent, if proof_accepted { &ok } else { &[] });
            let expect_ok = authentic && next == Some(1);
            prop_assert_eq!(got.is_ok(), expect_ok, "{:?}", got);
        }

        /// `dial` against random replies: always an error, never a panic.
        #[test]
        fn fuzz_dial_random_reply(
            (secret, job, me, ra, _na) in setting(),
            garbage in fuzz::bytes(100),
        ) {
            let on: Vec<(usize, Answer)> = vec![(40, Box::new(move |_: &[u8]| garbage.clone()))];
            let mut peer = Peer::new(vec![], on);
            prop_assert!(dial(&mut peer, &secret, job, me, ra).is_err());
        }

        /// `accept` against a dialer whose hello and proof are mutated on the way: it
        /// succeeds exactly when the checked fields of the hello (magic, version, the
        /// reserved zeros, job, rank) and the proof arrived intact, and it answers nothing
        /// to a bad hello.
        #[test]
        fn fuzz_accept_mutated_hello(
            (secret, job, me, rd, nd) in setting(),
            hello_muts in some_mutations(3),
            proof_muts in some_mutations(2),
        ) {
            let sent = fuzz::mutated(&hello(job, rd, &nd), &hello_muts);
            let (s1, pm) = (secret.clone(), proof_muts.clone());
            let on: Vec<(usize, Answer)> = vec![(56, Box::new(move |w: &[u8]| {
                fuzz::mutated(&proof(&s1, job, &w[8..24], rd, me), &pm)
            }))];
            let mut peer = Peer::new(sent.clone(), on);
            let got = accept(&mut peer, &secret, job, me, |r| r == rd);
            let valid = hello(job, rd, &nd);
            let hello_ok = sent.len() >= 40 && sent[0..24] == valid[0..24];
            if !hello_ok {
                prop_assert!(got.is_err());
                prop_assert!(peer.written.is_empty(), "answered a bad hello");
            } else {
                prop_assert_eq!(peer.written.len(), 56 + usize::from(got.is_ok()));
                let valid_proof = proof(&secret, job, &peer.written[8..24], rd, me);
                let mut stream = sent[40..].to_vec();
                stream.extend(fuzz::mutated(&valid_proof, &proof_muts));
                let expect_ok = stream.len() >= 32 && stream[..32] == valid_proof[..];
                if expect_ok {
                    prop_assert_eq!(got, Ok(rd));
                } else {
                    prop_assert!(got.is_err());
                }
            }
        }

        /// `accept` against random bytes: always an error, never a panic.
        #[test]
        fn fuzz_accept_random_hello(
            (secret, job, me, _rd, _nd) in setting(),
            garbage in fuzz::bytes(120),
        ) {
            let mut peer = Peer::new(garbage, vec![]);
            prop_assert!(accept(&mut peer, &secret, job, me, |_| true).is_err());
        }
    }

    /// Each reserved byte of the hello set alone: refused, nothing answered, the reason
    /// named; all of them zero: accepted.
    #[test]
    fn reserved_hello_bytes_must_be_zero() {
        let (secret, job, me, rd, nd) = (b"s".to_vec(), 7, 1, 0, [3u8; 16]);
        for at in (6..8).chain(20..24) {
            for v in [1u8, 0x80, 0xff] {
                let mut h = hello(job, rd, &nd);
                h[at] = v;
                let mut peer = Peer::new(h, vec![]);
                let e = accept(&mut peer, &secret, job, me, |_| true).unwrap_err();
                assert!(e.contains("reserved bytes"), "{e}");
                assert!(
                    peer.written.is_empty(),
                    "answered a hello with reserved byte {at}"
                );
            }
        }
        let s1 = secret.clone();
        let on: Vec<(usize, Answer)> = vec![(
            56,
            Box::new(move |w: &[u8]| proof(&s1, job, &w[8..24], rd, me)),
        )];
        let mut peer = Peer::new(hello(job, rd, &nd), on);
        assert_eq!(accept(&mut peer, &secret, job, me, |_| true), Ok(rd));
    }

    proptest! {
        #![proptest_config(fuzz::config_div(20))]

        /// The two sides against each other over a socket: both succeed with the same
        /// secret, both fail with different ones.
        #[test]
        fn fuzz_handshake_roundtrip(
            (secret, job, rd, ra, _nd) in setting(),
            other in prop::option::of(prop::collection::vec(any::<u8>(), 0..48)),
        ) {
            let (mut a, mut d) = UnixStream::pair().expect("socketpair");
            let dial_secret = other.clone().unwrap_or_else(|| secret.clone());
            let dialer = std::thread::spawn(move || dial(&mut d, &dial_secret, job, rd, ra));
            let accepted = accept(&mut a, &secret, job, ra, |r| r == rd);
            drop(a);
            let dialed = dialer.join().expect("dial does not panic");
            if other.as_ref().is_some_and(|o| *o != secret) {
                prop_assert!(accepted.is_err() && dialed.is_err());
            } else {
                prop_assert_eq!(accepted, Ok(rd));
                prop_assert_eq!(dialed, Ok(()));
            }
        }
    }
}
