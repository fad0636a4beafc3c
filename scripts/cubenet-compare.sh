#!/usr/bin/env bash
# Ours vs. Open MPI on the same emulated hypercube network (a namespace per node, a
# tbf-shaped veth pair per cube edge), beside the all-port link bound: for d = 3, 4 and
# links of 100 Mbit/s and 1 Gbit/s, the one-hop stream rate, then latency, bcast, reduce,
# allreduce, allgather, reduce_scatter, alltoall, scatter, gather, scan and barrier at
# 8 B, 1 KiB, 64 KiB, 256 KiB and 1 MiB; writes docs/perf/cubenet.md and
# docs/perf/cubenet/{results.csv,run-info.txt,*.svg}.
#
#   scripts/cubenet-compare.sh                       the full run: about 500 runs, ~13 min on the
#                                                    2-core VM (--reps 2, as committed: twice that),
#                                                    plus any wait for the lock below
#                                                    (its run time is in docs/perf/cubenet.md)
#   scripts/cubenet-compare.sh --quick --out /tmp/cn a smoke run in about two minutes
#   scripts/cubenet-compare.sh --dims 4 --rates 100mbit --benches alltoall,bcast
#   scripts/cubenet-compare.sh --report              re-render the page from results.csv
#   scripts/cubenet-compare.sh --help                every option
#
# Root only (network namespaces in this host for Open MPI; hcrun --link-rate builds ours
# privately per job). Every run takes /tmp/hc-bench.lock, so it waits for (and holds off)
# the checkout's other benchmarks. Open MPI runs on a network called hcbench (--name)
# that is removed at the end, also on error or Ctrl-C; a run stopped early writes what it
# measured to OUT/cubenet-stopped/ and leaves the last complete run's page as it was. MPICH is not run (this machine's is
# ch4:ucx, which spins). scripts/install-bench-deps.sh installs Open MPI if it is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
wants_mpi=1
for a in "$@"; do
  case $a in --no-mpi | --report | -h | --help) wants_mpi=0 ;; esac
done
if ((wants_mpi)) && ! scripts/install-bench-deps.sh; then
  echo "cubenet-compare.sh: going on without Open MPI (install it as above to compare with it)" >&2
fi
cargo build --release -q -p launcher -p hypercube-bench
exec "$root/target/release/hypercube-bench" cubenet "$@"
