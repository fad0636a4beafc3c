#!/usr/bin/env bash
# The automatic choice against each alternative, in one job (`osu OP --alg auto --vs-alg
# ALG`): d = 2, 3, 4 on loopback, 8 B / 64 KiB / 1 MiB. Prints lines of
# "d op size auto/ALG ratio slowest", auto / ALG of the averages and of the slowest ranks'
# means (below 1: the automatic choice is the faster; judge by the slowest; docs/perf/analysis.md, "Session of
# 2026-11-27 (08:36– UTC)"). Check the method first: the same algorithm against itself
# (`--alg hypercube --vs-alg hypercube`) should give 0.95–1.05. About 2.5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p launcher -p hypercube-bench
B=target/release
run() { # d op size alg
  r=$("$B/hcrun" --dim "$1" -- "$B/osu" "$2" -m "$3:$3" -i 300 --alg auto --vs-alg "$4" 2>&1 \
    | sed -n 's/.*# vs .* = \([0-9.]*\); slowest rank .* = \([0-9.]*\)$/\1 \2/p')
  echo "$1 $2 $3 auto/$4 ${r:-failed}"
}
for d in 2 3 4; do
  for s in 8 65536 1048576; do
    for a in hypercube scatter-allgather all-port; do run "$d" bcast "$s" "$a"; done
    for a in hypercube ecube all-port; do run "$d" scatter "$s" "$a"; run "$d" gather "$s" "$a"; done
    for a in store-forward pairwise ecube; do run "$d" alltoall "$s" "$a"; done
    for a in hypercube reduce-scatter-allgather ring; do run "$d" allreduce "$s" "$a"; done
    for a in hypercube ring; do run "$d" allgather "$s" "$a"; done
    for a in hypercube ring; do run "$d" reduce_scatter "$s" "$a"; done
  done
done
