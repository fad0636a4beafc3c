//! Which address a rank publishes for its link listener (and binds it on).
//!
//! In order, the first that applies:
//! 1. `HYPERCUBE_ADDR` — that address, as given;
//! 2. `HYPERCUBE_IFACE` — the first IPv4 address (else IPv6) of that interface;
//! 3. every rank on one host — loopback;
//! 4. the interface the process manager was told to use (Hydra's `-iface`, passed on as
//!    `MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE`), if this host has it;
//! 5. the source address of the route toward the launch host (Slurm's
//!    `SLURM_LAUNCH_NODE_IPADDR`, Hydra's proxy `--control-port`, or `PMI_PORT`'s host) —
//!    the address the kernel would use to reach it, asked with an unconnected UDP socket
//!    (no packet is sent);
//! 6. the source address of the default route;
//! 7. the first non-loopback, non-link-local address that is up.
//!
//! Never a reverse-resolved host name: a host whose name resolves to `127.0.1.1` (Debian's
//! default) is the classic cause of multi-node jobs that hang at start-up.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, ToSocketAddrs, UdpSocket};

use crate::error::{Error, Result};

/// Environment variable: the address to publish, overriding every rule.
pub(crate) use crate::wire::control::ENV_ADDR;
/// Environment variable: the interface whose address to publish.
pub(crate) const ENV_IFACE: &str = "HYPERCUBE_IFACE";

/// The chosen address and the rule that chose it (for the debug log and errors).
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    pub ip: IpAddr,
    pub why: String,
}

/// Where the launch host is, as the process manager tells it.
pub(crate) fn launch_host() -> Option<String> {
    if let Ok(ip) = std::env::var("SLURM_LAUNCH_NODE_IPADDR") {
        if !ip.trim().is_empty() {
            return Some(ip.trim().to_string());
        }
    }
    if let Ok(p) = std::env::var("PMI_PORT") {
        if let Some((h, _)) = p.rsplit_once(':') {
            return Some(h.to_string());
        }
    }
    hydra_control_host()
}

/// Hydra starts ranks from `hydra_pmi_proxy --control-port HOST:PORT ...`: HOST is
/// where `mpiexec` runs, as the proxy itself reached it.
fn hydra_control_host() -> Option<String> {
    let ppid = std::os::unix::process::parent_id();
    let cmdline = std::fs::read(format!("/proc/{ppid}/cmdline")).ok()?;
    let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
    let first = std::str::from_utf8(args.first()?).ok()?;
    if !first.ends_with("hydra_pmi_proxy") {
        return None;
    }
    let i = args.iter().position(|a| *a == b"--control-port")?;
    let hp = std::str::from_utf8(args.get(i + 1)?).ok()?;
    let (h, _) = hp.rsplit_once(':')?;
    Some(h.trim_matches(['[', ']']).to_string())
}

/// Choose the address to publish. `single_host`: every rank of the job runs here.
pub(crate) fn choose(single_host: bool) -> Result<Choice> {
    if let Ok(a) = std::env::var(ENV_ADDR) {
        let ip: IpAddr = a.trim().parse().map_err(|_| {
            Error::Config(format!(
                "{ENV_ADDR}={a:?} is not an IP address (e.g. 10.1.2.3 or fd00::3)"
            ))
        })?;
        return Ok(Choice {
            ip,
            why: ENV_ADDR.to_string(),
        });
    }
    if let Ok(name) = std::env::var(ENV_IFACE) {
        let name = name.trim();
        return match iface_addr(name) {
            Some(ip) => Ok(Choice {
                ip,
                why: format!("{ENV_IFACE}={name}"),
            }),
            None => Err(Error::Config(format!(
                "{ENV_IFACE}={name:?}: this host has no interface of that name with an \
                 address that is up; it has: {}",
                describe_interfaces()
            ))),
        };
    }
    if single_host {
        return Ok(Choice {
            ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            why: "every rank runs on this host".into(),
        });
    }
    for var in [
        "MPIR_CVAR_NEMESIS_TCP_NETWORK_IFACE",
        "MPIR_CVAR_CH4_OFI_IFNAME",
    ] {
        if let Ok(name) = std::env::var(var) {
            match iface_addr(name.trim()) {
                Some(ip) => {
                    return Ok(Choice {
                        ip,
                        why: format!("the launcher's interface {name} ({var})"),
                    })
                }
                None => tracing::debug!("{var}={name}: no such interface here; ignored"),
            }
        }
    }
    if let Some(host) = launch_host() {
        match route_source(&host) {
            Some(ip) if !ip.is_loopback() => {
                return Ok(Choice {
                    ip,
                    why: format!("the route toward the launch host {host}"),
                })
            }
            other => tracing::debug!("route toward the launch host {host}: {other:?}; not used"),
        }
    }
    for probe in ["192.0.2.1", "2001:db8::1"] {
        if let Some(ip) = route_source(probe).filter(|ip| !ip.is_loopback()) {
            return Ok(Choice {
                ip,
                why: "the default route".into(),
            });
        }
    }
    if let Some(ip) = interfaces()
        .into_iter()
        .map(|(_, ip)| ip)
        .find(|ip| !ip.is_loopback() && !is_link_local(ip))
    {
        return Ok(Choice {
            ip,
            why: "the first address of an interface that is up".into(),
        });
    }
    Err(Error::Config(format!(
        "the ranks of this job run on several hosts, but this host has no address other \
         hosts could reach (interfaces: {}); set {ENV_IFACE} or {ENV_ADDR}",
        describe_interfaces()
    )))
}

/// The source address the kernel picks toward `host` (a name or address); no packet is
/// sent (connecting a UDP socket only looks up the route).
fn route_source(host: &str) -> Option<IpAddr> {
    let target = (host, 9).to_socket_addrs().ok()?.next()?;
    let bind: SocketAddr = if target.is_ipv4() {
        "0.0.0.0:0".parse().ok()?
    } else {
        "[::]:0".parse().ok()?
    };
    let s = UdpSocket::bind(bind).ok()?;
    s.connect(target).ok()?;
    Some(s.local_addr().ok()?.ip())
}

fn is_link_local(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.is_link_local(),
        IpAddr::V6(a) => (a.segments()[0] & 0xffc0) == 0xfe80,
    }
}

/// The first IPv4 address of interface `name`, else its first IPv6 address.
fn iface_addr(name: &str) -> Option<IpAddr> {
    let all: Vec<IpAddr> = interfaces()
        .into_iter()
        .filter(|(n, _)| n == name)
        .map(|(_, ip)| ip)
        .collect();
    all.iter()
        .find(|ip| ip.is_ipv4())
        .or_else(|| all.iter().find(|ip| !is_link_local(ip)))
        .copied()
}

fn describe_interfaces() -> String {
    let all = interfaces();
    if all.is_empty() {
        return "none".into();
    }
    all.iter()
        .map(|(n, ip)| format!("{n} {ip}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every (interface, address) of interfaces that are up, IPv4 first, in the kernel's order.
pub(crate) fn interfaces() -> Vec<(String, IpAddr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we walk read-only and free once.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut p = head;
        while !p.is_null() {
            let ifa = &*p;
            p = ifa.ifa_next;
            if ifa.ifa_addr.is_null() || ifa.ifa_flags & libc::IFF_UP as u32 == 0 {
                continue;
            }
            let name = std::ffi::CStr::from_ptr(ifa.ifa_name)
                .to_string_lossy()
                .into_owned();
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sa = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    let ip = Ipv4Addr::from(u32::from_be(sa.sin_addr.s_addr));
                    out.push((name, IpAddr::V4(ip)));
                }
                libc::AF_INET6 => {
                    let sa = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    out.push((name, IpAddr::V6(sa.sin6_addr.s6_addr.into())));
                }
                _ => {}
            }
        }
        libc::freeifaddrs(head);
    }
    out.sort_by_key(|(_, ip)| ip.is_ipv6());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_listed_and_routes_to_itself() {
        assert!(interfaces().iter().any(|(_, ip)| ip.is_loopback()));
        assert_eq!(
            route_source("127.0.0.1"),
            Some(IpAddr::V4(Ipv4Addr::LOCALHOST))
        );
        assert_eq!(iface_addr("lo"), Some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        assert_eq!(iface_addr("no-such-interface-here"), None);
    }
}
