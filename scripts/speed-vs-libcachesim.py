#!/usr/bin/env python3
"""Issue 17's first figure, measured the same way every time: flashbuf's no-bytes LRU replay
against libCacheSim's LRU, interleaved round by round on every page trace at 3 % of its
distinct pages, so that a host whose speed drifts (other tenants) moves both sides alike.

usage: scripts/speed-vs-libcachesim.py [--rounds N] [--runs K] [--policy P] [--json OUT] [TRACE ...]

Each round runs `flashbuf bench --trace T --data none --runs K --json` (best of K, the zstd
CSV parsed in the run) and then libCacheSim's LRU once from its binary oracleGeneral file
(`../shared/tools/peer_libcachesim.py`, PyPI `libcachesim` in a virtual environment outside
the repo, made on first use as `scripts/peer-check.sh` does). Prints per trace every round's
refs/s and ratio and the median ratio; `--json` writes every figure with flashbuf's full
configuration and commit (from `bench --json`). Default traces: the shared page traces and
the ones captured under `traces/`. Build first: `cargo build --release -p flashbuf-cli`.
"""
import argparse, json, os, statistics, subprocess, sys

from speedlab import SHARED, bench, require_binary, traces_or_default

VENV = os.path.join(os.environ.get('TMPDIR', '/tmp'), 'flashbuf-peer')


def peer_python():
    py = os.path.join(VENV, 'bin', 'python')
    if not os.access(py, os.X_OK):
        subprocess.run([sys.executable, '-m', 'venv', VENV], check=True)
        subprocess.run([os.path.join(VENV, 'bin', 'pip'), 'install', '-q', 'libcachesim'], check=True)
    return py


def peer(py, trace, pages):
    tool = os.path.join(SHARED, 'tools', 'peer_libcachesim.py')
    out = subprocess.run([py, tool, trace, str(pages), '--algo', 'lru'], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('traces', nargs='*')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--runs', type=int, default=3, help="flashbuf's runs per round (best of)")
    ap.add_argument('--policy', default='lru')
    ap.add_argument('--json', help='write every figure here')
    a = ap.parse_args()
    require_binary()
    traces = traces_or_default(a.traces)
    py = peer_python()
    report = []
    for t in traces:
        name = os.path.basename(t).split('.')[0]
        rounds = []
        for _ in range(a.rounds):
            o = bench(t, a.policy, a.runs)
            p = peer(py, t, o['bench']['buffer_pages'])
            if p['misses'] != o['runs'][0]['misses'] and a.policy == 'lru':
                sys.exit(f"{name}: misses differ (flashbuf {o['runs'][0]['misses']}, libCacheSim {p['misses']})")
            ours_rps, peer_rps = o['bench']['best_refs_per_s'], p['refs_per_s']
            rounds.append({'flashbuf_refs_per_s': ours_rps, 'libcachesim_refs_per_s': peer_rps,
                           'ratio': ours_rps / peer_rps, 'build': o['build'], 'config': o['config'],
                           'buffer_pages': o['bench']['buffer_pages']})
        med = statistics.median(r['ratio'] for r in rounds)
        cells = ' '.join(f"{r['flashbuf_refs_per_s'] / 1e6:.2f}/{r['libcachesim_refs_per_s'] / 1e6:.2f}"
                         f"={r['ratio']:.2f}x" for r in rounds)
        print(f'{name:24} {a.policy} {rounds[0]["buffer_pages"]:>6} pages  M refs/s flashbuf/libCacheSim '
              f'by round: {cells}  median {med:.2f}x', flush=True)
        report.append({'trace': t, 'policy': a.policy, 'rounds': rounds, 'median_ratio': med})
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(report, f, indent=1)


if __name__ == '__main__':
    main()
