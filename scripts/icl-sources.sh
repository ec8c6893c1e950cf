#!/usr/bin/env bash
# Issue 15's table: ICL against the direct store on every source of real dirty ranges —
# each range I/O CSV (PostgreSQL's write-backs with the exact changed bytes), replayed
# pass-through on the memory device, and the native engine's TPC-C-like and TPC-B-like
# workloads (their write guards record the real ranges). Device pages read and written
# (bytes / 8 KiB), their ratios, verify errors / consistency, and the bytes per write.
#   scripts/icl-sources.sh [LIMIT]      # LIMIT references per trace (default: whole traces)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p flashbuf-cli
B=target/release/flashbuf
LIMIT=${1:+--limit $1}
row() { python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["runs"][0]; i = json.load(open(sys.argv[2]))["runs"][0]
pr = lambda r: (r["device_read_bytes"] / 8192, r["device_written_bytes"] / 8192) if "device_read_bytes" in r else (r["device_reads"], r["device_writes"])
(dr, dw), (ir, iw) = pr(d), pr(i)
ok = i.get("verify_errors", 0) + d.get("verify_errors", 0) if "verify_errors" in i else (i.get("consistency"), d.get("consistency"))
wb = (i.get("write_backs") or {}).get("run") or {}
eb = i.get("dirty_exact_bytes_per_write", wb.get("bytes_mean")); hb = i.get("dirty_bytes_per_write")
print(f"| {sys.argv[3]} | {dr:,.0f} | {dw:,.0f} | {ir:,.0f} | {iw:,.0f} | {iw/max(dw,1):.3f} | {ir/max(dr,1):.3f} | {ok} | {eb if eb is None else round(eb)} / {hb if hb is None else round(hb)} |")
' "$@"; }
echo "| source | direct reads | direct writes | ICL reads | ICL writes | ICL/direct writes | ICL/direct reads | verify errors (or consistency) | B per write: exact / handed |"
echo "|---|---|---|---|---|---|---|---|---|"
T=$(mktemp -d)
for t in ../shared/traces/*.iotrace-ranges.csv* traces/*.iotrace-ranges.csv*; do
  [ -e "$t" ] || continue
  for s in direct icl; do
    $B replay --trace "$t" --policy none --store $s --device memory --page-size 8192 $LIMIT --json > "$T/$s.json"
  done
  row "$T/direct.json" "$T/icl.json" "$(basename "$t")"
done
for w in tpcc:warehouses=2 tpcb:scale=2; do
  for s in direct icl; do
    $B run --workload $w --store $s --buffer-pages 256 --transactions 20000 --json > "$T/$s.json"
  done
  row "$T/direct.json" "$T/icl.json" "engine $w, 256 frames"
done
rm -rf "$T"
