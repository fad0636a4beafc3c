#!/usr/bin/env python3
"""Sample every emulated link's transmitted bytes while an `hcrun --link-rate` job runs.

Usage (as root, beside a running job; RATE in bytes/s, default 12.5e6 = 100 Mbit/s):

    hcrun --dim 4 --link-rate 100mbit -- osu alltoall -m 262144:262144 -i 300 &
    sleep 3; RATE=12.5e6 scripts/link-sampler.py SECONDS [INTERVAL_S] [RANKS] [PROGRAM]

It finds the job's RANKS processes named PROGRAM (default 16, `osu`), reads
`/proc/PID/net/dev` of each one's network namespace every INTERVAL_S (default 0.01), and
prints, for every link (`dimK` of a rank), its mean use of RATE and the share of samples
above half of it; then, for each call (a run of samples with the links busy), when its
links stopped (earliest, median, latest, ms from the call's start), the links' idle time
inside the call, and how the two correlate (docs/perf/cubenet.md, "Frames by distance"
and "CUBIC on wires").
"""
import os
import sys
import time

from cube_procs import one_per_netns, tx, wait_for


def main():
    dur = float(sys.argv[1])
    dt = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    want = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    program = sys.argv[4] if len(sys.argv) > 4 else 'osu'
    rate = float(os.environ.get('RATE', '12.5e6'))
    nodes = one_per_netns(wait_for(program, want, 10))
    samples = []
    t0 = time.time()
    while time.time() - t0 < dur:
        row = {}
        for p in nodes:
            for name, (sent, _) in tx(p, ('dim',)).items():
                row[(p, name)] = sent
        samples.append((time.time() - t0, row))
        time.sleep(dt)
    keys = sorted(samples[0][1])
    series = {k: [] for k in keys}
    for (ta, a), (tb, b) in zip(samples, samples[1:]):
        for k in keys:
            if k in a and k in b:
                series[k].append((b[k] - a[k]) / (tb - ta) / rate)
    for k in keys:
        v = series[k]
        print(k, 'mean use %.2f' % (sum(v) / len(v)),
              'busy %.2f' % (sum(x > 0.5 for x in v) / len(v)))
    n = min(len(v) for v in series.values())
    step = (samples[-1][0] - samples[0][0]) / max(1, len(samples) - 1) * 1000
    total = [sum(series[k][i] for k in keys) / len(keys) for i in range(n)]
    calls, i = [], 0
    while i < n:
        if total[i] > 0.3:
            j = i
            while j < n and total[j] > 0.05:
                j += 1
            calls.append((i, j))
            i = j
        else:
            i += 1
    for a, b in calls[1:-1]:  # the first and last may be cut
        ends, idles = [], []
        for k in keys:
            busy = [x > 0.3 for x in series[k][a:b]]
            on = [t for t, x in enumerate(busy) if x]
            if not on:
                continue
            ends.append(on[-1] * step)
            idles.append(sum(not busy[t] for t in range(on[0], on[-1] + 1)) * step)
        me, mi = sum(ends) / len(ends), sum(idles) / len(idles)
        cov = sum((e - me) * (d - mi) for e, d in zip(ends, idles))
        var = (sum((e - me) ** 2 for e in ends) * sum((d - mi) ** 2 for d in idles)) ** 0.5
        print('call of %.0f ms: links stop at %.0f / %.0f / %.0f ms; idle inside the call: '
              'mean %.1f ms, most %.0f ms; correlation %.2f'
              % ((b - a) * step, min(ends), sorted(ends)[len(ends) // 2], max(ends),
                 mi, max(idles), cov / var if var else 0.0))


if __name__ == '__main__':
    main()
