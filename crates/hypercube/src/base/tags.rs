//! The 32-bit tag space: which message tags belong to the user and which the runtime
//! reserves for itself. This table is the only place the layout is written down; every
//! other file takes its tags from this module.
//!
//! Every message carries a 32-bit tag (the `tag` field of a frame, `docs/protocol.md`).
//! The lower half is the user's: a user message's tag is its type. In the upper half (bit
//! 31 set) bits 26..31 are a *slot* (0..=31) and bits 0..26 a value whose meaning the slot
//! gives, so every slot is a range of 2^26 tags:
//!
//! | tags (inclusive) | slot | owner | low 26 bits |
//! |---|---|---|---|
//! | `0x0000_0000..=0x7FFF_FFFF` | — | user message types ([`USER`], [`MAX_USER_TYPE`]) | — |
//! | `0x8000_0000..=0xC3FF_FFFF` | 0..=16 | utilities and collectives on a subcube of dimension = slot ([`COLLECTIVE`], [`collective`]) | the algorithm's variant (bits 21..26, [`with_variant`]) and the call counter (bits 0..21, wrapping) |
//! | `0xC400_0000..=0xD7FF_FFFF` | 17..=21 | a collective call's failure notices ([`FAILURE`], [`failure`]) | the subcube dimension (bits 24..29) and the call counter (bits 0..21) |
//! | `0xD800_0000..=0xE7FF_FFFF` | 22..=25 | spare, unassigned ([`SPARE`]) | — |
//! | `0xE800_0000..=0xEBFF_FFFF` | 26 | the start-up link probe ([`BOOTSTRAP`], `boot::probe`) | — |
//! | `0xEC00_0000..=0xEFFF_FFFF` | 27 | the trace's start-up clock exchange ([`TRACE`], `boot::clock::estimate_clock`) | — |
//! | `0xF000_0000..=0xF3FF_FFFF` | 28 | runtime control ([`CONTROL`]): the finalize barrier, [`FINALIZE`] = `0xF000_0000`; the rest unused | — |
//! | `0xF400_0000..=0xF7FF_FFFF` | 29 | sparse send, SPGSNW / SPGRCW ([`Keyed::Sparse`]) | the user's type, ≤ [`MAX_RESERVED_USER_TYPE`] |
//! | `0xF800_0000..=0xFBFF_FFFF` | 30 | long-message chunks, LSENDW / LRECVW ([`Keyed::LongData`]) | the user's type |
//! | `0xFC00_0000..=0xFFFF_FFFF` | 31 | long-message headers ([`Keyed::LongHeader`]) | the user's type |
//!
//! The ranges follow one another without gap or overlap and cover all 2^32 tags (the unit
//! test `layout_covers_the_tag_space_without_overlap` checks their first and last values,
//! and that every tag this module makes falls in its own range).
//!
//! - **User types** are checked against [`MAX_USER_TYPE`] by every user call, so a user's
//!   message never carries a reserved tag, and an any-type receive never matches one.
//! - **Collective tags** need no type from the user: each utility or collective call takes
//!   the next value of a per-node counter for the subcube's dimension (`Node::collective_tag`).
//!   The members of a subcube make the same calls in the same order, so their counters
//!   agree and two calls never exchange messages. A collective's algorithm sets the tag's
//!   *variant* (`Algorithm` as a number): members whose automatic choices differ (they
//!   passed different lengths) send on different tags, and a member's receive that meets
//!   another variant of its call fails the call instead of taking the message as its own
//!   (`collectives/ctx.rs`). The call without its variant is its *key* ([`call_key`]):
//!   discarding and closing a call (`transport/mailbox.rs`) go by the key. Cubes have at most [`MAX_DIM`] = 16
//!   dimensions (the launcher, the TCP bootstrap and `run_local` refuse larger ones).
//! - **Type-keyed tags** serve the utilities whose receivers do not take part in every call
//!   (long messages, the sparse send): the tag is the slot plus the user's type, so they
//!   only accept types up to [`MAX_RESERVED_USER_TYPE`] (2^26 − 1); a larger type is
//!   refused with [`Error::IpscArgument`](crate::Error::IpscArgument) before anything is
//!   sent.
//! - **Failure notices**: a member whose part of a collective call fails (e.g. it received
//!   a block of another length than its own) tells every other member on the call's
//!   failure tag, which each of the call's receives also accepts, from any member
//!   (`collectives/ctx.rs`), so that no member waits for a message that will never come
//!   and none takes a wrong result for a right one. The tag keeps the call's counter: a
//!   notice nobody took could only meet the call 2^21 calls later on a subcube of the same
//!   dimension (a member whose part of the call has ended drops it: `Transport::close`). A member that leaves a failed call has the
//!   transport drop both of its tags, queued and arriving, until the counter draws them
//!   for a new call (`Node::discard_call`), so a late message of the failed call never
//!   holds its sender.
//! - **Finalize** has a slot of its own, outside every keyed range: no user type can make
//!   a utility message that the finalize barrier would take (or the reverse).
//! - **Spare** slots are reserved: nothing sends them today.

use std::ops::RangeInclusive;

/// The largest message type a user program may use. Types above are reserved for the
/// utilities and collectives, so they never consume a user's message (or the reverse).
pub const MAX_USER_TYPE: u32 = 0x7FFF_FFFF;

/// The largest message type that [`Node::lsend`](crate::Node::lsend) and
/// [`Node::spgsend`](crate::Node::spgsend) accept (2^26 − 1): they map the type into a
/// reserved tag range of 26 bits.
pub const MAX_RESERVED_USER_TYPE: u32 = LOW_MASK;

/// Bits of a reserved tag below its slot.
const LOW_BITS: u32 = 26;
/// The low bits of a reserved tag.
const LOW_MASK: u32 = (1 << LOW_BITS) - 1;
/// Bit 31: the tag is reserved.
const RESERVED: u32 = 1 << 31;

/// The tags of slots `first..=last`.
const fn slots(first: u32, last: u32) -> RangeInclusive<u32> {
    (RESERVED | (first << LOW_BITS))..=(RESERVED | (last << LOW_BITS) | LOW_MASK)
}

/// The largest cube dimension the runtime supports, and so the largest collective slot.
pub(crate) const MAX_DIM: u32 = 16;

/// User message types (user calls check [`MAX_USER_TYPE`] itself).
#[cfg_attr(not(test), allow(dead_code))] // the table's first row, for the tests
pub(crate) const USER: RangeInclusive<u32> = 0..=MAX_USER_TYPE;
/// Collective tags, slot = subcube dimension (0..=[`MAX_DIM`]).
pub(crate) const COLLECTIVE: RangeInclusive<u32> = slots(0, MAX_DIM);
/// Failure notices of collective calls ([`failure`]).
#[cfg_attr(not(test), allow(dead_code))] // the table's row, for the tests
pub(crate) const FAILURE: RangeInclusive<u32> = slots(MAX_DIM + 1, MAX_DIM + 5);
/// Spare, unassigned.
#[cfg_attr(not(test), allow(dead_code))] // reserved: nothing sends these tags yet
pub(crate) const SPARE: RangeInclusive<u32> = slots(MAX_DIM + 6, 25);
/// The start-up work: the link probe (`boot::probe`).
pub(crate) const BOOTSTRAP: RangeInclusive<u32> = slots(26, 26);
/// The trace's start-up clock exchange (sent only when tracing is on).
pub(crate) const TRACE: RangeInclusive<u32> = slots(27, 27);
/// The runtime's own control messages (today only the finalize barrier).
pub(crate) const CONTROL: RangeInclusive<u32> = slots(28, 28);

/// The tag of the finalize barrier's messages: the first tag of [`CONTROL`].
pub(crate) const FINALIZE: u32 = *CONTROL.start();

/// The type-keyed utilities, each with a slot of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keyed {
    /// The sparse send (SPGSNW / SPGRCW).
    Sparse = 29,
    /// The chunks of a long message (LSENDW / LRECVW).
    LongData = 30,
    /// The header of a long message.
    LongHeader = 31,
}

impl Keyed {
    /// This utility's tags: one per type `0..=MAX_RESERVED_USER_TYPE`.
    pub(crate) const fn range(self) -> RangeInclusive<u32> {
        slots(self as u32, self as u32)
    }
}

/// The reserved tag of a type-keyed utility message of type `ty`, or `None` for a type
/// above [`MAX_RESERVED_USER_TYPE`].
pub(crate) fn keyed(slot: Keyed, ty: u32) -> Option<u32> {
    (ty <= MAX_RESERVED_USER_TYPE).then_some(*slot.range().start() | ty)
}

/// Bits of a collective tag that number the call (below its [variant](with_variant)).
const COUNTER_BITS: u32 = 21;
/// The call number's bits of a collective tag.
const COUNTER_MASK: u32 = (1 << COUNTER_BITS) - 1;
/// The variant's bits of a collective tag (bits 21..26).
const VARIANT_MASK: u32 = LOW_MASK & !COUNTER_MASK;

/// The tag of call number `counter` (wrapping at 2^21) of a utility or collective on a
/// subcube of dimension `dim` (at most [`MAX_DIM`]); its variant 0 (the call's *key*).
pub(crate) fn collective(dim: u32, counter: u32) -> u32 {
    debug_assert!(dim <= MAX_DIM, "subcube dimension {dim} > {MAX_DIM}");
    *COLLECTIVE.start() | (dim << LOW_BITS) | (counter & COUNTER_MASK)
}

/// The tag of the collective call `call` as the algorithm numbered `variant` (0..32) sends
/// it: members that run different algorithms for one call use different tags, so no
/// message of one algorithm is taken for another's (`collectives/ctx.rs`).
pub(crate) fn with_variant(call: u32, variant: u32) -> u32 {
    debug_assert!(COLLECTIVE.contains(&call) && variant < 32);
    call_key(call) | (variant << COUNTER_BITS)
}

/// The variant of a collective tag ([`with_variant`]).
pub(crate) fn variant(tag: u32) -> u32 {
    (tag & VARIANT_MASK) >> COUNTER_BITS
}

/// The call a tag belongs to: a collective tag without its variant (every algorithm's
/// tag of one call has one key); any other tag as it is.
pub(crate) fn call_key(tag: u32) -> u32 {
    if COLLECTIVE.contains(&tag) {
        tag & !VARIANT_MASK
    } else {
        tag
    }
}

/// The failure-notice tag of the collective call whose tag is `call` ([`collective`], of
/// any variant): in [`FAILURE`], the subcube dimension above the call's number.
pub(crate) fn failure(call: u32) -> u32 {
    debug_assert!(
        COLLECTIVE.contains(&call),
        "{call:#x} is not a collective tag"
    );
    *FAILURE.start() + (call_dim(call) << FAILURE_DIM_SHIFT | (call & COUNTER_MASK))
}

/// Where a failure-notice tag keeps its call's subcube dimension, above the call's number
/// ([`failure`], [`failed_call`]).
const FAILURE_DIM_SHIFT: u32 = 24;

/// The call (its key, [`call_key`]) whose failure-notice tag is `tag` ([`failure`]), or
/// `None` if `tag` is not a failure-notice tag.
pub(crate) fn failed_call(tag: u32) -> Option<u32> {
    if !FAILURE.contains(&tag) {
        return None;
    }
    let at = tag - *FAILURE.start();
    let (dim, counter) = (at >> FAILURE_DIM_SHIFT, at & ((1 << FAILURE_DIM_SHIFT) - 1));
    (dim <= MAX_DIM && counter <= COUNTER_MASK).then(|| collective(dim, counter))
}

/// The subcube dimension of the collective call whose tag is `call` ([`collective`]).
pub(crate) fn call_dim(call: u32) -> u32 {
    (call >> LOW_BITS) & 0x1F
}

#[cfg(test)]
mod tests;
