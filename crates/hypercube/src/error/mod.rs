//! The one error type of the runtime. Every variant says what happened and what to do.

use hypercube_topology::NodeId;

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
        "message truncated: the message from node {source_node} (type {msg_type}) is {bytes} \
         but the buffer holds {capacity}; the message is still queued — receive it again with a \
         buffer of at least {bytes}",
        bytes = units(needed, "byte")
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
    #[error(
        "invalid node {node}: the {what} has nodes {first}..={last}; pass a node in that range"
    )]
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

    /// A link to a neighbor stopped working while the job ran: bytes sent on it went
    /// unacknowledged, or its keepalive probes unanswered, for the link timeout (an
    /// interface down, a cable pulled, the neighbor's machine gone), and the job cannot go
    /// on around it: this node is cut off, or a node can no longer be reached over the
    /// links still up (while the cube stays connected a dead link is routed around, and
    /// this error is not raised).
    #[error(
        "{} is dead: {detail}; the job cannot continue — check the link's interfaces and \
         cable or the neighbor's machine, and run again (HYPERCUBE_LINK_TIMEOUT_MS bounds the \
         wait)",
        link_name(*node, *peer, *dim)
    )]
    LinkDead {
        /// This node.
        node: NodeId,
        /// The neighbor at the other end.
        peer: NodeId,
        /// The link's dimension (`None`: the link between node 0 and the host).
        dim: Option<u32>,
        /// What was not acknowledged for how long, and what the operating system said.
        detail: String,
    },

    /// The node a receive waits for has finished (returned from its program or called
    /// finalize), so the message can never come.
    #[error(
        "node {peer} has finished (it left its program or called finalize) while this node waits \
         for {what} from it; that message will never come — check that every receive has a \
         matching send, and that rank's output for an error"
    )]
    PeerFinished {
        /// The finished node (for an any-source receive: the last node to finish).
        peer: NodeId,
        /// What this node was waiting for.
        what: String,
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

    /// `hypercube::init` was called a second time in this process. A process joins one
    /// job: keep the `Node` of the first call (pass `&Node` to the code that needs it).
    #[error(
        "hypercube::init was called twice: a process joins one job; keep the Node the first          call returned and pass &Node to the code that needs it"
    )]
    AlreadyInitialized,

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

    /// A value of a collective's serde form (`allgather_value`, `bcast_value`, ...) came
    /// with another type's fingerprint than the type this node decodes: the members passed
    /// different types (even of the same size, which would otherwise decode silently).
    #[error(
        "type mismatch: the value from node {source_node} is {found}, but this node decodes \
         {expected}; every member must pass the same Rust type"
    )]
    TypeMismatch {
        /// The node that sent the value.
        source_node: NodeId,
        /// The type this node decodes (`std::any::type_name`).
        expected: String,
        /// The sender's type (`std::any::type_name`; the name travels with the value).
        found: String,
    },

    /// The job is being torn down (another rank failed or the launcher stopped it).
    #[error("the job is shutting down: {0}")]
    Shutdown(String),

    /// An argument of a collective operation is wrong: a subcube dimension larger than the
    /// cube, buffers whose lengths differ between nodes, an algorithm that does not apply.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

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

    /// A utility was called with an argument it cannot work with (a subcube dimension larger
    /// than the cube, a message length larger than its buffer, a type outside the range a
    /// utility maps into its reserved tags, ...). Nothing was sent or received.
    #[error("{routine}: invalid argument: {detail}")]
    IpscArgument {
        /// The seed's routine name (GSENDW, GOP, GCAT, ...).
        routine: &'static str,
        /// What is wrong and what to pass instead.
        detail: String,
    },

    /// GOP was called by a node outside the subcube of the root (seed §8).
    #[error(
        "GOP: CALLED BY NON PARTICIPANT: node {me} is not in the {dim}-subcube of root {root}; \
         only the members of the root's subcube may call GOP with this root and dimension"
    )]
    GopNonParticipant {
        /// The calling node.
        me: NodeId,
        /// The root it passed.
        root: NodeId,
        /// The subcube dimension it passed.
        dim: u32,
    },

    /// GOP received a contribution longer than this node's vector (seed §8: "received too
    /// long a message"). The extra elements were not combined; the call otherwise completed.
    #[error(
        "GOP: LONG MESSAGE: received too long a message: node {from} contributed {} but \
         this node's vector has {expected}; the operation combined {} from it, ignored the rest \
         and completed — every participant must pass a vector of the same length",
        units(received, "element"),
        units(expected, "element")
    )]
    GopLongMessage {
        /// The child whose contribution was too long.
        from: NodeId,
        /// This node's vector length.
        expected: usize,
        /// The contribution's length in elements.
        received: usize,
    },

    /// GOP received a contribution shorter than this node's vector (seed §8: "received too
    /// short a message"). Only the elements received were combined; the call otherwise
    /// completed.
    #[error(
        "GOP: SHORT MESSAGE: received too short a message: node {from} contributed {} but \
         this node's vector has {expected}; only those were combined and the operation \
         completed — every participant must pass a vector of the same length",
        units(received, "element")
    )]
    GopShortMessage {
        /// The child whose contribution was too short.
        from: NodeId,
        /// This node's vector length.
        expected: usize,
        /// The contribution's length in elements (a partial element counts as none).
        received: usize,
    },

    /// GCAT was called by a node outside the subcube of the root (seed §8).
    #[error(
        "GCAT: CALLED BY NON PARTICIPANT: node {me} is not in the {dim}-subcube of root {root}; \
         only the members of the root's subcube may call GCAT with this root and dimension"
    )]
    GcatNonParticipant {
        /// The calling node.
        me: NodeId,
        /// The root it passed.
        root: NodeId,
        /// The subcube dimension it passed.
        dim: u32,
    },

    /// The concatenation collected at this node does not fit the caller's buffer (seed §8).
    /// Nothing is lost: the whole concatenation is in `data`, and the partial result was
    /// still passed on, so the other nodes completed normally.
    #[error(
        "GCAT: BUFFER LENGTH EXCEEDED: the concatenation at this node is {bytes} but the \
         buffer holds {capacity}; the complete result is returned in this error and the other \
         nodes were not affected — pass a buffer of at least {bytes}, or use gcat, which \
         allocates",
        bytes = units(needed, "byte")
    )]
    GcatBufferExceeded {
        /// Bytes the concatenation needs.
        needed: u64,
        /// Bytes the buffer holds.
        capacity: u64,
        /// The complete concatenation (this node's result).
        data: RecoveredData,
    },

    /// A broadcast message is longer than the receive buffer (seed §8). Nothing is lost: the
    /// whole message is in `data`, and it was forwarded whole to the rest of the tree.
    #[error(
        "GRECVW: MESSAGE TRUNCATED: the broadcast message is {bytes} but the buffer holds \
         {capacity}; the complete message is returned in this error and was forwarded whole — \
         pass a buffer of at least {bytes}, or use grecv, which allocates",
        bytes = units(needed, "byte")
    )]
    GrecvwTruncated {
        /// Bytes of the message.
        needed: u64,
        /// Bytes the buffer holds.
        capacity: u64,
        /// The complete message.
        data: RecoveredData,
    },

    /// A long message is longer than the receive buffer (seed §8). Nothing was received:
    /// the message is still pending, and the next long receive that matches it gets it.
    #[error(
        "LRECVW: TRUNCATED MESSAGE: the long message from node {source_node} (type {msg_type}) \
         is {bytes} but the buffer holds {capacity}; nothing was received and the \
         message is still pending — receive it again with a buffer of at least {bytes}, \
         or with lrecv, which allocates",
        bytes = units(needed, "byte")
    )]
    LrecvwTruncated {
        /// Bytes of the message.
        needed: u64,
        /// Bytes the buffer holds.
        capacity: u64,
        /// The sending node.
        source_node: NodeId,
        /// The message's type.
        msg_type: u32,
    },

    /// A sparse-send message is longer than the receive buffer (seed §8). Nothing is lost:
    /// the whole message is in `data`, and it was forwarded to the remaining targets.
    #[error(
        "SPGRCW: TRUNCATED MESSAGE: the message is {bytes} but the buffer holds \
         {capacity}; the complete message is returned in this error and was forwarded to the \
         remaining targets — pass a buffer of at least {bytes}, or use spgrecv, which \
         allocates",
        bytes = units(needed, "byte")
    )]
    SpgrcwTruncated {
        /// Bytes of the message.
        needed: u64,
        /// Bytes the buffer holds.
        capacity: u64,
        /// The complete message.
        data: RecoveredData,
    },

    /// A topology computation failed; for a mesh that does not fit the cube the text starts
    /// with the seed's `MESH: TOO LARGE` (§8). The inner error says what to change.
    #[error("{0}")]
    Topology(#[from] hypercube_topology::TopologyError),
}

impl Error {
    /// Whether this error is a *reaction* to a failure elsewhere rather than a fault of the
    /// node that got it: a peer process went away ([`Error::PeerGone`]) or the job is being
    /// stopped ([`Error::Shutdown`]). When several ranks fail, the launcher blames one that
    /// failed for a cause of its own and names the reactions only with `--verbose`.
    pub fn is_reaction(&self) -> bool {
        matches!(self, Error::PeerGone { .. } | Error::Shutdown(_))
    }

    /// Whether `text` — the line a rank printed as it failed: an error returned from `main`
    /// (`Error: ...`), a panic message (which shows the error's `Debug` form), or the notice a
    /// node prints when the launcher stops it — reports a reaction ([`Error::is_reaction`]).
    /// The phrases it looks for are part of the messages' stable form (a test keeps them
    /// in step with the texts above).
    pub fn is_reaction_text(text: &str) -> bool {
        has_peer_gone_phrase(text)
            || text.contains("PeerGone {")
            || text.contains(SHUTDOWN_PHRASE)
            || text.contains("Shutdown(")
    }

    /// Whether `text` (as for [`Error::is_reaction_text`]) reports an
    /// [`Error::PeerFinished`]: the node waited for a rank that had finished. That is
    /// often the consequence of another rank's early return, so the launcher blames a rank
    /// that failed on its own before one that reports this.
    pub fn is_peer_finished_text(text: &str) -> bool {
        text.contains(PEER_FINISHED_PHRASE) || text.contains("PeerFinished {")
    }

    /// Whether `text` (as for [`Error::is_reaction_text`]) reports an [`Error::LinkDead`]
    /// whose node found itself cut off from the cube (every link of it silent): the launcher
    /// names that node first, since it, not one of its links, is what failed.
    pub fn is_cut_off_text(text: &str) -> bool {
        text.contains(CUT_OFF_PHRASE)
    }

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
            Error::LinkDead {
                node,
                peer,
                dim,
                detail,
            } => Error::LinkDead {
                node: *node,
                peer: *peer,
                dim: *dim,
                detail: detail.clone(),
            },
            Error::PeerFinished { peer, what } => Error::PeerFinished {
                peer: *peer,
                what: what.clone(),
            },
            other => Error::Shutdown(other.to_string()),
        }
    }
}

/// `n` and `unit`, in the plural unless `n` is 1 ("1 byte", "2 bytes").
fn units(n: &impl std::fmt::Display, unit: &str) -> String {
    let n = n.to_string();
    if n == "1" {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// "link dim 1 between node 5 and node 7", lower node first ("the link between node 0 and
/// the host" for the host's).
fn link_name(node: NodeId, peer: NodeId, dim: Option<u32>) -> String {
    match dim {
        Some(d) => format!(
            "link dim {d} between node {} and node {}",
            node.min(peer),
            node.max(peer)
        ),
        None => "the link between node 0 and the host".to_string(),
    }
}

/// The stable part of an [`Error::LinkDead`] detail whose node is cut off ("node 5 is cut
/// off (its links in dims 0, 2 are silent too)").
pub(crate) const CUT_OFF_PHRASE: &str = " is cut off (its links in dims ";

/// The stable part of [`Error::Shutdown`]'s message.
const SHUTDOWN_PHRASE: &str = "the job is shutting down: ";

/// The stable part of [`Error::PeerFinished`]'s message.
const PEER_FINISHED_PHRASE: &str = "has finished (it left its program or called finalize)";

/// Whether `text` holds [`Error::PeerGone`]'s "peer node N is gone (".
fn has_peer_gone_phrase(text: &str) -> bool {
    text.match_indices("peer node ").any(|(i, m)| {
        let rest = text[i + m.len()..].trim_start_matches(|c: char| c.is_ascii_digit());
        rest.len() < text.len() - i - m.len() && rest.starts_with(" is gone (")
    })
}

mod recovered;
#[cfg(test)]
mod tests;

pub use recovered::RecoveredData;
