//! The one seam: every utility and collective is written once against [`Transport`] (through
//! [`crate::Node`]) and runs unchanged over TCP processes or in-process threads.

pub(crate) mod api;
pub(crate) mod forwarding;
pub mod local;
pub(crate) mod local_clock;
pub(crate) mod mailbox;
pub mod tcp;

pub use api::{SendToken, Transport};
pub use forwarding::Forwarding;
pub use tcp::{Tuning, WireKnobs};

pub use mailbox::RecvToken;
