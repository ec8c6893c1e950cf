#!/usr/bin/env bash
# Pass-through replay of the I/O traces on a preconditioned simulated NIPU SSD: the direct
# (in-place) store against the log-structured store with every victim rule. The
# log-structured store takes the whole device, which holds data / 4 + data / 100 + 48 MiB
# beyond the data (as `flashbuf reproduce nipu` sizes it): the data fills about 80% of the
# segments its writers may fill (77-83% by the rule's open segments).
# One JSON document per trace and segment size in $OUT (default /tmp/nipu). Prints a table
# per file: store / FTL / total write amplification, cleaning I/O, device time and its
# ratio to direct, for the shared traces and the project's own MSR captures in traces/
# (ONLY_SHARED=1: the shared ones only). Usage: scripts/nipu-passthrough.sh [SEGMENT ...]
# (default 8MiB 2MiB).
# About 3 minutes per segment size on one core.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
traces="$here/../shared/traces"
out="${OUT:-${TMPDIR:-/tmp}/nipu}"
mkdir -p "$out"
cargo build --release -q -p flashbuf-cli --manifest-path "$here/Cargo.toml"
fb="$here/target/release/flashbuf"
# The range I/O trace as plain page references (op,page): the lab reads that format.
tpcc="$out/tpcc-pg15-w4.iotrace.pagetrace.csv.zst"
[ -s "$tpcc" ] || zstd -dc "$traces/tpcc-pg15-w4.iotrace-ranges.csv.zst" \
  | awk -F, 'NR==1{print "op,page"; next}{print $1","$2}' | zstd -q -o "$tpcc"
# Dense pages of a trace (what the stores hold), from a replay on memory that scans it.
dense() {
  "$fb" replay --trace "$1" --page-size "$2" --policy none --buffer-pages 1 \
    --store log-structured:fill=0.5 --device memory --quiet --json \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["dense_pages"])'
}
segs=("$@")
[ ${#segs[@]} -gt 0 ] || segs=(8MiB 2MiB)
runs=("pgbench $traces/pgbench-pg15-s20.iotrace.msr.csv.zst 8192"
      "tpcc $tpcc 8192"
      "cloudphysics $traces/cloudPhysicsIO.csv.zst 4096")
# The project's own captures (traces/README.md), unless ONLY_SHARED=1.
if [ "${ONLY_SHARED:-0}" != 1 ]; then
  for t in "$here"/traces/*.iotrace.msr.csv.zst; do
    runs+=("$(basename "$t" .iotrace.msr.csv.zst) $t 8192")
  done
fi
for run in "${runs[@]}"; do
  set -- $run
  data=$(( $(dense "$2" "$3") * $3 ))
  device="sim:nipu-ssd:precondition=true,slack=$(( data / 4 + data / 100 + (48 << 20) ))"
  for seg in "${segs[@]}"; do
    stores=(--store direct)
    for c in greedy cost-benefit oldest sepbit; do
      stores+=(--store "log-structured:segment=$seg,cleaner=$c,prefill=true")
    done
    "$fb" compare --trace "$2" --page-size "$3" --policy none --presize --device "$device" \
      "${stores[@]}" --buffer-pages 1 --quiet --json > "$out/$1.$seg.json"
  done
done
python3 - "$out"/*.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    runs = json.load(open(f))["runs"]
    direct = [r for r in runs if r["store"].startswith("direct")][0]["device_time_us"]
    print(f"\n{f}: {runs[0]['references']} references, {runs[0]['page_writes']} writes, "
          f"{runs[0]['dense_pages']} pages of {runs[0]['page_size']} B")
    print("store           util  store WA  FTL WA  total WA  cleaner written/read  cleaning s  device s  x direct")
    for r in runs:
        s = r.get("store_report", {})
        name = r["store"].split("cleaner=")[1].split(",")[0] if "cleaner=" in r["store"] else "direct"
        swa = s.get("store_write_amplification", 1.0)
        fwa = r["write_amplification"]
        print(f"{name:14} {s.get('utilization', 0):5.3f} {swa:9.3f} {fwa:7.3f} {swa * fwa:9.3f} "
              f"{s.get('cleaner_pages_written', 0):10.0f}/{s.get('cleaner_pages_read', 0):<10.0f}"
              f" {s.get('cleaning_device_time_us', 0) / 1e6:10.1f} {r['device_time_us'] / 1e6:9.1f}"
              f" {direct / r['device_time_us']:8.2f}")
PY
