//! hcrun: start 2^d node processes, wire them into a hypercube (bootstrap rendezvous on a
//! control channel), forward their output tagged by rank, and supervise them: the job
//! succeeds iff every rank exits 0; when one fails, the others are stopped at once.

mod build;
mod config;
mod rendezvous;
mod trace;
mod verdict;

use std::io::Write;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use hypercube::wire::control::{self, ToNode};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::Command;
use tokio::sync::mpsc;

use config::{Cli, Job, Target};
use launcher::cubenet;

/// The address a rank binds its links to and publishes (the runtime's `HYPERCUBE_ADDR`).
const ENV_ADDR: &str = "HYPERCUBE_ADDR";
use verdict::{Blame, JobFailure, RankExit};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = cli.color.resolve();
    let filter = tracing_subscriber::EnvFilter::try_from_env("HCRUN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(color)
        .init();
    let mut job = match Job::resolve(cli, color) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("hcrun: {e:#}");
            return ExitCode::from(2);
        }
    };
    // The programs are built before anything else (cargo may need the host's network,
    // which the emulated network's private namespace does not have).
    let programs = match resolve_programs(&job) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("hcrun: {e:#}");
            return ExitCode::from(1);
        }
    };
    let net = match job.net.clone().map(|n| emulate(&n, job.dim)) {
        Some(Ok(spec)) => Some(spec),
        Some(Err(e)) => {
            eprintln!("hcrun: {e:#}");
            return ExitCode::from(1);
        }
        None => None,
    };
    let trace = match job.trace.clone().map(trace::Recording::start) {
        Some(Ok(r)) => {
            job.env.push((trace::ENV_TRACE.into(), r.prefix_env()));
            Some(r)
        }
        Some(Err(e)) => {
            eprintln!("hcrun: {e:#}");
            return ExitCode::from(2);
        }
        None => None,
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hcrun: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let code = match rt.block_on(run(job, programs, net)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("hcrun: {e:#}");
            ExitCode::from(1)
        }
    };
    if let Some(r) = trace {
        r.finish();
    }
    code
}

/// How long every running rank must have reported a blocked wait (each after 1 s with
/// nothing arriving) before the launcher calls it a deadlock.
const DEADLOCK_GRACE: Duration = Duration::from_secs(2);

/// After the first rank fails, how long hcrun collects further exits before it names a rank
/// in the abort it sends the others.
const SETTLE: Duration = Duration::from_millis(100);

/// How long the ranks have, after the abort, to end by themselves before hcrun kills them.
const ABORT_GRACE: Duration = Duration::from_millis(300);

/// How long an exit waits for the end of the rank's stderr (its last words) before it is
/// judged without them.
const STDERR_AFTER_EXIT: Duration = Duration::from_millis(500);

/// The exits reaped until `deadline`, or until no rank is left alive.
async fn reap_until(
    deadline: tokio::time::Instant,
    exit_rx: &mut mpsc::UnboundedReceiver<Exit>,
    alive: &mut u32,
) -> Vec<Exit> {
    let mut out = Vec::new();
    while *alive > 0 {
        tokio::select! {
            Some(x) = exit_rx.recv() => {
                *alive -= 1;
                out.push(x);
            }
            _ = tokio::time::sleep_until(deadline) => break,
        }
    }
    out
}

/// A process that ended: its slot, how, and its last error line.
struct Exit {
    slot: u32,
    status: std::io::Result<std::process::ExitStatus>,
    cause: Option<String>,
}

use hypercube::wire::control::ENV_COLOR;

/// The environment variable that tells every rank how many cores the job shares.
const MODEL_CORES: &str = "HYPERCUBE_MODEL_CORES";

/// How a rank ended.
fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(c) = status.code() {
        if c == 101 {
            return format!("exit status {c} (a Rust panic)");
        }
        return format!("exit status {c}");
    }
    if let Some(sig) = status.signal() {
        let name = match sig {
            libc::SIGKILL => "SIGKILL",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGABRT => "SIGABRT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGINT => "SIGINT",
            libc::SIGBUS => "SIGBUS",
            _ => "signal",
        };
        return format!("killed by signal {sig} ({name})");
    }
    "ended for an unknown reason".into()
}

/// Tie a rank's life to the launcher's from the moment it is forked: the kernel sends it
/// SIGKILL when the launcher dies (`PR_SET_PDEATHSIG`), and a child whose launcher died
/// between `fork` and that `prctl` (its parent is no longer `launcher`) exits at once. The
/// rank's own process group stays (`process_group(0)`), so it still gets no terminal
/// signals meant for the launcher.
fn tie_to_launcher(cmd: &mut Command, launcher: libc::pid_t) {
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (prctl, getppid, _exit); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            ) == -1
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != launcher {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Kill a rank's whole process group.
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory involved.
        unsafe {
            libc::kill(-(pid as i32), libc::SIGKILL);
        }
    }
}

/// Where a rank's stderr goes besides hcrun's stderr: its last error line is kept (for the
/// verdict), and the end of the stream is signalled (so its exit is judged with all it said).
struct StderrWatch {
    tail: Arc<Mutex<verdict::ErrorTail>>,
    done: tokio::sync::oneshot::Sender<()>,
}

/// Copy a rank's output to ours, line by line, prefixed with its rank.
async fn forward<R: tokio::io::AsyncRead + Unpin>(
    rank: String,
    prefix: bool,
    stream: R,
    to_stderr: bool,
    lock: Arc<Mutex<()>>,
    watch: Option<StderrWatch>,
) {
    let mut r = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(w) = &watch {
            let text = String::from_utf8_lossy(&line);
            w.tail
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .feed(text.trim_end_matches(['\n', '\r']));
        }
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        let _g = lock.lock().unwrap_or_else(|p| p.into_inner());
        let res = if to_stderr {
            let mut e = std::io::stderr().lock();
            (if prefix {
                write!(e, "[{rank}] ")
            } else {
                Ok(())
            })
            .and_then(|_| e.write_all(&line))
        } else {
            let mut o = std::io::stdout().lock();
            (if prefix {
                write!(o, "[{rank}] ")
            } else {
                Ok(())
            })
            .and_then(|_| o.write_all(&line))
            .and_then(|_| o.flush())
        };
        if res.is_err() {
            break;
        }
    }
    if let Some(w) = watch {
        let _ = w.done.send(());
    }
}

/// The node program's and the host program's command lines (examples built first).
struct Programs {
    node: Vec<String>,
    host: Option<Vec<String>>,
}

fn resolve_programs(job: &Job) -> Result<Programs> {
    let resolve = |t: &Target| -> Result<Vec<String>> {
        Ok(match t {
            Target::Program(p) => p.clone(),
            Target::Example(name, args) => {
                let exe = build::build_example(name, job.release)?;
                let mut v = vec![exe.to_string_lossy().into_owned()];
                v.extend(args.iter().cloned());
                v
            }
        })
    };
    Ok(Programs {
        node: resolve(&job.target)?,
        host: job.host.as_ref().map(resolve).transpose()?,
    })
}

/// `--link-rate`: move hcrun into namespaces of its own and build the emulated network
/// there (launcher::cubenet). Runs before any thread is started.
fn emulate(net: &config::Net, dim: u32) -> Result<cubenet::Spec> {
    let t = Instant::now();
    let how = cubenet::enter_private()?;
    let spec = cubenet::Spec {
        dim,
        rate: net.rate.clone(),
        burst: net.burst,
        name: "hc".into(),
        kernel_routes: false,
    };
    cubenet::build(&spec).context("building the emulated network (--link-rate)")?;
    tracing::info!(
        "emulated {dim}-cube up in {:?} ({how:?}): links of {} each way, burst {} B",
        t.elapsed(),
        spec.rate,
        spec.burst
    );
    Ok(spec)
}

async fn run(job: Job, programs: Programs, net: Option<cubenet::Spec>) -> Result<ExitCode> {
    let program = programs.node;
    let host_program = programs.host;
    let n = 1u32 << job.dim;
    // Slots 0..n are the ranks; slot n is the host, if any.
    let total = n + u32::from(host_program.is_some());
    let name = move |slot: u32| -> String {
        if slot == n {
            "the host".to_string()
        } else {
            format!("rank {slot}")
        }
    };
    // On the emulated network the control channel runs over the management bridge.
    let control_ip = match &net {
        Some(_) => std::net::IpAddr::V4(cubenet::hub_addr()),
        None => std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    };
    let listener = TcpListener::bind((control_ip, 0))
        .await
        .context("binding the control listener")?;
    let control_addr = listener.local_addr()?;
    let secret: [u8; 32] = rand::random();
    let job_id: u64 = rand::random();
    // Every rank's collectives choose their algorithm from the same core count (see
    // hypercube::collectives::select::machine); a value the user set is kept.
    let model_cores = std::env::var(MODEL_CORES).unwrap_or_else(|_| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .to_string()
    });

    // Ranks are spawned from this thread (the one that drives `block_on`, which lives as
    // long as the process): PR_SET_PDEATHSIG fires when the thread that forked a child
    // ends, not only the process.
    let launcher_pid = std::process::id() as libc::pid_t;
    let out_lock = Arc::new(Mutex::new(()));
    let mut children = Vec::with_capacity(total as usize);
    let mut pids = Vec::with_capacity(total as usize);
    let mut io_tasks = Vec::new();
    for slot in 0..total {
        let (prog, rank_env, label) = if slot == n {
            let p = host_program
                .as_ref()
                .expect("a host slot exists only with a host program");
            (p, "host".to_string(), "host".to_string())
        } else {
            (&program, slot.to_string(), slot.to_string())
        };
        let mut cmd = Command::new(&prog[0]);
        cmd.args(&prog[1..])
            .env(control::ENV_CONTROL, control_addr.to_string())
            .env(control::ENV_RANK, rank_env)
            .env(control::ENV_DIM, job.dim.to_string())
            .env(control::ENV_JOB, format!("{job_id:x}"))
            .env(control::ENV_SECRET, control::to_hex(&secret))
            .env(MODEL_CORES, &model_cores)
            .env(ENV_COLOR, if job.color { "always" } else { "never" })
            .env(
                control::ENV_BOOT_TIMEOUT_MS,
                job.boot_timeout.as_millis().to_string(),
            )
            .envs(job.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        tie_to_launcher(&mut cmd, launcher_pid);
        if let Some(spec) = &net {
            // The host program lives beside node 0 (its link goes to node 0).
            let node = if slot == n { 0 } else { slot };
            cmd.env(ENV_ADDR, cubenet::cube_addr(node).to_string());
            cubenet::enter_in_child(&mut cmd, cubenet::open_ns(spec, node)?);
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                for p in &pids {
                    kill_group(*p);
                }
                let hint = match e.raw_os_error() {
                    Some(libc::EMFILE | libc::ENFILE) => format!(
                        " — hcrun holds 2 pipes per rank ({} for this job): raise the limit \
                         on open files (ulimit -n) or use a smaller --dim",
                        2 * total
                    ),
                    Some(libc::EAGAIN) => " — the limit on processes is reached: raise it \
                                           (ulimit -u) or use a smaller --dim"
                        .to_string(),
                    Some(libc::ENOENT) => {
                        " — check the program's path (relative to the current directory)".into()
                    }
                    _ => String::new(),
                };
                anyhow::bail!(
                    "starting {} of {} ({}): {e}{hint}",
                    name(slot),
                    total,
                    prog[0]
                );
            }
        };
        if let Some(o) = child.stdout.take() {
            io_tasks.push(tokio::spawn(forward(
                label.clone(),
                job.prefix,
                o,
                false,
                out_lock.clone(),
                None,
            )));
        }
        let tail = Arc::new(Mutex::new(verdict::ErrorTail::default()));
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        if let Some(e) = child.stderr.take() {
            io_tasks.push(tokio::spawn(forward(
                label,
                job.prefix,
                e,
                true,
                out_lock.clone(),
                Some(StderrWatch {
                    tail: tail.clone(),
                    done: done_tx,
                }),
            )));
        }
        pids.push(child.id());
        children.push((child, tail, done_rx));
    }

    // Bootstrap rendezvous.
    let (ev_tx, mut ev_rx) = mpsc::unbounded_channel();
    let (wr_tx, mut wr_rx) = tokio::sync::oneshot::channel();
    let rejections = Arc::new(rendezvous::Rejections::default());
    let rdv = tokio::spawn(rendezvous::run(
        listener,
        rendezvous::Expect {
            n,
            host: host_program.is_some(),
            secret: secret.to_vec(),
            job: job_id,
        },
        ev_tx,
        wr_tx,
        rejections.clone(),
    ));
    let summaries = {
        let r = rejections.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_secs(1));
            loop {
                every.tick().await;
                r.flush_due();
            }
        })
    };

    // Supervise. Each exit is reported once the rank's stderr has ended too (bounded: a
    // grandchild may hold it open), with the rank's last error line.
    let (exit_tx, mut exit_rx) = mpsc::unbounded_channel();
    for (slot, (mut child, tail, stderr_done)) in children.into_iter().enumerate() {
        let tx = exit_tx.clone();
        tokio::spawn(async move {
            let status = child.wait().await;
            let _ = tokio::time::timeout(STDERR_AFTER_EXIT, stderr_done).await;
            let cause = tail.lock().unwrap_or_else(|p| p.into_inner()).cause();
            let _ = tx.send(Exit {
                slot: slot as u32,
                status,
                cause,
            });
        });
    }
    drop(exit_tx);

    let start = Instant::now();
    let boot_deadline = tokio::time::Instant::now() + job.boot_timeout;
    let job_deadline = job.timeout.map(|t| tokio::time::Instant::now() + t);
    let mut joined = vec![false; total as usize];
    // Deadlock detection: a live rank that reported a long wait, and since when every live
    // rank has been in that state.
    let mut blocked: Vec<Option<String>> = vec![None; total as usize];
    let mut exited = vec![false; total as usize];
    let mut all_blocked_since: Option<tokio::time::Instant> = None;
    let mut exited_unjoined: Vec<u32> = Vec::new();
    let mut all_ready = false;
    let mut alive = total;
    // A failure that is not a rank's exit (deadlock, timeouts, Ctrl-C, ...).
    let mut failure: Option<JobFailure> = None;
    // Ranks that exited unsuccessfully before hcrun killed anyone, in the order reaped.
    let mut failed: Vec<RankExit> = Vec::new();
    let failed_exit = |x: &Exit, status: std::process::ExitStatus, joined: bool| {
        use std::os::unix::process::ExitStatusExt;
        RankExit {
            name: name(x.slot),
            how: describe(status),
            cause: x.cause.clone(),
            joined,
            blame: Blame::of(status.signal().is_some(), x.cause.as_deref()),
        }
    };
    let mut writers = None;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let far = tokio::time::Instant::now() + Duration::from_secs(10 * 365 * 24 * 3600);
    while alive > 0 && failure.is_none() && failed.is_empty() {
        let live: Vec<usize> = (0..total as usize).filter(|r| !exited[*r]).collect();
        let all_blocked =
            all_ready && !live.is_empty() && live.iter().all(|r| blocked[*r].is_some());
        all_blocked_since = match (all_blocked, all_blocked_since) {
            (true, Some(t)) => Some(t),
            (true, None) => Some(tokio::time::Instant::now()),
            (false, _) => None,
        };
        tokio::select! {
            Some(x) = exit_rx.recv() => {
                alive -= 1;
                let slot = x.slot as usize;
                exited[slot] = true;
                match &x.status {
                    Ok(s) if s.success() => {
                        if !joined[slot] && !all_ready {
                            exited_unjoined.push(x.slot);
                            if joined.iter().any(|j| *j) {
                                failure = Some(JobFailure::ExitedUnjoined { name: name(x.slot) });
                            }
                        }
                    }
                    Ok(s) => failed.push(failed_exit(&x, *s, joined[slot])),
                    Err(e) => failure = Some(JobFailure::CannotWait { name: name(x.slot), error: e.to_string() }),
                }
            }
            Some(ev) = ev_rx.recv() => match ev {
                rendezvous::Event::Joined(r) => {
                    joined[r as usize] = true;
                    if let Some(u) = exited_unjoined.first() {
                        failure = Some(JobFailure::ExitedUnjoined { name: name(*u) });
                    }
                }
                rendezvous::Event::AllReady => {
                    all_ready = true;
                    tracing::debug!("the cube is wired after {:?}", start.elapsed());
                }
                rendezvous::Event::Blocked(slot, what) => blocked[slot as usize] = Some(what),
                rendezvous::Event::Running(slot) => blocked[slot as usize] = None,
            },
            _ = tokio::time::sleep_until(all_blocked_since.map_or(far, |t| t + DEADLOCK_GRACE)) => {
                let waits: Vec<String> = (0..total)
                    .filter_map(|r| blocked[r as usize].as_ref().map(|w| format!("{} waits for {w}", name(r))))
                    .collect();
                failure = Some(JobFailure::Deadlock {
                    secs: (DEADLOCK_GRACE + Duration::from_secs(1)).as_secs(),
                    waits,
                });
            }
            Ok(w) = &mut wr_rx, if writers.is_none() => writers = Some(w),
            _ = tokio::time::sleep_until(boot_deadline), if !all_ready && joined.iter().any(|j| *j) => {
                let missing: Vec<String> = (0..total).filter(|r| !joined[*r as usize]).map(name).collect();
                failure = Some(JobFailure::BootTimeout { ms: job.boot_timeout.as_millis(), missing });
            }
            _ = tokio::time::sleep_until(job_deadline.unwrap_or(far)) => {
                failure = Some(JobFailure::JobTimeout { secs: job.timeout.map_or(0, |t| t.as_secs()) });
            }
            _ = &mut ctrl_c => {
                failure = Some(JobFailure::Interrupted);
            }
        }
    }
    rdv.abort();

    if failure.is_some() || !failed.is_empty() {
        // A rank's failure is followed at once by its neighbors' (`PeerGone`), whose exits
        // may be reaped first: collect what comes in the next moment before naming anyone
        // in the abort.
        if failure.is_none() {
            let settle = tokio::time::Instant::now() + SETTLE;
            for x in reap_until(settle, &mut exit_rx, &mut alive).await {
                if let Ok(s) = &x.status {
                    if !s.success() {
                        failed.push(failed_exit(&x, *s, joined[x.slot as usize]));
                    }
                }
            }
        }
        let reason = match &failure {
            Some(f) => f.abort_reason(),
            None => JobFailure::from_exits(failed.clone()).abort_reason(),
        };
        // Tell the ranks, give them a moment to say so, then kill whatever is left.
        if let Some(ws) = writers.as_mut() {
            let msg = control::frame(&ToNode::Abort { reason })?;
            for w in ws.iter_mut() {
                let _ = tokio::time::timeout(Duration::from_millis(100), w.write_all(&msg)).await;
            }
        }
        // Exits until hcrun kills the rest are still judged.
        let grace = tokio::time::Instant::now() + ABORT_GRACE;
        for x in reap_until(grace, &mut exit_rx, &mut alive).await {
            if let Ok(s) = &x.status {
                if !s.success() {
                    failed.push(failed_exit(&x, *s, joined[x.slot as usize]));
                }
            }
        }
        for p in &pids {
            kill_group(*p);
        }
        while alive > 0 {
            match tokio::time::timeout(Duration::from_secs(2), exit_rx.recv()).await {
                Ok(Some(_)) => alive -= 1,
                _ => break,
            }
        }
    }
    // Let the output of the ranks drain (bounded: a grandchild could hold a pipe open).
    for t in io_tasks {
        let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
    }
    summaries.abort();
    rejections.flush();
    let failure = match failure {
        Some(f) => Some(f),
        None if !failed.is_empty() => Some(JobFailure::from_exits(failed)),
        // Every process exited 0 without ever saying hello: not a hypercube program.
        None if !joined.iter().any(|j| *j) => Some(JobFailure::NoneJoined),
        None => None,
    };
    match failure {
        Some(f) => {
            eprintln!("{}", f.report(job.verbose));
            Ok(ExitCode::from(f.exit_code()))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}
