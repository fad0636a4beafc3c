#!/usr/bin/env bash
# Start-up time and network figures under the cluster engines, measured in one run:
#
#   1. start-up (whole command, `hello` example) of 16- and 64-rank jobs under hcrun,
#      Hydra's mpiexec on this host, and Hydra over 4 "hosts" (network namespaces on a
#      bridge, tests/cluster/netns-up.sh), REPS runs each: min / median / max;
#   2. over the same 4 namespaces: the OSU latency between two hosts and an allreduce sweep
#      at 16 ranks, ours (osu through Hydra) next to Open MPI's (its mpirun started through
#      the same ssh stand-in, tests/cluster/netns-exec.sh), when Open MPI is installed
#      (scripts/install-bench-deps.sh installs it; hypercube-bench builds its MPI peer,
#      crates/bench/c/osu_mpi.c).
#
#   sudo scripts/cluster-bench.sh [REPS]     (root: it makes and removes the namespaces)
#
# Prints a Markdown report on stdout (docs/perf/clusters.md holds one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
reps=${1:-5}
[ "$(id -u)" = 0 ] || { echo "cluster-bench.sh: run as root (network namespaces)" >&2; exit 2; }
command -v mpiexec.hydra >/dev/null || { echo "cluster-bench.sh: needs MPICH (apt-get install mpich)" >&2; exit 2; }

cargo build --release -q -p launcher -p hypercube-bench --bins
cargo build --release -q -p hypercube --example hello
hcrun=$root/target/release/hcrun
hello=$root/target/release/examples/hello
osu=$root/target/release/osu
exec_script=$root/tests/cluster/netns-exec.sh

tag="b$$"
trap '"$root/tests/cluster/netns-down.sh" "$tag" 4' EXIT
mapfile -t net < <("$root/tests/cluster/netns-up.sh" "$tag" 4)
bridge=${net[0]}
hosts=("${net[@]:1}")
hostlist=$(IFS=,; echo "${hosts[*]}")
subnet="${hosts[0]%.*}.0/24"

# ms of one run of "$@" (output discarded; a failure stops the script).
ms() {
    local s e
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2 || true; exit 1; }
    e=$(date +%s%N)
    echo $(((e - s) / 1000000))
}

# "min / median / max" of REPS runs of "$@".
stats() {
    local xs=() i
    for ((i = 0; i < reps; i++)); do xs+=("$(ms "$@")"); done
    printf '%s\n' "${xs[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%d / %d / %d", a[1], a[int((NR+1)/2)], a[NR]}'
}

hydra_ns=(mpiexec.hydra -launcher ssh -launcher-exec "$exec_script" -iface "$bridge" -hosts "$hostlist")

echo "# Cluster engines: start-up and network figures"
echo
echo "Run of \`scripts/cluster-bench.sh $reps\` on $(date -u +%Y-%m-%d), $(nproc) cores,"
echo "$(uname -r); MPICH $(mpiexec.hydra --version | awk '/Version:/ {print $2; exit}')."
echo
echo "## Start-up: the whole command, \`hello\` example, ms (min / median / max of $reps)"
echo
echo "| ranks | hcrun | Hydra, one host | Hydra, 4 namespaces |"
echo "|---|---|---|---|"
for d in 4 6; do
    n=$((1 << d))
    a=$(stats "$hcrun" --dim "$d" -- "$hello")
    b=$(stats mpiexec.hydra -n "$n" "$hello")
    c=$(stats "${hydra_ns[@]}" -n "$n" "$hello")
    echo "| $n | $a | $b | $c |"
done
echo

# Open MPI across the same namespaces, if it is here.
mpi_bin=""
if command -v mpirun.openmpi >/dev/null; then
    # hypercube-bench builds its MPI peer (crates/bench/c/osu_mpi.c) into target/bench-c/
    # on first use; a 2-rank run on this host does that.
    if "$root/target/release/hypercube-bench" mpi 2 tcp latency -m 1:1 >/dev/null 2>&1; then
        mpi_bin=$root/target/bench-c/osu_mpi
    fi
fi
ompi() {
    local np=$1
    shift
    local hl=""
    for h in "${hosts[@]}"; do hl+="$h:$(((np + 3) / 4)),"; done
    timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -np "$np" -H "${hl%,}" \
        --mca plm_rsh_agent "$exec_script" --mca pml ob1 --mca btl tcp,self \
        --mca btl_tcp_if_include "$subnet" --mca oob_tcp_if_include "$subnet" \
        --map-by node "$mpi_bin" "$@"
}

# One table: ours (osu through Hydra across the namespaces) beside Open MPI's when it ran.
# compare TITLE NP BENCH RANGE
compare() {
    local title=$1 np=$2 bench=$3 range=$4 ours theirs=""
    echo "## Over 4 namespaces: $title"
    echo
    ours=$("${hydra_ns[@]}" -n "$np" "$osu" "$bench" -m "$range" | grep -v '^#')
    if [ -n "$mpi_bin" ]; then
        theirs=$(ompi "$np" "$bench" -m "$range" | grep -v '^#' || true)
    fi
    if [ -n "$theirs" ]; then
        [ "$(echo "$theirs" | wc -l)" -lt "$(echo "$ours" | wc -l)" ] &&
            echo "(Open MPI did not finish within 120 s: its rows stop where it got to)" && echo
        echo "| bytes | hypercube | Open MPI TCP | ratio |"
        echo "|---|---|---|---|"
        # Every row of ours; Open MPI's where it got that far (— where it did not).
        join -a 1 -e - -o 0,1.2,2.2 <(echo "$ours") <(echo "$theirs") |
            awk '{ if ($3 == "-") printf "| %s | %.2f | — | — |\n", $1, $2;
                   else printf "| %s | %.2f | %.2f | %.3g× |\n", $1, $2, $3, $2/$3 }'
    else
        echo "(Open MPI not installed, or it did not finish within 120 s across the namespaces: ours only)"
        echo
        echo "| bytes | hypercube |"
        echo "|---|---|"
        echo "$ours" | awk '{printf "| %s | %.2f |\n", $1, $2}'
    fi
    echo
}

compare "OSU latency between two hosts (µs)" 2 latency 1:65536
compare "allreduce, 16 ranks (µs per call)" 16 allreduce 8:1048576
