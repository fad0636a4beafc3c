//! The control channel between hcrun and every process of the job (one TCP connection
//! each, kept open for the whole job; the messages are `hypercube::wire::control`'s).
//!
//! The bootstrap rendezvous: collect every rank's hello (checking its proof of the job
//! secret), send everyone the address table, collect the ready messages, send go. Then the
//! ranks' reports (a wait with nothing arriving, and its end) until each closes its
//! connection, and hcrun's `Abort` when the job is torn down. Connections that fail the
//! proof are dropped and logged ([`Rejections`]: the first of a burst in full, the rest as
//! a count).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use hypercube::wire::control::{self, ToLauncher, ToNode};
use launcher::cubenet;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long each rank's `Abort` may take to write.
const ABORT_WRITE: Duration = Duration::from_millis(100);

/// What a process proves it belongs to the job with.
#[derive(Debug)]
pub struct Credentials {
    /// The job id.
    pub job: u64,
    /// The job secret.
    pub secret: [u8; 32],
}

impl Credentials {
    /// A fresh job id and secret.
    pub fn random() -> Credentials {
        let secret: [u8; 32] = rand::random();
        let job: u64 = rand::random();
        Credentials { job, secret }
    }
}

/// The control listener: on the emulated network (`emulated`) on the management bridge,
/// otherwise on the loopback interface.
pub async fn listen(emulated: bool) -> Result<TcpListener> {
    let ip = if emulated {
        IpAddr::V4(cubenet::hub_addr())
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    TcpListener::bind((ip, 0))
        .await
        .context("binding the control listener")
}

/// hcrun's end of the control channel, for the supervisor: the rendezvous's events, and
/// the connections to every rank once the cube is wired (for `Abort`).
pub struct Control {
    events: mpsc::UnboundedReceiver<Report>,
    writers: Option<Vec<OwnedWriteHalf>>,
    rendezvous: JoinHandle<Result<()>>,
    rejections: Arc<Rejections>,
    summaries: JoinHandle<()>,
}

/// What the rendezvous's tasks send the supervisor's end.
enum Report {
    /// An event for the supervisor.
    Event(Event),
    /// Every rank is ready and has been told to go: the connections, for `Abort`.
    Wired(Vec<OwnedWriteHalf>),
}

impl Control {
    /// Run the rendezvous on `listener` for the processes `expect` describes.
    pub fn open(listener: TcpListener, expect: Expect) -> Control {
        let (tx, events) = mpsc::unbounded_channel();
        let rejections = Arc::new(Rejections::default());
        let rendezvous = tokio::spawn(run(listener, expect, tx, rejections.clone()));
        let summaries = {
            let r = rejections.clone();
            tokio::spawn(async move {
                let mut every = tokio::time::interval(Duration::from_secs(1));
                loop {
                    every.tick().await;
                    r.flush_due();
                }
            })
        };
        Control {
            events,
            writers: None,
            rendezvous,
            rejections,
            summaries,
        }
    }

    /// The next event (`None` once no task is left to send one). Cancel-safe.
    pub async fn next(&mut self) -> Option<Event> {
        match self.events.recv().await? {
            Report::Event(e) => Some(e),
            Report::Wired(w) => {
                self.writers = Some(w);
                Some(Event::AllReady)
            }
        }
    }

    /// Stop the rendezvous where it is (the ranks' reports still come in).
    pub fn stop_rendezvous(&self) {
        self.rendezvous.abort();
    }

    /// Tell every rank the job is being torn down, and why (if the cube was wired: before,
    /// hcrun has no connection to every rank).
    pub async fn abort(&mut self, reason: String) -> Result<()> {
        if let Some(ws) = self.writers.as_mut() {
            let msg = control::frame(&ToNode::Abort { reason })?;
            for w in ws.iter_mut() {
                let _ = tokio::time::timeout(ABORT_WRITE, w.write_all(&msg)).await;
            }
        }
        Ok(())
    }

    /// The job has ended: sum up the rejected connections.
    pub fn close(self) {
        self.summaries.abort();
        self.rejections.flush();
    }
}

/// What the rendezvous reports to the supervisor.
#[derive(Debug)]
pub enum Event {
    /// A rank proved itself and said hello (its slot: the rank, or `n` for the host).
    Joined(u32),
    /// Every rank is ready and has been told to go.
    AllReady,
    /// A rank (slot) has waited a while with nothing arriving, for this.
    Blocked(u32, String),
    /// That rank's wait ended.
    Running(u32),
}

/// How long a burst of rejected connections is counted before its summary line.
pub const REJECTION_WINDOW: Duration = Duration::from_secs(10);

/// The warnings about rejected control connections, rate-limited: a stranger that connects
/// again and again must not flood the job's output. The first rejection of a window is
/// logged as it happens, with its reason; the others are counted, and one line sums the
/// window up ("rejected 200 control connections from strangers in the last 3 s") when
/// [`Rejections::flush_due`] finds the window over or [`Rejections::flush`] is called at the
/// end of the job.
#[derive(Debug, Default)]
pub struct Rejections {
    state: Mutex<Window>,
}

#[derive(Debug, Default)]
struct Window {
    /// When the first rejection of the window was logged.
    start: Option<Instant>,
    /// Rejections in the window, the logged one included.
    count: u64,
    /// Where the last one came from.
    last_from: Option<SocketAddr>,
}

impl Rejections {
    /// Log (or count) one rejected connection.
    pub fn reject(&self, from: SocketAddr, why: &str) {
        let mut w = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if w.start.is_some_and(|t| t.elapsed() >= REJECTION_WINDOW) {
            Self::sum_up(&mut w);
        }
        if w.start.is_none() {
            w.start = Some(Instant::now());
            tracing::warn!(
                "rejected a control connection from {from}: {why} (further rejections within {} s \
                 are counted, not listed)",
                REJECTION_WINDOW.as_secs()
            );
        }
        w.count += 1;
        w.last_from = Some(from);
    }

    /// Sum up the window if it is over (call now and then).
    pub fn flush_due(&self) {
        let mut w = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if w.start.is_some_and(|t| t.elapsed() >= REJECTION_WINDOW) {
            Self::sum_up(&mut w);
        }
    }

    /// Sum up the window now (at the end of the job).
    pub fn flush(&self) {
        Self::sum_up(&mut self.state.lock().unwrap_or_else(|p| p.into_inner()));
    }

    fn sum_up(w: &mut Window) {
        if let (Some(start), true) = (w.start, w.count > 1) {
            let secs = start.elapsed().as_secs_f64().ceil().max(1.0) as u64;
            tracing::warn!(
                "rejected {} from strangers in the last {secs} s (the last from {}); the job \
                 carries on — if this goes on, find who connects to hcrun's control port",
                crate::verdict::count(w.count, "control connection"),
                w.last_from.map_or_else(|| "?".into(), |a| a.to_string()),
            );
        }
        *w = Window::default();
    }
}

async fn read_msg<T: serde::de::DeserializeOwned>(r: &mut OwnedReadHalf) -> Result<T> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let n = control::check_len(u32::from_le_bytes(len))?;
    let mut body = vec![0u8; n];
    r.read_exact(&mut body).await?;
    Ok(hypercube::wire::codec::decode(&body)?)
}

/// Who may join: what the rendezvous checks hellos against.
#[derive(Debug)]
pub struct Expect {
    /// Number of nodes (2^d).
    pub n: u32,
    /// Whether the job has a host process.
    pub host: bool,
    /// The job id and secret the hellos must prove.
    pub creds: Credentials,
}

/// Run the rendezvous; hands over the write halves (with [`Report::Wired`]) so that the
/// supervisor can send `Abort`.
async fn run(
    listener: TcpListener,
    expect: Expect,
    events: mpsc::UnboundedSender<Report>,
    rejections: Arc<Rejections>,
) -> Result<()> {
    let Expect { n, host, creds } = expect;
    let Credentials { job, secret } = creds;
    let secret = secret.to_vec();
    // Slots 0..n are the nodes; slot n is the host, if the job has one.
    let total = n + u32::from(host);
    let slot = move |rank: u32| -> Option<usize> {
        if rank < n {
            Some(rank as usize)
        } else if host && rank == hypercube::HOST {
            Some(n as usize)
        } else {
            None
        }
    };
    let mut addrs: Vec<Option<SocketAddr>> = vec![None; total as usize];
    let mut writers: Vec<Option<OwnedWriteHalf>> = (0..total).map(|_| None).collect();
    let mut readers: Vec<Option<OwnedReadHalf>> = (0..total).map(|_| None).collect();
    let (hello_tx, mut hello_rx) = mpsc::unbounded_channel();
    let mut joined = 0;
    // Accept until every rank said hello; check each connection on its own task.
    while joined < total {
        tokio::select! {
            acc = listener.accept() => {
                let (s, from) = acc?;
                let _ = s.set_nodelay(true);
                let tx = hello_tx.clone();
                let secret = secret.clone();
                let rejections = rejections.clone();
                tokio::spawn(async move {
                    let (mut r, w) = s.into_split();
                    let hello = tokio::time::timeout(Duration::from_secs(5), read_msg::<ToLauncher>(&mut r)).await;
                    match hello {
                        Ok(Ok(ToLauncher::Hello { rank, listen, proof }))
                            if slot(rank).is_some() && control::check_proof(&secret, job, rank, &proof) =>
                        {
                            let _ = tx.send((rank, listen, r, w));
                        }
                        Ok(Ok(_)) => rejections.reject(from, "bad hello or proof"),
                        Ok(Err(e)) => rejections.reject(from, &format!("{e} (a node program built from another version of hypercube?)")),
                        Err(_) => rejections.reject(from, "no hello within 5 s"),
                    }
                });
            }
            Some((rank, listen, r, w)) = hello_rx.recv() => {
                let Some(i) = slot(rank) else { continue };
                if addrs[i].is_some() {
                    tracing::warn!("rejected a second hello from rank {rank}");
                    continue;
                }
                addrs[i] = Some(listen);
                readers[i] = Some(r);
                writers[i] = Some(w);
                joined += 1;
                let _ = events.send(Report::Event(Event::Joined(i as u32)));
            }
        }
    }
    let table = control::frame(&ToNode::Table {
        addrs: addrs.into_iter().take(n as usize).flatten().collect(),
        host,
    })?;
    let mut writers: Vec<OwnedWriteHalf> = writers.into_iter().flatten().collect();
    for w in writers.iter_mut() {
        w.write_all(&table).await?;
    }
    // Keep refusing strangers for the rest of the job.
    tokio::spawn(async move {
        while let Ok((_s, from)) = listener.accept().await {
            rejections.reject(from, "the job is already wired");
        }
    });
    // Ready barrier.
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel();
    for (i, r) in readers.into_iter().enumerate() {
        let Some(mut r) = r else { continue };
        let rank = if i as u32 == n {
            hypercube::HOST
        } else {
            i as u32
        };
        let tx = ready_tx.clone();
        let events = events.clone();
        tokio::spawn(async move {
            match read_msg::<ToLauncher>(&mut r).await {
                Ok(ToLauncher::Ready { rank: rr }) if rr == rank => {
                    let _ = tx.send(rank);
                }
                other => tracing::debug!("rank {rank}: unexpected control input {other:?}"),
            }
            // Then the node's reports, until it closes the connection.
            loop {
                match read_msg::<ToLauncher>(&mut r).await {
                    Ok(ToLauncher::Blocked { waiting_for, .. }) => {
                        let _ = events.send(Report::Event(Event::Blocked(i as u32, waiting_for)));
                    }
                    Ok(ToLauncher::Running { .. }) => {
                        let _ = events.send(Report::Event(Event::Running(i as u32)));
                    }
                    Ok(other) => tracing::debug!("rank {rank}: unexpected control input {other:?}"),
                    Err(_) => break,
                }
            }
        });
    }
    drop(ready_tx);
    let mut ready = 0;
    while ready < total {
        if ready_rx.recv().await.is_none() {
            anyhow::bail!("a rank closed its control connection before it was ready");
        }
        ready += 1;
    }
    let go = control::frame(&ToNode::Go)?;
    for w in writers.iter_mut() {
        w.write_all(&go).await?;
    }
    let _ = events.send(Report::Wired(writers));
    Ok(())
}
