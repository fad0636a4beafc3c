//! The persistent network Open MPI runs on (`cubenet up --kernel-routes`, removed on
//! drop) and the programs the runs start.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The interface that holds a node's cube address in the network `cubenet` builds
/// (launcher/src/cubenet): Open MPI's BTL is bound to it.
pub const CUBE_IF: &str = "cube";

/// The management network of `cubenet` (launcher/src/cubenet): Open MPI's out-of-band
/// channel (mpirun ↔ its daemons) runs over it, never over the shaped links.
pub const MGMT_NET: &str = "10.202.0.0/16";

/// The persistent network Open MPI runs on (`cubenet up --kernel-routes`), with the rsh
/// agent and hostfile for `mpirun`. Removed (`cubenet down`) when dropped.
pub struct Network {
    pub(super) cubenet: PathBuf,
    pub(super) name: String,
    pub(super) up_args: Vec<String>,
    /// mpirun's `plm_rsh_agent`: a script that runs `cubenet rsh` with a TMPDIR per node.
    pub agent: PathBuf,
    /// One cube address per line, `slots=1`, in rank order.
    pub hostfile: PathBuf,
    /// Nodes.
    pub nodes: u32,
}

impl Network {
    /// Build the network `name` (removing a leftover of that name first) and write the
    /// agent and hostfile into `dir`.
    pub fn up(
        cubenet: &Path,
        name: &str,
        dim: u32,
        rate: &str,
        burst: Option<&str>,
        dir: &Path,
    ) -> Result<Network> {
        let mut up_args = vec![
            "up".to_string(),
            "--dim".into(),
            dim.to_string(),
            "--link-rate".into(),
            rate.into(),
            "--kernel-routes".into(),
        ];
        if let Some(b) = burst {
            up_args.extend(["--link-burst".into(), b.into()]);
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let net = Network {
            cubenet: cubenet.to_path_buf(),
            name: name.to_string(),
            up_args,
            agent: dir.join(format!("agent-{name}.sh")),
            hostfile: dir.join(format!("hosts-{name}")),
            nodes: 1 << dim,
        };
        net.down()?;
        net.build()?;
        std::fs::write(&net.agent, agent_script(cubenet, name))
            .with_context(|| format!("writing {}", net.agent.display()))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&net.agent, std::fs::Permissions::from_mode(0o755))?;
        }
        let hosts = net.hosts()?;
        anyhow::ensure!(
            hosts.len() == net.nodes as usize,
            "cubenet hosts listed {} nodes of {name}, expected {}",
            hosts.len(),
            net.nodes
        );
        let text: String = hosts.iter().map(|h| format!("{h} slots=1\n")).collect();
        std::fs::write(&net.hostfile, text)
            .with_context(|| format!("writing {}", net.hostfile.display()))?;
        Ok(net)
    }

    /// `mpirun.openmpi` for `np` ranks on this network, one per namespace, its TCP
    /// transport bound to the cube interface and its out-of-band channel to the management
    /// network, ranks yielding when idle: the program and its arguments follow.
    pub fn mpirun(&self, np: u32) -> Command {
        let mut c = Command::new(crate::peers::MPIRUN);
        c.args(["--allow-run-as-root", "-np", &np.to_string(), "--hostfile"])
            .arg(&self.hostfile)
            .args(["--bind-to", "none"])
            .args(["--mca", "mpi_yield_when_idle", "1"])
            .args(["--mca", "pml", "ob1", "--mca", "btl", "tcp,self"])
            .args(["--mca", "btl_tcp_if_include", CUBE_IF])
            .args(["--mca", "oob_tcp_if_include", MGMT_NET])
            .args(["--mca", "rtc", "^hwloc", "--mca", "plm_rsh_agent"])
            .arg(&self.agent)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        c
    }

    pub(super) fn cubenet(&self, args: &[String]) -> Result<std::process::Output> {
        let out = Command::new(&self.cubenet)
            .args(["--name", &self.name])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .with_context(|| format!("running {}", self.cubenet.display()))?;
        if !out.status.success() {
            bail!(
                "cubenet --name {} {} failed: {}",
                self.name,
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out)
    }

    pub(super) fn build(&self) -> Result<()> {
        self.cubenet(&self.up_args).map(drop)
    }

    /// The nodes' cube addresses in rank order (`cubenet hosts`).
    pub(super) fn hosts(&self) -> Result<Vec<String>> {
        let out = self.cubenet(&["hosts".into()])?;
        Ok(parse_hosts(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Remove the network (and what runs in it) and the nodes' TMPDIRs.
    pub fn down(&self) -> Result<()> {
        self.cubenet(&["down".into()])?;
        let prefix = format!("ompi-{}-", self.name);
        for e in std::fs::read_dir("/tmp").into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        Ok(())
    }

    /// Remove and build again (after a failed run: no leftover daemons, fresh links).
    pub fn rebuild(&self) -> Result<()> {
        self.down()?;
        self.build()
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("cubenet-bench: removing the network {}: {e:#}", self.name);
        }
    }
}

/// The cube addresses of `cubenet hosts`' output (`rank namespace cube mgmt`), by rank.
pub fn parse_hosts(text: &str) -> Vec<String> {
    let mut v: Vec<(u32, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| Some((f[0].parse().ok()?, f[2].to_string())))?
        })
        .collect();
    v.sort();
    v.into_iter().map(|x| x.1).collect()
}

/// mpirun's rsh agent: `cubenet --name NAME rsh HOST CMD` with `TMPDIR=/tmp/ompi-NAME-HOST`
/// (Open MPI's session directories of different nodes otherwise collide in the shared /tmp:
/// "mkdir ... File exists").
pub(super) fn agent_script(cubenet: &Path, name: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # mpirun's rsh agent on the emulated network {name} (written by hypercube-bench cubenet):\n\
         # runs the command in the namespace of the node HOST, with a TMPDIR of its own.\n\
         while [ $# -gt 0 ]; do\n\
         \x20 case $1 in\n\
         \x20   -o | -p | -l | -i | -F) shift 2 ;;\n\
         \x20   -*) shift ;;\n\
         \x20   *) break ;;\n\
         \x20 esac\n\
         done\n\
         host=$1\n\
         shift\n\
         dir=/tmp/ompi-{name}-$host\n\
         exec '{}' --name {name} rsh \"$host\" \"mkdir -p $dir && TMPDIR=$dir && export TMPDIR && $*\"\n",
        cubenet.display()
    )
}

/// The programs of a run.
#[derive(Clone, Debug)]
pub(super) struct Tools {
    pub(super) hcrun: PathBuf,
    pub(super) osu: PathBuf,
    pub(super) cubenet: PathBuf,
    /// `target/`: the agent and hostfiles go to `target/cubenet-bench/`.
    pub(super) target: PathBuf,
}

impl Tools {
    /// The programs beside this one, copied into `target/cubenet-bench/bin/` (and used from
    /// there): a build in the shared target folder during the run then cannot swap them.
    pub(super) fn beside_me() -> Result<Tools> {
        let me = std::env::current_exe().context("finding this program")?;
        let dir = me.parent().context("this program has no folder")?;
        let target = dir.parent().unwrap_or(dir).to_path_buf();
        let bin = target.join("cubenet-bench/bin");
        std::fs::create_dir_all(&bin).with_context(|| format!("creating {}", bin.display()))?;
        let copy = |name: &str| -> Result<PathBuf> {
            let from = dir.join(name);
            if !from.is_file() {
                bail!(
                    "{} is missing; build first: cargo build --release -p launcher -p \
                     hypercube-bench",
                    from.display()
                );
            }
            let to = bin.join(name);
            let tmp = bin.join(format!(".{name}.{}", std::process::id()));
            std::fs::copy(&from, &tmp)
                .with_context(|| format!("copying {} to {}", from.display(), tmp.display()))?;
            std::fs::rename(&tmp, &to).with_context(|| format!("moving {}", to.display()))?;
            Ok(to)
        };
        Ok(Tools {
            hcrun: copy("hcrun")?,
            osu: copy("osu")?,
            cubenet: copy("cubenet")?,
            target,
        })
    }
}
