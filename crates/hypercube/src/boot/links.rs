//! Opening a node's links once it knows where its neighbors listen — the same for every
//! process manager: for each dimension k the node whose bit k is 0 dials the one whose bit
//! k is 1, both prove the job secret (`wire::handshake`), and a connection that fails the
//! proof is logged and dropped while the job carries on. The acceptor stays up for the
//! whole job, and a dead link's dialer dials it again ([`redialer`]): a link that comes back
//! is taken back (`transport/tcp/relink.rs`).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use hypercube_topology::NodeId;

use super::deadline::Deadline;
use crate::base::ids::HOST;
use crate::error::{Error, Result};
use crate::transport::tcp::{Dialer, Gate, Relink, TcpTransport};
use crate::wire::handshake;

/// Who this node is in the job and the job's keys.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    pub rank: NodeId,
    pub dim: u32,
    pub job: u64,
    pub secret: Vec<u8>,
}

impl Keys {
    fn is_host(&self) -> bool {
        self.rank == HOST
    }

    /// The neighbors that dial this node (their bit k is 0, ours is 1); node 0 also takes
    /// the host's link if the job has one.
    pub fn dialed_by(&self, has_host: bool) -> Vec<NodeId> {
        if self.is_host() {
            return Vec::new();
        }
        let me = self.rank;
        (0..self.dim)
            .filter(|k| me & (1 << k) != 0)
            .map(|k| me ^ (1 << k))
            .chain((me == 0 && has_host).then_some(HOST))
            .collect()
    }

    /// The neighbors this node dials (bit k is 0 here); the host dials node 0.
    pub fn dials(&self) -> Vec<NodeId> {
        if self.is_host() {
            return vec![0];
        }
        let me = self.rank;
        (0..self.dim)
            .filter(|k| me & (1 << k) == 0)
            .map(|k| me ^ (1 << k))
            .collect()
    }

    /// Every neighbor (both directions), in dimension order.
    pub fn neighbors(&self) -> Vec<NodeId> {
        if self.is_host() {
            return vec![0];
        }
        (0..self.dim).map(|k| self.rank ^ (1 << k)).collect()
    }
}

/// A node's link acceptor ([`spawn_acceptor`]): [`establish`] takes the links it accepts
/// at start-up, then [`Acceptor::hand_over`] gives it to the transport, which takes the
/// dead links it accepts again (`transport/tcp/relink.rs`).
pub(crate) struct Acceptor {
    /// Which neighbors may come now.
    gate: Arc<Gate>,
    /// Where the acceptor sends what it takes (kept for the transport's own messages).
    tell: mpsc::Sender<Relink>,
    /// What it took.
    taken: mpsc::Receiver<Relink>,
}

impl Acceptor {
    /// From now on the transport `t` takes what the acceptor accepts, and dials the dead
    /// links this node dials (at `addrs`, by rank) again.
    pub(crate) fn hand_over(
        self,
        t: &TcpTransport,
        keys: Keys,
        addrs: Vec<Option<SocketAddr>>,
    ) -> Result<()> {
        t.relink_with(self.gate, self.tell, self.taken, redialer(keys, addrs))
    }
}

/// Accept link connections for the whole job: handshake each on its own thread (so a
/// silent stranger cannot stall the others) and hand the good ones over. Its gate says
/// which neighbors may come: each of `expected` once during start-up, afterwards one whose
/// link died (`transport/tcp/relink.rs`). Connections that fail the handshake or the gate
/// are dropped; the warnings are rate-limited (one line per 10 s at most, with the count
/// of those not shown).
pub(crate) fn spawn_acceptor(
    listener: TcpListener,
    keys: Keys,
    expected: Vec<NodeId>,
) -> Result<Acceptor> {
    let gate = Arc::new(Gate::default());
    let (tell, taken) = mpsc::channel();
    let acceptor = Acceptor {
        gate: gate.clone(),
        tell: tell.clone(),
        taken,
    };
    let warn = Arc::new(RateLimit::default());
    std::thread::Builder::new()
        .name(format!("hc-accept-{}", keys.rank))
        .spawn(move || loop {
            let (mut s, from) = match listener.accept() {
                Ok(x) => x,
                Err(e) => {
                    warn.warn(format_args!("accepting a link connection: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let keys = keys.clone();
            let expected = expected.clone();
            let gate = gate.clone();
            let tell = tell.clone();
            let warn = warn.clone();
            let _ = std::thread::Builder::new()
                .name("hc-handshake".into())
                .spawn(move || {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                    let allowed = |r: NodeId| expected.contains(&r) && gate.admits(r);
                    match handshake::accept(&mut s, &keys.secret, keys.job, keys.rank, allowed) {
                        Ok(r) => {
                            if !gate.take(r) {
                                warn.warn(format_args!(
                                    "rejected a second link from node {r} ({from})"
                                ));
                                return;
                            }
                            let _ = s.set_read_timeout(None);
                            let _ = s.set_write_timeout(None);
                            let _ = tell.send(Relink::Accepted(r, s));
                        }
                        Err(why) => warn.warn(format_args!(
                            "rejected a link connection from {from}: {why}; the job carries on"
                        )),
                    }
                });
        })
        .map_err(|e| Error::io("starting the link acceptor", e))?;
    Ok(acceptor)
}

/// Pass the handshake as the dialer of neighbor `peer` on the connected `s`, each read and
/// write within `t`; the error says why not.
fn handshake_on(
    mut s: TcpStream,
    keys: &Keys,
    peer: NodeId,
    t: Duration,
) -> std::result::Result<TcpStream, String> {
    s.set_read_timeout(Some(t))
        .and_then(|_| s.set_write_timeout(Some(t)))
        .map_err(|e| format!("configuring the socket: {e}"))?;
    handshake::dial(&mut s, &keys.secret, keys.job, keys.rank, peer)?;
    s.set_read_timeout(None)
        .and_then(|_| s.set_write_timeout(None))
        .map_err(|e| format!("configuring the socket: {e}"))?;
    Ok(s)
}

/// How a node dials a neighbor whose link died (`transport/tcp/relink.rs`): a second to
/// connect, two for the handshake; `addrs` by rank.
fn redialer(keys: Keys, addrs: Vec<Option<SocketAddr>>) -> Dialer {
    Box::new(move |peer| {
        let addr = addrs
            .get(peer as usize)
            .copied()
            .flatten()
            .ok_or_else(|| format!("no address is known for node {peer}"))?;
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(1))
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        handshake_on(s, &keys, peer, Duration::from_secs(2))
    })
}

/// Dial the neighbors this node dials, collect those that dial it, and return the links
/// in slot order: link k goes across dimension k; node 0's link `dim` goes to the host.
/// `addr_of` gives a neighbor's listener address.
pub(crate) fn establish(
    keys: &Keys,
    has_host: bool,
    addr_of: impl Fn(NodeId) -> Option<SocketAddr>,
    dialed: &Acceptor,
    d: Deadline,
) -> Result<Vec<(NodeId, TcpStream)>> {
    let me = keys.rank;
    let is_host = keys.is_host();
    let nlinks = if is_host {
        1
    } else {
        keys.dim as usize + usize::from(me == 0 && has_host)
    };
    let slot = |peer: NodeId| -> usize {
        if is_host {
            0
        } else if peer == HOST {
            keys.dim as usize
        } else {
            (me ^ peer).trailing_zeros() as usize
        }
    };
    let mut links: Vec<Option<(NodeId, TcpStream)>> = (0..nlinks).map(|_| None).collect();
    for peer in keys.dials() {
        let addr = addr_of(peer).ok_or_else(|| {
            Error::Bootstrap(format!("no address is known for neighbor node {peer}"))
        })?;
        let t = d.left("dialing a neighbor")?;
        let s = TcpStream::connect_timeout(&addr, t).map_err(|e| {
            Error::Bootstrap(format!(
                "node {me} cannot reach its neighbor node {peer} at {addr}: {e}. Check that \
                 this address is reachable from this host (a firewall? the wrong network?); \
                 HYPERCUBE_IFACE or HYPERCUBE_ADDR choose the address a rank publishes \
                 (docs/clusters.md)"
            ))
        })?;
        let t = d.left("the link handshake")?;
        let s = handshake_on(s, keys, peer, t).map_err(|d| {
            Error::Bootstrap(format!(
                "link to node {peer} at {addr}: {d} (is another job's process listening there?)"
            ))
        })?;
        links[slot(peer)] = Some((peer, s));
    }
    // Collect the ones that dial us.
    loop {
        let missing: Vec<NodeId> = keys
            .dialed_by(has_host)
            .into_iter()
            .filter(|&p| links.get(slot(p)).is_some_and(|l| l.is_none()))
            .collect();
        if missing.is_empty() {
            break;
        }
        let stage = format!(
            "waiting for neighbor node(s) {} to dial in",
            missing
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let t = d.left(&stage)?;
        match dialed.taken.recv_timeout(t) {
            Ok(Relink::Accepted(peer, s)) => {
                let k = slot(peer);
                if k < links.len() && links[k].is_none() {
                    links[k] = Some((peer, s));
                }
            }
            Ok(Relink::Dead(_)) => {}
            Err(_) => return Err(d.expired(stage)),
        }
    }
    Ok(links.into_iter().flatten().collect())
}

/// At most one warning line per 10 s window; the lines held back are counted and the count
/// is reported with the next line shown (a flood of 200 strangers gives one line, not 200).
const WINDOW_MS: u64 = 10_000;

#[derive(Default)]
struct RateLimit {
    last_ms: AtomicU64,
    held: AtomicU64,
    epoch: std::sync::OnceLock<Instant>,
}

impl RateLimit {
    fn warn(&self, msg: std::fmt::Arguments<'_>) {
        let epoch = *self.epoch.get_or_init(Instant::now);
        let now = epoch.elapsed().as_millis() as u64 + WINDOW_MS;
        let last = self.last_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < WINDOW_MS
            || self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.held.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match self.held.swap(0, Ordering::Relaxed) {
            0 => tracing::warn!("{msg} (further ones within 10 s are counted, not listed)"),
            n => tracing::warn!(
                "{msg} ({n} more since the last warning; further ones within 10 s are counted, \
                 not listed)"
            ),
        }
    }
}
