//! The comparison's peers written in C, kept in `crates/bench/c/`: `osu_mpi.c`, the OSU
//! method on MPI (run on Open MPI over loopback TCP or shared memory), and `tcp_floor.c`,
//! the raw loopback-TCP floor in C (a cross-check of the Rust `floor`).
//!
//! They are built on first use into `target/bench-c/` with the system's compilers, Open
//! MPI's `mpicc.openmpi` and `cc`, and again whenever a source is newer than its program.
//! Open MPI is named explicitly (`mpicc.openmpi`, `mpirun.openmpi`): MPICH may be installed
//! too and own the plain `mpicc`/`mpirun` names. A missing compiler is an error that names
//! the Debian packages to install (`scripts/install-bench-deps.sh` installs them).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::time::SystemTime;

use anyhow::{bail, Context};

/// Open MPI's C compiler wrapper, by its Debian name.
pub const MPICC: &str = "mpicc.openmpi";
/// Open MPI's launcher, by its Debian name.
pub const MPIRUN: &str = "mpirun.openmpi";
/// The C compiler of the C floor.
pub const CC: &str = "cc";
/// The Debian packages that provide [`MPICC`] and [`MPIRUN`].
pub const OPENMPI_PACKAGES: &str = "openmpi-bin libopenmpi-dev";
/// The Debian package that provides [`CC`].
pub const CC_PACKAGE: &str = "gcc";
/// The flags both programs are compiled with.
pub const CFLAGS: [&str; 3] = ["-O2", "-Wall", "-Wextra"];

/// The folder of the C sources in the checkout this crate was built from.
pub fn source_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("c")
}

/// How Open MPI moves messages between ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Loopback TCP (`--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo`): the
    /// like-for-like peer of our TCP links.
    Tcp,
    /// Shared memory (`--mca btl vader,self`): what an MPI user gets by default on one
    /// machine.
    Shm,
}

impl Transport {
    /// The name on the command line: `tcp` or `shm`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Shm => "shm",
        }
    }

    /// The MCA parameters that select this transport.
    pub fn mca(self) -> &'static [&'static str] {
        match self {
            Transport::Tcp => &[
                "--mca",
                "pml",
                "ob1",
                "--mca",
                "btl",
                "tcp,self",
                "--mca",
                "btl_tcp_if_include",
                "lo",
            ],
            Transport::Shm => &["--mca", "btl", "vader,self"],
        }
    }
}

impl FromStr for Transport {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Transport> {
        match s {
            "tcp" => Ok(Transport::Tcp),
            "shm" => Ok(Transport::Shm),
            _ => bail!("transport {s:?}: use tcp or shm"),
        }
    }
}

/// The command that runs `program` (built by [`CPrograms::mpi`]) on `np` Open MPI ranks:
/// `mpirun.openmpi -np NP --oversubscribe --mca mpi_yield_when_idle 1 <transport>
/// PROGRAM`. Ranks may outnumber the cores, and then yield the CPU when idle, as a fair
/// peer on a shared machine would be set up; running as root is allowed. Append the
/// benchmark's arguments.
pub fn mpirun(program: &Path, np: u32, transport: Transport) -> Command {
    let mut cmd = Command::new(MPIRUN);
    cmd.args(["-np", &np.to_string(), "--oversubscribe"])
        .args(["--mca", "mpi_yield_when_idle", "1"])
        .args(transport.mca())
        .arg(program)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    cmd
}

/// Where the C sources are and where their programs are built.
#[derive(Clone, Debug)]
pub struct CPrograms {
    /// The folder of `osu_mpi.c` and `tcp_floor.c` ([`source_dir`]).
    pub src: PathBuf,
    /// The folder the programs are built into (`target/bench-c/`).
    pub build: PathBuf,
}

impl CPrograms {
    /// The sources of this checkout, built into `bench-c/` of the cargo target folder
    /// that holds `exe` (`target/release/hypercube-bench` → `target/bench-c/`).
    pub fn for_exe(exe: &Path) -> CPrograms {
        let target = exe
            .parent()
            .and_then(Path::parent)
            .unwrap_or_else(|| Path::new("."));
        CPrograms {
            src: source_dir(),
            build: target.join("bench-c"),
        }
    }

    /// The MPI benchmark `osu_mpi`, built with `mpicc.openmpi` if it is missing or older
    /// than its source. Fails, naming the Debian packages, when Open MPI's compiler or
    /// launcher is not installed.
    pub fn mpi(&self) -> anyhow::Result<PathBuf> {
        self.openmpi_program("osu_mpi")
    }

    /// The many-to-many benchmark `m2m_mpi` (`MPI_Alltoallv` of a size matrix), built like
    /// [`CPrograms::mpi`].
    pub fn m2m_mpi(&self) -> anyhow::Result<PathBuf> {
        self.openmpi_program("m2m_mpi")
    }

    /// The MPI program `name` (`name.c`), built with Open MPI's compiler, once Open MPI's
    /// launcher is known to be installed.
    fn openmpi_program(&self, name: &str) -> anyhow::Result<PathBuf> {
        if find_in_path(MPIRUN).is_none() {
            bail!(
                "{MPIRUN} not found; on Debian: apt-get install {OPENMPI_PACKAGES} \
                 (scripts/install-bench-deps.sh does it when run as root)"
            );
        }
        self.build_one(name, MPICC, OPENMPI_PACKAGES)
    }

    /// The C floor `tcp_floor`, built with `cc` if it is missing or older than its source.
    pub fn floor(&self) -> anyhow::Result<PathBuf> {
        self.build_one("tcp_floor", CC, CC_PACKAGE)
    }

    fn build_one(&self, name: &str, compiler: &str, packages: &str) -> anyhow::Result<PathBuf> {
        let src = self.src.join(format!("{name}.c"));
        let out = self.build.join(name);
        build(compiler, packages, &src, &out)?;
        Ok(out)
    }
}

/// The modification time of `p`, if it exists.
fn modified(p: &Path) -> Option<SystemTime> {
    p.metadata().and_then(|m| m.modified()).ok()
}

/// Compile `src` into `out` with `compiler` and [`CFLAGS`], unless `out` exists and is not
/// older than `src`. The program is written beside `out` under a temporary name and moved
/// into place, so that two comparisons starting together never run a half-written one.
/// Fails, naming `packages`, when the compiler is not installed; with the compiler's
/// messages when it fails.
pub fn build(compiler: &str, packages: &str, src: &Path, out: &Path) -> anyhow::Result<()> {
    let Some(src_time) = modified(src) else {
        bail!(
            "{} not found (the C sources of the comparison are read from the checkout \
             hypercube-bench was built in)",
            src.display()
        );
    };
    if modified(out).is_some_and(|t| t >= src_time) {
        return Ok(());
    }
    if find_in_path(compiler).is_none() {
        bail!(
            "{compiler} not found; on Debian: apt-get install {packages} \
             (scripts/install-bench-deps.sh does it when run as root)"
        );
    }
    let dir = out.parent().context("the program's path has no folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = out.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let r = Command::new(compiler)
        .args(CFLAGS)
        .arg("-o")
        .arg(&tmp)
        .arg(src)
        .output()
        .with_context(|| format!("running {compiler}"))?;
    if !r.status.success() {
        let _ = std::fs::remove_file(&tmp);
        bail!(
            "{compiler} failed on {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&r.stderr).trim_end()
        );
    }
    std::fs::rename(&tmp, out).with_context(|| format!("moving {} into place", out.display()))?;
    eprintln!("hypercube-bench: built {} with {compiler}", out.display());
    Ok(())
}

/// The first executable file called `name` in the folders of `PATH`.
pub fn find_in_path(name: impl AsRef<OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name.as_ref()))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transports_and_the_launch_line() {
        assert_eq!("tcp".parse::<Transport>().unwrap(), Transport::Tcp);
        assert_eq!("shm".parse::<Transport>().unwrap(), Transport::Shm);
        assert!("ib".parse::<Transport>().is_err());
        let cmd = mpirun(Path::new("osu_mpi"), 4, Transport::Tcp);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(cmd.get_program(), MPIRUN);
        assert_eq!(
            args.join(" "),
            "-np 4 --oversubscribe --mca mpi_yield_when_idle 1 --mca pml ob1 --mca btl \
             tcp,self --mca btl_tcp_if_include lo osu_mpi"
        );
    }

    #[test]
    fn the_sources_are_in_the_tree_and_a_missing_compiler_names_the_packages() {
        let c = CPrograms::for_exe(Path::new("/x/target/release/hypercube-bench"));
        assert_eq!(c.build, Path::new("/x/target/bench-c"));
        assert!(c.src.join("osu_mpi.c").is_file());
        assert!(c.src.join("tcp_floor.c").is_file());
        let dir = std::env::temp_dir().join(format!("hcb-peers-{}", std::process::id()));
        let e = build(
            "no-such-compiler.openmpi",
            OPENMPI_PACKAGES,
            &c.src.join("osu_mpi.c"),
            &dir.join("osu_mpi"),
        )
        .unwrap_err();
        assert!(e.to_string().contains(OPENMPI_PACKAGES), "{e}");
        assert!(
            !dir.exists(),
            "nothing is created when the compiler is missing"
        );
    }
}
