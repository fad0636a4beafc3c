//! Node program for the cross-process test of the typed and serde collectives and of
//! `Node::sendrecv`: over TCP, where a message above the eager limit waits for its
//! receive. Prints `OK <check>` per check; any mismatch exits non-zero.
//!
//! With the argument `send-send`, ranks 0 and 1 instead both `send` 8 MiB to each other
//! before receiving: a deadlock (a cycle of rendezvous sends) that hcrun must name.

use anyhow::{ensure, Result};
use hypercube::collectives::{Algorithm, Loc, Op, Pod};
use hypercube::{MsgType, Node, TypeSel};

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Sample {
    value: f64,
    weight: f64,
}
// SAFETY: repr(C), two f64: no padding, every bit pattern valid.
unsafe impl Pod for Sample {}

fn run(node: &Node) -> Result<()> {
    let me = node.mynode();
    let p = node.numnodes();
    let cube = node.cube();

    // Both partners send 8 MiB first: through sendrecv, no deadlock.
    if p > 1 {
        let other = me ^ 1;
        let big = vec![me as u8; 8 << 20];
        let m = node.sendrecv(other, MsgType(5), big, TypeSel::Is(5))?;
        ensure!(m.data().len() == 8 << 20 && m.data().iter().all(|&b| b as u32 == other));
    }
    println!("OK sendrecv");

    // Subcube exchange: 8 MiB both ways across every dimension (above the eager limit),
    // then a halo of 100 KiB per dimension, all at once.
    for j in 0..node.cubedim() {
        let from = me ^ (1 << j);
        let got = cube.exchange_vec(j, vec![me as u16; 4 << 20])?;
        ensure!(got.len() == 4 << 20 && got.iter().all(|&x| u32::from(x) == from));
        let got = cube.exchange(j, bytes::Bytes::from(vec![me as u8; 8 << 20]))?;
        ensure!(got.len() == 8 << 20 && got.iter().all(|&b| u32::from(b) == from));
    }
    let halo: Vec<Vec<f64>> = (0..node.cubedim())
        .map(|j| vec![f64::from(me * 100 + j); 12_800])
        .collect();
    let got = cube.exchange_neighbours_slice(&halo)?;
    for (j, g) in got.iter().enumerate() {
        let want = f64::from((me ^ (1 << j)) * 100 + j as u32);
        ensure!(
            g.len() == 12_800 && g.iter().all(|&x| x == want),
            "halo {j}"
        );
    }
    // A Gray-code ring's neighbours (across a dimension that depends on the position),
    // 1 MiB each way (above the eager limit).
    if node.cubedim() >= 2 {
        let d = node.cubedim();
        let succ = hypercube::topology::ring_successor(me, d)?;
        let pred = hypercube::topology::ring_predecessor(me, d)?;
        let got =
            cube.exchange_with_slice(&[(succ, vec![me; 1 << 18]), (pred, vec![me; 1 << 18])])?;
        ensure!(
            got == vec![vec![succ; 1 << 18], vec![pred; 1 << 18]],
            "ring halo"
        );
    }
    println!("OK exchange");

    for alg in [
        Algorithm::Hypercube,
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::AllPort,
    ] {
        let all = cube.with(alg).allgather_slice(&[me as f64, -(me as f64)])?;
        let want: Vec<f64> = (0..p).flat_map(|r| [r as f64, -(r as f64)]).collect();
        ensure!(all == want, "allgather_slice {alg:?}");
    }
    println!("OK allgather_slice");

    let text: String = cube.bcast_value(p - 1, (me == p - 1).then(|| "z".repeat(100_000)))?;
    ensure!(text.len() == 100_000);
    println!("OK bcast_value");

    let names = cube.allgather_value(&format!("rank {me}"))?;
    ensure!(names
        .iter()
        .enumerate()
        .all(|(r, n)| *n == format!("rank {r}")));
    let back = cube.alltoall_values((0..p).map(|j| vec![me; j as usize]).collect())?;
    ensure!(back
        .iter()
        .enumerate()
        .all(|(i, v)| *v == vec![i as u32; me as usize]));
    println!("OK serde");

    let add = |a: Sample, b: Sample| Sample {
        value: a.value + b.value,
        weight: a.weight + b.weight,
    };
    let s = cube.allreduce(
        &[Sample {
            value: me as f64,
            weight: 1.0,
        }],
        Op::Commutative(&add),
    )?;
    ensure!(s[0].weight == p as f64 && s[0].value == (p * (p - 1) / 2) as f64);
    let best = cube.allreduce(&[Loc::new((me / 2) as f64, me as u64)], Op::MaxLoc)?;
    ensure!(best[0] == Loc::new(((p - 1) / 2) as f64, (2 * ((p - 1) / 2)) as u64));
    println!("OK reductions");
    Ok(())
}

/// Ranks 0 and 1 both send 8 MiB to each other, then receive: deadlocked on purpose.
fn send_send(node: &Node) -> Result<()> {
    let me = node.mynode();
    if me < 2 {
        node.send(me ^ 1, MsgType(5), vec![0u8; 8 << 20])?;
        node.recv(TypeSel::Is(5))?;
    }
    Ok(())
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let r = if std::env::args().nth(1).as_deref() == Some("send-send") {
        send_send(&node)
    } else {
        run(&node)
    };
    if let Err(e) = r {
        node.abort(&format!("{e:#}"));
    }
    node.finalize()?;
    Ok(())
}
