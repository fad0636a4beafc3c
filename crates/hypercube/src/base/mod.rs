//! The words every layer speaks: node numbers and the host's ([`ids`]), the tag space
//! ([`tags`]), message payloads as shared parts ([`parts`]) and the message with its
//! selector ([`message`]); memory lent to the transport ([`lent`]) or named by a receive
//! ([`landing`]); how freed message memory is kept and given back ([`memory`]). Nothing
//! here knows a transport, a wire or a collective.

pub(crate) mod ids;
pub(crate) mod landing;
pub(crate) mod lent;
pub(crate) mod memory;
pub(crate) mod message;
pub(crate) mod notice;
pub(crate) mod parts;
pub(crate) mod tags;
