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
import sys
import time

from cube_procs import one_per_netns, tx, wait_for


def totals(pids):
    packets = sent = 0
    for pid in pids:
        for b, n in tx(pid, ('dim', 'cube')).values():
            sent += b
            packets += n
    return packets, sent


def main():
    program, dur = sys.argv[1], float(sys.argv[2])
    pids = wait_for(program, 8, 20)
    time.sleep(0.3)
    pids = one_per_netns(pids)
    a = totals(pids)
    t0 = time.time()
    time.sleep(dur)
    b = totals(pids)
    t = time.time() - t0
    print(f"{program}: {len(pids)} namespaces, {(b[0] - a[0]) / t:.0f} packets/s, "
          f"{(b[1] - a[1]) / t:.0f} B/s")


if __name__ == '__main__':
    main()
