"""The processes of a job on an emulated cube and their links' counters, for the scripts
that watch a running job beside it (`link-packets.py`, `link-sampler.py`).

Each rank of a job under `hcrun --link-rate` (or an Open MPI rank started in a node of
`cubenet up`) runs in its node's network namespace; `/proc/PID/net/dev` of any process in
it shows that node's interfaces.
"""
import glob
import os
import time


def ranks(program):
    """The PIDs of the processes named PROGRAM."""
    out = []
    for p in glob.glob('/proc/[0-9]*/comm'):
        try:
            if open(p).read().strip() == program:
                out.append(int(p.split('/')[2]))
        except OSError:
            pass
    return out


def wait_for(program, want, timeout):
    """The processes named PROGRAM once there are WANT of them, or after TIMEOUT seconds
    (bounded) what there is."""
    deadline = time.time() + timeout
    pids = ranks(program)
    while len(pids) < want and time.time() < deadline:
        time.sleep(0.05)
        pids = ranks(program)
    return pids


def one_per_netns(pids):
    """One PID of each network namespace among PIDS."""
    by_ns = {}
    for pid in pids:
        try:
            by_ns.setdefault(os.readlink(f'/proc/{pid}/ns/net'), pid)
        except OSError:
            pass
    return list(by_ns.values())


def tx(pid, prefixes):
    """{interface: (tx_bytes, tx_packets)} of PID's namespace, for the interfaces whose
    names start with one of PREFIXES ({} if the process is gone)."""
    out = {}
    try:
        for line in open(f'/proc/{pid}/net/dev').read().splitlines()[2:]:
            name, rest = line.split(':', 1)
            if name.strip().startswith(prefixes):
                f = rest.split()
                out[name.strip()] = (int(f[8]), int(f[9]))
    except OSError:
        pass
    return out
