//! Tests of what changes where the links are wires (`TcpTransport::links_are_wires`):
//! pushed writes, the unsent limit, the congestion control — over real TCP links
//! ([`tcp_job`]).

use hypercube_topology::NodeId;

use super::test_job::{tcp_job, tcp_job_tuned};
use super::{TcpTransport, Tuning};
use crate::base::message::Select;
use crate::node::Node;

/// On wires (`TcpTransport::links_are_wires`) every flush that wrote 32 KiB or more pushes
/// the socket (`sockopt::push`, against the kernel's autocorking of a write's short tail),
/// and what is pushed arrives whole; on loopback nothing is pushed. Messages of 64 KiB and
/// a few bytes — a full packet and a tail — both ways.
#[test]
fn writes_on_wires_are_pushed_and_arrive_whole() {
    const N: usize = (64 << 10) + 100;
    fn program(
        me: NodeId,
        node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let pushes =
            |t: &TcpTransport| -> u64 { t.engine.lock().out.iter().map(|o| o.pushes).sum() };
        let other = me ^ 1;
        let data = |from: NodeId, k: usize| -> Vec<u8> {
            (0..N).map(|i| (i * 7 + k + from as usize) as u8).collect()
        };
        // Loopback first: no pushes.
        let s = node.isend(other, crate::MsgType(3), data(me, 0))?;
        let got = node.recv(Select::from_node(other, crate::TypeSel::Is(3)))?;
        s.wait()?;
        if got.data()[..] != data(other, 0)[..] {
            return Err("the message differs".into());
        }
        if pushes(t) != 0 {
            return Err(format!(
                "node {me}: {} pushes before the links were wires",
                pushes(t)
            )
            .into());
        }
        node.cube().barrier()?;
        t.links_are_wires();
        for k in 1..4 {
            let s = node.isend(other, crate::MsgType(3), data(me, k))?;
            let got = node.recv(Select::from_node(other, crate::TypeSel::Is(3)))?;
            s.wait()?;
            if got.data()[..] != data(other, k)[..] {
                return Err(format!("message {k} differs").into());
            }
        }
        if pushes(t) < 3 {
            return Err(format!("node {me}: {} pushes for 3 messages on wires", pushes(t)).into());
        }
        Ok(())
    }
    tcp_job(1, program);
}

/// On wires the kernel holds at most `WIRE_UNSENT` bytes of a link's data unsent
/// (`TCP_NOTSENT_LOWAT`), and messages far longer than that — 4 MiB both ways at once, by
/// rendezvous, so that each clear-to-send goes out while the node's own data fills the
/// socket — arrive whole.
#[test]
fn wires_limit_the_unsent_bytes_and_long_exchanges_arrive_whole() {
    const N: usize = 4 << 20;
    fn program(
        me: NodeId,
        node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let before = unsent_limits(t);
        if before.contains(&(super::WIRE_UNSENT as libc::c_int)) {
            return Err(
                format!("node {me}: limited before the links were wires: {before:?}").into(),
            );
        }
        t.links_are_wires();
        unsent_limits_are(t, me, super::WIRE_UNSENT)?;
        let other = me ^ 1;
        for k in 0..2 {
            let data: Vec<u8> = (0..N).map(|i| (i * 13 + k + me as usize) as u8).collect();
            let got = node.sendrecv(
                other,
                crate::MsgType(4),
                data,
                Select::from_node(other, crate::TypeSel::Is(4)),
            )?;
            let want = (0..N).map(|i| (i * 13 + k + other as usize) as u8);
            if got.data().len() != N || !got.data().iter().copied().eq(want) {
                return Err(format!("node {me}: exchange {k} differs").into());
            }
        }
        Ok(())
    }
    tcp_job(1, program);
}

/// The unsent limit a user sets (`HYPERCUBE_TCP_NOTSENT_LOWAT`, read into
/// `Tuning::wire`) is what every link socket gets on wires, in place of `WIRE_UNSENT`.
#[test]
fn a_user_set_unsent_limit_reaches_every_wire() {
    const LIMIT: usize = 8 << 10;
    fn program(
        me: NodeId,
        _node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        t.links_are_wires();
        Ok(unsent_limits_are(t, me, LIMIT)?)
    }
    let mut tuning = Tuning::default();
    tuning.wire.notsent_lowat = Some(LIMIT);
    tcp_job_tuned(2, tuning, program);
}

/// On wires every link asks for CUBIC (else Reno) even where the tuning keeps the
/// system's congestion control (more ranks than cores: `Tuning::congestion` empty), unless
/// the user named one (`HYPERCUBE_TCP_CONGESTION`, `Tuning::wire.congestion_set`).
#[test]
fn wires_ask_for_cubic_unless_the_user_named_a_congestion_control() {
    fn program(
        me: NodeId,
        _node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        t.links_are_wires();
        let tuning = &t.engine.tuning;
        let want: Vec<&str> = if tuning.wire.congestion_set {
            tuning.congestion.iter().map(String::as_str).collect()
        } else {
            super::WIRE_CONGESTION.to_vec()
        };
        let names = congestion_controls(t);
        if names.iter().any(|n| !want.contains(&n.as_str())) {
            return Err(format!("node {me}: links have {names:?}, asked for {want:?}").into());
        }
        Ok(())
    }
    let system = Tuning {
        congestion: Vec::new(),
        ..Tuning::default()
    };
    tcp_job_tuned(2, system, program);
    let reno = Tuning {
        congestion: vec!["reno".into()],
        wire: super::WireKnobs {
            congestion_set: true,
            ..Default::default()
        },
        ..Tuning::default()
    };
    tcp_job_tuned(2, reno, program);
}

/// `read` of every link socket of `t`, by link.
fn per_link<T>(t: &TcpTransport, read: impl Fn(&std::net::TcpStream) -> T) -> Vec<T> {
    t.engine
        .lock()
        .out
        .iter()
        .map(|o| read(&o.stream))
        .collect()
}

/// The congestion control of every link socket of `t`, by link.
fn congestion_controls(t: &TcpTransport) -> Vec<String> {
    per_link(t, super::sockopt::congestion_of)
}

/// `TCP_NOTSENT_LOWAT` of every link socket of `t`, by link.
fn unsent_limits(t: &TcpTransport) -> Vec<libc::c_int> {
    per_link(t, |s| {
        super::sockopt::int_of(s, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT)
    })
}

/// Every link socket of `t` (node `me`) holds at most `want` bytes unsent: an error naming
/// what they hold if not.
fn unsent_limits_are(t: &TcpTransport, me: NodeId, want: usize) -> Result<(), String> {
    let limits = unsent_limits(t);
    if limits.iter().any(|&v| v != want as libc::c_int) {
        return Err(format!(
            "node {me}: unsent limits {limits:?} on wires, want {want}"
        ));
    }
    Ok(())
}
