//! The emulated interconnect: a hypercube network built of Linux network namespaces, one per
//! node, and one veth pair per cube edge, each end shaped by a token bucket (`tbf`), so that
//! links — not cores — are the bottleneck, as on the iPSC (docs/cubenet.md).
//!
//! ```text
//!   namespace of node a                               namespace of node a^2^k
//!   ┌─────────────────────────────┐                   ┌─────────────────────────────┐
//!   │ cube  10.201.x.y/32 (+cubeb)│                   │ cube  ...                   │
//!   │ dim0 … dim{d-1}  ──tbf──────┼── veth, edge k ───┼──────tbf── dimk              │
//!   │ mgmt  10.202.x.y/16         │                   │ mgmt                         │
//!   └──────────┬──────────────────┘                   └──────────┬──────────────────┘
//!              └────────────── bridge `<name>br` in the hub (10.202.0.1) ────┘
//! ```
//!
//! A node's **cube address** sits on `cube` (one end of a veth pair whose other end,
//! `cubeb`, stays in the namespace: this kernel has no dummy links). For every neighbour
//! there is one host route, `neighbour/32 dev dimk`, so a connection to a neighbour's cube
//! address crosses exactly the edge between them, and (without kernel routes) a
//! non-neighbour is unreachable: only the ranks' own forwarding carries traffic further.
//! With [`Spec::kernel_routes`] (the variant for MPI peers) every node also has e-cube
//! routes (lowest differing bit first) to every other node and forwards (`ip_forward=1`),
//! so the kernel carries multi-hop traffic over the same shaped links. The management
//! network (`mgmt`, a bridge in the hub namespace) carries only the control channel; it
//! is not shaped and never carries cube traffic.
//!
//! `hcrun --link-rate` builds the network inside namespaces private to the job
//! ([`enter_private`]): the kernel removes all of it when the last process of the job
//! ends, however it ends (also after `kill -9`), so nothing can be left behind.
//! The `cubenet` command builds the same network under names in the host, where it stays
//! until `cubenet down` (for running other programs, such as Open MPI, on it).

pub mod private;
pub mod rate;
mod spec;

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

use spec::{MGMT_BASE, MGMT_PREFIX};

pub use private::{enter_in_child, enter_private, open_ns, Privilege};
pub use rate::{parse_burst, parse_rate, Rate};
pub use spec::{
    check_name, cube_addr, edge_if, hub_addr, mgmt_addr, mgmt_net, netns_path, Spec, CUBE_IF,
    MAX_EMULATED_DIM, MAX_NAME, TBF_LATENCY,
};

/// Run a tool with `input` as its batch on stdin; fail with what it said.
fn batch(tool: &str, args: &[&str], input: &str, what: &str) -> Result<()> {
    let mut child = Command::new(tool)
        .args(args)
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| {
            format!("running `{tool}` ({what}): is iproute2 installed (Debian package iproute2)?")
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A tool that stops reading early reports why on stderr; keep that, not EPIPE.
        let _ = stdin.write_all(input.as_bytes());
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "{what} failed: `{tool} {} -batch -` said: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Run one command; fail with what it said.
fn run(tool: &str, args: &[&str], what: &str) -> Result<()> {
    let out = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running `{tool}` ({what})"))?;
    if !out.status.success() {
        bail!(
            "{what} failed: `{tool} {}` said: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Refuse to build where another emulated network already holds the management range in
/// this namespace: two bridges with the hub's address would split the control traffic
/// between them and break both jobs (`hcrun`'s own network lives in a namespace of its own,
/// so only `cubenet up` can meet this).
fn check_mgmt_free() -> Result<()> {
    let out = Command::new("ip")
        .args(["-o", "-4", "addr", "show"])
        .stdin(Stdio::null())
        .output()
        .context(
            "running `ip -o -4 addr show`: is iproute2 installed (Debian package iproute2)?",
        )?;
    let text = String::from_utf8_lossy(&out.stdout);
    if let Some(dev) = mgmt_holder(&text) {
        bail!(
            "the management range {} is already in use in this network namespace, on {dev} \
             (another emulated network: take it down first with `cubenet down --name NAME`, \
             whose bridge is NAMEbr)",
            mgmt_net()
        );
    }
    Ok(())
}

/// The interface in `ip -o -4 addr show` output that holds an address of the management
/// range, if any.
fn mgmt_holder(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        let dev = words.nth(1)?;
        let addr = words.skip_while(|w| *w != "inet").nth(1)?;
        let ip: Ipv4Addr = addr.split('/').next()?.parse().ok()?;
        (u32::from(ip) >> (32 - MGMT_PREFIX) == MGMT_BASE >> (32 - MGMT_PREFIX))
            .then(|| dev.to_string())
    })
}

/// Build the network in the current ("hub") network namespace, whose `/run/netns` must be
/// writable. On error, what was built so far is left for the caller to remove
/// ([`teardown`] or the end of a private namespace).
pub fn build(spec: &Spec) -> Result<()> {
    check_mgmt_free()?;
    let n = spec.nodes();
    let bridge = spec.bridge();
    // 1. The namespaces (one `ip` for all: `netns add` returns to the caller's namespace).
    let mut s = String::new();
    for r in 0..n {
        writeln!(s, "netns add {}", spec.ns(r))?;
    }
    batch("ip", &[], &s, "creating the nodes' network namespaces")?;

    // 2. In the hub: the management bridge, every node's management veth and every edge.
    let mut s = String::new();
    writeln!(s, "link set lo up")?;
    writeln!(s, "link add name {bridge} type bridge")?;
    writeln!(s, "addr add {}/{MGMT_PREFIX} dev {bridge}", hub_addr())?;
    writeln!(s, "link set {bridge} up")?;
    for r in 0..n {
        let hub = spec.hub_end(r);
        writeln!(
            s,
            "link add name {hub} type veth peer name mgmt netns {}",
            spec.ns(r)
        )?;
        writeln!(s, "link set {hub} master {bridge} up")?;
    }
    for a in 0..n {
        for k in 0..spec.dim {
            let b = a ^ (1 << k);
            if a < b {
                let e = edge_if(k);
                writeln!(
                    s,
                    "link add name {e} netns {} type veth peer name {e} netns {}",
                    spec.ns(a),
                    spec.ns(b)
                )?;
            }
        }
    }
    batch("ip", &[], &s, "creating the links")?;

    // 3. In every node: addresses, routes, sysctls, and the token buckets.
    for r in 0..n {
        let ns = spec.ns(r);
        let me = cube_addr(r);
        let mut s = String::new();
        writeln!(s, "link set lo up")?;
        writeln!(s, "link add name {CUBE_IF} type veth peer name {CUBE_IF}b")?;
        writeln!(s, "addr add {me}/32 dev {CUBE_IF}")?;
        writeln!(s, "link set {CUBE_IF}b up")?;
        writeln!(s, "link set {CUBE_IF} up")?;
        writeln!(s, "addr add {}/{MGMT_PREFIX} dev mgmt", mgmt_addr(r))?;
        writeln!(s, "link set mgmt up")?;
        for k in 0..spec.dim {
            writeln!(s, "link set {} up", edge_if(k))?;
        }
        for k in 0..spec.dim {
            let b = r ^ (1 << k);
            writeln!(
                s,
                "route add {}/32 dev {} src {me}",
                cube_addr(b),
                edge_if(k)
            )?;
        }
        if spec.kernel_routes {
            for b in 0..n {
                let diff = r ^ b;
                if b == r || diff.is_power_of_two() {
                    continue;
                }
                let k = diff.trailing_zeros();
                let via = cube_addr(r ^ (1 << k));
                writeln!(
                    s,
                    "route add {}/32 via {via} dev {} src {me}",
                    cube_addr(b),
                    edge_if(k)
                )?;
            }
        }
        batch("ip", &["-n", &ns], &s, &format!("configuring node {r}"))?;
        let mut sysctl = vec![
            "netns",
            "exec",
            &ns,
            "sysctl",
            "-qw",
            // No IPv6: no link-local addresses, router solicitations or MLD reports on
            // the shaped links, and nothing for an MPI runtime to wire itself over.
            "net.ipv6.conf.all.disable_ipv6=1",
            "net.ipv6.conf.default.disable_ipv6=1",
        ];
        if spec.kernel_routes {
            // e-cube routes are not symmetric (a→b and b→a take different paths), so
            // reverse-path filtering would drop forwarded packets.
            sysctl.extend([
                "net.ipv4.ip_forward=1",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
            ]);
        }
        run("ip", &sysctl, &format!("setting node {r}'s sysctls"))?;
        if spec.dim > 0 {
            let mut s = String::new();
            for k in 0..spec.dim {
                writeln!(
                    s,
                    "qdisc add dev {} root tbf rate {} burst {} latency {TBF_LATENCY}",
                    edge_if(k),
                    spec.rate.tc(),
                    spec.burst
                )?;
            }
            batch(
                "tc",
                &["-n", &ns],
                &s,
                &format!("shaping node {r}'s links (tc qdisc tbf)"),
            )?;
        }
    }
    Ok(())
}

/// The namespaces of the network called `name` that exist now (`<name>-<r>` in
/// `/run/netns`, nothing else), by rank.
pub fn existing_nodes(name: &str) -> Vec<u32> {
    let prefix = format!("{name}-");
    let mut out: Vec<u32> = std::fs::read_dir("/run/netns")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let f = e.file_name().into_string().ok()?;
            let r = f.strip_prefix(&prefix)?;
            (r.chars().all(|c| c.is_ascii_digit()) && !r.is_empty()).then(|| r.parse().ok())?
        })
        .collect();
    out.sort_unstable();
    out
}

/// Remove the network called `name` built under names ([`build`] in the host's
/// namespace): its nodes' namespaces (after killing the processes still in them — only
/// those), which takes their veths along, and its bridge. Only names of that network are
/// touched. Idempotent; returns how many namespaces it removed.
pub fn teardown(name: &str) -> Result<usize> {
    let mut errors = Vec::new();
    let nodes = existing_nodes(name);
    for r in &nodes {
        let ns = format!("{name}-{r}");
        if let Ok(out) = Command::new("ip").args(["netns", "pids", &ns]).output() {
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if let Ok(pid) = pid.parse::<i32>() {
                    // SAFETY: kill(2) on a pid that `ip netns pids` listed in our namespace.
                    unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
            }
        }
        // The hub's end of the management veth first: deleting it takes its peer along
        // at once, where a deleted namespace frees its interfaces only later (the kernel
        // destroys namespaces asynchronously), and the caller may look right away.
        let _ = Command::new("ip")
            .args(["link", "delete", &format!("{name}m{r}")])
            .stderr(Stdio::null())
            .status();
        if let Err(e) = run("ip", &["netns", "delete", &ns], "deleting a namespace") {
            errors.push(format!("{e:#}"));
        }
    }
    let bridge = format!("{name}br");
    if std::path::Path::new("/sys/class/net")
        .join(&bridge)
        .exists()
    {
        if let Err(e) = run("ip", &["link", "delete", &bridge], "deleting the bridge") {
            errors.push(format!("{e:#}"));
        }
    }
    if errors.is_empty() {
        Ok(nodes.len())
    } else {
        bail!("{}", errors.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_names() {
        assert_eq!(cube_addr(0).to_string(), "10.201.0.1");
        assert_eq!(cube_addr(255).to_string(), "10.201.1.0");
        assert_eq!(mgmt_addr(0).to_string(), "10.202.0.2");
        assert_eq!(hub_addr().to_string(), "10.202.0.1");
        assert_eq!(mgmt_net(), "10.202.0.0/16");
        let ip = "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n\
                  7: hcbenchbr    inet 10.202.0.1/16 brd 10.202.255.255 scope global hcbenchbr\n";
        assert_eq!(mgmt_holder(ip).as_deref(), Some("hcbenchbr"));
        assert_eq!(
            mgmt_holder("2: eth0    inet 10.203.0.1/16 scope global eth0\n"),
            None
        );
        let s = Spec {
            dim: 8,
            rate: parse_rate("1gbit").unwrap(),
            burst: 96 * 1024,
            name: "abcdefgh".into(),
            kernel_routes: false,
        };
        assert!(s.hub_end(255).len() <= 15);
        assert!(s.bridge().len() <= 15);
        check_name("cube").unwrap();
        for bad in ["", "Cube", "9cube", "cube-1", "abcdefghi"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_link_timeout_grows_with_the_queue_a_slow_link_holds() {
        let spec = |rate: &str, burst: u64| Spec {
            dim: 3,
            rate: parse_rate(rate).unwrap(),
            burst,
            name: "cube".into(),
            kernel_routes: false,
        };
        let fast = spec("100mbit", 96 * 1024).link_timeout().as_secs_f64();
        assert!((3.2..3.4).contains(&fast), "{fast}");
        let slow = spec("100kbit", 66 * 1024).link_timeout().as_secs_f64();
        // Over three 64 KiB segments at 12.5 kB/s: 3 s + 3 x (67 584 + 1 250) / 12 500.
        assert!((19.0..20.0).contains(&slow), "{slow}");
        assert_eq!(spec("1tbit", 96 * 1024).link_timeout().as_secs(), 3);
    }
}
