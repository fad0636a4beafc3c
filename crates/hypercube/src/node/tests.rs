use bytes::Bytes;

use crate::base::tags;
use crate::local::run_local;

/// A failed call's tags are dropped until the counter draws them again for a new
/// call: then its messages are delivered (and nothing is left in the discarded set).
#[test]
fn discarded_call_tags_are_delivered_again_when_drawn_anew() {
    run_local(0, |node| {
        let me = node.mynode();
        let tag = node.collective_tag(0);
        node.discard_call(tag);
        let send = |t: u32, b: &'static [u8]| {
            node.isend_internal(me, t, Bytes::from_static(b))
                .unwrap()
                .wait()
                .unwrap();
        };
        send(tag, b"dropped");
        send(tags::failure(tag), b"dropped notice");
        assert!(node
            .inner
            .t
            .probe(
                &crate::base::message::Select::internal(None, tag),
                false,
                None
            )
            .unwrap()
            .is_none());
        // The counter comes round to the same tag (2^26 calls later).
        node.calls().seq[0] -= 1;
        assert_eq!(node.collective_tag(0), tag);
        assert!(node.calls().discarded.is_empty());
        send(tag, b"new call");
        let m = node.recv_internal(Some(me), tag).unwrap();
        assert_eq!(&m.data[..], b"new call");
    });
}

/// A receive dropped after its message came gives the message to a matching receive
/// posted meanwhile, which a thread waits on (it went back to the queue before, and that
/// thread waited until the deadlock report). Over TCP (`transport/tcp/test_job.rs`) and
/// here on threads.
pub(crate) fn a_dropped_receives_message_wakes_another_waiter(
    node: &crate::node::Node,
) -> Result<(), String> {
    use crate::base::message::{Select, TypeSel};
    use std::time::Duration;
    let me = node.mynode();
    let sel = Select::new(TypeSel::Is(7));
    let first = node.irecv(sel).map_err(|e| e.to_string())?;
    let mut second = node.irecv(sel).map_err(|e| e.to_string())?;
    std::thread::scope(|s| {
        let waiter = s.spawn(move || second.wait_timeout(Duration::from_secs(5)));
        // Let the waiter park. (Not for long: the in-process transport takes a node
        // whose one waiting thread sees nothing for two of its 50 ms looks for a deadlock,
        // though another thread of it is about to send; 100 ms sleeps failed so under load.)
        std::thread::sleep(Duration::from_millis(20));
        node.send(me, crate::MsgType(7), b"x".to_vec())
            .map_err(|e| e.to_string())?;
        // The message is bound to `first`; let the waiter, woken by its arrival, park again.
        std::thread::sleep(Duration::from_millis(20));
        drop(first);
        match waiter.join() {
            Ok(Ok(m)) if &m.data[..] == b"x" => Ok(()),
            Ok(Ok(m)) => Err(format!("the waiter got {:?}", m.data)),
            Ok(Err(e)) => Err(format!("the waiter: {e}")),
            Err(_) => Err("the waiter panicked".into()),
        }
    })
}

#[test]
fn a_dropped_receives_message_wakes_another_waiter_on_threads() {
    for r in run_local(0, |node| {
        a_dropped_receives_message_wakes_another_waiter(&node)
    }) {
        r.unwrap();
    }
}
