use std::ops::RangeInclusive;
use std::time::Duration;

use hypercube_topology::NodeId;

use super::*;
use crate::base::message::{MsgType, Select};
use crate::error::Error;
use crate::node::Node;
use crate::transport::tcp::test_job::tcp_job;
use crate::transport::tcp::TcpTransport;
use crate::transport::Transport;

/// Every range of the layout, in the order of the module doc's table.
fn layout() -> [(&'static str, RangeInclusive<u32>); 10] {
    [
        ("user types", USER),
        ("collectives", COLLECTIVE),
        ("failure notices", FAILURE),
        ("spare", SPARE),
        ("bootstrap", BOOTSTRAP),
        ("trace", TRACE),
        ("control", CONTROL),
        ("sparse send", Keyed::Sparse.range()),
        ("long data", Keyed::LongData.range()),
        ("long header", Keyed::LongHeader.range()),
    ]
}

/// The names of the ranges that hold `tag`.
fn owners(tag: u32) -> Vec<&'static str> {
    layout()
        .into_iter()
        .filter(|(_, r)| r.contains(&tag))
        .map(|(name, _)| name)
        .collect()
}

#[test]
fn layout_covers_the_tag_space_without_overlap() {
    let layout = layout();
    // First and last tag of each range, as the module doc's table states them.
    let table = [
        (0x0000_0000, 0x7FFF_FFFF),
        (0x8000_0000, 0xC3FF_FFFF),
        (0xC400_0000, 0xD7FF_FFFF),
        (0xD800_0000, 0xE7FF_FFFF),
        (0xE800_0000, 0xEBFF_FFFF),
        (0xEC00_0000, 0xEFFF_FFFF),
        (0xF000_0000, 0xF3FF_FFFF),
        (0xF400_0000, 0xF7FF_FFFF),
        (0xF800_0000, 0xFBFF_FFFF),
        (0xFC00_0000, 0xFFFF_FFFF),
    ];
    let edges: Vec<(u32, u32)> = layout.iter().map(|(_, r)| (*r.start(), *r.end())).collect();
    assert_eq!(
        edges, table,
        "the ranges differ from the module doc's table"
    );
    // No two ranges overlap: each one's edges lie in no other range.
    for (i, (a, ra)) in layout.iter().enumerate() {
        assert!(ra.start() <= ra.end(), "{a} is empty");
        for (b, rb) in layout.iter().skip(i + 1) {
            let apart = ra.end() < rb.start() || rb.end() < ra.start();
            assert!(apart, "{a} {ra:#x?} overlaps {b} {rb:#x?}");
        }
        for edge in [*ra.start(), *ra.end()] {
            assert_eq!(owners(edge), [*a], "tag {edge:#x}");
        }
    }
    // Together they cover every tag: they start at 0, each begins right after the one
    // before ends, and the last ends at u32::MAX.
    assert_eq!(*layout[0].1.start(), 0);
    for w in layout.windows(2) {
        assert_eq!(
            *w[0].1.end() as u64 + 1,
            *w[1].1.start() as u64,
            "{} / {}",
            w[0].0,
            w[1].0
        );
    }
    assert_eq!(*layout[layout.len() - 1].1.end(), u32::MAX);
}

#[test]
fn every_tag_falls_in_its_own_range() {
    // User types: exactly 0..=MAX_USER_TYPE.
    assert_eq!(owners(0), ["user types"]);
    assert_eq!(owners(MAX_USER_TYPE), ["user types"]);
    assert_eq!(owners(MAX_USER_TYPE + 1), ["collectives"]);

    // Collectives: first and last dimension, first and last counter; the counter wraps
    // and the dimension is the slot.
    assert_eq!(collective(0, 0), *COLLECTIVE.start());
    assert_eq!(
        with_variant(collective(MAX_DIM, COUNTER_MASK), 31),
        *COLLECTIVE.end()
    );
    for dim in [0, 1, MAX_DIM - 1, MAX_DIM] {
        for counter in [0, 1, COUNTER_MASK, COUNTER_MASK + 1, LOW_MASK, u32::MAX] {
            let key = collective(dim, counter);
            assert_eq!(variant(key), 0);
            for v in [0, 1, 13, 31] {
                // Every variant of the call: the call's own dimension, counter and key.
                let t = with_variant(key, v);
                assert_eq!(owners(t), ["collectives"], "dim {dim}, call {counter}");
                assert_eq!(call_dim(t), dim);
                assert_eq!((t >> LOW_BITS) & 0x1F, dim);
                assert_eq!(t & COUNTER_MASK, counter & COUNTER_MASK);
                assert_eq!(variant(t), v);
                assert_eq!(call_key(t), key);
                // Its failure notices: a tag of their own, one per dimension and counter
                // (21 bits), the same for every variant, never another call's data or
                // another dimension's notice.
                let f = failure(t);
                assert_eq!(f, failure(key));
                assert_eq!(owners(f), ["failure notices"], "dim {dim}, call {counter}");
                assert_eq!((f - FAILURE.start()) >> 24, dim);
                assert_eq!(f & 0xFF_FFFF, counter & COUNTER_MASK);
                assert_eq!(call_key(f), f);
            }
        }
    }
    assert_eq!(failure(collective(0, 0)), *FAILURE.start());

    // Type-keyed: types 0..=MAX_RESERVED_USER_TYPE fill the slot, larger ones have no tag.
    for (name, slot) in [
        ("sparse send", Keyed::Sparse),
        ("long data", Keyed::LongData),
        ("long header", Keyed::LongHeader),
    ] {
        assert_eq!(keyed(slot, 0), Some(*slot.range().start()));
        assert_eq!(
            keyed(slot, MAX_RESERVED_USER_TYPE),
            Some(*slot.range().end())
        );
        assert_eq!(owners(keyed(slot, 0x03FF_FFF0).unwrap()), [name]);
        assert_eq!(keyed(slot, MAX_RESERVED_USER_TYPE + 1), None);
        assert_eq!(keyed(slot, MAX_USER_TYPE), None);
    }

    // Finalize is a control tag and nothing else: no user type keys to it.
    assert_eq!(owners(FINALIZE), ["control"]);
}

/// The type whose long-message header tag used to be the finalize barrier's tag
/// (`0xFFFF_FFF0`).
const COLLIDING_TYPE: u32 = 0x03FF_FFF0;

/// A failure-notice tag leads back to its call's key, for every dimension, call number
/// and variant; no other tag is taken for one.
#[test]
fn a_failure_tag_names_its_call() {
    for dim in 0..=MAX_DIM {
        for n in [0, 1, 7, COUNTER_MASK] {
            let key = collective(dim, n);
            for v in [0, 1, 31] {
                let call = with_variant(key, v);
                assert_eq!(
                    failed_call(failure(call)),
                    Some(key),
                    "dim {dim}, n {n}, v {v}"
                );
                assert_eq!(failed_call(call), None);
            }
        }
    }
    for tag in [
        0,
        MAX_USER_TYPE,
        *BOOTSTRAP.start(),
        *CONTROL.start(),
        FINALIZE,
    ] {
        assert_eq!(failed_call(tag), None, "{tag:#x}");
    }
    assert_eq!(
        failed_call(*FAILURE.end()),
        None,
        "beyond the last dimension"
    );
}

/// A long message of the type that once collided with finalize, and one of
/// [`MAX_RESERVED_USER_TYPE`] (the largest type a long message may have), go from node 3
/// to node 0 (forwarded by node 2) while node 1 is already in the finalize barrier: its
/// barrier message waits in node 0's queue when node 0 posts the any-source long
/// receives. Both messages arrive whole and the job finalizes. A type above
/// [`MAX_RESERVED_USER_TYPE`] is refused with a typed error on both sides.
///
/// Before the finalize tag had a range of its own, node 0's first `lrecv` took node 1's
/// (empty) barrier message for a long-message header and failed, and node 0's finalize
/// then waited for that message forever.
#[test]
fn long_messages_of_the_largest_types_do_not_disturb_finalize() {
    fn payload(ty: u32) -> Vec<u8> {
        (0..50_000u32).map(|i| (i ^ ty) as u8).collect()
    }
    fn program(
        me: NodeId,
        node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let types = [COLLIDING_TYPE, MAX_RESERVED_USER_TYPE];
        match me {
            0 => {
                // Node 1's barrier message is here before the long receives are posted.
                let barrier = Select::internal(Some(1), FINALIZE);
                let timeout = Some(Duration::from_secs(10));
                t.probe(&barrier, true, timeout)?;
                node.send(3, MsgType(1), &b"go"[..])?;
                for ty in types {
                    let m = node.lrecv(None, MsgType(ty))?;
                    if (m.source(), m.msg_type()) != (3, MsgType(ty)) || m.data()[..] != payload(ty)
                    {
                        let (len, got, from) = (m.len(), m.msg_type().0, m.source());
                        return Err(format!(
                            "lrecv of type {ty:#x} got {len} bytes of type {got:#x} from node {from}"
                        )
                        .into());
                    }
                }
                let too_large = MsgType(MAX_USER_TYPE);
                match node.lsend(3, too_large, vec![0u8; 10]) {
                    Err(Error::IpscArgument {
                        routine: "LSENDW", ..
                    }) => {}
                    other => return Err(format!("lsend of MAX_USER_TYPE: {other:?}").into()),
                }
                match node.lrecv(Some(3), too_large) {
                    Err(Error::IpscArgument {
                        routine: "LRECVW", ..
                    }) => Ok(()),
                    other => Err(format!("lrecv of MAX_USER_TYPE: {other:?}").into()),
                }
            }
            3 => {
                node.recv(MsgType(1))?;
                for ty in types {
                    node.lsend(0, MsgType(ty), payload(ty))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    tcp_job(2, program);
}
