#!/usr/bin/env bash
# The typed forms against the byte form, each pair in one job (`osu --form F --vs bytes`):
# d = 2 and 3, all-gather / all-to-all / broadcast, 8 B / 64 KiB / 1 MiB, REPS jobs per
# cell. Prints "rep d op size form ratio slowest" lines (typed / bytes: of the averages, and
# of the slowest ranks' means; docs/perf/typed.md,
# "One job, two forms"). Loopback only; takes about 50 s per repetition.
#
#   scripts/typed-vs.sh [REPS] [FORMS...]     # defaults: 3, slice into buf
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
shift || true
forms=${*:-slice into buf}
cargo build --release -q -p launcher -p hypercube-bench
B=target/release
for rep in $(seq 1 "$reps"); do
  for d in 2 3; do for op in allgather alltoall bcast; do for s in 8 65536 1048576; do
    for f in $forms; do
      r=$("$B/hcrun" --dim "$d" -- "$B/osu" "$op" -m "$s:$s" -i 1000 --form "$f" --vs bytes 2>&1 \
        | sed -n 's/.*# vs .* = \([0-9.]*\); slowest rank .* = \([0-9.]*\)$/\1 \2/p')
      echo "$rep $d $op $s $f ${r:-failed}"
    done
  done; done; done
done
