//! Joining the job the launcher set up: bind a link listener, say hello on the control
//! channel, get everyone's address, dial the neighbors whose bit k is 1 (and accept those
//! whose bit k is 0) proving the job secret on every link, then the ready barrier.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::transport::Tuning;
use crate::wire::control::{self, ToLauncher, ToNode};
use crate::wire::handshake;
use crate::NodeId;

use super::TcpTransport;

/// What a node learns from its environment.
#[derive(Debug, Clone)]
pub(crate) struct BootConfig {
    pub rank: NodeId,
    pub dim: u32,
    pub control: SocketAddr,
    pub job: u64,
    pub secret: Vec<u8>,
    pub timeout: Duration,
}

impl BootConfig {
    /// Read the launcher's variables. `None` when the process was not started by a launcher.
    /// The secret is removed from the environment so child processes do not inherit it.
    pub fn from_env() -> Result<Option<BootConfig>> {
        let Ok(control_s) = std::env::var(control::ENV_CONTROL) else {
            return Ok(None);
        };
        let need = |name: &str| {
            std::env::var(name).map_err(|_| {
                Error::Config(format!(
                    "{name} is not set although {} is; start node programs with hcrun",
                    control::ENV_CONTROL
                ))
            })
        };
        let bad = |name: &str, v: &str| Error::Config(format!("{name}={v:?} is malformed"));
        let rank_s = need(control::ENV_RANK)?;
        let dim_s = need(control::ENV_DIM)?;
        let job_s = need(control::ENV_JOB)?;
        let secret_s = need(control::ENV_SECRET)?;
        std::env::remove_var(control::ENV_SECRET);
        let control = control_s
            .parse()
            .map_err(|_| bad(control::ENV_CONTROL, &control_s))?;
        let rank: u32 = if rank_s == "host" {
            crate::HOST
        } else {
            rank_s
                .parse()
                .map_err(|_| bad(control::ENV_RANK, &rank_s))?
        };
        let dim: u32 = dim_s.parse().map_err(|_| bad(control::ENV_DIM, &dim_s))?;
        if dim > 16 || (rank >= (1 << dim) && rank != crate::HOST) {
            return Err(Error::Config(format!(
                "rank {rank} in a cube of dimension {dim}: dimension must be <= 16 and rank < 2^dim"
            )));
        }
        let job = u64::from_str_radix(&job_s, 16).map_err(|_| bad(control::ENV_JOB, &job_s))?;
        let secret = control::from_hex(&secret_s)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(control::ENV_SECRET, "<hidden>"))?;
        let timeout_ms = match std::env::var(control::ENV_BOOT_TIMEOUT_MS) {
            Ok(v) => v
                .parse::<u64>()
                .map_err(|_| bad(control::ENV_BOOT_TIMEOUT_MS, &v))?,
            Err(_) => 30_000,
        };
        Ok(Some(BootConfig {
            rank,
            dim,
            control,
            job,
            secret,
            timeout: Duration::from_millis(timeout_ms),
        }))
    }
}

fn left(deadline: Instant, stage: &str, cfg: &BootConfig) -> Result<Duration> {
    let now = Instant::now();
    if now >= deadline {
        return Err(Error::BootstrapTimeout {
            stage: stage.into(),
            timeout_ms: cfg.timeout.as_millis() as u64,
        });
    }
    Ok(deadline - now)
}

fn timeout_or_io(e: Error, stage: &str, cfg: &BootConfig) -> Error {
    if let Error::Io { source, .. } = &e {
        if matches!(
            source.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            return Error::BootstrapTimeout {
                stage: stage.into(),
                timeout_ms: cfg.timeout.as_millis() as u64,
            };
        }
    }
    e
}

/// Join the job: returns the transport and the control connection (kept open).
pub(crate) fn connect(cfg: &BootConfig) -> Result<(TcpTransport, TcpStream)> {
    let deadline = Instant::now() + cfg.timeout;
    let me = cfg.rank;
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| Error::io("binding the link listener", e))?;
    let listen = listener
        .local_addr()
        .map_err(|e| Error::io("reading the listener address", e))?;

    let is_host = me == crate::HOST;
    // Links from neighbors that dial us (their bit k is 0, ours is 1); node 0 also takes
    // the host's link if the job has one.
    let expected: Vec<NodeId> = if is_host {
        Vec::new()
    } else {
        (0..cfg.dim)
            .filter(|k| me & (1 << k) != 0)
            .map(|k| me ^ (1 << k))
            .chain((me == 0).then_some(crate::HOST))
            .collect()
    };
    let (tx, rx) = mpsc::channel::<(NodeId, TcpStream)>();
    spawn_acceptor(listener, cfg.clone(), expected, tx)?;

    // Hello on the control channel.
    let mut ctl = loop {
        match TcpStream::connect_timeout(
            &cfg.control,
            left(deadline, "connecting to the launcher", cfg)?,
        ) {
            Ok(s) => break s,
            Err(e) if Instant::now() < deadline => {
                tracing::debug!("connecting to the launcher: {e}; retrying");
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(Error::io("connecting to the launcher", e)),
        }
    };
    let _ = ctl.set_nodelay(true);
    let hello = ToLauncher::Hello {
        rank: me,
        listen,
        proof: control::proof(&cfg.secret, cfg.job, me),
    };
    ctl.write_all(&control::frame(&hello)?)
        .map_err(|e| Error::io("sending hello to the launcher", e))?;

    ctl.set_read_timeout(Some(left(deadline, "waiting for the address table", cfg)?))
        .map_err(|e| Error::io("configuring the control socket", e))?;
    let (addrs, has_host) = match control::read_blocking::<ToNode>(&mut ctl)
        .map_err(|e| timeout_or_io(e, "waiting for the address table", cfg))?
    {
        ToNode::Table { addrs, host } if addrs.len() == 1usize << cfg.dim => (addrs, host),
        ToNode::Table { addrs, .. } => {
            return Err(Error::Bootstrap(format!(
                "the launcher sent {} addresses for a cube of {} nodes",
                addrs.len(),
                1u32 << cfg.dim
            )))
        }
        ToNode::Abort { reason } => return Err(Error::Shutdown(reason)),
        ToNode::Go => return Err(Error::Bootstrap("launcher said go before the table".into())),
    };

    // Dial the neighbors whose bit k is 1 (the host dials node 0). Link k of a node goes
    // across dimension k; node 0's link `dim` goes to the host.
    let nlinks = if is_host {
        1
    } else {
        cfg.dim as usize + usize::from(me == 0 && has_host)
    };
    let slot = |peer: NodeId| -> usize {
        if is_host {
            0
        } else if peer == crate::HOST {
            cfg.dim as usize
        } else {
            (me ^ peer).trailing_zeros() as usize
        }
    };
    let mut links: Vec<Option<(NodeId, TcpStream)>> = (0..nlinks).map(|_| None).collect();
    let dial_to: Vec<NodeId> = if is_host {
        vec![0]
    } else {
        (0..cfg.dim)
            .filter(|k| me & (1 << k) == 0)
            .map(|k| me ^ (1 << k))
            .collect()
    };
    for peer in dial_to {
        let addr = addrs[peer as usize];
        let mut s = TcpStream::connect_timeout(&addr, left(deadline, "dialing a neighbor", cfg)?)
            .map_err(|e| Error::io(format!("dialing node {peer} at {addr}"), e))?;
        let t = left(deadline, "the link handshake", cfg)?;
        s.set_read_timeout(Some(t))
            .and_then(|_| s.set_write_timeout(Some(t)))
            .map_err(|e| Error::io("configuring a link", e))?;
        handshake::dial(&mut s, &cfg.secret, cfg.job, me, peer)
            .map_err(|d| Error::Bootstrap(format!("link to node {peer}: {d}")))?;
        s.set_read_timeout(None)
            .and_then(|_| s.set_write_timeout(None))
            .map_err(|e| Error::io("configuring a link", e))?;
        links[slot(peer)] = Some((peer, s));
    }
    // Collect the ones that dial us.
    let mut missing = links.iter().filter(|l| l.is_none()).count();
    while missing > 0 {
        let t = left(deadline, "waiting for neighbors to dial in", cfg)?;
        match rx.recv_timeout(t) {
            Ok((peer, s)) => {
                let k = slot(peer);
                if k < links.len() && links[k].is_none() {
                    links[k] = Some((peer, s));
                    missing -= 1;
                }
            }
            Err(_) => {
                return Err(Error::BootstrapTimeout {
                    stage: format!("waiting for {missing} neighbor(s) to dial in"),
                    timeout_ms: cfg.timeout.as_millis() as u64,
                })
            }
        }
    }
    let links: Vec<(NodeId, TcpStream)> = links.into_iter().flatten().collect();

    // The ready barrier.
    ctl.write_all(&control::frame(&ToLauncher::Ready { rank: me })?)
        .map_err(|e| Error::io("telling the launcher we are ready", e))?;
    ctl.set_read_timeout(Some(left(deadline, "the ready barrier", cfg)?))
        .map_err(|e| Error::io("configuring the control socket", e))?;
    match control::read_blocking::<ToNode>(&mut ctl)
        .map_err(|e| timeout_or_io(e, "the ready barrier", cfg))?
    {
        ToNode::Go => {}
        ToNode::Abort { reason } => return Err(Error::Shutdown(reason)),
        ToNode::Table { .. } => return Err(Error::Bootstrap("a second address table".into())),
    }
    ctl.set_read_timeout(None)
        .map_err(|e| Error::io("configuring the control socket", e))?;
    let tuning = Tuning::from_env(1 << cfg.dim)?;
    let t = TcpTransport::start(me, cfg.dim, links, addrs, has_host, tuning)?;
    Ok((t, ctl))
}

/// Accept link connections for the whole job: handshake each on its own thread (so a
/// silent stranger cannot stall the others) and hand the good ones over. Connections that
/// fail the handshake — or arrive once all links are up — are logged and dropped.
fn spawn_acceptor(
    listener: TcpListener,
    cfg: BootConfig,
    expected: Vec<NodeId>,
    tx: mpsc::Sender<(NodeId, TcpStream)>,
) -> Result<()> {
    // The neighbors whose link is up: a second connection claiming one is refused.
    let connected: Arc<Mutex<Vec<NodeId>>> = Arc::default();
    std::thread::Builder::new()
        .name(format!("hc-accept-{}", cfg.rank))
        .spawn(move || loop {
            let (mut s, from) = match listener.accept() {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!("accepting a link connection: {e}");
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let cfg = cfg.clone();
            let expected = expected.clone();
            let connected = connected.clone();
            let tx = tx.clone();
            let _ = std::thread::Builder::new()
                .name("hc-handshake".into())
                .spawn(move || {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = s.set_write_timeout(Some(Duration::from_secs(5)));
                    let allowed = |r: NodeId| {
                        expected.contains(&r) && !super::relock(connected.lock()).contains(&r)
                    };
                    match handshake::accept(&mut s, &cfg.secret, cfg.job, cfg.rank, allowed) {
                        Ok(r) => {
                            let mut c = super::relock(connected.lock());
                            if c.contains(&r) {
                                tracing::warn!("rejected a second link from node {r} ({from})");
                                return;
                            }
                            c.push(r);
                            drop(c);
                            let _ = s.set_read_timeout(None);
                            let _ = s.set_write_timeout(None);
                            let _ = tx.send((r, s));
                        }
                        Err(why) => {
                            tracing::warn!(
                                "rejected a link connection from {from}: {why}; the job carries on"
                            );
                        }
                    }
                });
        })
        .map_err(|e| Error::io("starting the link acceptor", e))?;
    Ok(())
}
