//! The control channel between the launcher and each node (one TCP connection per node,
//! kept open for the whole job). Messages are a `u32` little-endian length, then the
//! message in the serde codec of [`super::codec`].
//!
//! ```text
//! node -> launcher  Hello { rank, listen, proof }   after binding the link listener
//! launcher -> node  Table { addrs, host }           once every rank (and the host) said hello
//! node -> launcher  Ready { rank }                  once all d links are up
//! launcher -> node  Go                              once every rank is ready (the barrier)
//! node -> launcher  Blocked { rank, waiting_for }  a call waited 1 s with nothing arriving
//! node -> launcher  Running { rank }                that wait ended
//! launcher -> node  Abort { reason }                the job is being torn down
//! ```

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Environment variable: the launcher's control address.
pub const ENV_CONTROL: &str = "HYPERCUBE_CONTROL";
/// Environment variable: this process's rank (`host` for the host process).
pub const ENV_RANK: &str = "HYPERCUBE_RANK";
/// Environment variable: the cube dimension.
pub const ENV_DIM: &str = "HYPERCUBE_DIM";
/// Environment variable: the job id (hex).
pub const ENV_JOB: &str = "HYPERCUBE_JOB";
/// Environment variable: the job secret (hex). Removed from the environment on `init`.
pub const ENV_SECRET: &str = "HYPERCUBE_SECRET";
/// Environment variable: bootstrap timeout in milliseconds.
pub const ENV_BOOT_TIMEOUT_MS: &str = "HYPERCUBE_BOOT_TIMEOUT_MS";
/// Environment variable: whether log lines may carry ANSI colour codes: `always`, `never`
/// or `auto` (the default: only when stderr is a terminal and `NO_COLOR` is not set).
/// `hcrun --color=WHEN` sets it for every rank — the ranks' stderr is a pipe to hcrun, so
/// only hcrun knows whether the lines end up on a terminal.
pub const ENV_COLOR: &str = "HYPERCUBE_COLOR";
/// Environment variable: the address a rank binds its links to and publishes (set by
/// `hcrun --link-rate` to the node's address on the emulated network).
pub const ENV_ADDR: &str = "HYPERCUBE_ADDR";
/// Environment variable: how many cores the job's ranks share (their collectives choose
/// their algorithm from it); `hcrun` sets it for every rank unless the user did.
pub const ENV_MODEL_CORES: &str = "HYPERCUBE_MODEL_CORES";
/// Environment variable: the path prefix every rank records its trace under (`hcrun
/// --trace` sets it to a temporary directory).
pub const ENV_TRACE: &str = "HYPERCUBE_TRACE";

/// How a rank blocked in a send above the eager limit (a rendezvous send: it waits for its
/// receiver to post a matching receive) words `Blocked::waiting_for`, so that the launcher
/// can find a cycle of such sends ([`large_send_dests`]): "its large send to node 1 to be
/// received (8388608 bytes, above the eager limit: ...)".
pub fn large_send_text(dest: u32, bytes: u64) -> String {
    format!(
        "{LARGE_SEND}{dest} to be received ({bytes} bytes, above the eager limit: it waits \
         until node {dest} posts a matching receive)"
    )
}

/// The stable start of [`large_send_text`], before the destination node.
const LARGE_SEND: &str = "its large send to node ";

/// The nodes a `Blocked::waiting_for` text says its rank is sending a large message to
/// (empty if it waits for something else); the inverse of [`large_send_text`], also when
/// several are joined in one text.
pub fn large_send_dests(waiting_for: &str) -> Vec<u32> {
    waiting_for
        .match_indices(LARGE_SEND)
        .filter_map(|(i, m)| {
            let rest = &waiting_for[i + m.len()..];
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            rest[..end].parse().ok()
        })
        .collect()
}

/// Largest control message accepted (a table of 2^16 addresses fits easily).
pub const MAX_CONTROL_LEN: u32 = 4 << 20;

/// Node to launcher.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum ToLauncher {
    /// First message: who I am and where my link listener is.
    Hello {
        /// The node's rank.
        rank: u32,
        /// Its link listener (an IPv6 scope id kept: [`scoped`]).
        #[serde(with = "scoped")]
        listen: SocketAddr,
        /// `proof(secret, job, rank)`.
        proof: [u8; 32],
    },
    /// All of my links are up.
    Ready {
        /// The node's rank.
        rank: u32,
    },
    /// A call of mine has waited for a while with nothing arriving.
    Blocked {
        /// The node's rank.
        rank: u32,
        /// What it waits for ("a message of type 5 from node 3").
        waiting_for: String,
    },
    /// The wait reported by `Blocked` ended.
    Running {
        /// The node's rank.
        rank: u32,
    },
}

/// Launcher to node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum ToNode {
    /// Every node's link listener, indexed by rank.
    Table {
        /// Listener addresses by rank (IPv6 scope ids kept: [`scoped`]).
        #[serde(with = "scoped::vec")]
        addrs: Vec<SocketAddr>,
        /// The job has a host process (it dials node 0).
        host: bool,
    },
    /// Every node is ready: start the program.
    Go,
    /// Stop: the job is being torn down.
    Abort {
        /// Why.
        reason: String,
    },
}

/// Socket addresses in control messages with their IPv6 scope id: serde writes a
/// `SocketAddr` as address and port only, so a link-local listener (`fe80::1%3`) would
/// arrive without the interface it is reachable through. Each address is written as the
/// serde `SocketAddr`, then the scope id (`u32`; 0 for IPv4, where another value is
/// refused). The flow label is not kept (a listener has none).
pub mod scoped {
    use std::net::SocketAddr;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    fn pair(a: &SocketAddr) -> (SocketAddr, u32) {
        match a {
            SocketAddr::V4(_) => (*a, 0),
            SocketAddr::V6(v6) => (*a, v6.scope_id()),
        }
    }

    fn unpair<E: serde::de::Error>((a, scope): (SocketAddr, u32)) -> Result<SocketAddr, E> {
        match a {
            SocketAddr::V6(mut v6) => {
                v6.set_scope_id(scope);
                Ok(SocketAddr::V6(v6))
            }
            SocketAddr::V4(_) if scope == 0 => Ok(a),
            SocketAddr::V4(_) => Err(E::custom(format!("an IPv4 address with scope id {scope}"))),
        }
    }

    /// Serialize one address with its scope id.
    pub fn serialize<S: Serializer>(a: &SocketAddr, s: S) -> Result<S::Ok, S::Error> {
        pair(a).serialize(s)
    }

    /// Deserialize one address with its scope id.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SocketAddr, D::Error> {
        unpair(<(SocketAddr, u32)>::deserialize(d)?)
    }

    /// The same for a vector of addresses.
    pub mod vec {
        use super::*;

        /// Serialize the addresses with their scope ids.
        pub fn serialize<S: Serializer>(v: &[SocketAddr], s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(v.iter().map(pair))
        }

        /// Deserialize addresses with their scope ids.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<SocketAddr>, D::Error> {
            Vec::<(SocketAddr, u32)>::deserialize(d)?
                .into_iter()
                .map(unpair::<D::Error>)
                .collect()
        }
    }
}

/// The proof a node gives in its `Hello`.
pub fn proof(secret: &[u8], job: u64, rank: u32) -> [u8; 32] {
    super::handshake::mac(
        secret,
        &[b"control", &job.to_le_bytes(), &rank.to_le_bytes()],
    )
}

/// Check a proof in constant time.
pub fn check_proof(secret: &[u8], job: u64, rank: u32, proof: &[u8; 32]) -> bool {
    super::handshake::same(&self::proof(secret, job, rank), proof)
}

/// Encode a control message with its length prefix.
pub fn frame<T: Serialize>(msg: &T) -> Result<Vec<u8>> {
    let body = super::codec::encode(msg)?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Validate a length prefix.
pub fn check_len(len: u32) -> Result<usize> {
    if len > MAX_CONTROL_LEN {
        return Err(Error::Bootstrap(format!(
            "control message of {len} bytes exceeds {MAX_CONTROL_LEN}"
        )));
    }
    Ok(len as usize)
}

/// Parse hex (the secret and job id in the environment): an even number of hex digits,
/// nothing else (`u8::from_str_radix` alone would take a sign: "+f").
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Format bytes as lowercase hex.
pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Read one control message from a blocking stream.
pub fn read_blocking<T: serde::de::DeserializeOwned>(r: &mut impl std::io::Read) -> Result<T> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)
        .map_err(|e| Error::io("reading from the launcher", e))?;
    let n = check_len(u32::from_le_bytes(len))?;
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)
        .map_err(|e| Error::io("reading from the launcher", e))?;
    super::codec::decode(&body).map_err(|e| {
        Error::Bootstrap(format!(
            "cannot understand the launcher ({e}); hcrun and the node program must be built \
             from the same version of hypercube — rebuild both"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of a blocked large send parse back to its destinations.
    #[test]
    fn large_send_texts_parse_back() {
        let one = large_send_text(1, 8 << 20);
        assert_eq!(large_send_dests(&one), vec![1]);
        let two = format!(
            "{} and {}",
            large_send_text(3, 70_000),
            large_send_text(12, 1)
        );
        assert_eq!(large_send_dests(&two), vec![3, 12]);
        assert!(large_send_dests("a message of type 5 from node 3").is_empty());
    }

    /// Hex with a sign is not hex (found by `tests/fuzz_decoders.rs`: "+f" read as 0x0f).
    #[test]
    fn hex_refuses_signs() {
        assert_eq!(from_hex("0aFf"), Some(vec![0x0a, 0xff]));
        assert_eq!(to_hex(&[0x0a, 0xff]), "0aff");
        for bad in ["+f", "-f", "+0", "0+", "é0", "0", "g0", " 0"] {
            assert_eq!(from_hex(bad), None, "{bad}");
        }
    }
}
