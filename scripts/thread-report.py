#!/usr/bin/env python3
"""Where each policy's replay spends its time, measured the same way every time: for every
page trace and policy, `flashbuf bench --data none --runs K --json`'s threads report of its
best run (the trace reader's decoding and stream model, each thread's waits for the other,
and which thread bounds the run), as one table.

usage: scripts/thread-report.py [--runs K] [--policies a,b,...] [--json OUT] [TRACE ...]

A policy whose runs the reader bounds (FD-Buffer, whose estimators run on the reader's
thread) has a share of LRU's speed of about LRU's time over its decode + model, whatever its
replay costs; one bound by its replay (CFDC) is as fast as its replay. Default policies:
`lru`, `cfdc`, `fd-buffer` and `fd-buffer:cost=clustered`; default traces as for the other
speed scripts (the shared page traces and the ones captured under `traces/`). `--json`
writes every row with each run's full configuration and commit (from `bench --json`). Build
first: `cargo build --release -p flashbuf-cli`.
"""
import argparse, json, os

from speedlab import bench, require_binary, traces_or_default

DEFAULT_POLICIES = ['lru', 'cfdc', 'fd-buffer', 'fd-buffer:cost=clustered']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('traces', nargs='*')
    ap.add_argument('--runs', type=int, default=3, help='runs per bench (best of)')
    ap.add_argument('--policies', help='comma-separated policy specs')
    ap.add_argument('--json', help='write every row here')
    a = ap.parse_args()
    require_binary()
    policies = a.policies.split(',') if a.policies else DEFAULT_POLICIES
    rows = []
    print(f'{"trace":24} {"policy":26} {"M refs/s":>8} {"decode ms":>9} {"model ms":>8} '
          f'{"reader waits":>12} {"replay waits":>12}  bound')
    for trace in traces_or_default(a.traces):
        name = os.path.basename(trace).split('.')[0]
        for policy in policies:
            doc = bench(trace, policy, a.runs)
            b = doc['bench']
            t = b.get('threads')
            rows.append({'trace': trace, 'policy': policy, 'doc': doc})
            speed = f'{name:24} {policy:26} {b["best_refs_per_s"] / 1e6:8.2f}'
            if t is None:
                # Replayed from memory (an offline policy reads the whole trace first).
                print(f'{speed}  (no reader thread)')
                continue
            print(f'{speed} {t["decode_s"] * 1e3:9.1f} {t["model_s"] * 1e3:8.1f} '
                  f'{t["reader_wait_s"] * 1e3:12.1f} {t["replay_wait_s"] * 1e3:12.1f}  '
                  f'{t["bound"]}')
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
