//! Messages, message types and receive selectors (iPSC `csend`/`crecv` types).

use bytes::Bytes;
use hypercube_topology::NodeId;

use crate::base::tags;

pub use crate::base::tags::MAX_USER_TYPE;

/// A message type, as in the iPSC's `TYPE` argument. User types are `0..=MAX_USER_TYPE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MsgType(pub u32);

impl From<u32> for MsgType {
    fn from(t: u32) -> Self {
        MsgType(t)
    }
}

/// Which message types a receive or probe accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeSel {
    /// Any user message type (iPSC: type `-1`).
    Any,
    /// Exactly this type.
    Is(u32),
}

impl From<MsgType> for TypeSel {
    fn from(t: MsgType) -> Self {
        TypeSel::Is(t.0)
    }
}

/// A full receive selector: a message type and optionally a source node.
///
/// `TypeSel` and `MsgType` convert into a `Select` that accepts any source; use
/// [`Select::from_node`] to restrict the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Select {
    /// The accepted type(s).
    pub ty: TypeSel,
    /// The accepted source, or any.
    pub source: Option<NodeId>,
    /// Whether `TypeSel::Any` may also match reserved (internal) types. Only the runtime sets it.
    pub(crate) internal: bool,
    /// A collective call's receive ([`Select::call`]): it also accepts, from any source,
    /// the call's failure notice and the call's messages of another variant. Only the
    /// runtime sets it.
    pub(crate) call: bool,
}

impl Select {
    /// Accept messages of type `ty` from any source.
    pub fn new(ty: impl Into<TypeSel>) -> Self {
        Select {
            ty: ty.into(),
            source: None,
            internal: false,
            call: false,
        }
    }

    /// Accept messages of type `ty` only from node `source`.
    pub fn from_node(source: NodeId, ty: impl Into<TypeSel>) -> Self {
        Select {
            ty: ty.into(),
            source: Some(source),
            internal: false,
            call: false,
        }
    }

    /// A selector for the runtime's reserved type space.
    pub(crate) fn internal(source: Option<NodeId>, tag: u32) -> Self {
        Select {
            ty: TypeSel::Is(tag),
            source,
            internal: true,
            call: false,
        }
    }

    /// A collective call's receive: [`Select::internal`] for the call's tag `tag` (a
    /// collective tag, `tags::collective`) that also accepts, from any source, the call's
    /// failure notice (`tags::failure`) or a message of another variant of the call
    /// (`tags::with_variant`: a member that runs another algorithm).
    pub(crate) fn call(source: Option<NodeId>, tag: u32) -> Self {
        Select {
            call: true,
            ..Select::internal(source, tag)
        }
    }

    /// Does a message with this source and raw tag match?
    pub(crate) fn matches(&self, source: NodeId, tag: u32) -> bool {
        if let (true, TypeSel::Is(own)) = (self.call, self.ty) {
            if tag != own
                && (tags::failed_call(tag) == Some(tags::call_key(own))
                    || tags::call_key(tag) == tags::call_key(own))
            {
                return true;
            }
        }
        if let Some(s) = self.source {
            if s != source {
                return false;
            }
        }
        match self.ty {
            TypeSel::Any => self.internal || tag <= MAX_USER_TYPE,
            TypeSel::Is(t) => t == tag,
        }
    }
}

impl From<TypeSel> for Select {
    fn from(ty: TypeSel) -> Self {
        Select::new(ty)
    }
}

impl From<MsgType> for Select {
    fn from(ty: MsgType) -> Self {
        Select::new(ty)
    }
}

/// What is known about a message before (or after) it is received: iPSC `infonode`,
/// `infotype`, `infocount`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The node that sent the message.
    pub source: NodeId,
    /// The message's type.
    pub msg_type: MsgType,
    /// Length in bytes.
    pub len: u64,
    /// Local arrival id (identifies the message for a later claim).
    pub(crate) id: u64,
}

impl Status {
    /// The sending node (iPSC `infonode`).
    #[doc(alias = "infonode")]
    pub fn source(&self) -> NodeId {
        self.source
    }
    /// The message type (iPSC `infotype`).
    #[doc(alias = "infotype")]
    pub fn msg_type(&self) -> MsgType {
        self.msg_type
    }
    /// The length in bytes (iPSC `infocount`).
    #[doc(alias = "infocount")]
    pub fn len(&self) -> u64 {
        self.len
    }
    /// True for a zero-length message.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A received message: who sent it, its type, and its bytes (shared, not copied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub(crate) source: NodeId,
    pub(crate) tag: u32,
    pub(crate) data: Bytes,
}

impl Message {
    /// The sending node.
    #[doc(alias = "infonode")]
    pub fn source(&self) -> NodeId {
        self.source
    }
    /// The message type.
    #[doc(alias = "infotype")]
    pub fn msg_type(&self) -> MsgType {
        MsgType(self.tag)
    }
    /// The payload.
    pub fn data(&self) -> &Bytes {
        &self.data
    }
    /// Take the payload.
    pub fn into_data(self) -> Bytes {
        self.data
    }
    /// Length in bytes.
    #[doc(alias = "infocount")]
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// True for a zero-length message.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// The message's status (source, type, length).
    pub fn status(&self) -> Status {
        Status {
            source: self.source,
            msg_type: MsgType(self.tag),
            len: self.data.len() as u64,
            id: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Select;
    use crate::base::tags;

    /// A collective call's receive takes its own tag from its source only, and from anyone
    /// the call's failure notice and the call's other variants; not another call's tags,
    /// nor its failure notice.
    #[test]
    fn a_call_receive_takes_its_notice_and_other_variants() {
        let key = tags::collective(3, 41);
        let own = tags::with_variant(key, 2);
        let sel = Select::call(Some(5), own);
        assert!(sel.matches(5, own));
        assert!(!sel.matches(6, own), "its own tag from its source only");
        assert!(sel.matches(6, tags::failure(own)));
        assert!(sel.matches(6, tags::with_variant(key, 7)));
        assert!(sel.matches(6, key));
        let other = tags::collective(3, 42);
        assert!(!sel.matches(5, other));
        assert!(!sel.matches(5, tags::failure(other)));
        assert!(
            !sel.matches(5, tags::collective(2, 41)),
            "another dimension's call"
        );
        assert!(!sel.matches(5, 7), "a user's message");
        let plain = Select::internal(Some(5), own);
        assert!(!plain.matches(5, tags::failure(own)));
        assert!(!plain.matches(5, tags::with_variant(key, 7)));
    }
}
