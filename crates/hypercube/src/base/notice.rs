//! A collective call's *failure notice*: what a member sends every other member of the
//! call when the call cannot complete (`collectives/ctx.rs`), on the call's failure tag
//! (`base/tags.rs`, [`tags::failure`]). Its body is the node that stopped the call (4 bytes,
//! little-endian) and the reason as text.
//!
//! Two places send one: a member whose own part of the call failed (`Ctx::guard`), and the
//! transport of a member whose part had ended when a message of the call reached it
//! ([`stray`]: the members ran different algorithms, so the message's sender and whoever
//! waits for that sender's message are not talking to each other).

use bytes::Bytes;
use hypercube_topology::NodeId;

use crate::base::tags;

/// The body of a notice from `origin` giving `reason`.
pub(crate) fn encode(origin: NodeId, reason: &str) -> Bytes {
    let mut b = origin.to_le_bytes().to_vec();
    b.extend_from_slice(reason.as_bytes());
    Bytes::from(b)
}

/// The node and the reason a notice's body names; `None` for a body too short to name a
/// node.
pub(crate) fn decode(body: &[u8]) -> Option<(NodeId, String)> {
    let (n, text) = body.split_first_chunk::<4>()?;
    Some((
        NodeId::from_le_bytes(*n),
        String::from_utf8_lossy(text).into_owned(),
    ))
}

/// What node `me` tells the members of the collective call whose tag is `call` when a
/// message of that call from `source` reached it after its own part of the call had ended
/// (`Mailbox::close`): the failure tag to send on, the members to send to (every other
/// node of `me`'s subcube of the call's dimension), and the notice's body. Logs the drop
/// (a warning: the one place both transports report it).
///
/// A member whose part of a call has ended took every message its algorithm expects, so a
/// later one comes from a member that ran another algorithm — with lengths the members
/// disagree on, the automatic choice can differ between them — and the member that waits
/// for that sender's message (if any) waits in vain: the notice ends its wait.
pub(crate) fn stray(me: NodeId, source: NodeId, call: u32) -> (u32, Vec<NodeId>, Bytes) {
    let members = hypercube_topology::subcube_members(me, tags::call_dim(call))
        .filter(|&m| m != me)
        .collect();
    let reason = format!(
        "node {me} received a message of this call from node {source} after its own part \
         had ended: the members ran different algorithms, which happens when they pass \
         different lengths (the automatic choice depends on the length) or ask for \
         different algorithms; every member must pass the same length (or call the \
         v-variant) and ask for the same algorithm"
    );
    tracing::warn!(
        "dropped a message from node {source} of a collective call whose part here had \
         ended (the members ran different algorithms); telling the call's members"
    );
    (tags::failure(call), members, encode(me, &reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_names_its_node_and_reason() {
        let b = encode(5, "lengths differ");
        assert_eq!(decode(&b), Some((5, "lengths differ".to_string())));
        assert_eq!(decode(&b[..3]), None);
    }

    #[test]
    fn a_stray_is_told_to_every_other_member_of_the_calls_subcube() {
        // Node 6 of a 4-cube, a call on its 2-subcube (nodes 4..8).
        let call = tags::collective(2, 77);
        let (tag, members, body) = stray(6, 5, call);
        assert_eq!(tag, tags::failure(call));
        assert_eq!(members, [4, 5, 7]);
        let (origin, text) = decode(&body).unwrap();
        assert_eq!(origin, 6);
        assert!(text.contains("from node 5"), "{text}");
    }
}
