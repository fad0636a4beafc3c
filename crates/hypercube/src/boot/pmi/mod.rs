//! Joining a job started by a PMI-1 process manager — MPICH's Hydra (`mpiexec`) or Slurm
//! (`srun --mpi=pmi2`) — on one host or many.
//!
//! The conversation (one request line, one reply line; `wire::pmi` has the format, the
//! client is `client.rs`):
//! `init`, `get_maxes`, `get_my_kvsname`; the size must be a power of two; rank 0 draws
//! the job secret and `put`s it; every rank binds its link listener on an address the other
//! hosts can reach (`super::addr`) and `put`s it; `barrier_in`; each rank `get`s the secret
//! and only its d neighbors' addresses; the links open with the same handshake as under
//! `hcrun`; a second `barrier_in` is the ready barrier. The connection stays open: a broken
//! link or `Node::abort` sends `abort` (the manager then stops every rank), a clean end
//! sends `finalize`, and the manager's disappearance ends the process.

mod client;

pub(crate) use client::PmiEnv;

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hypercube_topology::NodeId;

use crate::error::{Error, Result};
use crate::transport::tcp::{TcpTransport, Tuning};
use crate::wire::control::{from_hex, to_hex, ToLauncher};
use crate::wire::pmi;

use super::deadline::Deadline;
use super::links::{self, Keys};
use client::Client;

use crate::base::tags::MAX_DIM;
/// Our keys in the job's key-value space (never `PMI_`-prefixed: those are the manager's).
const KEY_JOB: &str = "hypercube-job";
fn key_addr(rank: NodeId) -> String {
    format!("hypercube-addr-{rank}")
}

/// The powers of two around `n`, for the error message.
fn nearest_powers(n: u32) -> (u32, u32) {
    let hi = n.checked_next_power_of_two().unwrap_or(1 << 31);
    let lo = if hi == n { n } else { hi / 2 };
    (lo.max(1), hi)
}

/// Join the job: everything of the module doc. On a failure after the manager answered,
/// the job is aborted through PMI so that no rank waits for this one until its timeout.
pub(crate) fn join(env: &PmiEnv, timeout: Duration) -> Result<TcpTransport> {
    let d = Deadline::start(timeout);
    let mut client = Client::connect(env, d)?;
    super::logging::init(client.rank);
    match rendezvous(&mut client, d) {
        Ok((t, keys)) => {
            let client = Arc::new(Mutex::new(client));
            let done = Arc::new(AtomicBool::new(false));
            watch_manager(client.clone(), done.clone(), keys.rank);
            crate::job::install(Box::new(Pmi { client, done }));
            Ok(t)
        }
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "node {}: {e}", client.rank);
            // The abort makes the manager kill every rank, and with them the pipes that
            // carry their output: give it a moment to forward this line first (measured:
            // under load, Hydra lost it now and then).
            std::thread::sleep(std::time::Duration::from_millis(300));
            client.send_abort(&e.to_string());
            Err(e)
        }
    }
}

fn rendezvous(c: &mut Client, d: Deadline) -> Result<(TcpTransport, Keys)> {
    let (rank, size) = (c.rank, c.size);
    if !size.is_power_of_two() || size > 1 << MAX_DIM {
        let (lo, hi) = nearest_powers(size);
        return Err(Error::Config(format!(
            "this job has {size} processes, but a hypercube needs a power of two (at most \
             2^{MAX_DIM}): start it with {lo} or {hi} processes (srun -n / mpiexec -n)"
        )));
    }
    let dim = size.trailing_zeros();

    // Where to listen: loopback if every rank is on this host, else an address the other
    // hosts can reach.
    let mapping = c.get("PMI_process_mapping", d)?;
    let hosts = mapping.as_deref().and_then(pmi::mapping_nodes).or_else(|| {
        ["SLURM_STEP_NUM_NODES", "SLURM_NNODES"]
            .iter()
            .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
    });
    let choice = super::addr::choose(hosts == Some(1) || size == 1)?;
    tracing::debug!(
        "rank {rank}: the job spans {} host(s) (PMI_process_mapping={mapping:?}); \
         publishing {} ({})",
        hosts.map_or("an unknown number of".into(), |h| h.to_string()),
        choice.ip,
        choice.why
    );
    let listener = TcpListener::bind(SocketAddr::new(choice.ip, 0)).map_err(|e| {
        Error::Bootstrap(format!(
            "binding the link listener on {} (chosen by {}): {e}. Is it an address of this \
             host? Set HYPERCUBE_IFACE or HYPERCUBE_ADDR (docs/clusters.md)",
            choice.ip, choice.why
        ))
    })?;
    let listen = listener
        .local_addr()
        .map_err(|e| Error::io("reading the listener address", e))?;

    // Rank 0 draws the job's id and secret; everyone publishes its listener.
    if rank == 0 {
        use rand::RngCore;
        let mut secret = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut secret);
        let job = rand::random::<u64>();
        c.put(KEY_JOB, &format!("{job:016x}.{}", to_hex(&secret)), d)?;
    }
    c.put(&key_addr(rank), &listen.to_string(), d)?;
    c.barrier(d)?;

    let job_s = c.get(KEY_JOB, d)?.ok_or_else(|| {
        Error::Bootstrap(
            "rank 0 published no job key: are all ranks this program, built with the same \
             version of hypercube?"
                .into(),
        )
    })?;
    let (job, secret) = job_s
        .split_once('.')
        .and_then(|(j, s)| Some((u64::from_str_radix(j, 16).ok()?, from_hex(s)?)))
        .filter(|(_, s)| !s.is_empty())
        .ok_or_else(|| {
            Error::Bootstrap(format!("rank 0 published a malformed job key {job_s:?}"))
        })?;
    let keys = Keys {
        rank,
        dim,
        job,
        secret,
    };
    let mut addrs: Vec<Option<SocketAddr>> = vec![None; size as usize];
    for peer in keys.neighbors() {
        let a = c.get(&key_addr(peer), d)?.ok_or_else(|| {
            Error::Bootstrap(format!("neighbor node {peer} published no address"))
        })?;
        let sa: SocketAddr = a.parse().map_err(|_| {
            Error::Bootstrap(format!(
                "neighbor node {peer} published a malformed address {a:?}"
            ))
        })?;
        if sa.ip().is_loopback() && !listen.ip().is_loopback() {
            tracing::warn!(
                "neighbor node {peer} published a loopback address ({sa}) in a job that spans \
                 hosts: set HYPERCUBE_IFACE or HYPERCUBE_ADDR there"
            );
        }
        addrs[peer as usize] = Some(sa);
    }
    tracing::debug!(
        "rank {rank}: neighbors at {:?}",
        addrs.iter().flatten().collect::<Vec<_>>()
    );
    let dialed = links::spawn_acceptor(listener, keys.clone(), keys.dialed_by(false))?;
    let links = links::establish(&keys, false, |p| addrs[p as usize], &dialed, d)?;
    // The ready barrier.
    c.barrier(d)?;
    let tuning = Tuning::from_env(size)?;
    let t = TcpTransport::start(rank, dim, links, addrs.clone(), false, tuning)?;
    dialed.hand_over(&t, keys.clone(), addrs)?;
    Ok((t, keys))
}

/// The supervisor of a job under a PMI manager.
struct Pmi {
    client: Arc<Mutex<Client>>,
    done: Arc<AtomicBool>,
}

impl crate::job::Supervisor for Pmi {
    fn report(&self, _msg: &ToLauncher) {
        // PMI-1 has no place for the deadlock detector's reports.
    }

    fn fatal(&self, e: &Error) {
        // Called with the engine's lock held: only a short write (bounded by a timeout).
        if let Ok(mut c) = self.client.try_lock() {
            c.send_abort(&e.to_string());
        }
    }

    fn abort(&self, reason: &str) {
        let mut c = self.client.lock().unwrap_or_else(|p| p.into_inner());
        c.send_abort(reason);
    }

    fn finished(&self) {
        self.done.store(true, Ordering::SeqCst);
        let mut c = self.client.lock().unwrap_or_else(|p| p.into_inner());
        let t = Duration::from_secs(30);
        if let Err(e) = c.call("finalize", &[], "finalize_ack", Deadline::start(t)) {
            tracing::warn!("finalize with the process manager: {e}");
        }
    }
}

/// The manager's disappearance (its socket hangs up) ends this process, unless the job
/// finished. `poll` for `POLLRDHUP` only: the replies stay for the client to read.
fn watch_manager(client: Arc<Mutex<Client>>, done: Arc<AtomicBool>, rank: NodeId) {
    let fd = client
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .stream
        .raw();
    let _ = std::thread::Builder::new()
        .name(format!("hc-pmi-{rank}"))
        .spawn(move || loop {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLRDHUP,
                revents: 0,
            };
            // SAFETY: one valid pollfd; the descriptor lives as long as the client (the
            // process), which this thread's Arc keeps.
            let n = unsafe { libc::poll(&mut p, 1, 1000) };
            if done.load(Ordering::SeqCst) {
                return;
            }
            if n > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0 {
                let why =
                    Error::Shutdown("lost the process manager (its PMI connection closed)".into());
                let _ = writeln!(std::io::stderr(), "node {rank}: {why}");
                std::process::exit(1);
            }
            let _ = &client;
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_around() {
        assert_eq!(nearest_powers(6), (4, 8));
        assert_eq!(nearest_powers(1), (1, 1));
        assert_eq!(nearest_powers(3), (2, 4));
        assert_eq!(nearest_powers(9), (8, 16));
    }
}
