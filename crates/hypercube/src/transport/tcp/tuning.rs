//! The TCP transport's knobs ([`Tuning`]): their defaults, chosen by measurement on a
//! 2-core VM (`docs/perf/analysis.md`), and the `HYPERCUBE_*` variables that override them
//! (the table in `docs/architecture.md`).

use std::time::Duration;

use crate::error::{Error, Result};

/// Tuning knobs of the TCP transport, read from the environment (`HYPERCUBE_*`).
#[derive(Debug, Clone)]
pub struct Tuning {
    /// Messages up to this many bytes are sent eagerly when credit allows.
    pub eager_limit: usize,
    /// Eager bytes one sender may have outstanding at one receiver.
    pub eager_window: u64,
    /// Bytes of started, unfinished large sends before `send` waits.
    pub max_pending: u64,
    /// Payload bytes per data frame of a large message.
    pub chunk: usize,
    /// How long a waiting call polls before it parks its thread.
    pub spin: Duration,
    /// Whether a polling waiter yields its core between polls (needed when ranks
    /// outnumber cores).
    pub spin_yield: bool,
    /// SO_SNDBUF/SO_RCVBUF of each link in bytes; 0 keeps the kernel's autotuning.
    pub socket_buffer: usize,
    /// While callers drive the sockets, how often the progress thread looks whether they
    /// stopped (the bound on a forwarding delay after a caller goes back to computing,
    /// unless the node forwarded lately or has output queued — then the caller hands the
    /// sockets back at once).
    pub progress_tick: Duration,
    /// The TCP congestion control each link asks for, the first the kernel accepts
    /// (`TCP_CONGESTION`); empty keeps the system's. Default: CUBIC, else Reno — not BBR,
    /// which on loopback reorders segments and made a 1 MiB ping-pong 1.5-2x slower — but
    /// only when ranks do not outnumber cores; otherwise the system's (measured both ways:
    /// `docs/perf/analysis.md`).
    pub congestion: Vec<String>,
    /// How routed frames pass through this node (Grama §2.5.1): cut-through hands a long
    /// frame on as its bytes arrive, store-and-forward receives it whole first.
    pub forwarding: crate::transport::forwarding::Forwarding,
    /// Under cut-through, frames with fewer payload bytes than this are still received
    /// whole before they go on (one read takes them anyway; handing on pieces costs a
    /// write per piece).
    pub cut_through_min: usize,
    /// How long a link may leave bytes unacknowledged (or keepalive probes unanswered, when
    /// idle) before it is declared dead (`TCP_USER_TIMEOUT` and TCP keepalive on every link
    /// socket: `docs/reliability.md`); zero: no bound (the kernel's own, many minutes).
    pub link_timeout: Duration,
    /// The knobs that take other defaults where the start-up probe finds the links to be
    /// wires, as the user set them.
    pub wire: WireKnobs,
}

/// The knobs whose defaults change where the start-up probe finds the links to be wires
/// (`TcpTransport::links_are_wires`), as the user set them: a knob not set takes the wire
/// default there (and the loopback default elsewhere). A chunk, eager limit or
/// cut-through minimum set holds everywhere (its value is [`Tuning`]'s); the push and the
/// unsent limit are used on wires only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WireKnobs {
    /// `HYPERCUBE_CHUNK` was set (its value: [`Tuning::chunk`]).
    pub chunk_set: bool,
    /// `HYPERCUBE_EAGER_LIMIT` was set (its value: [`Tuning::eager_limit`]).
    pub eager_limit_set: bool,
    /// `HYPERCUBE_CUT_THROUGH_MIN` was set (its value: [`Tuning::cut_through_min`]).
    pub cut_through_min_set: bool,
    /// `HYPERCUBE_TCP_PUSH` (0 or 1): push long writes' tails past autocorking.
    pub push: Option<bool>,
    /// `HYPERCUBE_TCP_NOTSENT_LOWAT` (bytes; 0: the kernel's default).
    pub notsent_lowat: Option<usize>,
    /// `HYPERCUBE_TCP_CONGESTION` was set (its value: [`Tuning::congestion`]).
    pub congestion_set: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            eager_limit: 64 << 10,
            eager_window: 4 << 20,
            max_pending: 1 << 30,
            chunk: 16 << 20,
            spin: Duration::from_micros(100),
            spin_yield: false,
            socket_buffer: 0,
            progress_tick: Duration::from_millis(1),
            // Reno is always allowed to an unprivileged process; CUBIC may need
            // CAP_NET_ADMIN when it is not in net.ipv4.tcp_allowed_congestion_control.
            congestion: vec!["cubic".into(), "reno".into()],
            forwarding: crate::transport::forwarding::Forwarding::default(),
            cut_through_min: 64 << 10,
            link_timeout: Duration::from_secs(3),
            wire: WireKnobs::default(),
        }
    }
}

/// `HYPERCUBE_TCP_CONGESTION`: `system` (or nothing) keeps the system's choice; otherwise
/// comma-separated algorithm names, tried in order.
fn parse_congestion(v: &str) -> Result<Vec<String>> {
    let v = v.trim();
    if v.is_empty() || v.eq_ignore_ascii_case("system") {
        return Ok(Vec::new());
    }
    v.split(',')
        .map(|n| {
            let n = n.trim();
            // The kernel's names are short ASCII words (TCP_CA_NAME_MAX = 16 with the NUL).
            if n.is_empty()
                || n.len() > 15
                || !n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                Err(Error::Config(format!(
                    "HYPERCUBE_TCP_CONGESTION={v:?}: {n:?} is not a congestion control name \
                     (use names such as cubic,reno, or `system`)"
                )))
            } else {
                Ok(n.to_string())
            }
        })
        .collect()
}

/// A switch variable, `name` = 1 (`on`: what it does) or 0 (`off`); any other value is an
/// error that says both.
fn parse_switch(name: &str, v: u64, on: &str, off: &str) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::Config(format!(
            "{name}={v}: use 1 ({on}) or 0 ({off})"
        ))),
    }
}

/// `HYPERCUBE_TCP_PUSH`: 1 or 0.
fn parse_push(v: u64) -> Result<bool> {
    parse_switch(
        "HYPERCUBE_TCP_PUSH",
        v,
        "push long writes' tails on wires, the default",
        "leave the kernel's autocorking alone",
    )
}

/// `HYPERCUBE_SPIN_YIELD`: 1 or 0.
fn parse_spin_yield(v: u64) -> Result<bool> {
    parse_switch(
        "HYPERCUBE_SPIN_YIELD",
        v,
        "a polling waiter yields its core between polls, the default with more ranks than \
         cores",
        "it polls without yielding",
    )
}

impl Tuning {
    /// Defaults overridden by `HYPERCUBE_EAGER_LIMIT`, `HYPERCUBE_EAGER_WINDOW`,
    /// `HYPERCUBE_MAX_PENDING`, `HYPERCUBE_CHUNK` (bytes), `HYPERCUBE_SPIN_US`,
    /// `HYPERCUBE_SPIN_YIELD` (0 or 1), `HYPERCUBE_PROGRESS_TICK_US`,
    /// `HYPERCUBE_TCP_CONGESTION` (comma-separated names, tried in order, or `system`),
    /// `HYPERCUBE_FORWARDING` (`cut-through` or `store-and-forward`) and
    /// `HYPERCUBE_CUT_THROUGH_MIN` (bytes), `HYPERCUBE_LINK_TIMEOUT_MS` (0: no bound),
    /// `HYPERCUBE_TCP_PUSH` (0 or 1) and `HYPERCUBE_TCP_NOTSENT_LOWAT` (bytes).
    pub fn from_env(num_nodes: u32) -> Result<Tuning> {
        let mut t = Tuning::default();
        let cores = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        if num_nodes > cores {
            // Oversubscribed: spin politely (yield between polls, so a peer that needs the
            // core gets it) but longer — measured at np = 8 and 16 on 2 cores, a 200 µs
            // spin beat 0, 20, 50 and 100 µs for 8 B and 64 KiB allreduce (commands and
            // figures: docs/perf/analysis.md).
            t.spin = Duration::from_micros(200);
            t.spin_yield = true;
            // Each look is a context switch that takes a core from a rank; 1 ms ticks of
            // 8-16 progress threads cost 15-25% on 8 B collectives at p = 8, 16 (measured
            // against 5, 10 and 20 ms: docs/perf/analysis.md).
            t.progress_tick = Duration::from_millis(10);
            // With more ranks than cores the system's congestion control stays: on this VM
            // (BBR) CUBIC made 64 KiB and 1 MiB collectives at p = 4-16 up to 1.3-1.8x
            // slower on loopback, with more context switches (docs/perf/analysis.md,
            // session 3). On wires CUBIC is asked for all the same (`WIRE_CONGESTION`).
            t.congestion = Vec::new();
        }
        let get = |name: &str| -> Result<Option<u64>> {
            match std::env::var(name) {
                Ok(v) => v.trim().parse::<u64>().map(Some).map_err(|_| {
                    Error::Config(format!("{name}={v:?} is not a non-negative integer"))
                }),
                Err(_) => Ok(None),
            }
        };
        if let Some(v) = get("HYPERCUBE_EAGER_LIMIT")? {
            t.eager_limit = v.min(crate::wire::frame::MAX_FRAME_LEN as u64) as usize;
            t.wire.eager_limit_set = true;
        }
        if let Some(v) = get("HYPERCUBE_EAGER_WINDOW")? {
            t.eager_window = v;
        }
        if let Some(v) = get("HYPERCUBE_MAX_PENDING")? {
            t.max_pending = v;
        }
        if let Some(v) = get("HYPERCUBE_CHUNK")? {
            t.chunk = v.clamp(4096, crate::wire::frame::MAX_FRAME_LEN as u64) as usize;
            t.wire.chunk_set = true;
        }
        if let Some(v) = get("HYPERCUBE_SPIN_US")? {
            t.spin = Duration::from_micros(v);
        }
        if let Some(v) = get("HYPERCUBE_SOCKET_BUFFER")? {
            t.socket_buffer = v as usize;
        }
        if let Some(v) = get("HYPERCUBE_SPIN_YIELD")? {
            t.spin_yield = parse_spin_yield(v)?;
        }
        if let Some(v) = get("HYPERCUBE_PROGRESS_TICK_US")? {
            t.progress_tick = Duration::from_micros(v.max(100));
        }
        if let Ok(v) = std::env::var("HYPERCUBE_TCP_CONGESTION") {
            t.congestion = parse_congestion(&v)?;
            t.wire.congestion_set = true;
        }
        t.forwarding = crate::transport::forwarding::Forwarding::from_env()?;
        if let Some(v) = get("HYPERCUBE_CUT_THROUGH_MIN")? {
            t.cut_through_min = v.min(crate::wire::frame::MAX_FRAME_LEN as u64) as usize;
            t.wire.cut_through_min_set = true;
        }
        if let Some(v) = get("HYPERCUBE_LINK_TIMEOUT_MS")? {
            // TCP_USER_TIMEOUT takes an int of milliseconds.
            t.link_timeout = Duration::from_millis(v.min(i32::MAX as u64));
        }
        if let Some(v) = get("HYPERCUBE_TCP_PUSH")? {
            t.wire.push = Some(parse_push(v)?);
        }
        if let Some(v) = get("HYPERCUBE_TCP_NOTSENT_LOWAT")? {
            t.wire.notsent_lowat = Some(v.min(i32::MAX as u64) as usize);
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_congestion, parse_push, parse_spin_yield, Tuning};

    /// The switches are 0 or 1; another value is an error that names the variable and says
    /// what each value does (`HYPERCUBE_SPIN_YIELD=2` used to mean 1, silently).
    #[test]
    fn switches_are_zero_or_one() {
        for parse in [parse_push, parse_spin_yield] {
            assert!(!parse(0).unwrap());
            assert!(parse(1).unwrap());
        }
        let e = parse_push(2).unwrap_err().to_string();
        assert!(
            e.contains("HYPERCUBE_TCP_PUSH=2") && e.contains("use 1"),
            "{e}"
        );
        let e = parse_spin_yield(2).unwrap_err().to_string();
        assert!(
            e.contains("HYPERCUBE_SPIN_YIELD=2") && e.contains("or 0 (it polls"),
            "{e}"
        );
    }

    /// Links ask for a congestion control only when the ranks do not outnumber the cores
    /// (with more ranks, the system's measured faster for collectives).
    #[test]
    fn congestion_control_is_asked_for_only_when_cores_suffice() {
        if std::env::var_os("HYPERCUBE_TCP_CONGESTION").is_some() {
            return; // the user's choice overrides both cases
        }
        assert_eq!(
            Tuning::from_env(1).unwrap().congestion,
            Tuning::default().congestion
        );
        assert!(!Tuning::default().congestion.is_empty());
        assert!(Tuning::from_env(u32::MAX).unwrap().congestion.is_empty());
    }

    #[test]
    fn congestion_names_parse() {
        assert_eq!(parse_congestion("system").unwrap(), Vec::<String>::new());
        assert_eq!(parse_congestion("  ").unwrap(), Vec::<String>::new());
        assert_eq!(parse_congestion("cubic, reno").unwrap(), ["cubic", "reno"]);
        let e = parse_congestion("cubic,,reno").unwrap_err().to_string();
        assert!(e.contains("HYPERCUBE_TCP_CONGESTION"), "{e}");
        assert!(parse_congestion("bbr;rm").is_err());
        assert!(parse_congestion("a_name_longer_than_15").is_err());
    }
}
