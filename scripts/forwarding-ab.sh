#!/usr/bin/env bash
# Cut-through against store-and-forward on this machine: the same benchmark in both
# regimes (HYPERCUBE_FORWARDING), alternating, REPS times each, with the whole job's CPU
# time (user + system of hcrun and every rank, from /usr/bin/time) beside the OSU figure.
#
#   scripts/forwarding-ab.sh DIM REPS OSU-ARGS...
#   scripts/forwarding-ab.sh 2 5 latency --peer 3 -m 1048576:1048576 -i 200
#   scripts/forwarding-ab.sh 3 3 scatter -m 1048576:1048576 -i 50
#
# Prints one line per run: regime, the OSU figure of the last size (µs, or MB/s for bw),
# wall seconds, CPU seconds; then the median of each per regime. Used for the tables in
# docs/perf/analysis.md ("Forwarding").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if (($# < 3)); then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
dim=$1 reps=$2
shift 2
[[ -x /usr/bin/time ]] || { echo "forwarding-ab.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
cargo build --release -q -p launcher -p hypercube-bench
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((r = 0; r < reps; r++)); do
  for regime in cut-through store-and-forward; do
    HYPERCUBE_FORWARDING=$regime /usr/bin/time -f "%e %U %S" -o "$out/time" \
      target/release/hcrun --dim "$dim" --no-prefix -- target/release/osu "$@" >"$out/osu"
    figure=$(awk '/^[0-9]/ { v = $2 } END { print v }' "$out/osu")
    read -r wall user sys <"$out/time"
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    echo "$regime $figure $wall $cpu" | tee -a "$out/all"
  done
done
echo "# medians: regime figure wall_s cpu_s"
for regime in cut-through store-and-forward; do
  med() { grep "^$regime " "$out/all" | awk -v c="$1" '{ print $c }' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
  echo "$regime $(med 2) $(med 3) $(med 4)"
done
