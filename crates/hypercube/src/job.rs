//! The process manager that started this process — `hcrun`, or a PMI-1 server (Hydra's
//! `mpiexec`, Slurm's `srun --mpi=pmi2`) — as the rest of the runtime sees it after
//! start-up: whom to tell that a wait looks stuck, that the job cannot go on, that this
//! rank is done.
//!
//! A process joins at most one job, so the supervisor is process-wide: `crate::boot`
//! installs it once, the TCP engine and `Node::abort` call it. With no supervisor (a
//! one-node job, or the in-process transport) every call is a no-op.

use std::sync::OnceLock;

use crate::error::Error;
use crate::wire::control::ToLauncher;

/// What the runtime tells the process manager of the job.
pub(crate) trait Supervisor: Send + Sync {
    /// A call has waited a while with nothing arriving (`Blocked`), or that wait ended
    /// (`Running`): the launcher's deadlock detector. Managers without one ignore it.
    fn report(&self, msg: &ToLauncher);
    /// The job cannot go on (a link broke, a peer spoke garbage): make the manager stop
    /// every rank. Must not block (it is called with the engine's lock held).
    fn fatal(&self, e: &Error);
    /// The program aborts the job on purpose (`Node::abort`, `hypercube::run`'s error).
    fn abort(&self, reason: &str);
    /// This rank finished cleanly (after the finalize barrier).
    fn finished(&self);
}

static SUPERVISOR: OnceLock<Box<dyn Supervisor>> = OnceLock::new();

/// Install the supervisor (once per process; a second call is ignored).
pub(crate) fn install(s: Box<dyn Supervisor>) {
    let _ = SUPERVISOR.set(s);
}

/// See [`Supervisor::report`].
pub(crate) fn report(msg: &ToLauncher) {
    if let Some(s) = SUPERVISOR.get() {
        s.report(msg);
    }
}

/// See [`Supervisor::fatal`].
pub(crate) fn fatal(e: &Error) {
    if let Some(s) = SUPERVISOR.get() {
        s.fatal(e);
    }
}

/// See [`Supervisor::abort`].
pub(crate) fn abort(reason: &str) {
    if let Some(s) = SUPERVISOR.get() {
        s.abort(reason);
    }
}

/// See [`Supervisor::finished`].
pub(crate) fn finished() {
    if let Some(s) = SUPERVISOR.get() {
        s.finished();
    }
}
