//! Joining a job: find out which process manager started this process, and wire the
//! process into the cube through it.
//!
//! | environment | manager | module |
//! |---|---|---|
//! | `HYPERCUBE_CONTROL` (and friends) | `hcrun`, on this host | [`hcrun`] |
//! | `PMI_FD` or `PMI_PORT` | Hydra's `mpiexec`, Slurm's `srun --mpi=pmi2` | [`pmi`] |
//! | `SLURM_PROCID` in a step of several tasks, no `PMI_FD` | `srun` without `--mpi=pmi2` | an error with that hint |
//! | none of these | nobody: a job of one node | — |
//!
//! Whatever the manager, the links open the same way ([`links`]); the manager only carries
//! the addresses, the job secret and the barriers, and after start-up it is the
//! [`crate::job::Supervisor`].

mod addr;
pub(crate) mod clock;
mod deadline;
mod hcrun;
mod links;
mod logging;
mod pmi;
pub(crate) mod probe;

pub(crate) use hcrun::BootConfig;

use crate::error::{Error, Result};
use crate::transport::tcp::{TcpTransport, Tuning};
use deadline::boot_timeout;

/// How this process was started.
pub(crate) enum Launch {
    /// By `hcrun`.
    Hcrun(BootConfig),
    /// By a PMI-1 process manager.
    Pmi(pmi::PmiEnv),
    /// By nobody in particular: a job of one node.
    Alone,
}

impl Launch {
    /// Read the environment.
    pub fn detect() -> Result<Launch> {
        if let Some(cfg) = BootConfig::from_env()? {
            return Ok(Launch::Hcrun(cfg));
        }
        if let Some(env) = pmi::PmiEnv::from_env()? {
            return Ok(Launch::Pmi(env));
        }
        let tasks = ["SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"]
            .iter()
            .find_map(|v| std::env::var(v).ok()?.trim().parse::<u32>().ok());
        if std::env::var_os("SLURM_PROCID").is_some()
            && std::env::var_os("SLURM_STEP_ID").is_some()
            && tasks.is_some_and(|n| n > 1)
        {
            return Err(Error::Config(
                "started by srun without a PMI connection (SLURM_PROCID is set, PMI_FD is \
                 not): run `srun --mpi=pmi2 ...` (or set MpiDefault=pmi2 in slurm.conf); see \
                 docs/clusters.md"
                    .into(),
            ));
        }
        Ok(Launch::Alone)
    }
}

/// Join the job the environment describes; returns the transport with its links up and the
/// ready barrier passed.
pub(crate) fn join(launch: Launch) -> Result<TcpTransport> {
    match launch {
        Launch::Hcrun(cfg) => {
            logging::init(cfg.rank);
            let t = hcrun::join(&cfg)?;
            tracing::debug!("node {} of {} is up", cfg.rank, 1u32 << cfg.dim);
            Ok(t)
        }
        Launch::Pmi(env) => pmi::join(&env, boot_timeout()?),
        Launch::Alone => {
            logging::init(0);
            TcpTransport::start(0, 0, vec![], vec![], false, Tuning::from_env(1)?)
        }
    }
}
