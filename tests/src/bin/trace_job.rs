//! Node program for the trace tests (`tests/tests/trace.rs`); argument 1 says what to do.
//!
//! - `kill R`: every pair of neighbours along dimension 0 exchanges one message (type 5);
//!   then rank `R` sends three messages of type 7 to rank `R ^ 1` — records that no wait
//!   follows, so only the recorder's writer thread can put them on disk — sleeps 600 ms
//!   (several of its write intervals) and kills itself with SIGKILL. The others receive
//!   what they are sent, then wait for a message that never comes, until the launcher
//!   stops the job.
//! - `burst N`: a few all-reduces of one number on the whole cube, then every rank sends
//!   N one-byte messages to its neighbour along dimension 0 without waiting (eager sends:
//!   a burst of records faster than a small trace buffer is written out) and receives
//!   the neighbour's N.

use anyhow::{bail, Context, Result};
use hypercube::collectives::Op;
use hypercube::{MsgType, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let (me, p) = (node.mynode(), node.numnodes());
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_default();
    let n: u32 = args
        .next()
        .map(|s| s.parse())
        .transpose()
        .context("the second argument is a number")?
        .unwrap_or(1);
    match what.as_str() {
        "kill" => {
            let victim = n;
            let peer = me ^ 1;
            node.send(peer, MsgType(5), format!("from {me}").into_bytes())?;
            node.recv(Select::from_node(peer, TypeSel::Is(5)))?;
            if me == victim {
                for i in 0..3u8 {
                    node.send(peer, MsgType(7), vec![i; 16])?;
                }
                println!("rank {me} sent its messages; sleeping, then SIGKILL");
                std::thread::sleep(std::time::Duration::from_millis(600));
                // SAFETY: raise only sends a signal to this process.
                unsafe { libc::raise(libc::SIGKILL) };
                unreachable!("SIGKILL");
            }
            if peer == victim {
                for _ in 0..3 {
                    node.recv(Select::from_node(peer, TypeSel::Is(7)))?;
                }
            }
            node.recv(TypeSel::Is(1))?;
            bail!("rank {me}: a message of type 1 came, but nobody sends one");
        }
        "burst" => {
            for i in 0..4 {
                let s = node.cube().allreduce(&[me as f64 + i as f64], Op::Sum)?;
                let want = (p * (p - 1) / 2) as f64 + (p * i) as f64;
                anyhow::ensure!(s[0] == want, "all-reduce {i}: {} != {want}", s[0]);
            }
            let peer = me ^ 1;
            for i in 0..n {
                node.send(peer, MsgType(9), vec![i as u8])?;
            }
            for i in 0..n {
                let m = node.recv(Select::from_node(peer, TypeSel::Is(9)))?;
                anyhow::ensure!(m.data()[..] == [i as u8], "message {i} from {peer}");
            }
            node.finalize()?;
            Ok(())
        }
        other => bail!("trace_job: unknown mode {other:?} (kill R | burst N)"),
    }
}
