//! The bootstrap rendezvous on the control channel: collect every rank's hello (checking
//! its proof of the job secret), send everyone the address table, collect the ready
//! messages, send go. Connections that fail the proof are logged and dropped.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Result;
use hypercube::wire::control::{self, ToLauncher, ToNode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

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

async fn read_msg<T: serde::de::DeserializeOwned>(r: &mut OwnedReadHalf) -> Result<T> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len).await?;
    let n = control::check_len(u32::from_le_bytes(len))?;
    let mut body = vec![0u8; n];
    r.read_exact(&mut body).await?;
    Ok(hypercube::wire::codec::decode(&body)?)
}

/// Run the rendezvous; returns the write halves so the supervisor can send `Abort`.
pub async fn run(
    listener: TcpListener,
    n: u32,
    host: bool,
    secret: Vec<u8>,
    job: u64,
    events: mpsc::UnboundedSender<Event>,
    writers_out: tokio::sync::oneshot::Sender<Vec<OwnedWriteHalf>>,
) -> Result<()> {
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
                tokio::spawn(async move {
                    let (mut r, w) = s.into_split();
                    let hello = tokio::time::timeout(Duration::from_secs(5), read_msg::<ToLauncher>(&mut r)).await;
                    match hello {
                        Ok(Ok(ToLauncher::Hello { rank, listen, proof }))
                            if slot(rank).is_some() && control::check_proof(&secret, job, rank, &proof) =>
                        {
                            let _ = tx.send((rank, listen, r, w));
                        }
                        Ok(Ok(_)) => tracing::warn!("rejected a control connection from {from}: bad hello or proof"),
                        Ok(Err(e)) => tracing::warn!("rejected a control connection from {from}: {e} (a node program built from another version of hypercube?)"),
                        Err(_) => tracing::warn!("rejected a control connection from {from}: no hello within 5 s"),
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
                let _ = events.send(Event::Joined(i as u32));
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
            tracing::warn!("rejected a control connection from {from}: the job is already wired");
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
                        let _ = events.send(Event::Blocked(i as u32, waiting_for));
                    }
                    Ok(ToLauncher::Running { .. }) => {
                        let _ = events.send(Event::Running(i as u32));
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
    let _ = events.send(Event::AllReady);
    let _ = writers_out.send(writers);
    Ok(())
}
