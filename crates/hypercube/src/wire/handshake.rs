//! The link handshake: both ends prove they know the job's secret without sending it.
//!
//! ```text
//! dialer   -> acceptor  Hello   "HCUB" ver:u16 0:u16 job:u64 rank:u32 0:u32 nonce_d:[16]   (40 B)
//! acceptor -> dialer    Reply   "HCUB" rank:u32 nonce_a:[16] mac_a:[32]                  (56 B)
//!                               mac_a = SHA-256(secret | "accept" | job | nonce_d | rank_a | rank_d)
//! dialer   -> acceptor  Proof   mac_d:[32]  = SHA-256(secret | "dial" | job | nonce_a | rank_d | rank_a)
//! acceptor -> dialer    Ok      0x01                                                     (1 B)
//! ```
//! A connection that fails any step is closed and logged; the job carries on.

use std::io::{Read, Write};
use std::net::TcpStream;

use hypercube_topology::NodeId;
use sha2::{Digest, Sha256};

const MAGIC: &[u8; 4] = b"HCUB";
const VERSION: u16 = 1;

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

/// Dial side: prove and verify. Returns the acceptor's rank.
pub(crate) fn dial(
    s: &mut TcpStream,
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
    s: &mut TcpStream,
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
