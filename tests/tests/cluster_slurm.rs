//! Node programs under Slurm, unchanged: a one-node cluster (`slurmctld`, `slurmd`, `munged`
//! from Debian's packages) started by this test (`tests/cluster/slurm-up.sh`) and stopped
//! afterwards (`slurm-down.sh`), then `srun --mpi=pmi2` of the suites; a size that is not a
//! power of two and a missing `--mpi=pmi2` fail at once with their messages.
//!
//! Engines missing: see `hypercube_tests::cluster::require`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use hypercube_tests::cluster::{self, normalize_labels, TagGuard};
use hypercube_tests::{collective_checks, run_command, JobOutput, IPSC_CHECKS};

const COLL: &str = env!("CARGO_BIN_EXE_coll_suite");
const IPSC: &str = env!("CARGO_BIN_EXE_ipsc_suite");

/// A one-node Slurm cluster, stopped and removed when dropped.
struct Slurm {
    dir: PathBuf,
    conf: String,
}

impl Slurm {
    fn up(tag: &str) -> Slurm {
        // Short: munge's and slurm's socket paths live under it.
        let dir = PathBuf::from(format!("/tmp/hcslurm-{tag}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating the state dir");
        let out = Command::new(cluster::script("slurm-up.sh"))
            .arg(&dir)
            .output()
            .expect("running slurm-up.sh");
        let mut s = Slurm {
            dir,
            conf: String::new(),
        };
        assert!(
            out.status.success(),
            "slurm-up.sh failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        s.conf = text
            .lines()
            .find_map(|l| l.strip_prefix("export SLURM_CONF="))
            .unwrap_or_else(|| panic!("slurm-up.sh printed no SLURM_CONF: {text}"))
            .trim()
            .to_string();
        s
    }

    fn srun(&self, tag: &str, args: &[&str], timeout: Duration) -> JobOutput {
        let mut cmd = Command::new("srun");
        cmd.args(["--label", "--quiet"])
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .env("HC_TEST_TAG", tag);
        normalize_labels(run_command(cmd, timeout))
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let _ = Command::new(cluster::script("slurm-down.sh"))
            .arg(&self.dir)
            .status();
    }
}

#[test]
fn slurm_one_node_srun_mpi_pmi2() {
    if !cluster::require("slurm_one_node_srun_mpi_pmi2") {
        return;
    }
    let _one = cluster::serial();
    let tag = cluster::tag();
    let _g = TagGuard(tag.clone());
    let slurm = Slurm::up(&tag);

    let coll = collective_checks();
    let coll: Vec<&str> = coll.iter().map(String::as_str).collect();
    for (prog, checks) in [(COLL, &coll[..]), (IPSC, IPSC_CHECKS)] {
        let out = slurm.srun(
            &tag,
            &["-n", "8", "--mpi=pmi2", prog],
            Duration::from_secs(180),
        );
        out.assert_ok().assert_every_rank_passed(8, checks);
    }

    // An example, unchanged.
    let anti = hypercube_tests::example("antipodal");
    let out = slurm.srun(
        &tag,
        &["-n", "8", "--mpi=pmi2", anti.to_str().unwrap()],
        Duration::from_secs(60),
    );
    cluster::assert_antipodal(&out, 8);

    // Six tasks: every rank knows at once that the cube needs a power of two.
    let out = slurm.srun(
        &tag,
        &["-n", "6", "--mpi=pmi2", COLL],
        Duration::from_secs(60),
    );
    cluster::assert_refused_size(&out, 6, &tag);

    // Without a PMI connection: the hint, not a job of one node per task.
    let out = slurm.srun(
        &tag,
        &["-n", "4", "--mpi=none", COLL],
        Duration::from_secs(60),
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stderr.contains("--mpi=pmi2"), "{}", out.stderr);
    assert_eq!(
        cluster::wait_gone(&tag, Duration::from_secs(5)),
        Vec::<u32>::new()
    );
}
