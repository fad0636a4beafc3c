//! Every §8 condition of the seed as a typed error with the seed's text.

use super::*;

/// Every §8 condition is a typed error with the seed's text, and nobody hangs.
pub(super) fn errors(node: &Node) -> Result<()> {
    let (me, d, p) = (node.mynode(), node.cubedim(), node.numnodes());
    fn starts(e: &Error, seed: &str) -> Result<()> {
        ensure!(
            e.to_string().starts_with(seed),
            "error text {e} does not start with {seed}"
        );
        Ok(())
    }
    // Non-participants: refused before any communication.
    if d >= 1 {
        let other = me ^ (1 << (d - 1));
        match node.gcat(vec![1u8], other, d - 1) {
            Err(e @ Error::GcatNonParticipant { .. }) => {
                starts(&e, "GCAT: CALLED BY NON PARTICIPANT")?
            }
            r => bail!("gcat by a non participant: {r:?}"),
        }
        match node.gop(&mut [1.0f64], Op::Sum, other, d - 1) {
            Err(e @ Error::GopNonParticipant { .. }) => {
                starts(&e, "GOP: CALLED BY NON PARTICIPANT")?
            }
            r => bail!("gop by a non participant: {r:?}"),
        }
    }
    // GCAT: BUFFER LENGTH EXCEEDED at every node with children; the result is in the error.
    let want: Vec<u8> = gcat_subtree_diffs(me, 0, d)
        .into_iter()
        .map(|n| n as u8)
        .collect();
    let mut buf = [me as u8; 1];
    match node.gcat_into(&mut buf, 1, 0, d) {
        Ok(n) => ensure!(
            want.len() == 1 && n == 1 && buf[0] == me as u8,
            "gcat_into at {me}"
        ),
        Err(e @ Error::GcatBufferExceeded { .. }) => {
            starts(&e, "GCAT: BUFFER LENGTH EXCEEDED")?;
            if let Error::GcatBufferExceeded {
                needed,
                capacity,
                data,
            } = e
            {
                ensure!(capacity == 1 && needed == want.len() as u64, "sizes");
                ensure!(data.bytes()[..] == want[..], "recovered gcat data");
                ensure!(buf[0] == me as u8, "buffer changed");
            }
        }
        Err(e) => bail!("gcat_into: {e}"),
    }
    // GOP: LONG / SHORT MESSAGE: node p-1 is a leaf of the tree rooted at 0.
    if d >= 1 {
        let leaf = p - 1;
        let parent = leaf ^ (p / 2);
        for extra in [1i32, -1] {
            let n = if me == leaf { (4 + extra) as usize } else { 4 };
            let mut x = vec![1.0f64; n];
            let r = node.gop(&mut x, Op::Sum, 0, d);
            match (me == parent, extra, r) {
                (true, 1, Err(e @ Error::GopLongMessage { .. })) => {
                    starts(&e, "GOP: LONG MESSAGE")?
                }
                (true, -1, Err(e @ Error::GopShortMessage { .. })) => {
                    starts(&e, "GOP: SHORT MESSAGE")?
                }
                (false, _, Ok(())) => {}
                (_, _, r) => bail!("gop with a {extra:+} element at {me}: {r:?}"),
            }
            if me == 0 {
                let last = if extra == 1 { p } else { p - 1 };
                ensure!(
                    x[0] == p as f64 && x[3] == last as f64,
                    "gop result after mismatch: {x:?}"
                );
            }
        }
    }
    // GRECVW: MESSAGE TRUNCATED: the message is forwarded whole and handed back.
    let msg = pattern(0, 3, 100);
    if me == 0 {
        node.gsend(msg.clone(), d)?;
    } else {
        match node.grecv_into(&mut [0u8; 10], d) {
            Err(e @ Error::GrecvwTruncated { .. }) => {
                starts(&e, "GRECVW: MESSAGE TRUNCATED")?;
                if let Error::GrecvwTruncated { data, .. } = e {
                    ensure!(data.bytes()[..] == msg[..], "recovered broadcast");
                }
            }
            r => bail!("grecv_into with a small buffer: {r:?}"),
        }
    }
    // SPGRCW: TRUNCATED MESSAGE, from the last node to all others.
    let all: Vec<NodeId> = (0..p).collect();
    if me == p - 1 {
        node.spgsend(MsgType(90), msg.clone(), &all)?;
    } else {
        match node.spgrecv_into(MsgType(90), &mut [0u8; 99]) {
            Err(e @ Error::SpgrcwTruncated { .. }) => {
                starts(&e, "SPGRCW: TRUNCATED MESSAGE")?;
                if let Error::SpgrcwTruncated { data, .. } = e {
                    ensure!(data.bytes()[..] == msg[..], "recovered sparse message");
                }
            }
            r => bail!("spgrecv_into with a small buffer: {r:?}"),
        }
    }
    // LRECVW: TRUNCATED MESSAGE loses nothing; a user message of the same type is untouched.
    let (to, from) = ((me + 1) % p, (me + p - 1) % p);
    node.send(to, MsgType(77), &b"user"[..])?;
    node.lsend(to, MsgType(77), pattern(me, 77, 50_000))?;
    for _ in 0..2 {
        match node.lrecv_into(Some(from), MsgType(77), &mut [0u8; 1000]) {
            Err(e @ Error::LrecvwTruncated { needed: 50_000, .. }) => {
                starts(&e, "LRECVW: TRUNCATED MESSAGE")?
            }
            r => bail!("lrecv_into with a small buffer: {r:?}"),
        }
    }
    let mut big = vec![0u8; 60_000];
    let st = node.lrecv_into(None, MsgType(77), &mut big)?;
    ensure!(
        st.len() == 50_000 && big[..50_000] == pattern(from, 77, 50_000)[..],
        "long message after truncation"
    );
    let m = node.recv(Select::from_node(from, TypeSel::Is(77)))?;
    ensure!(
        &m.data()[..] == b"user",
        "user message of the long message's type"
    );
    // MESH: TOO LARGE.
    match node.mesh(&[1 << (d + 1)], &[Boundary::Closed]) {
        Err(e @ Error::Topology(_)) => starts(&e, "MESH: TOO LARGE")?,
        r => bail!("a too large mesh: {r:?}"),
    }
    // Bad arguments are refused before anything is sent.
    ensure!(
        matches!(node.gsend(vec![], d + 1), Err(Error::IpscArgument { .. })),
        "gsend dim"
    );
    ensure!(
        matches!(node.grecv(d + 1), Err(Error::IpscArgument { .. })),
        "grecv dim"
    );
    ensure!(
        matches!(
            node.gop(&mut [0u8], Op::Sum, p, d),
            Err(Error::InvalidNode { .. })
        ),
        "gop root"
    );
    ensure!(
        matches!(node.gcat(vec![], p, d), Err(Error::InvalidNode { .. })),
        "gcat root"
    );
    ensure!(
        matches!(
            node.lsend(0, MsgType(1 << 26), vec![]),
            Err(Error::IpscArgument { .. })
        ),
        "lsend type"
    );
    ensure!(
        matches!(
            node.lsend(p, MsgType(1), vec![]),
            Err(Error::InvalidNode { .. })
        ),
        "lsend dest"
    );
    ensure!(
        matches!(
            node.spgsend(MsgType(1), vec![], &[p]),
            Err(Error::InvalidNode { .. })
        ),
        "spgsend target"
    );
    ensure!(
        matches!(node.grecv(0), Err(Error::IpscArgument { .. })),
        "grecv dim 0"
    );
    Ok(())
}
