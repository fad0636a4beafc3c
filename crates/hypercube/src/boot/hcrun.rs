//! Joining a job that `hcrun` set up: bind a link listener on loopback (or on the address
//! hcrun gives, `HYPERCUBE_ADDR`), say hello on the control channel, get everyone's
//! address, open the links (`super::links`), then the ready barrier. The control connection stays open for the whole job: it carries the
//! deadlock detector's reports, and an `Abort` or its loss ends the process.

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hypercube_topology::NodeId;

use crate::base::ids::HOST;
use crate::error::{Error, Result};
use crate::transport::tcp::{TcpTransport, Tuning};
use crate::wire::control::{self, ToLauncher, ToNode};

use super::deadline::{boot_timeout, Deadline};
use super::links::{self, Keys};

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
            HOST
        } else {
            rank_s
                .parse()
                .map_err(|_| bad(control::ENV_RANK, &rank_s))?
        };
        let dim: u32 = dim_s.parse().map_err(|_| bad(control::ENV_DIM, &dim_s))?;
        let max = crate::base::tags::MAX_DIM;
        if dim > max || (rank >= (1 << dim) && rank != HOST) {
            return Err(Error::Config(format!(
                "rank {rank} in a cube of dimension {dim}: dimension must be <= {max} and rank < 2^dim"
            )));
        }
        let job = u64::from_str_radix(&job_s, 16).map_err(|_| bad(control::ENV_JOB, &job_s))?;
        let secret = control::from_hex(&secret_s)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(control::ENV_SECRET, "<hidden>"))?;
        let timeout = boot_timeout()?;
        Ok(Some(BootConfig {
            rank,
            dim,
            control,
            job,
            secret,
            timeout,
        }))
    }
}

fn timeout_or_io(e: Error, stage: &str, d: Deadline) -> Error {
    if let Error::Io { source, .. } = &e {
        if matches!(
            source.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            return d.expired(stage);
        }
    }
    e
}

impl BootConfig {
    fn keys(&self) -> Keys {
        Keys {
            rank: self.rank,
            dim: self.dim,
            job: self.job,
            secret: self.secret.clone(),
        }
    }
}

/// Join the job: open the links, pass the ready barrier, install the supervisor that
/// talks to `hcrun`, and start the transport.
pub(crate) fn join(cfg: &BootConfig) -> Result<TcpTransport> {
    let d = Deadline::start(cfg.timeout);
    let me = cfg.rank;
    let keys = cfg.keys();
    // Loopback, unless hcrun gave this rank an address of its own (on an emulated network,
    // the node's cube address: its links then cross the emulated edges).
    let ip = match std::env::var(super::addr::ENV_ADDR) {
        Ok(a) => a.trim().parse::<std::net::IpAddr>().map_err(|_| {
            Error::Config(format!(
                "{}={a:?} is not an IP address (e.g. 10.1.2.3 or fd00::3)",
                super::addr::ENV_ADDR
            ))
        })?,
        Err(_) => std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    };
    let listener = TcpListener::bind((ip, 0)).map_err(|e| {
        Error::io(
            format!("binding the link listener on {ip} (HYPERCUBE_ADDR must be an address of this host)"),
            e,
        )
    })?;
    let listen = listener
        .local_addr()
        .map_err(|e| Error::io("reading the listener address", e))?;
    // Node 0 takes the host's link if the job has one; an unexpected host is refused by
    // the handshake, so expecting it is harmless.
    let dialed = links::spawn_acceptor(listener, keys.clone(), keys.dialed_by(true))?;

    // Hello on the control channel. The launcher listens before it spawns any rank, so a
    // refused connection means it is gone: stop at once rather than retry.
    let stage = "connecting to the launcher";
    let mut ctl =
        TcpStream::connect_timeout(&cfg.control, d.left(stage)?).map_err(|e| match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => d.expired(stage),
            _ => Error::Shutdown(format!(
                "the launcher at {} is gone ({e}); nothing to join",
                cfg.control
            )),
        })?;
    let _ = ctl.set_nodelay(true);
    let hello = ToLauncher::Hello {
        rank: me,
        listen,
        proof: control::proof(&cfg.secret, cfg.job, me),
    };
    ctl.write_all(&control::frame(&hello)?)
        .map_err(|e| Error::io("sending hello to the launcher", e))?;

    ctl.set_read_timeout(Some(d.left("waiting for the address table")?))
        .map_err(|e| Error::io("configuring the control socket", e))?;
    let (addrs, has_host) = match control::read_blocking::<ToNode>(&mut ctl)
        .map_err(|e| timeout_or_io(e, "waiting for the address table", d))?
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

    let links = links::establish(
        &keys,
        has_host,
        |peer| addrs.get(peer as usize).copied(),
        &dialed,
        d,
    )?;

    // The ready barrier.
    ctl.write_all(&control::frame(&ToLauncher::Ready { rank: me })?)
        .map_err(|e| Error::io("telling the launcher we are ready", e))?;
    ctl.set_read_timeout(Some(d.left("the ready barrier")?))
        .map_err(|e| Error::io("configuring the control socket", e))?;
    match control::read_blocking::<ToNode>(&mut ctl)
        .map_err(|e| timeout_or_io(e, "the ready barrier", d))?
    {
        ToNode::Go => {}
        ToNode::Abort { reason } => return Err(Error::Shutdown(reason)),
        ToNode::Table { .. } => return Err(Error::Bootstrap("a second address table".into())),
    }
    ctl.set_read_timeout(None)
        .map_err(|e| Error::io("configuring the control socket", e))?;
    let tuning = Tuning::from_env(1 << cfg.dim)?;
    let addrs: Vec<_> = addrs.into_iter().map(Some).collect();
    let t = TcpTransport::start(me, cfg.dim, links, addrs.clone(), has_host, tuning)?;
    dialed.hand_over(&t, keys, addrs)?;
    let writer = ctl
        .try_clone()
        .map_err(|e| Error::io("cloning the control socket", e))?;
    crate::job::install(Box::new(Hcrun {
        control: Mutex::new(writer),
    }));
    watch_control(t.engine().clone(), ctl, me, t.done_flag.clone());
    Ok(t)
}

/// The supervisor of a job under `hcrun`: reports go over the control connection; a
/// failure needs no message (`hcrun` sees the exit and stops the others).
struct Hcrun {
    control: Mutex<TcpStream>,
}

impl crate::job::Supervisor for Hcrun {
    fn report(&self, msg: &ToLauncher) {
        if let Ok(bytes) = control::frame(msg) {
            let mut c = self.control.lock().unwrap_or_else(|p| p.into_inner());
            let _ = c.write_all(&bytes);
        }
    }
    fn fatal(&self, _e: &Error) {}
    fn abort(&self, _reason: &str) {}
    fn finished(&self) {}
}

/// The control channel stays open: an abort or the launcher's disappearance ends this
/// process (unless it already finished).
fn watch_control(
    engine: Arc<crate::transport::tcp::Engine>,
    mut ctl: TcpStream,
    rank: NodeId,
    done: Arc<AtomicBool>,
) {
    let _ = std::thread::Builder::new()
        .name(format!("hc-control-{rank}"))
        .spawn(move || {
            let why = match control::read_blocking::<ToNode>(&mut ctl) {
                Ok(ToNode::Abort { reason }) => reason,
                Ok(other) => format!("unexpected control message {other:?}"),
                Err(e) => format!("lost the launcher ({e})"),
            };
            if done.load(Ordering::SeqCst) {
                return;
            }
            engine.abort(Error::Shutdown(why.clone()));
            tracing::debug!("exiting: {why}");
            // The launcher may be gone (and our stderr with it): never panic on the write.
            let _ = writeln!(std::io::stderr(), "node {rank}: {}", Error::Shutdown(why));
            std::process::exit(1);
        });
}
