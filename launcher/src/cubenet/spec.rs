//! What an emulated network is, before anything is built: its [`Spec`] (size, link rate,
//! names), the addresses and interface names every node gets, and where a named
//! namespace lives.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use anyhow::{bail, Result};

use super::rate::Rate;

/// The largest cube `hcrun --link-rate` and `cubenet` build (256 namespaces, 1024 links;
/// the build takes about a minute).
pub const MAX_EMULATED_DIM: u32 = 8;

/// The `latency` bound of every link's token bucket: how long a packet may wait in the
/// bucket's queue before it is dropped (bounds the queue to `rate·latency + burst`).
pub const TBF_LATENCY: &str = "100ms";
/// [`TBF_LATENCY`] in seconds.
const TBF_LATENCY_S: f64 = 0.1;

/// The link timeout of the runtime (`HYPERCUBE_LINK_TIMEOUT_MS`) when nothing says otherwise.
const DEFAULT_LINK_TIMEOUT_S: f64 = 3.0;

/// The cube addresses: `10.201.0.0/16`, node r at `10.201.0.0 + r + 1`.
const CUBE_BASE: u32 = 0x0AC9_0000;
/// The management network: `10.202.0.0/16`; the hub at `.0.1`, node r at `+ r + 2`.
pub(super) const MGMT_BASE: u32 = 0x0ACA_0000;
/// The management network's prefix length.
pub(super) const MGMT_PREFIX: u8 = 16;

/// What to build.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Cube dimension (0..=[`MAX_EMULATED_DIM`]).
    pub dim: u32,
    /// The rate of every link, each direction.
    pub rate: Rate,
    /// Token-bucket depth in bytes.
    pub burst: u64,
    /// Prefix of every name made: namespaces `<name>-<r>`, the bridge `<name>br`, the hub
    /// ends of the management veths `<name>m<r>`.
    pub name: String,
    /// Also route between non-neighbours in the kernel (e-cube order) and forward.
    pub kernel_routes: bool,
}

impl Spec {
    /// The link timeout hcrun gives the ranks on this network (`HYPERCUBE_LINK_TIMEOUT_MS`,
    /// unless the user set it): the runtime's 3 s plus three times what a full token-bucket
    /// queue (`burst + rate·latency`) takes to drain. The kernel counts a byte as
    /// unacknowledged from when it was first sent, and on a slow link a byte waits in the
    /// sending end's queue behind the whole queue, which `tbf` releases in GSO segments of
    /// up to 64 KiB — at 100 kbit/s one segment every 5 s, with no acknowledgement between
    /// (`docs/reliability.md`). 3.3 s at 100 Mbit/s, 19 s at 100 kbit/s.
    pub fn link_timeout(&self) -> std::time::Duration {
        let bytes_per_sec = (self.rate.bits_per_sec as f64 / 8.0).max(1.0);
        let queue = self.burst as f64 + bytes_per_sec * TBF_LATENCY_S;
        std::time::Duration::from_secs_f64(DEFAULT_LINK_TIMEOUT_S + 3.0 * queue / bytes_per_sec)
    }
}

/// The largest name: interface names are at most 15 bytes (`<name>m<r>`, r < 256).
pub const MAX_NAME: usize = 8;

/// Check a network's name: lowercase letters and digits, starting with a letter.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !ok {
        bail!(
            "the network name {name:?} must be 1 to {MAX_NAME} lowercase letters or digits, \
             starting with a letter (it prefixes interface names, which are at most 15 bytes)"
        );
    }
    Ok(())
}

impl Spec {
    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        1 << self.dim
    }

    /// Node r's namespace.
    pub fn ns(&self, r: u32) -> String {
        format!("{}-{r}", self.name)
    }

    /// The hub's bridge.
    pub fn bridge(&self) -> String {
        format!("{}br", self.name)
    }

    /// The hub end of node r's management veth.
    pub(super) fn hub_end(&self, r: u32) -> String {
        format!("{}m{r}", self.name)
    }
}

/// Node r's cube address (on its `cube` interface; its links are bound to it).
pub fn cube_addr(r: u32) -> Ipv4Addr {
    Ipv4Addr::from(CUBE_BASE + r + 1)
}

/// Node r's management address.
pub fn mgmt_addr(r: u32) -> Ipv4Addr {
    Ipv4Addr::from(MGMT_BASE + r + 2)
}

/// The hub's management address (where `hcrun` listens for the control channel).
pub fn hub_addr() -> Ipv4Addr {
    Ipv4Addr::from(MGMT_BASE + 1)
}

/// The management network, as `A.B.C.D/N` (for Open MPI's `oob_tcp_if_include`).
pub fn mgmt_net() -> String {
    format!("{}/{MGMT_PREFIX}", Ipv4Addr::from(MGMT_BASE))
}

/// The edge interface of dimension k (the same name at both ends).
pub fn edge_if(k: u32) -> String {
    format!("dim{k}")
}

/// The interface that holds a node's cube address.
pub const CUBE_IF: &str = "cube";

/// Where `ip netns` keeps a named namespace.
pub fn netns_path(ns: &str) -> PathBuf {
    PathBuf::from("/run/netns").join(ns)
}
