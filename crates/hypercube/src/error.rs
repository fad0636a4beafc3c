//! The one error type of the runtime. Every variant says what happened and what to do.

use crate::NodeId;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a node program's communication calls.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The receive buffer is smaller than the matching message. The message stays queued:
    /// receive it again with a buffer of at least `needed` bytes (or with `recv`, which
    /// allocates).
    #[error(
        "message truncated: the message from node {source_node} (type {msg_type}) is {needed} bytes \
         but the buffer holds {capacity}; the message is still queued — receive it again with a \
         buffer of at least {needed} bytes"
    )]
    Truncated {
        /// Length of the message in bytes.
        needed: u64,
        /// Capacity of the caller's buffer in bytes.
        capacity: u64,
        /// Node that sent the message.
        source_node: NodeId,
        /// The message's type.
        msg_type: u32,
    },

    /// A node number outside the cube (or outside the subcube an operation is limited to).
    #[error("invalid node {node}: the {what} has nodes {first}..={last}; pass a node in that range")]
    InvalidNode {
        /// The offending node number.
        node: i64,
        /// What the node had to belong to ("cube of dimension 3", "subcube ...").
        what: String,
        /// Lowest valid node.
        first: NodeId,
        /// Highest valid node.
        last: NodeId,
    },

    /// A message type outside the user's type space.
    #[error(
        "invalid message type {msg_type}: user message types are 0..={max}; types above are \
         reserved for the utilities and collectives"
    )]
    InvalidType {
        /// The offending type.
        msg_type: u32,
        /// The largest type a user may use.
        max: u32,
    },

    /// A peer process went away (crashed, was killed, or closed its link) while this node
    /// still needed it.
    #[error(
        "peer node {peer} is gone ({detail}); the job cannot continue — look at that rank's \
         output for the cause"
    )]
    PeerGone {
        /// The neighbor whose link broke (the message may have been bound further).
        peer: NodeId,
        /// What the operating system or the protocol said.
        detail: String,
    },

    /// A peer sent bytes that do not follow the protocol.
    #[error("protocol error on the link to node {peer}: {detail}; the link was closed")]
    Protocol {
        /// The neighbor on the other end of the link.
        peer: NodeId,
        /// What was wrong.
        detail: String,
    },

    /// The job did not come together in time.
    #[error(
        "bootstrap timed out after {timeout_ms} ms while {stage}; check that every rank started \
         (the launcher's output) or raise the bootstrap timeout"
    )]
    BootstrapTimeout {
        /// What the node was waiting for.
        stage: String,
        /// The configured limit.
        timeout_ms: u64,
    },

    /// Bootstrap failed for another reason than time.
    #[error("bootstrap failed: {0}")]
    Bootstrap(String),

    /// A configuration value (environment or file) is malformed.
    #[error("configuration error: {0}")]
    Config(String),

    /// A blocking call ran past the deadline the caller gave.
    #[error("timed out after {timeout_ms} ms waiting for {what}")]
    Timeout {
        /// What the call waited for.
        what: String,
        /// The deadline in milliseconds.
        timeout_ms: u64,
    },

    /// A value could not be serialized or deserialized.
    #[error("codec error: {0}; both sides must send and receive the same Rust type")]
    Codec(String),

    /// The job is being torn down (another rank failed or the launcher stopped it).
    #[error("the job is shutting down: {0}")]
    Shutdown(String),

    /// A request handle was used after it completed or on another node.
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// An operating-system I/O error outside a peer link.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What the node was doing.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wrap an I/O error with what was being done.
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// A cheap clone for broadcasting one failure to many waiters.
    pub(crate) fn duplicate(&self) -> Error {
        match self {
            Error::Io { context, source } => Error::Io {
                context: context.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::PeerGone { peer, detail } => Error::PeerGone {
                peer: *peer,
                detail: detail.clone(),
            },
            Error::Protocol { peer, detail } => Error::Protocol {
                peer: *peer,
                detail: detail.clone(),
            },
            Error::Shutdown(s) => Error::Shutdown(s.clone()),
            other => Error::Shutdown(other.to_string()),
        }
    }
}
