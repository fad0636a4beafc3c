//! Starting the job's processes: one per rank (and one for the host program, if any), each
//! in a process group of its own, tied to hcrun's life, with the job's environment, its
//! output copied to hcrun's ([`crate::output`]), and its end reported as an [`Exit`].

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use hypercube::wire::control;
use launcher::cubenet;
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::build;
use crate::config::{BindTo, Job, Target};
use crate::control::Credentials;
use crate::output::{self, StderrWatch, To};
use crate::verdict::ErrorTail;

/// How long an exit waits for the end of the rank's stderr (its last words) before it is
/// judged without them.
const STDERR_AFTER_EXIT: Duration = Duration::from_millis(500);

/// The job's processes by slot: slots `0..n` are the ranks, slot `n` is the host, if any.
#[derive(Debug, Clone, Copy)]
pub struct Slots {
    /// Number of ranks (2^d).
    pub n: u32,
    /// Whether the job has a host process.
    pub host: bool,
}

impl Slots {
    /// Ranks plus the host.
    pub fn total(&self) -> u32 {
        self.n + u32::from(self.host)
    }

    /// "rank 3", or "the host".
    pub fn name(&self, slot: u32) -> String {
        if slot == self.n {
            "the host".to_string()
        } else {
            format!("rank {slot}")
        }
    }
}

/// The node program's and the host program's command lines (examples built first).
pub struct Programs {
    /// Every rank runs this.
    pub node: Vec<String>,
    /// The host process runs this, if the job has one.
    pub host: Option<Vec<String>>,
}

impl Programs {
    /// The job's programs, building the workspace examples it names.
    pub fn resolve(job: &Job) -> Result<Programs> {
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
}

/// A process that ended: its slot, how, and its last error line.
pub struct Exit {
    /// Its slot.
    pub slot: u32,
    /// What waiting for it gave.
    pub status: std::io::Result<std::process::ExitStatus>,
    /// Its last error line.
    pub cause: Option<String>,
}

/// The running processes of a job.
pub struct Ranks {
    /// Their pids, by slot.
    pids: Vec<Option<u32>>,
    /// Each process's end, once it has ended and its stderr has been read to the end.
    pub exits: mpsc::UnboundedReceiver<Exit>,
    /// The copies of their output.
    io_tasks: Vec<JoinHandle<()>>,
}

impl Ranks {
    /// Kill every process group of the job.
    pub fn kill_all(&self) {
        for p in &self.pids {
            kill_group(*p);
        }
    }

    /// Let the output of the ranks drain (bounded: a grandchild could hold a pipe open).
    pub async fn drain_output(&mut self) {
        for t in self.io_tasks.drain(..) {
            let _ = tokio::time::timeout(Duration::from_secs(2), t).await;
        }
    }
}

/// How long a rank waits on a silent link before declaring it dead (read by the runtime's
/// TCP transport); hcrun sets it on the emulated network to suit the links' rate.
const ENV_LINK_TIMEOUT_MS: &str = "HYPERCUBE_LINK_TIMEOUT_MS";

/// Start every process of the job; they find hcrun at `control` and prove themselves with
/// `creds`. On the emulated network (`net`) each starts in its node's namespace.
///
/// Must be called on the thread that drives the runtime's `block_on` (it lives as long as
/// the process): PR_SET_PDEATHSIG fires when the thread that forked a child ends, not only
/// the process.
pub fn start(
    job: &Job,
    programs: &Programs,
    slots: Slots,
    control_addr: SocketAddr,
    creds: &Credentials,
    net: Option<&cubenet::Spec>,
) -> Result<Ranks> {
    let total = slots.total();
    // Every rank's collectives choose their algorithm from the same core count (see
    // hypercube::collectives::select::machine); a value the user set is kept.
    let model_cores = std::env::var(control::ENV_MODEL_CORES).unwrap_or_else(|_| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .to_string()
    });
    let launcher_pid = std::process::id() as libc::pid_t;
    let cpus = if job.bind == BindTo::Core {
        allowed_cpus()
    } else {
        Vec::new()
    };
    let out_lock = Arc::new(Mutex::new(()));
    let mut children = Vec::with_capacity(total as usize);
    let mut pids = Vec::with_capacity(total as usize);
    let mut io_tasks = Vec::new();
    for slot in 0..total {
        let (prog, rank_env, label) = if slot == slots.n {
            let p = programs
                .host
                .as_ref()
                .expect("a host slot exists only with a host program");
            (p, "host".to_string(), "host".to_string())
        } else {
            (&programs.node, slot.to_string(), slot.to_string())
        };
        let mut cmd = Command::new(&prog[0]);
        cmd.args(&prog[1..])
            .env(control::ENV_CONTROL, control_addr.to_string())
            .env(control::ENV_RANK, rank_env)
            .env(control::ENV_DIM, job.dim.to_string())
            .env(control::ENV_JOB, format!("{:x}", creds.job))
            .env(control::ENV_SECRET, control::to_hex(&creds.secret))
            .env(control::ENV_MODEL_CORES, &model_cores)
            .env(
                control::ENV_COLOR,
                if job.color { "always" } else { "never" },
            )
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
        if job.bind == BindTo::Core && slot < slots.n && !cpus.is_empty() {
            bind_to_cpu(&mut cmd, cpus[slot as usize % cpus.len()]);
        }
        if let Some(spec) = net {
            // The host program lives beside node 0 (its link goes to node 0).
            let node = if slot == slots.n { 0 } else { slot };
            cmd.env(control::ENV_ADDR, cubenet::cube_addr(node).to_string());
            if std::env::var_os(ENV_LINK_TIMEOUT_MS).is_none()
                && !job.env.iter().any(|(k, _)| k == ENV_LINK_TIMEOUT_MS)
            {
                let ms = spec.link_timeout().as_millis().to_string();
                cmd.env(ENV_LINK_TIMEOUT_MS, ms);
            }
            cubenet::enter_in_child(&mut cmd, cubenet::open_ns(spec, node)?);
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                for p in &pids {
                    kill_group(*p);
                }
                anyhow::bail!(
                    "starting {} of {} ({}): {e}{}",
                    slots.name(slot),
                    total,
                    prog[0],
                    spawn_hint(&e, total)
                );
            }
        };
        if let Some(o) = child.stdout.take() {
            io_tasks.push(tokio::spawn(output::forward(
                label.clone(),
                job.prefix,
                o,
                To::Stdout,
                out_lock.clone(),
                None,
            )));
        }
        let tail = Arc::new(Mutex::new(ErrorTail::default()));
        let (done_tx, done_rx) = oneshot::channel();
        if let Some(e) = child.stderr.take() {
            io_tasks.push(tokio::spawn(output::forward(
                label,
                job.prefix,
                e,
                To::Stderr,
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
    Ok(Ranks {
        pids,
        exits: watch_exits(children),
        io_tasks,
    })
}

/// Report each exit once the rank's stderr has ended too (bounded: a grandchild may hold it
/// open), with the rank's last error line.
fn watch_exits(
    children: Vec<(Child, Arc<Mutex<ErrorTail>>, oneshot::Receiver<()>)>,
) -> mpsc::UnboundedReceiver<Exit> {
    let (exit_tx, exit_rx) = mpsc::unbounded_channel();
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
    exit_rx
}

/// What to do about a process that could not be started, after the system's word for it.
fn spawn_hint(e: &std::io::Error, total: u32) -> String {
    match e.raw_os_error() {
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
    }
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

/// The cores this process may run on (its affinity mask), in order; empty if unknown.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity fills the cpu_set_t we own, of the size we pass.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Vec::new();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Bind the rank (all its threads) to core `cpu` from the moment it is forked
/// (`--bind-to core`).
fn bind_to_cpu(cmd: &mut Command, cpu: usize) {
    // SAFETY: the set is built here, before the fork; in the child the closure only calls
    // sched_setaffinity (async-signal-safe, no allocation) with it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        cmd.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
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
