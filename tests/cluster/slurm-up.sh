#!/usr/bin/env bash
# slurm-up.sh STATE_DIR
#
# Starts a private, one-node Slurm cluster on this machine, for tests that
# want to run `srun -n N --mpi=pmi2 PROGRAM` against a real Slurm.
#
# Everything lives under STATE_DIR (a fresh directory the caller owns; it is
# created if missing): the MUNGE key and daemon, slurm.conf, the state, spool
# and log directories, and one pid file per daemon started here
# (STATE_DIR/munged.pid, slurmctld.pid, slurmd.pid). Nothing is written
# outside STATE_DIR and no fixed TCP port is used: the two daemon ports are
# chosen free at run time.
#
# Requirements: run as root (slurmd must be able to start tasks as any user;
# SlurmUser=root), Debian's `slurm-wlm` (22.05) and `munge` installed, python3
# for choosing free ports (a bash fallback is used without it). No systemd is
# needed: the daemons run in the foreground (-D / -F) as background jobs,
# with stdin/stdout/stderr on files, so a caller that captures this script's
# output (e.g. Rust's Command::output) is not kept waiting by them.
#
# On success it prints, on stdout and nothing else:
#     export SLURM_CONF=STATE_DIR/slurm.conf
# and writes the same line(s) to STATE_DIR/env. Progress goes to stderr.
# On failure it prints the tail of each daemon log on stderr, stops whatever
# it started (the directory is kept, for the logs) and exits non-zero.
#
# Stop with: tests/cluster/slurm-down.sh STATE_DIR
#
# Tunables (environment):
#   SLURM_UP_TIMEOUT  seconds to wait for the node to become idle (30)
#   SLURM_UP_CPUS     CPUs the node claims to have, i.e. how many tasks can
#                     run at once on it, whatever the real core count (64)
set -eu

here=$(cd "$(dirname "$0")" && pwd -P)

if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 STATE_DIR" >&2
    exit 2
fi

log() { echo "slurm-up: $*" >&2; }
die() { log "error: $*"; exit 1; }

timeout_s=${SLURM_UP_TIMEOUT:-30}
cpus=${SLURM_UP_CPUS:-64}

[ "$(id -u)" = 0 ] || die "must run as root (slurmd and SlurmUser=root)"
for tool in munged slurmctld slurmd slurmstepd srun sinfo scontrol squeue scancel munge unmunge timeout; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found in PATH ($PATH)"
done

mkdir -p "$1"
state=$(cd "$1" && pwd -P)
[ "$state" != / ] || die "STATE_DIR must not be /"
# The path goes into slurm.conf unquoted and into glob patterns in
# slurm-down.sh: keep it to plain characters.
case $state in
    *[!A-Za-z0-9._/+-]*) die "STATE_DIR path '$state' has characters other than A-Za-z0-9._/+-" ;;
esac
if [ -e "$state/slurm.conf" ] || [ -e "$state/munged.pid" ]; then
    die "$state already holds a cluster; give a fresh directory (or run slurm-down.sh first)"
fi

# The short host name is what slurmd calls its node and what slurmctld
# checks SlurmctldHost against; both are given an explicit address
# (127.0.0.1) so that name resolution of the host name does not matter.
node=$(hostname -s 2>/dev/null || true)
[ -n "$node" ] || node=$(uname -n | cut -d. -f1)
[ -n "$node" ] || die "cannot find this host's name"

# Unix socket paths are limited to 107 bytes. The longest one here is the
# slurmstepd socket STATE_DIR/slurmd/<node>_<jobid>.<stepid> (ids up to
# 10 digits each).
longest=$(( ${#state} + 8 + ${#node} + 1 + 10 + 1 + 10 ))
if [ "$longest" -gt 107 ]; then
    die "STATE_DIR path too long for Unix sockets ($longest > 107 bytes): use a shorter one, e.g. under /tmp"
fi

# Marker: slurm-down.sh removes STATE_DIR only if this file is in it, so a
# mistaken argument never makes it delete an unrelated directory.
echo "hypercube one-node slurm cluster; stop with slurm-down.sh" > "$state/.hypercube-slurm"
# Only root needs to read anything here; 0700 also keeps munged happy about
# the key's directory. The spool directory must be 0755 (slurm.conf(5)).
chmod 0700 "$state"
mkdir -p "$state/log" "$state/run" "$state/ctld" "$state/slurmd"
chmod 0755 "$state/slurmd"

# Every daemon is started as `env -i PATH=... LANG=C MARKER daemon ... &`: a
# clean environment plus this marker variable, by which slurm-down.sh checks
# that a recorded PID still is our daemon before signalling it (slurmstepd
# wipes its environment; slurm-down.sh finds those by their open log file).
# The command is written out at each start, not wrapped in a shell function,
# so that $! is the daemon's own PID (env and the daemon exec in place).
# The daemons stay in the caller's process group (no setsid): a Ctrl-C that
# interrupts the whole test run (SIGINT to the foreground process group)
# stops them too rather than leaking them; STATE_DIR stays behind then.
marker="HYPERCUBE_SLURM_STATE_DIR=$state"

ok=0
on_exit() {
    local rc=$? f
    if [ "$ok" != 1 ]; then
        for f in munged.log slurmctld.log slurmd.log munged.out slurmctld.out slurmd.out; do
            if [ -s "$state/log/$f" ]; then
                echo "----- last lines of $state/log/$f -----" >&2
                tail -n 25 "$state/log/$f" >&2 || true
            fi
        done
        log "stopping what was started; $state is kept for its logs"
        SLURM_DOWN_GRACE=2 SLURM_DOWN_KEEP_DIR=1 "$here/slurm-down.sh" "$state" >&2 || true
        [ "$rc" != 0 ] || rc=1
    fi
    exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Deadline-bounded polling: wait_until SECONDS DESCRIPTION COMMAND... runs
# COMMAND every 0.2 s until it succeeds (return 0), fails for good (COMMAND
# returned 2; return 1) or time is up (return 1).
wait_until() {
    local limit=$1 what=$2 start res
    shift 2
    start=$(date +%s)
    while :; do
        res=0; "$@" || res=$?
        if [ "$res" = 0 ]; then return 0; fi
        if [ "$res" = 2 ]; then return 1; fi
        if [ $(( $(date +%s) - start )) -ge "$limit" ]; then
            log "timed out after ${limit}s waiting for $what"
            return 1
        fi
        sleep 0.2
    done
}

# alive NAME: the daemon recorded in STATE_DIR/NAME.pid is still running
# (and is not a zombie).
alive() {
    local pid pst
    pid=$(cat "$state/$1.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    pst=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [ "$pst" != Z ] && [ "$pst" != X ]
}

# ---------------------------------------------------------------- MUNGE --
# A private key (1024 bits, as mungekey makes by default) and a private
# munged on its own socket; slurm.conf points Slurm at that socket through
# AuthInfo, so the system's munged (if any) is neither needed nor touched.
if command -v mungekey >/dev/null 2>&1; then
    mungekey --create --bits=1024 --keyfile="$state/munge.key" 2>>"$state/log/munged.out"
else
    dd if=/dev/urandom of="$state/munge.key" bs=128 count=1 2>/dev/null
fi
chmod 0400 "$state/munge.key"

sock="$state/munge.socket"
# -F: stay in the foreground so that $! is the daemon itself (in the
#   foreground munged logs to stderr, i.e. log/munged.out, not --log-file).
# -f: run even though some directory checks would fail (e.g. /tmp parents).
# --num-threads: a few more than the default 2, for bursts of credential
#   checks when many tasks start at once.
env -i PATH="$PATH" LANG=C "$marker" munged -F -f \
    --socket="$sock" \
    --key-file="$state/munge.key" \
    --pid-file="$state/run/munged.pid" \
    --log-file="$state/log/munged.log" \
    --seed-file="$state/run/munged.seed" \
    --num-threads=4 \
    </dev/null >>"$state/log/munged.out" 2>&1 &
echo $! > "$state/munged.pid"
disown $!   # no "Killed" job notice from this shell if it is killed

munge_works() {
    alive munged || { log "munged exited"; return 2; }
    [ -S "$sock" ] || return 1
    munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1
}
wait_until 10 "munged to answer on $sock" munge_works || die "munged did not start"
log "munged up (pid $(cat "$state/munged.pid"))"

# ----------------------------------------------------------- free ports --
# Two distinct TCP ports that nothing listens on now. Both sockets are held
# open together so the kernel cannot hand out the same port twice. There is
# still a window before the daemons bind them; a clash is retried below.
free_ports() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c '
import socket
ss = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(2)]
for s in ss:
    s.bind(("", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))
'
    else
        # Fallback: random high ports that refuse a connection on loopback.
        n=0; out=""
        while [ "$n" -lt 2 ]; do
            p=$(( 20000 + RANDOM % 30000 ))
            if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
                case " $out " in *" $p "*) continue ;; esac
                out="$out $p"; n=$((n + 1))
            fi
        done
        echo $out
    fi
}

# ----------------------------------------------------------- slurm.conf --
write_conf() {
    ctld_port=$1; slurmd_port=$2
    # Stackable (SPANK) plugins: none. Without this line slurm would read
    # plugstack.conf next to slurm.conf, and the system's /etc/slurm one
    # must not leak in.
    : > "$state/plugstack.conf"
    cat > "$state/slurm.conf" <<EOF
# Generated by tests/cluster/slurm-up.sh: a throwaway one-node cluster.
ClusterName=hypercube
# The controller runs here. SlurmctldHost must be this host's short name;
# the address in parentheses avoids any name lookup.
SlurmctldHost=$node(127.0.0.1)
# Ports picked free at run time, never fixed ones. srun's own listening
# ports stay ephemeral (no SrunPortRange), which is fine on one machine.
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
# No mail is ever sent; any existing program silences slurmctld's
# "Configured MailProg is invalid" error (Debian's default is absent).
MailProg=/bin/true
# Daemons run as root (this script must be run as root).
SlurmUser=root
SlurmdUser=root
# MUNGE authentication through the private munged started above; the
# socket is used both for RPC authentication and for job credentials.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
# Everything the daemons write stays in STATE_DIR.
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/slurmd
SlurmctldPidFile=$state/run/slurmctld.pid
SlurmdPidFile=$state/run/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$state/plugstack.conf
# No cgroups (none are available/delegated here): processes are tracked by
# walking the process tree, tasks are not bound to CPUs.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
# Tests ask for --mpi=pmi2 explicitly.
MpiDefault=none
# Consumable resources counted in CPUs only: a task takes one of the
# node's $cpus claimed CPUs (see NodeName), so several sruns can share the
# node and -n 16 runs on a 2-core machine. Memory is not consumable.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Start jobs as soon as they are submitted; no backfill pass needed.
SchedulerType=sched/builtin
# An srun that arrives while the previous job is still COMPLETING (its
# epilog, ~15 ms after the previous srun returned) is not placed at once but
# queued ("srun: job N queued and waiting for resources") until the next
# scheduling pass. By default that pass waits up to 3 s (batch_sched_delay);
# with 0 it comes within a few tens of ms.
SchedulerParameters=batch_sched_delay=0
# A node that was DOWN comes back by itself when slurmd registers validly.
ReturnToService=2
# Short delays, for a quick teardown: 2 s between SIGTERM and SIGKILL of a
# step's tasks, finished jobs forgotten after 10 s.
KillWait=2
MinJobAge=10
# A task that exits non-zero does not kill the step unless srun asks
# (--kill-on-bad-exit); the tests decide.
KillOnBadExit=0
# Trust the CPU count below rather than the hardware: otherwise slurmd would
# report 2 CPUs and slurmctld would drain the node as misconfigured.
SlurmdParameters=config_overrides
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

node_idle() {
    local node_state
    alive slurmctld || { log "slurmctld exited"; return 2; }
    alive slurmd || { log "slurmd exited"; return 2; }
    # Bounded: sinfo could hang on a port that something else answers.
    node_state=$(SLURM_CONF="$state/slurm.conf" timeout 2 sinfo -h -N -n "$node" -o %T 2>/dev/null) || node_state=""
    alive slurmctld || { log "slurmctld exited"; return 2; }
    [ "$node_state" = idle ]
}

started=0
for attempt in 1 2 3; do
    ports=$(free_ports) || die "could not pick free ports"
    read -r ctld_port slurmd_port <<EOF
$ports
EOF
    case "$ctld_port:$slurmd_port" in
        *[!0-9:]* | :* | *:) die "could not pick free ports (got '$ports')" ;;
    esac
    write_conf "$ctld_port" "$slurmd_port"
    log "attempt $attempt: slurmctld port $ctld_port, slurmd port $slurmd_port, node $node"

    # -D: foreground, so $! is the daemon. -i: ignore any saved state (there
    # is none; a fresh directory). -f: this cluster's configuration.
    env -i PATH="$PATH" LANG=C "$marker" slurmctld -D -i -f "$state/slurm.conf" \
        </dev/null >>"$state/log/slurmctld.out" 2>&1 &
    echo $! > "$state/slurmctld.pid"
    disown $!
    # -N: node name given explicitly rather than guessed from the host name.
    env -i PATH="$PATH" LANG=C "$marker" slurmd -D -N "$node" -f "$state/slurm.conf" \
        </dev/null >>"$state/log/slurmd.out" 2>&1 &
    echo $! > "$state/slurmd.pid"
    disown $!

    if wait_until "$timeout_s" "node $node to be idle" node_idle; then
        started=1
        break
    fi
    # A port taken between choosing it and binding it: stop and try again.
    if grep -qi 'address already in use' "$state/log/slurmctld.log" "$state/log/slurmd.log" \
            "$state/log/slurmctld.out" "$state/log/slurmd.out" 2>/dev/null; then
        log "a port was taken meanwhile; retrying with new ports"
        SLURM_DOWN_GRACE=2 SLURM_DOWN_KEEP_DIR=1 SLURM_DOWN_KEEP_MUNGE=1 "$here/slurm-down.sh" "$state" >&2 || true
        for f in slurmctld.log slurmd.log slurmctld.out slurmd.out; do
            if [ -e "$state/log/$f" ]; then
                mv "$state/log/$f" "$state/log/$f.attempt$attempt"
            fi
        done
        rm -rf "$state/ctld" "$state/slurmd"
        mkdir -p "$state/ctld" "$state/slurmd"
        chmod 0755 "$state/slurmd"
        continue
    fi
    break
done
[ "$started" = 1 ] || die "the node did not become idle"

log "slurmctld (pid $(cat "$state/slurmctld.pid")) and slurmd (pid $(cat "$state/slurmd.pid")) up; node $node idle"
echo "export SLURM_CONF=$state/slurm.conf" > "$state/env"
cat "$state/env"
ok=1
