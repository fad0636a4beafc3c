#!/usr/bin/env bash
# Bytes on the wire against time: one collective, ours and Open MPI's over loopback TCP,
# with the bytes every call puts through the loopback device (all links, all hops, headers
# and ACKs included: the `lo` TX counter of /proc/net/dev) beside the wall time per call.
# If the time per MiB moved is the same on both sides, the time ratio is the volume ratio:
# the difference is how many bytes the algorithm and the topology move, not how fast each
# byte goes.
#
#   scripts/link-volume.sh NP REPS BENCH SIZE [OSU-ARGS...]
#   scripts/link-volume.sh 8 3 alltoall 1048576
#   scripts/link-volume.sh 16 3 scatter 1048576
#
# Each side runs twice per repetition (10 and 30 timed calls; OSU's iteration rule divides
# -i by 10 above 8 KiB), and the difference of the two runs is taken, so start-up, warm-up
# and finalize cancel. Prints one line per run pair, then the medians and the ratios
# (ours / Open MPI's). Needs nothing else on the machine's loopback while it runs. Used
# for "Bytes are the time" in docs/perf/analysis.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if (($# < 4)); then
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
np=$1 reps=$2 bench=$3 size=$4
shift 4
dim=0
while ((1 << dim < np)); do dim=$((dim + 1)); done
((1 << dim == np)) || { echo "link-volume.sh: NP must be a power of two" >&2; exit 2; }
((size > 8192)) || { echo "link-volume.sh: SIZE must be above 8 KiB (the -i/10 rule)" >&2; exit 2; }
cargo build --release -q -p launcher -p hypercube-bench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

lo_tx() { awk -F'[: ]+' '$2 == "lo" { print $11 }' /proc/net/dev; }
now_ns() { date +%s%N; }

# One measurement: run "$@" with -i ITERS; print "tx_bytes wall_ns".
measure() {
  local iters=$1
  shift
  local b0 t0 b1 t1
  b0=$(lo_tx) t0=$(now_ns)
  "$@" -m "$size:$size" -i "$iters" -x 2 >/dev/null
  t1=$(now_ns) b1=$(lo_tx)
  echo "$((b1 - b0)) $((t1 - t0))"
}

run_pair() {
  local imp=$1
  shift
  local a b
  a=$(measure 100 "$@")
  b=$(measure 300 "$@")
  read -r ba ta <<<"$a"
  read -r bb tb <<<"$b"
  # 20 more calls in the second run.
  awk -v imp="$imp" -v db=$((bb - ba)) -v dt=$((tb - ta)) 'BEGIN {
    mib = db / 20 / 1048576; ms = dt / 20 / 1e6;
    printf "%s %.2f %.3f %.1f\n", imp, mib, ms, (mib > 0 ? ms * 1000 / mib : 0) }'
}

echo "# imp MiB_per_call ms_per_call us_per_MiB"
for ((r = 0; r < reps; r++)); do
  run_pair ours target/release/hcrun --dim "$dim" --no-prefix -- target/release/osu "$bench" "$@" \
    | tee -a "$out/all"
  run_pair ompi target/release/hypercube-bench mpi "$np" tcp "$bench" | tee -a "$out/all"
done
med() { grep "^$1 " "$out/all" | awk -v c="$2" '{ print $c }' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "# medians: imp MiB_per_call ms_per_call us_per_MiB"
for imp in ours ompi; do
  echo "$imp $(med $imp 2) $(med $imp 3) $(med $imp 4)"
done
awk -v vo="$(med ours 2)" -v vm="$(med ompi 2)" -v to="$(med ours 3)" -v tm="$(med ompi 3)" \
  -v po="$(med ours 4)" -v pm="$(med ompi 4)" 'BEGIN {
  printf "# ours/ompi: volume %.2f, time per call %.2f, time per MiB %.2f\n", vo / vm, to / tm, po / pm }'
