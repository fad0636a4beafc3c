//! hcrun: start 2^d node processes, wire them into a hypercube (bootstrap rendezvous on a
//! control channel), forward their output tagged by rank, and supervise them: the job
//! succeeds iff every rank exits 0; when one fails, the others are stopped at once.
//!
//! ```text
//! main.rs          the command line; examples built, emulated network, trace; run()
//!  └ supervise.rs  Supervisor: the job's state, from the start to the verdict
//!     ├ spawn.rs   starting the processes and reaping them (output.rs: their output)
//!     ├ control.rs the control channel: rendezvous, the ranks' reports, abort
//!     └ verdict/   why a job failed and whom to blame (tail.rs: a rank's last error line)
//! ```

mod build;
mod config;
mod control;
mod output;
mod spawn;
mod supervise;
mod trace;
mod verdict;

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Parser;
use hypercube::wire::control::ENV_TRACE;

use config::{Cli, Job};
use control::{Control, Credentials};
use launcher::cubenet;
use spawn::{Programs, Slots};
use supervise::{Limits, Supervisor};

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
    let programs = match Programs::resolve(&job) {
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
            job.env.push((ENV_TRACE.into(), r.prefix_env()));
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

/// Start the job's processes, wire them into a cube and supervise them; the exit code.
async fn run(job: Job, programs: Programs, net: Option<cubenet::Spec>) -> Result<ExitCode> {
    let slots = Slots {
        n: 1u32 << job.dim,
        host: programs.host.is_some(),
    };
    let listener = control::listen(net.is_some()).await?;
    let creds = Credentials::random();
    let ranks = spawn::start(
        &job,
        &programs,
        slots,
        listener.local_addr()?,
        &creds,
        net.as_ref(),
    )?;
    let control = Control::open(
        listener,
        control::Expect {
            n: slots.n,
            host: slots.host,
            creds,
        },
    );
    let limits = Limits {
        boot_timeout: job.boot_timeout,
        timeout: job.timeout,
    };
    let mut supervisor = Supervisor::new(slots, ranks, control, limits);
    supervisor.watch().await;
    if supervisor.failing() {
        supervisor.tear_down().await?;
    }
    match supervisor.verdict().await {
        Some(f) => {
            eprintln!("{}", f.report(job.verbose));
            Ok(ExitCode::from(f.exit_code()))
        }
        None => Ok(ExitCode::SUCCESS),
    }
}
