"""What the speed scripts (`speed-vs-libcachesim.py`, `policy-speed.py`) share: where the
binary and the traces are, and one no-bytes `flashbuf bench` run as JSON."""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(HERE, '..', 'shared')
FB = os.path.join(HERE, 'target', 'release', 'flashbuf')
DEFAULT_TRACES = [
    os.path.join(SHARED, 'traces', 'tpcc-pg15-w4.pagetrace.csv.zst'),
    os.path.join(SHARED, 'traces', 'pgbench-pg15-s20.pagetrace.csv.zst'),
    os.path.join(HERE, 'traces', 'pgbench-pg15-s50.pagetrace.csv.zst'),
    os.path.join(HERE, 'traces', 'oltp-pg15-t8.pagetrace.csv.zst'),
    os.path.join(HERE, 'traces', 'tpcc-pg15-w8.pagetrace.csv.zst'),
]


def require_binary():
    """Exits with the build command when the release binary is missing."""
    if not os.access(FB, os.X_OK):
        sys.exit(f'{FB} missing: cargo build --release -p flashbuf-cli')


def traces_or_default(given):
    """The traces given, else the default ones that exist."""
    return given or [t for t in DEFAULT_TRACES if os.path.exists(t)]


def bench(trace, policy, runs):
    """`flashbuf bench --data none` of `policy` on `trace`, best of `runs`: its JSON."""
    out = subprocess.run([FB, 'bench', '--trace', trace, '--data', 'none', '--policy', policy,
                          '--runs', str(runs), '--json'], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout)
