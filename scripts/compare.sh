#!/usr/bin/env bash
# The performance comparison in one command: hypercube vs. Open MPI (TCP and shm, through
# /work/shared/anchors/run-mpi.sh) vs. the raw loopback-TCP floor, for np = 2, 4, 8, 16,
# three repetitions; writes docs/perf/{results.csv,README.md,*.svg}.
#
#   scripts/compare.sh                      the full run: 444 runs, about 15-20 min on the 2-core VM
#                                           (its run time is in docs/perf/README.md)
#   scripts/compare.sh --quick --out /tmp/perf   a smoke run in under a minute
#   scripts/compare.sh --np 4,8 --reps 1 --benches latency,allreduce --no-shm
#   scripts/compare.sh --help               every option
#
# Open MPI is installed by run-mpi.sh on first use if missing; when that is impossible the
# comparison still runs ours and the floor and says what it skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release -q -p launcher -p hypercube-bench
exec "$root/target/release/hypercube-bench" compare "$@"
