#!/bin/bash
# How busy the machine's cores were while COMMAND ran: the ticks (of 10 ms, all cores
# together) that /proc/stat counts as user, nice, system, irq and softirq time against
# idle and iowait, read before and after.
#
#   scripts/cpu-busy.sh target/release/hcrun --dim 3 -- target/release/osu allreduce -m 1048576:1048576 -i 300
#   ... busy 148 idle 9 ticks: 94% busy (user 52 sys 71 softirq 25)
#
# The "busy" figures of docs/perf/analysis.md ("Third session of 2026-11-27") are its
# first number. Whole machine, so run nothing else beside it.
set -euo pipefail
read -r _ u n s i w q sq _ < /proc/stat
"$@"
read -r _ u2 n2 s2 i2 w2 q2 sq2 _ < /proc/stat
busy=$(((u2 + n2 + s2 + q2 + sq2) - (u + n + s + q + sq)))
idle=$(((i2 + w2) - (i + w)))
echo "busy $busy idle $idle ticks: $((100 * busy / (busy + idle)))% busy" \
  "(user $((u2 - u)) sys $((s2 - s)) softirq $((sq2 - sq)))"
