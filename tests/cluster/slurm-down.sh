#!/usr/bin/env bash
# slurm-down.sh STATE_DIR
#
# Stops the one-node cluster that slurm-up.sh started in STATE_DIR and
# removes STATE_DIR. Idempotent: a missing STATE_DIR, missing pid files or
# daemons that are already gone are fine, and it can be run any number of
# times.
#
# It kills only processes of that cluster:
#   1. jobs still known to its slurmctld are cancelled (scancel), so that
#      slurmstepd ends their tasks the usual way (bounded wait);
#   2. the daemons whose PIDs are in STATE_DIR/{slurmd,slurmctld,munged}.pid
#      get SIGTERM, then SIGKILL after a grace period. A PID is signalled
#      only if that process still is this cluster's (see ours() below), so
#      a recycled PID is never hit;
#   3. what is left of the cluster is killed (SIGKILL) with all its
#      descendants: a slurmstepd left behind by slurmd (it holds a file
#      under STATE_DIR/log/ open), an srun with
#      SLURM_CONF=STATE_DIR/slurm.conf in its environment (one that lost
#      its controller would wait for ever) and the tasks of its steps.
# This script and its ancestors are never signalled.
# Then STATE_DIR is removed, but only if it holds slurm-up.sh's marker file.
#
# Tunables (environment):
#   SLURM_DOWN_GRACE     seconds between SIGTERM and SIGKILL (10)
#   SLURM_DOWN_KEEP_DIR  1: stop everything but keep STATE_DIR (logs)
#   SLURM_DOWN_KEEP_MUNGE 1: leave munged running (used by slurm-up.sh)
set -eu

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 STATE_DIR" >&2
    exit 2
fi

log() { echo "slurm-down: $*" >&2 || true; }

# Finish the cleanup even if the caller is interrupted meanwhile (Ctrl-C,
# hang-up) or stops reading our stderr (a closed pipe must not kill us half
# way). Every wait below is bounded, so this cannot hang for long.
trap '' INT HUP PIPE

grace=${SLURM_DOWN_GRACE:-10}
keep_dir=${SLURM_DOWN_KEEP_DIR:-0}
keep_munge=${SLURM_DOWN_KEEP_MUNGE:-0}

[ -d "$1" ] || exit 0                     # already down and removed
state=$(cd "$1" && pwd -P)
if [ ! -e "$state/.hypercube-slurm" ]; then
    log "$state was not set up by slurm-up.sh (no marker file); leaving it alone"
    exit 0
fi
marker="HYPERCUBE_SLURM_STATE_DIR=$state"

# This script and its ancestors (e.g. the test that runs it) are never
# signalled, whatever they have open.
self_chain=" "
p=$$
while [ -n "$p" ] && [ "$p" -gt 1 ] 2>/dev/null; do
    self_chain="$self_chain$p "
    p=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2) || break
done

# ours PID: the process exists, is not a zombie, is not this script or one
# of its ancestors, and belongs to this cluster:
#   - it has the marker variable in its environment (the daemons, as
#     started by slurm-up.sh), or
#   - it has a file under STATE_DIR/log/ open (slurmstepd, which wipes its
#     environment but keeps slurmd's log file open), or
#   - it has SLURM_CONF=STATE_DIR/slurm.conf in its environment and is an
#     srun or a task of a step (SLURM_PROCID set). Other processes that
#     merely have SLURM_CONF exported (the caller's shell, a pipeline
#     around this script) are left alone.
# A zombie matches none of these, and neither does a recycled PID.
conf_var="SLURM_CONF=$state/slurm.conf"
ours() {
    [ -n "$1" ] && [ -d "/proc/$1" ] || return 1
    case $self_chain in *" $1 "*) return 1 ;; esac
    if grep -qzxF "$marker" "/proc/$1/environ" 2>/dev/null; then
        return 0
    fi
    if [ -n "$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 -lname "$state/log/*" 2>/dev/null | head -n 1)" ]; then
        return 0
    fi
    if grep -qzxF "$conf_var" "/proc/$1/environ" 2>/dev/null; then
        [ "$(cat "/proc/$1/comm" 2>/dev/null)" = srun ] && return 0
        grep -qz '^SLURM_PROCID=' "/proc/$1/environ" 2>/dev/null && return 0
    fi
    return 1
}

# wait_gone SECONDS PID...: poll every 0.2 s until none of PIDs is ours
# any more; return 1 if some still are when time is up.
wait_gone() {
    limit=$1; shift
    start=$(date +%s)
    while :; do
        left=""
        for p in "$@"; do
            if ours "$p"; then left="$left $p"; fi
        done
        [ -n "$left" ] || return 0
        [ $(( $(date +%s) - start )) -lt "$limit" ] || return 1
        sleep 0.2
    done
}

# stop NAME...: SIGTERM the recorded daemons, wait, SIGKILL what is left.
stop() {
    pids=""
    for name in "$@"; do
        p=$(cat "$state/$name.pid" 2>/dev/null || true)
        if ours "$p"; then
            kill -TERM "$p" 2>/dev/null || true
            pids="$pids $p"
        fi
    done
    [ -n "$pids" ] || return 0
    # shellcheck disable=SC2086
    if ! wait_gone "$grace" $pids; then
        for p in $pids; do
            if ours "$p"; then
                log "pid $p did not stop within ${grace}s; SIGKILL"
                kill -KILL "$p" 2>/dev/null || true
            fi
        done
        # shellcheck disable=SC2086
        wait_gone 5 $pids || log "warning: some of$pids survived SIGKILL"
    fi
}

ctld_pid=$(cat "$state/slurmctld.pid" 2>/dev/null || true)

# 1. Cancel the jobs that are still active (e.g. a test that died
#    mid-srun), while slurmctld and slurmd can still end them cleanly, then
#    wait (bounded) until no job is left, completing ones included, so that
#    their slurmstepd have finished before slurmd goes.
if ours "$ctld_pid" && [ -e "$state/slurm.conf" ]; then
    export SLURM_CONF="$state/slurm.conf"
    jobs=$(timeout 5 squeue -h -t PD,CF,R,S,ST -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
        log "cancelling jobs:" $jobs
        # shellcheck disable=SC2086
        timeout 5 scancel $jobs 2>/dev/null || true
    fi
    start=$(date +%s)
    while [ -n "$(timeout 5 squeue -h -o %i 2>/dev/null || true)" ] &&
          [ $(( $(date +%s) - start )) -lt 10 ]; do
        sleep 0.2
    done
    unset SLURM_CONF
fi

# 2. The daemons: slurmd and slurmctld first, munged last (the Slurm
#    daemons still authenticate while shutting down).
stop slurmd slurmctld
[ "$keep_munge" = 1 ] || stop munged

# 3. Strays: other processes of this cluster (see ours(): a slurmstepd left
#    running by slurmd, an srun whose controller is gone, their tasks),
#    plus all their descendants, minus a munged we were asked to keep.
keep_pid=""
[ "$keep_munge" != 1 ] || keep_pid=$(cat "$state/munged.pid" 2>/dev/null || true)
candidates=$( {
        grep -lzxF -e "$marker" -e "$conf_var" /proc/[0-9]*/environ 2>/dev/null || true
        find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -lname "$state/log/*" 2>/dev/null || true
    } | cut -d/ -f3 | sort -un)
strays=""
for p in $candidates; do
    [ "$p" != "$keep_pid" ] || continue
    if ours "$p"; then strays="$strays $p"; fi
done
if [ -n "$strays" ]; then
    # Add descendants, breadth first, from one snapshot of the process table.
    table=$(ps -e -o pid= -o ppid=)
    all=$strays
    frontier=$strays
    while [ -n "$frontier" ]; do
        next=""
        for p in $frontier; do
            next="$next $(echo "$table" | awk -v pp="$p" '$2 == pp { print $1 }')"
        done
        frontier=""
        for p in $next; do
            case $self_chain in *" $p "*) ;; *) frontier="$frontier $p" ;; esac
        done
        all="$all$frontier"
    done
    all=$(echo $all | tr ' ' '\n' | sort -un | tr '\n' ' ')
    log "killing leftover processes of this cluster: $all"
    # shellcheck disable=SC2086
    kill -KILL $all 2>/dev/null || true
    # shellcheck disable=SC2086
    wait_gone 5 $strays || log "warning: some of$strays survived SIGKILL"
fi

rm -f "$state/slurmd.pid" "$state/slurmctld.pid"
[ "$keep_munge" = 1 ] || rm -f "$state/munged.pid"

if [ "$keep_dir" != 1 ]; then
    rm -rf "$state"
fi
exit 0
