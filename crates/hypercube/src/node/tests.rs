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
