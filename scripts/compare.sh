#!/usr/bin/env bash
# The performance comparison in one command: hypercube vs. Open MPI (TCP and shm, running
# the project's own MPI benchmark crates/bench/c/osu_mpi.c) vs. the raw loopback-TCP floors
# (Rust, and C as a cross-check), for np = 2, 4, 8, 16, three repetitions; writes
# docs/perf/{results.csv,README.md,*.svg}.
#
#   scripts/compare.sh                      the full run: 480 runs, about 8-9 min on the 2-core VM
#                                           (its run time is in docs/perf/README.md)
#   scripts/compare.sh --quick --out /tmp/perf   a smoke run in about a minute
#   scripts/compare.sh --np 4,8 --reps 1 --benches latency,allreduce --no-shm
#   scripts/compare.sh --help               every option
#
# First, scripts/install-bench-deps.sh installs Open MPI (openmpi-bin libopenmpi-dev) if it
# is missing and this runs as root, or says what to install. The C programs are built on
# first use into target/bench-c/. Without Open MPI the comparison still runs ours and the
# floors, and the report says what it skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
wants_mpi=1
for a in "$@"; do
  case $a in --no-mpi | -h | --help) wants_mpi=0 ;; esac
done
if ((wants_mpi)) && ! scripts/install-bench-deps.sh; then
  echo "compare.sh: going on without Open MPI (install it as above to compare with it)" >&2
fi
cargo build --release -q -p launcher -p hypercube-bench
exec "$root/target/release/hypercube-bench" compare "$@"
