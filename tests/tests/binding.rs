//! `hcrun --bind-to core`: every rank runs on one core, rank r on the (r mod n)-th of the
//! n cores hcrun may use; without it, every rank may use all of them.

use std::time::Duration;

use hypercube_tests::run_hcrun;

/// The cores of a `Cpus_allowed_list` ("0-3,8,10-11").
fn parse_list(list: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()),
            None => out.push(part.parse().unwrap()),
        }
    }
    out
}

/// The cores this test process may use.
fn allowed() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    parse_list(list)
}

/// Each rank's cores, by rank, from the `affinity` program's lines of a 2-cube job.
fn ranks_cores(extra: &[&str]) -> Vec<Vec<usize>> {
    let mut args = vec!["--dim", "2", "--timeout-s", "60"];
    args.extend_from_slice(extra);
    let out = run_hcrun(
        &args,
        &[env!("CARGO_BIN_EXE_affinity")],
        &[],
        Duration::from_secs(90),
    );
    assert!(out.status.success(), "{}\n{}", out.stdout, out.stderr);
    let mut cores = vec![Vec::new(); 4];
    for line in out.stdout.lines() {
        let Some(rest) = line.split_once("rank ").map(|(_, r)| r) else {
            continue;
        };
        let (rank, list) = rest.split_once(" cpus ").unwrap();
        cores[rank.parse::<usize>().unwrap()] = parse_list(list);
    }
    assert!(cores.iter().all(|c| !c.is_empty()), "{}", out.stdout);
    cores
}

#[test]
fn bind_to_core_puts_each_rank_on_one_core_round_robin() {
    let all = allowed();
    let cores = ranks_cores(&["--bind-to", "core"]);
    for (r, c) in cores.iter().enumerate() {
        assert_eq!(c, &vec![all[r % all.len()]], "rank {r}: {cores:?}");
    }
    if all.len() > 1 {
        assert_ne!(cores[0], cores[1], "neighbours 0 and 1 share a core");
    }
}

#[test]
fn without_binding_every_rank_may_use_every_core() {
    let all = allowed();
    for c in ranks_cores(&[]) {
        assert_eq!(c, all);
    }
}
