//! The 32-bit tag space: which message tags belong to the user and which the runtime
//! reserves for itself (collectives, the type-keyed utilities, finalize).
//!
//! Every frame carries a 32-bit `tag`. User message types are `0..=MAX_USER_TYPE`; a
//! reserved tag has bit 31 set, bits 26..31 a *slot*, bits 0..26 a value whose meaning
//! depends on the slot.

/// The largest message type a user program may use. Types above are reserved for the
/// utilities and collectives, so they never consume a user's message (or the reverse).
pub const MAX_USER_TYPE: u32 = 0x7FFF_FFFF;

/// The largest message type that [`Node::lsend`](crate::Node::lsend) and
/// [`Node::spgsend`](crate::Node::spgsend) accept (2^26 − 1): they map the type into a
/// reserved tag range of 26 bits.
pub const MAX_RESERVED_USER_TYPE: u32 = (1 << 26) - 1;

/// The type-keyed utilities' slots. Collective tags use the slot equal to the subcube
/// dimension, at most 16 (the launcher's largest cube), so slots 29..=31 are free for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyed {
    /// The sparse send (SPGSNW / SPGRCW).
    Sparse = 29,
    /// The chunks of a long message (LSENDW / LRECVW).
    LongData = 30,
    /// The header of a long message.
    LongHeader = 31,
}

/// The reserved tag of a type-keyed utility message, or `None` for a type above
/// [`MAX_RESERVED_USER_TYPE`].
pub(crate) fn keyed(slot: Keyed, ty: u32) -> Option<u32> {
    (ty <= MAX_RESERVED_USER_TYPE).then_some((1 << 31) | ((slot as u32) << 26) | ty)
}

/// The tag of call number `counter` of a utility or collective on a subcube of dimension
/// `dim`: bit 31 set, bits 26..31 the dimension, bits 0..26 the counter (wrapping).
pub(crate) fn collective(dim: u32, counter: u32) -> u32 {
    (1 << 31) | ((dim & 0x1F) << 26) | (counter & 0x03FF_FFFF)
}

/// The tag of the finalize barrier's messages.
pub(crate) const FINALIZE: u32 = 0xFFFF_FFF0;
