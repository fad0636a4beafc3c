use super::*;
use crate::base::message::TypeSel;

fn ready(b: &'static [u8]) -> Body {
    Body::Ready(Bytes::from_static(b))
}

#[test]
fn per_source_and_type_order_and_any() {
    let mut m = Mailbox::default();
    m.arrive(1, 5, 1, ready(b"a"));
    m.arrive(2, 6, 1, ready(b"b"));
    m.arrive(1, 5, 1, ready(b"c"));
    let (t, _) = m.post(Select::new(TypeSel::Is(5)));
    assert_eq!(&m.take(t).unwrap().message.data[..], b"a");
    let (t, _) = m.post(Select::new(TypeSel::Any));
    assert_eq!(&m.take(t).unwrap().message.data[..], b"b");
    let (t, _) = m.post(Select::from_node(1, TypeSel::Any));
    assert_eq!(&m.take(t).unwrap().message.data[..], b"c");
}

#[test]
fn abandoned_receive_gives_its_message_back_in_order() {
    let mut m = Mailbox::default();
    let (t, _) = m.post(Select::new(TypeSel::Is(5)));
    m.arrive(1, 5, 1, ready(b"first"));
    m.arrive(1, 5, 1, ready(b"second"));
    // The first message is bound to `t`; dropping the request must not lose it.
    m.abandon(t);
    let (t2, _) = m.post(Select::new(TypeSel::Is(5)));
    assert_eq!(&m.take(t2).unwrap().message.data[..], b"first");
    let (t3, _) = m.post(Select::new(TypeSel::Is(5)));
    assert_eq!(&m.take(t3).unwrap().message.data[..], b"second");
}

#[test]
fn abandoned_large_message_returns_when_complete() {
    let mut m = Mailbox::default();
    let (t, _) = m.post(Select::new(TypeSel::Is(7)));
    let need = m.arrive(
        3,
        7,
        4,
        Body::Pending {
            msg_id: 9,
            buf: None,
        },
    );
    assert_eq!(
        need,
        Some(NeedCts {
            source: 3,
            msg_id: 9
        })
    );
    m.abandon(t);
    assert!(m.probe(&Select::new(TypeSel::Is(7))).is_none());
    assert_eq!(m.data(3, 9, Bytes::from_static(b"ab")), Ok(false));
    assert_eq!(m.data(3, 9, Bytes::from_static(b"cd")), Ok(true));
    let st = m.probe(&Select::new(TypeSel::Is(7))).expect("requeued");
    assert_eq!(st.len, 4);
    let (t2, need) = m.post(Select::new(TypeSel::Is(7)));
    assert_eq!(need, None, "already complete: no second clear-to-send");
    assert_eq!(&m.take(t2).unwrap().message.data[..], b"abcd");
}

fn pending(msg_id: u64) -> Body {
    Body::Pending { msg_id, buf: None }
}

/// A failed call's tags: what is queued of them and what comes later is dropped — an
/// eager message with its credit noted, a rendezvous one asked for (so its sender's
/// send completes) and its payload dropped — while other tags are untouched.
#[test]
fn discarded_tags_drop_queued_and_later_messages() {
    let mut m = Mailbox::default();
    m.arrive(1, 5, 3, ready(b"old"));
    m.arrive(2, 9, 4, ready(b"keep"));
    assert_eq!(m.arrive(3, 5, 4, pending(7)), None);
    m.arrive(1, 6, 1, ready(b"n"));
    let need = m.discard(&[5, 6]);
    assert_eq!(
        need,
        vec![NeedCts {
            source: 3,
            msg_id: 7
        }]
    );
    assert_eq!(m.take_dropped(), vec![(1, 3), (1, 1)]);
    assert_eq!(m.data(3, 7, Bytes::from_static(b"ab")), Ok(false));
    assert_eq!(m.data(3, 7, Bytes::from_static(b"cd")), Ok(true));
    // Arriving later: dropped too.
    assert_eq!(m.arrive(2, 5, 2, ready(b"hi")), None);
    assert_eq!(m.take_dropped(), vec![(2, 2)]);
    assert_eq!(
        m.arrive(4, 6, 8, pending(1)),
        Some(NeedCts {
            source: 4,
            msg_id: 1
        })
    );
    assert_eq!(m.data(4, 1, Bytes::from_static(b"12345678")), Ok(true));
    // An empty rendezvous message: asked for, nothing to wait for.
    assert!(m.arrive(4, 6, 0, pending(2)).is_some());
    assert!(m.data(4, 2, Bytes::from_static(b"x")).is_err());
    // Nothing of tags 5 and 6 is left to receive, nothing pending; tag 9 is.
    let all = Select {
        internal: true,
        ..Select::new(TypeSel::Any)
    };
    let left: Vec<u32> = m.unreceived().iter().map(|s| s.msg_type.0).collect();
    assert_eq!(left, vec![9]);
    assert!(m.probe(&all).is_some_and(|s| s.msg_type.0 == 9));
    assert!(m.bound.is_empty() && m.sinks.is_empty() && m.rendezvous.is_empty());
    // Delivered again once kept (the tags name a new call).
    m.keep(&[5, 6]);
    m.arrive(1, 5, 3, ready(b"new"));
    let (t, _) = m.post(Select::internal(Some(1), 5));
    assert_eq!(&m.take(t).unwrap().message.data[..], b"new");
    assert!(m.take_dropped().is_empty());
}

/// A receive of the failed call that was bound but never waited for: when it is
/// abandoned its message is dropped, not queued again — complete or still arriving.
#[test]
fn abandoned_receive_of_a_discarded_tag_drops_its_message() {
    let mut m = Mailbox::default();
    let (t1, _) = m.post(Select::internal(Some(1), 5));
    let (t2, _) = m.post(Select::internal(Some(2), 5));
    m.arrive(1, 5, 1, ready(b"a"));
    assert!(m.arrive(2, 5, 2, pending(3)).is_some());
    assert!(m.discard(&[5]).is_empty());
    m.abandon(t1);
    m.abandon(t2);
    assert_eq!(m.take_dropped(), vec![(1, 1)]);
    assert_eq!(m.data(2, 3, Bytes::from_static(b"bc")), Ok(true));
    assert!(m.unreceived().is_empty());
    assert!(m.bound.is_empty() && m.orphans.is_empty());
}

#[test]
fn held_messages_match_by_selector_last_held_first() {
    let msg = |source, tag, b: &'static [u8]| Message {
        source,
        tag,
        data: Bytes::from_static(b),
    };
    let mut h = Held::default();
    h.hold(msg(1, 9, b"old"));
    h.hold(msg(2, 9, b"other source"));
    h.hold(msg(1, 9, b"new"));
    assert!(h.take(&Select::internal(Some(1), 8)).is_none());
    let take = |h: &mut Held, source| h.take(&Select::internal(source, 9)).unwrap().data;
    assert_eq!(&take(&mut h, Some(1))[..], b"new");
    assert_eq!(&take(&mut h, Some(1))[..], b"old");
    assert_eq!(&take(&mut h, None)[..], b"other source");
    assert!(h.take(&Select::internal(None, 9)).is_none());
}

#[test]
fn data_for_unknown_or_overlong_messages_is_an_error() {
    let mut m = Mailbox::default();
    assert!(m.data(1, 1, Bytes::from_static(b"x")).is_err());
    let (_t, _) = m.post(Select::new(TypeSel::Is(1)));
    m.arrive(
        1,
        1,
        2,
        Body::Pending {
            msg_id: 4,
            buf: None,
        },
    );
    assert!(m.data(1, 4, Bytes::from_static(b"xyz")).is_err());
}

/// A receive that names memory for its message (`post_landing`): a rendezvous message of
/// that length is written there as it arrives — chunks copied (`data`), or read there by
/// the link (`landed`, after `landing_at` said where) — and taken as a view of it; an
/// eager one, or one of another length, is received as usual.
#[test]
fn a_landing_receives_a_rendezvous_message_of_its_length() {
    let mut m = Mailbox::default();
    let mut memory = vec![0u8; 6];
    // SAFETY: `memory` outlives the receive and is read only after the message is taken.
    let l = unsafe { Landing::new(&mut memory) };
    let (t, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    assert!(m.has_landing(t));
    assert!(m.arrive(3, 7, 6, pending(9)).is_some());
    assert_eq!(m.landing_at(3, 9), Some((l, 0)));
    assert_eq!(m.data(3, 9, Bytes::from_static(b"ab")), Ok(false));
    assert_eq!(
        m.landing_at(3, 9),
        Some((l, 2)),
        "still landing, 2 bytes in"
    );
    l.write(2, b"cd");
    assert_eq!(m.landed(3, 9, 2), Ok(false));
    assert_eq!(
        m.data(3, 9, Bytes::from_static(b"efg")).map_err(|_| ()),
        Err(())
    );
    assert_eq!(m.data(3, 9, Bytes::from_static(b"ef")), Ok(true));
    let got = m.take(t).expect("complete").message.data;
    assert!(l.holds(&got), "the message is the named memory");
    assert!(!m.has_landing(t));
    drop(got);
    assert_eq!(memory, b"abcdef");

    // A landing in two pieces: a chunk across the seam is split, and the message is a
    // view of the first piece.
    let (mut a, mut b) = (vec![0u8; 2], vec![0u8; 4]);
    // SAFETY: `a` and `b` outlive the receive and are read only after it is taken.
    let l = unsafe { Landing::split((a.as_mut_ptr(), 2), (b.as_mut_ptr(), 4)) };
    let (t, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    m.arrive(3, 7, 6, pending(11));
    assert_eq!(m.data(3, 11, Bytes::from_static(b"ghi")), Ok(false));
    assert_eq!(m.landing_at(3, 11), Some((l, 3)));
    l.write(3, b"jkl");
    assert_eq!(m.landed(3, 11, 3), Ok(true));
    let got = m.take(t).expect("complete").message.data;
    assert!(l.holds(&got) && got.len() == 2);
    drop(got);
    assert_eq!((&a[..], &b[..]), (&b"gh"[..], &b"ijkl"[..]));

    // Another length, and an eager message: no landing.
    let mut memory = vec![0u8; 6];
    // SAFETY: as above.
    let l = unsafe { Landing::new(&mut memory) };
    let (t, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    m.arrive(3, 7, 5, pending(10));
    assert!(!m.has_landing(t) && m.landing_at(3, 10).is_none());
    assert_eq!(m.landed(3, 10, 5).map_err(|_| ()), Err(()));
    assert_eq!(m.data(3, 10, Bytes::from_static(b"12345")), Ok(true));
    assert_eq!(&m.take(t).unwrap().message.data[..], b"12345");
    let (t, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    m.arrive(3, 7, 6, ready(b"eager!"));
    assert!(!m.has_landing(t));
    assert_eq!(&m.take(t).unwrap().message.data[..], b"eager!");
    assert_eq!(memory, [0; 6], "nothing written");
}

/// A receive dropped while its message lands (`abandon`): what came is copied out of the
/// named memory, the rest arrives into the mailbox's own buffer, and the message is
/// requeued whole — nothing lost, nothing more written into the memory.
#[test]
fn an_abandoned_landing_keeps_the_message_and_lets_go_of_the_memory() {
    let mut m = Mailbox::default();
    let mut memory = vec![0u8; 4];
    // SAFETY: as in the test above.
    let l = unsafe { Landing::new(&mut memory) };
    let (t, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    m.arrive(3, 7, 4, pending(9));
    assert_eq!(m.data(3, 9, Bytes::from_static(b"ab")), Ok(false));
    m.abandon(t);
    assert!(m.landing_at(3, 9).is_none());
    assert_eq!(m.data(3, 9, Bytes::from_static(b"cd")), Ok(true));
    memory.fill(0);
    let (t2, _) = m.post(Select::new(TypeSel::Is(7)));
    assert_eq!(&m.take(t2).unwrap().message.data[..], b"abcd");
    assert_eq!(memory, [0; 4]);
}

/// A probed message claimed with a landing (`claim_landing`) lands there; a claim that
/// finds nothing leaves no landing behind for the next receive.
#[test]
fn a_claimed_message_lands_and_a_failed_claim_leaves_nothing() {
    let mut m = Mailbox::default();
    let mut memory = vec![0u8; 3];
    // SAFETY: as in the tests above.
    let l = unsafe { Landing::new(&mut memory) };
    assert!(m.claim_landing(99, l).is_none());
    let (t, _) = m.post(Select::new(TypeSel::Is(7)));
    assert!(
        !m.has_landing(t),
        "a failed claim's landing went to the next receive"
    );
    assert!(m.cancel(t));
    m.arrive(3, 7, 3, pending(9));
    let st = m.probe(&Select::new(TypeSel::Is(7))).expect("queued");
    let (t, need) = m.claim_landing(st.id, l).expect("claimed");
    assert!(need.is_some() && m.has_landing(t));
    assert_eq!(m.data(3, 9, Bytes::from_static(b"xyz")), Ok(true));
    assert!(l.holds(&m.take(t).unwrap().message.data));
    assert_eq!(memory, b"xyz");
}

/// A long eager message binds, as its payload begins to arrive, the receive it would bind
/// once whole — the oldest matching one — if that names a landing of its length
/// (`land_eager`); it is then complete when its bytes have landed, counts as eager (its
/// sender's credit), and a second look finds the same place. Otherwise nothing is bound.
#[test]
fn a_long_eager_message_lands_in_the_oldest_matching_receive() {
    let mut m = Mailbox::default();
    let mut memory = vec![0u8; 4];
    // SAFETY: as in the tests above.
    let l = unsafe { Landing::new(&mut memory) };
    let (plain, _) = m.post(Select::from_node(3, TypeSel::Is(7)));
    let (landing, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    // The oldest matching receive has no landing: received as usual.
    assert!(m.land_eager(3, 7, 4, 20).is_none());
    assert!(m.cancel(plain));
    // Another length, another tag: not bound.
    assert!(m.land_eager(3, 7, 5, 21).is_none());
    assert!(m.land_eager(3, 8, 4, 22).is_none());
    let (to, at) = m.land_eager(3, 7, 4, 23).expect("bound");
    assert!(to == l && at == 0 && m.expects(3, 23));
    assert!(m.land_eager(3, 7, 4, 23).is_some_and(|(to, _)| to == l));
    l.write(0, b"abcd");
    assert_eq!(m.landed(3, 23, 4), Ok(true));
    let taken = m.take(landing).expect("complete");
    assert!(taken.eager && l.holds(&taken.message.data) && !m.expects(3, 23));
    assert_eq!(memory, b"abcd");
}

/// A message whose receive was abandoned goes to a receive posted meanwhile: at once if it
/// is complete, or when its last byte comes (a large one, or a long eager one bound as it
/// began to arrive). Before, it went back to the queue, where that receive — posted, not
/// looking at the queue again — never saw it.
#[test]
fn an_abandoned_receives_message_goes_to_a_receive_posted_meanwhile() {
    let mut m = Mailbox::default();
    // Complete.
    let (t1, _) = m.post(Select::new(TypeSel::Is(5)));
    let (t2, _) = m.post(Select::new(TypeSel::Is(5)));
    m.arrive(1, 5, 1, ready(b"x"));
    m.abandon(t1);
    assert_eq!(&m.take(t2).expect("rebound").message.data[..], b"x");
    // Still arriving: a long eager message that began to land.
    let mut memory = vec![0u8; 4];
    // SAFETY: as in the tests above.
    let l = unsafe { Landing::new(&mut memory) };
    let (t3, _) = m.post_landing(Select::new(TypeSel::Is(7)), l);
    assert!(m.land_eager(3, 7, 4, 30).is_some());
    m.abandon(t3);
    let (t4, _) = m.post(Select::new(TypeSel::Is(7)));
    // Its resent copy (a link died) does not bind the new receive a second time.
    assert!(m.land_eager(3, 7, 4, 30).is_none());
    assert!(m.take(t4).is_none());
    assert_eq!(m.data(3, 30, Bytes::from_static(b"abcd")), Ok(true));
    let taken = m.take(t4).expect("rebound when complete");
    assert!(taken.eager && &taken.message.data[..] == b"abcd");
    assert!(m.unreceived().is_empty());
    assert_eq!(memory, [0; 4], "nothing written after the abandon");
}
