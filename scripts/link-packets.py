#!/usr/bin/env python3
"""Count the packets and bytes every emulated link sends while a job runs.

Usage (as root, beside a running job on an emulated cube — ours under `hcrun
--link-rate`, or Open MPI's ranks through `hypercube-bench cubenet`):

    hcrun --dim 3 --link-rate 1gbit -- osu allreduce -m 8:8 -i 20000 --per-rank &
    scripts/link-packets.py osu 2          # or: scripts/link-packets.py osu_mpi 2

It finds the processes named PROGRAM (at least 8; one per network namespace is read),
sums `tx_packets` and `tx_bytes` of their `dim*` / `cube*` interfaces in
`/proc/PID/net/dev` at the start and end of SECONDS, and prints the rates. Divided by the
iterations per second (1e6 / the `# loop:` µs), that is packets per call and barrier
(docs/perf/cubenet.md, the run at 5a5f006).
"""
import glob
import os
import sys
import time


def ranks(program):
    out = []
    for p in glob.glob('/proc/[0-9]*/comm'):
        try:
            if open(p).read().strip() == program:
                out.append(int(p.split('/')[2]))
        except OSError:
            pass
    return out


def totals(pids):
    packets = sent = 0
    for pid in pids:
        try:
            for line in open(f'/proc/{pid}/net/dev').read().splitlines()[2:]:
                name, rest = line.split(':', 1)
                if name.strip().startswith(('dim', 'cube')):
                    f = rest.split()
                    sent += int(f[8])
                    packets += int(f[9])
        except OSError:
            pass
    return packets, sent


def main():
    program, dur = sys.argv[1], float(sys.argv[2])
    deadline = time.time() + 20
    pids = ranks(program)
    while len(pids) < 8 and time.time() < deadline:
        time.sleep(0.05)
        pids = ranks(program)
    time.sleep(0.3)
    by_netns = {}
    for pid in pids:
        try:
            by_netns.setdefault(os.readlink(f'/proc/{pid}/ns/net'), pid)
        except OSError:
            pass
    pids = list(by_netns.values())
    a = totals(pids)
    t0 = time.time()
    time.sleep(dur)
    b = totals(pids)
    t = time.time() - t0
    print(f"{program}: {len(pids)} namespaces, {(b[0] - a[0]) / t:.0f} packets/s, "
          f"{(b[1] - a[1]) / t:.0f} B/s")


if __name__ == '__main__':
    main()
