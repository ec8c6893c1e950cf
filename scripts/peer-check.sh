#!/usr/bin/env bash
# Runs libCacheSim's LRU (PyPI `libcachesim`, in a virtual environment outside the repo) and
# flashbuf's LRU on the shared page traces at 1%, 3% and 10% of distinct pages, and prints
# both miss counts side by side. Exits non-zero on any difference.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared="$here/../shared"
venv="${TMPDIR:-/tmp}/flashbuf-peer"
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q libcachesim; }
cargo build --release -q -p flashbuf-cli --manifest-path "$here/Cargo.toml"
fb="$here/target/release/flashbuf"
status=0
for t in tpcc-pg15-w4.pagetrace.csv.zst pgbench-pg15-s20.pagetrace.csv.zst arc-oltp.lis.zst; do
  trace="$shared/traces/$t"
  ours=$("$fb" compare --trace "$trace" --policies lru --device memory --page-size 512 \
      --buffer-ratio 0.01 --buffer-ratio 0.03 --buffer-ratio 0.10 --json)
  sizes=$(echo "$ours" | python3 -c 'import json,sys; print(",".join(str(r["buffer_pages"]) for r in json.load(sys.stdin)["runs"]))')
  peer=$("$venv/bin/python" "$shared/tools/peer_libcachesim.py" "$trace" "$sizes" --algo lru)
  python3 - "$t" "$ours" "$peer" <<'PY' || status=1
import json, sys
name, ours, peer = sys.argv[1], json.loads(sys.argv[2])["runs"], [json.loads(l) for l in sys.argv[3].splitlines()]
bad = 0
for o, p in zip(ours, peer):
    same = o["misses"] == p["misses"]
    bad += not same
    print(f'{name:40} {o["buffer_pages"]:>7} flashbuf {o["misses"]:>9} ({o["refs_per_s"]/1e6:5.2f} M refs/s)  '
          f'libCacheSim {p["misses"]:>9} ({p["refs_per_s"]/1e6:5.2f} M refs/s)  {"ok" if same else "DIFFERENT"}')
sys.exit(1 if bad else 0)
PY
done
exit $status
