//! # hypercube-bench
//!
//! Benchmarks of the `hypercube` runtime that measure what the OSU Micro-Benchmarks
//! measure, with the same method and output format as the crate's own MPI benchmark
//! (`crates/bench/c/osu_mpi.c`), so that a line of ours and a line of Open MPI's can be put
//! side by side:
//!
//! - `osu` (node program, run through the launcher `hcrun`): point-to-point latency and
//!   bandwidth, every collective, and the iPSC utilities; `osu --help`.
//! - `floor` (stand-alone): raw loopback TCP between two processes, no library — the floor
//!   any message-passing runtime on this machine sits on; `floor --help`.
//! - `hypercube-bench compare` (or `scripts/compare.sh`): runs ours, the floors and Open
//!   MPI (`osu_mpi` under `mpirun.openmpi`, TCP and shared memory) for several cube sizes
//!   and writes `docs/perf/results.csv`, `docs/perf/README.md` and SVG plots.
//! - `hypercube-bench cubenet` (or `scripts/cubenet-compare.sh`): ours and Open MPI on the
//!   same emulated hypercube network of shaped links, beside the link bound ([`cubenet`],
//!   [`linkbound`]); writes `docs/perf/cubenet.md` and `docs/perf/cubenet/`.
//! - `hypercube-bench routing`: planned against e-cube routes and Open MPI's
//!   `MPI_Alltoallv` on many-to-many workloads (transpose, bit reversal, the thesis's
//!   random tables) on the emulated network ([`routing`]; node programs `m2m` and
//!   `crates/bench/c/m2m_mpi.c`); writes `docs/perf/routing.md`.
//! - `hypercube-bench mpi NP tcp|shm BENCH ...` and `hypercube-bench c-floor`: one run of
//!   the C peers by hand ([`peers`]: built on first use into `target/bench-c/`).
//!
//! This library holds what the programs share: the OSU conventions ([`osu`]), the list of
//! benchmarks ([`Bench`]), the C peers ([`peers`]), the comparison driver ([`compare`]),
//! and the report with its SVG plots ([`report`], drawn with `hypercube-plot`).
#![deny(missing_docs)]

pub mod compare;
pub mod cubenet;
pub mod linkbound;
pub mod lock;
pub mod model_fit;
pub mod osu;
pub mod peers;
pub mod report;
pub mod routing;

use std::fmt;
use std::str::FromStr;

/// The congestion controls hypercube's links ask for by default, comma-separated (the first
/// the kernel accepts is used): the floor's default and the report's note, from the one
/// source, `Tuning::default()`.
pub fn links_congestion() -> String {
    hypercube::transport::Tuning::default().congestion.join(",")
}

/// The first line of a command's output, or `unknown` (for the description of a run).
pub fn shell_line(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The 1-minute load average, from /proc/loadavg.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// This machine in one line: cores, CPU model, kernel.
pub fn machine_line() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores ({cpu}), {}", shell_line("uname", &["-sr"]))
}

/// `CLOCK_MONOTONIC` in ns: one clock for every process on the machine, so times taken
/// in different processes of a run compare (`Instant` is the same clock but does not show
/// its value).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into a live, exclusively borrowed struct.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask a TCP socket (`fd`, a listener too) for the first congestion control of the
/// comma-separated `names` the kernel takes; `system` leaves the machine's default. None
/// taken is an error: a figure measured under another algorithm than asked for would
/// mislead. (The floor uses it; the runtime's own is
/// `transport::tcp::sockopt`, which falls back silently.)
pub fn set_congestion(fd: std::os::fd::RawFd, names: &str) -> anyhow::Result<()> {
    if names.trim() == "system" {
        return Ok(());
    }
    let mut last = None;
    for name in names.split(',').map(str::trim) {
        // SAFETY: setsockopt on the caller's open socket with a pointer to a live byte
        // buffer of the length given.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                name.as_ptr().cast(),
                name.len() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        last = Some(std::io::Error::last_os_error());
    }
    anyhow::bail!(
        "the kernel took none of the congestion controls {names:?}{} (see \
         /proc/sys/net/ipv4/tcp_available_congestion_control, or use `system`)",
        last.map(|e| format!(": {e}")).unwrap_or_default()
    )
}

/// The floors' standard set (`floor` and `hypercube-bench c-floor` without arguments):
/// `(mode, size in bytes, iterations)`, ping-pongs spinning and blocking at 8 B, 64 KiB and
/// 1 MiB, then streams of 64 KiB and 4 MiB writes.
pub const FLOOR_SET: [(&str, u64, u64); 8] = [
    ("spin", 8, 20000),
    ("spin", 65536, 2000),
    ("spin", 1048576, 200),
    ("pingpong", 8, 20000),
    ("pingpong", 65536, 2000),
    ("pingpong", 1048576, 200),
    ("stream", 65536, 20000),
    ("stream", 4194304, 500),
];

/// One benchmark of the `osu` program: its first argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bench {
    /// Ping-pong between ranks 0 and 1: half the round trip (µs).
    Latency,
    /// 64 messages in flight from rank 0 to 1, then a 4-byte ack (MB/s).
    Bw,
    /// One-to-all broadcast from rank 0 (`MPI_Bcast`).
    Bcast,
    /// Sum of f32 vectors to rank 0 (`MPI_Reduce`).
    Reduce,
    /// Sum of f32 vectors to everyone (`MPI_Allreduce`).
    Allreduce,
    /// All-to-all broadcast of SIZE bytes per rank (`MPI_Allgather`).
    Allgather,
    /// Reduce-scatter: p·SIZE bytes in, SIZE bytes out per rank (`MPI_Reduce_scatter`).
    ReduceScatter,
    /// All-to-all personalized, SIZE bytes per pair (`MPI_Alltoall`).
    Alltoall,
    /// SIZE bytes from rank 0 to each rank (`MPI_Scatter`).
    Scatter,
    /// SIZE bytes from each rank to rank 0 (`MPI_Gather`).
    Gather,
    /// Inclusive prefix sum of f32 vectors (`MPI_Scan`).
    Scan,
    /// Barrier (size 0 only).
    Barrier,
    /// Circular shift by one: rank r sends SIZE bytes to rank r + 1 (mod p) and receives
    /// from r − 1 (`MPI_Sendrecv`; ours: `shift` in rank order, Grama §4.6).
    Shift,
    /// iPSC GSENDW/GRECVW: global broadcast from node 0 over the spanning tree.
    Gsendw,
    /// iPSC GOP: global sum of f32 vectors at node 0.
    Gop,
    /// iPSC GCAT: global concatenation of SIZE bytes per node at node 0.
    Gcat,
    /// iPSC SPGSNW/SPGRCW: sparse global send from node 0 to every other node.
    Spgsnw,
}

impl Bench {
    /// The names of `benches`, space-separated (for the description of a run).
    pub fn names(benches: &[Bench]) -> String {
        benches
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Every benchmark, in the order of the report.
    pub const ALL: [Bench; 17] = [
        Bench::Latency,
        Bench::Bw,
        Bench::Bcast,
        Bench::Reduce,
        Bench::Allreduce,
        Bench::Allgather,
        Bench::ReduceScatter,
        Bench::Alltoall,
        Bench::Scatter,
        Bench::Gather,
        Bench::Scan,
        Bench::Barrier,
        Bench::Shift,
        Bench::Gsendw,
        Bench::Gop,
        Bench::Gcat,
        Bench::Spgsnw,
    ];

    /// The benchmarks that `osu_mpi` also has (the MPI-comparable set).
    pub const MPI: [Bench; 13] = [
        Bench::Latency,
        Bench::Bw,
        Bench::Bcast,
        Bench::Reduce,
        Bench::Allreduce,
        Bench::Allgather,
        Bench::ReduceScatter,
        Bench::Alltoall,
        Bench::Scatter,
        Bench::Gather,
        Bench::Scan,
        Bench::Barrier,
        Bench::Shift,
    ];

    /// The name on the command line (and in `osu_mpi`).
    pub fn name(self) -> &'static str {
        match self {
            Bench::Latency => "latency",
            Bench::Bw => "bw",
            Bench::Bcast => "bcast",
            Bench::Reduce => "reduce",
            Bench::Allreduce => "allreduce",
            Bench::Allgather => "allgather",
            Bench::ReduceScatter => "reduce_scatter",
            Bench::Alltoall => "alltoall",
            Bench::Scatter => "scatter",
            Bench::Gather => "gather",
            Bench::Scan => "scan",
            Bench::Barrier => "barrier",
            Bench::Shift => "shift",
            Bench::Gsendw => "gsendw",
            Bench::Gop => "gop",
            Bench::Gcat => "gcat",
            Bench::Spgsnw => "spgsnw",
        }
    }

    /// True for the point-to-point tests (ranks 0 and 1 only).
    pub fn is_p2p(self) -> bool {
        matches!(self, Bench::Latency | Bench::Bw)
    }

    /// True if `osu_mpi` has this benchmark.
    pub fn in_mpi(self) -> bool {
        Bench::MPI.contains(&self)
    }

    /// The benchmark of `osu_mpi` this one is compared with: itself where `osu_mpi` has it,
    /// else the MPI collective that does an iPSC utility's job — GSENDW/GRECVW and
    /// SPGSNW/SPGRCW to all: `MPI_Bcast` from node 0; GOP: `MPI_Reduce` at node 0; GCAT:
    /// `MPI_Gather` at node 0.
    pub fn mpi_peer(self) -> Option<Bench> {
        match self {
            Bench::Gsendw | Bench::Spgsnw => Some(Bench::Bcast),
            Bench::Gop => Some(Bench::Reduce),
            Bench::Gcat => Some(Bench::Gather),
            b => b.in_mpi().then_some(b),
        }
    }

    /// True if larger values are better (bandwidth).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Bench::Bw)
    }

    /// The MPI collective (or iPSC routine) this benchmark times, for reports.
    pub fn what(self) -> &'static str {
        match self {
            Bench::Latency => "ping-pong, half round trip",
            Bench::Bw => "64 in flight + ack",
            Bench::Bcast => "MPI_Bcast",
            Bench::Reduce => "MPI_Reduce (f32 sum)",
            Bench::Allreduce => "MPI_Allreduce (f32 sum)",
            Bench::Allgather => "MPI_Allgather",
            Bench::ReduceScatter => "MPI_Reduce_scatter (f32 sum)",
            Bench::Alltoall => "MPI_Alltoall",
            Bench::Scatter => "MPI_Scatter",
            Bench::Gather => "MPI_Gather",
            Bench::Scan => "MPI_Scan (f32 sum)",
            Bench::Barrier => "MPI_Barrier",
            Bench::Shift => "MPI_Sendrecv, shift by 1",
            Bench::Gsendw => "iPSC GSENDW/GRECVW",
            Bench::Gop => "iPSC GOP (f32 sum)",
            Bench::Gcat => "iPSC GCAT",
            Bench::Spgsnw => "iPSC SPGSNW/SPGRCW to all",
        }
    }
}

impl fmt::Display for Bench {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Bench {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Bench> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        Bench::ALL
            .iter()
            .copied()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Bench::ALL.iter().map(|b| b.name()).collect();
                anyhow::anyhow!("unknown benchmark {s:?}; use one of {}", names.join(", "))
            })
    }
}
