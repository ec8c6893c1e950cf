#!/usr/bin/env python3
"""Issue 17's second figure, measured the same way every time: every registered policy's
no-bytes replay speed as a share of LRU's, interleaved round by round on every page trace at
3 % of its distinct pages, so that a host whose speed drifts (other tenants) moves both sides
alike.

usage: scripts/policy-speed.py [--rounds N] [--runs K] [--policies a,b,...] [--json OUT] [TRACE ...]

Each round runs `flashbuf bench --trace T --data none --runs K --json` (best of K, the zstd CSV
parsed in the run) for LRU, then for every other policy, then for LRU again; a policy's ratio
in that round is its refs/s over the geometric mean of the round's two LRU figures. Prints per
trace and policy every round's ratio, the median and the range, then the policies whose median
is under 0.5x on some trace. `--json` writes every figure with each run's full configuration
and commit (from `bench --json`). Default policies: every policy `flashbuf list policies`
names but `none` (the pass-through, no pool), and FD-Buffer's named variant
`fd-buffer:cost=clustered`; the offline ones (`belady`, `offline`) read the
trace's future and are reported, marked, beside the online ones. Default traces: the shared
page traces and the ones captured under `traces/`. Build first:
`cargo build --release -p flashbuf-cli`.
"""
import argparse, json, math, os, statistics, subprocess

from speedlab import FB, bench, require_binary, traces_or_default

OFFLINE = {'belady', 'offline'}
FLOOR = 0.5


def policies():
    out = subprocess.run([FB, 'list', 'policies', '--json'], check=True, capture_output=True,
                         text=True)
    names = [p['name'] for p in json.loads(out.stdout) if p['name'] not in ('none', 'lru')]
    return names + ['fd-buffer:cost=clustered']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('traces', nargs='*')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--runs', type=int, default=3, help='runs per bench (best of)')
    ap.add_argument('--policies', help='comma-separated (default: every registered policy)')
    ap.add_argument('--json', help='write every figure here')
    a = ap.parse_args()
    require_binary()
    names = a.policies.split(',') if a.policies else policies()
    traces = traces_or_default(a.traces)
    report, under = [], []
    for t in traces:
        trace = os.path.basename(t).split('.')[0]
        rounds = []
        for _ in range(a.rounds):
            before = bench(t, 'lru', a.runs)
            others = {p: bench(t, p, a.runs) for p in names}
            after = bench(t, 'lru', a.runs)
            lru = math.sqrt(before['bench']['best_refs_per_s'] * after['bench']['best_refs_per_s'])
            rounds.append({'lru_refs_per_s': [before['bench']['best_refs_per_s'],
                                              after['bench']['best_refs_per_s']],
                           'policies': {p: {'refs_per_s': o['bench']['best_refs_per_s'],
                                            'ratio': o['bench']['best_refs_per_s'] / lru,
                                            'build': o['build'], 'config': o['config'],
                                            'buffer_pages': o['bench']['buffer_pages']}
                                        for p, o in others.items()}})
        lrus = [x / 1e6 for r in rounds for x in r['lru_refs_per_s']]
        print(f'{trace}: LRU {min(lrus):.2f}-{max(lrus):.2f} M refs/s, '
              f'{rounds[0]["policies"][names[0]]["buffer_pages"]} pages', flush=True)
        entry = {'trace': t, 'rounds': rounds, 'median_ratio': {}}
        for p in names:
            ratios = [r['policies'][p]['ratio'] for r in rounds]
            med = statistics.median(ratios)
            entry['median_ratio'][p] = med
            mark = ' (offline)' if p in OFFLINE else ''
            cells = ' '.join(f'{x:.2f}' for x in ratios)
            print(f'  {p:12} x LRU by round: {cells}  median {med:.2f} '
                  f'[{min(ratios):.2f}, {max(ratios):.2f}]{mark}', flush=True)
            if med < FLOOR and p not in OFFLINE:
                under.append(f'{p} on {trace} ({med:.2f}x)')
        report.append(entry)
    print('online policies under 0.5x LRU (median): ' + (', '.join(under) or 'none'))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(report, f, indent=1)


if __name__ == '__main__':
    main()
