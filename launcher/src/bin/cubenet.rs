//! cubenet — build the emulated hypercube network under names in this host, where it stays
//! until `cubenet down`: for programs that are not started by hcrun (Open MPI, a shell, a
//! packet capture). `hcrun --link-rate` builds the same network privately for one job.
//!
//!   cubenet up --dim 4 --link-rate 100mbit                 a 4-cube of namespaces cube-0..15
//!   cubenet up --dim 3 --link-rate 1gbit --kernel-routes    the kernel forwards (for MPI)
//!   cubenet hosts                                          rank, namespace, addresses
//!   cubenet exec 5 -- tc -s qdisc                          a command in node 5's namespace
//!   cubenet rsh [ssh options] 10.202.0.7 CMD...            an "ssh" for mpirun's rsh agent
//!   cubenet down                                           remove it all
//!
//! Root only (it makes namespaces in the host). docs/cubenet.md explains the network.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use launcher::cubenet::{self, Spec};

/// Build, use and remove an emulated hypercube network of namespaces and shaped veth links.
#[derive(Debug, Parser)]
#[command(name = "cubenet", version)]
struct Cli {
    /// The network's name: it prefixes every namespace (`NAME-RANK`) and interface made.
    #[arg(long, global = true, default_value = "cube")]
    name: String,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Build the network: a namespace per node, a veth pair per edge shaped by tbf.
    Up {
        /// Cube dimension (0..=8).
        #[arg(short, long)]
        dim: u32,
        /// Rate of every link, each direction, as tc reads it (100mbit, 1gbit, 2.8MBps).
        #[arg(long, value_parser = cubenet::parse_rate)]
        link_rate: cubenet::Rate,
        /// Token-bucket depth as tc reads sizes (default: 1 ms of traffic, at least 96kb).
        #[arg(long, value_parser = cubenet::parse_burst)]
        link_burst: Option<u64>,
        /// Also give every node e-cube routes to every other node and let the kernel
        /// forward (for runtimes that do not forward themselves, e.g. MPI).
        #[arg(long)]
        kernel_routes: bool,
    },
    /// Remove the network (its namespaces, after killing what still runs in them, and its
    /// bridge). Idempotent.
    Down,
    /// List the nodes: rank, namespace, cube address, management address.
    Hosts,
    /// Run a command in node RANK's namespace.
    Exec {
        /// The node.
        rank: u32,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<String>,
    },
    /// An ssh stand-in: `[options] HOST COMMAND...` runs COMMAND (through `sh -c`) in the
    /// namespace of the node whose cube or management address is HOST, with a host name of
    /// its own (MPI runtimes key their session files by host name).
    Rsh {
        /// ssh's options (ignored), the host, and the command.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cubenet: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn need_root() -> Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!(
            "cubenet makes namespaces in this host and needs root; without root, \
             `hcrun --link-rate` builds the same network privately for one job"
        );
    }
    Ok(())
}

fn run(cli: Cli) -> Result<ExitCode> {
    cubenet::check_name(&cli.name)?;
    let name = cli.name;
    match cli.cmd {
        Cmd::Up {
            dim,
            link_rate,
            link_burst,
            kernel_routes,
        } => {
            if dim > cubenet::MAX_EMULATED_DIM {
                bail!(
                    "--dim {dim}: cubenet builds cubes up to dimension {}",
                    cubenet::MAX_EMULATED_DIM
                );
            }
            need_root()?;
            if !cubenet::existing_nodes(&name).is_empty() {
                bail!("a network named {name} is up already: `cubenet --name {name} down` first, or choose another --name");
            }
            let spec = Spec {
                dim,
                burst: link_burst.unwrap_or_else(|| link_rate.default_burst()),
                rate: link_rate,
                name: name.clone(),
                kernel_routes,
            };
            let t = std::time::Instant::now();
            if let Err(e) = cubenet::build(&spec) {
                let _ = cubenet::teardown(&name);
                return Err(e);
            }
            eprintln!(
                "cubenet: {}-cube {name} up in {:.1} s: {} nodes, {} links at {} (burst {} B){}",
                dim,
                t.elapsed().as_secs_f64(),
                spec.nodes(),
                dim * spec.nodes() / 2,
                spec.rate,
                spec.burst,
                if kernel_routes {
                    ", kernel e-cube routes"
                } else {
                    ""
                }
            );
            print_hosts(&name);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Down => {
            need_root()?;
            let n = cubenet::teardown(&name)?;
            eprintln!("cubenet: removed {n} namespaces of {name}");
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Hosts => {
            print_hosts(&name);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Exec { rank, command } => {
            let ns = format!("{name}-{rank}");
            exec_in(&ns, &command)
        }
        Cmd::Rsh { args } => {
            // Skip ssh's options: flags, and the ones that take a value.
            let mut i = 0;
            while i < args.len() && args[i].starts_with('-') {
                i += if matches!(args[i].as_str(), "-o" | "-p" | "-l" | "-i" | "-F") {
                    2
                } else {
                    1
                };
            }
            let host = args.get(i).context("cubenet rsh: no host given")?;
            let cmd = args[i + 1..].join(" ");
            let rank = cubenet::existing_nodes(&name)
                .into_iter()
                .find(|r| {
                    host == &cubenet::cube_addr(*r).to_string()
                        || host == &cubenet::mgmt_addr(*r).to_string()
                        || host == &format!("{name}-{r}")
                })
                .with_context(|| format!("no node of network {name} has the address {host}"))?;
            let ns = format!("{name}-{rank}");
            exec_in(
                &ns,
                &[
                    "unshare".into(),
                    "--uts".into(),
                    "sh".into(),
                    "-c".into(),
                    format!("hostname {ns} && {cmd}"),
                ],
            )
        }
    }
}

fn print_hosts(name: &str) {
    println!("# rank namespace cube-address management-address");
    for r in cubenet::existing_nodes(name) {
        println!(
            "{r} {name}-{r} {} {}",
            cubenet::cube_addr(r),
            cubenet::mgmt_addr(r)
        );
    }
}

/// Replace this process with `command` run in namespace `ns`.
fn exec_in(ns: &str, command: &[String]) -> Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    if !cubenet::netns_path(ns).exists() {
        bail!("no namespace {ns}: is the network up (`cubenet hosts`)?");
    }
    let e = std::process::Command::new("ip")
        .args(["netns", "exec", ns])
        .args(command)
        .exec();
    bail!("running ip netns exec {ns}: {e}")
}
