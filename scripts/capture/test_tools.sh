#!/usr/bin/env bash
# Checks the capture tools without PostgreSQL, in a few seconds (CI-friendly):
#  1. builds flashbuf_iolog.so and runs python3 under it on a synthetic "data directory":
#     an overwrite with known changed bytes, a write over a zero block, a write beyond the
#     end of the file, a read, and I/O on a file outside base/ (not logged); compares the
#     log with the exact expected lines;
#  2. runs verify_ranges.py on the before/after directories (and after an unlogged change),
#     and trace_post.py on that log and on a synthetic bpftrace log and compares the
#     trace files it writes with the expected ones.
# Needs gcc and python3. Exit status 0 only when every check passes.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)  # KEEP=1 keeps it for a look
if [ -n "${KEEP:-}" ]; then echo "files in $TMP"; else trap 'rm -rf "$TMP"' EXIT; fi
fail() { echo "FAIL: $*" >&2; exit 1; }

gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$TMP/iolog.so" "$HERE/flashbuf_iolog.c" -ldl
ROOT=$TMP/data; mkdir -p "$ROOT/base/5" "$ROOT/pg_wal"
python3 - "$ROOT" <<'EOF'
import sys
root = sys.argv[1]
block0 = bytes((i * 7) % 251 for i in range(8192))
with open(f"{root}/base/5/1259", "wb") as f:      # block 0 real content, block 1 zeros
    f.write(block0 + bytes(8192))
with open(f"{root}/base/5/1259.1", "wb") as f:    # a second 1 GiB segment, one block
    f.write(block0)
EOF
cp -a "$ROOT" "$TMP/before"
LD_PRELOAD=$TMP/iolog.so FLASHBUF_IOLOG=$TMP/raw.log FLASHBUF_IOLOG_ROOT=$ROOT python3 - "$ROOT" <<'EOF'
import os, sys
root = sys.argv[1]
fd = os.open(f"{root}/base/5/1259", os.O_RDWR)
old = bytearray(os.pread(fd, 8192, 0))             # logged read of block 0
new = bytearray(old)
new[0:8] = b"\xff" * 8                              # a changed LSN: bytes 0..7 differ...
new[3] = old[3]                                     # ...except byte 3: runs 0:3 and 4:4
new[100] ^= 1                                       # a single byte
new[8190:8192] = bytes(b ^ 0xFF for b in old[8190:8192])  # the last two bytes
assert os.pwrite(fd, bytes(new), 0) == 8192
blk1 = bytearray(8192); blk1[16:20] = b"abcd"; blk1[8000] = 1
assert os.pwrite(fd, bytes(blk1), 8192) == 8192    # over the zero block 1: new=2
assert os.pwrite(fd, b"\x01" * 16384, 16384) == 16384  # blocks 2, 3 beyond the end: new=1
os.close(fd)
seg = os.open(f"{root}/base/5/1259.1", os.O_RDWR)
assert len(os.pread(seg, 8192, 0)) == 8192         # segment 1 block 0 = block 131072
os.close(seg)
wal = os.open(f"{root}/pg_wal/000000010000000000000001", os.O_RDWR | os.O_CREAT)
os.pwrite(wal, b"x" * 8192, 0)                      # not a relation file: not logged
os.close(wal)
EOF
cut -d, -f1,4- "$TMP/raw.log" >"$TMP/raw.cut"   # drop the time and latency columns
cat >"$TMP/raw.want" <<'EOF'
R,base/5/1259,0,,
W,base/5/1259,0,0,0:3;4:4;100:1;8190:2
W,base/5/1259,8192,2,16:4;8000:1
W,base/5/1259,16384,1,0:8192
W,base/5/1259,24576,1,0:8192
R,base/5/1259.1,0,,
EOF
diff -u "$TMP/raw.want" "$TMP/raw.cut" || fail "flashbuf_iolog.so logged other lines"
awk -F, '$2 !~ /^[0-9]+$/ || length($2) < 16 || $3 !~ /^[0-9]+$/ { exit 1 }' "$TMP/raw.log" ||
  fail "bad time or latency column"

# verify_ranges.py: the logged ranges cover every byte that differs before/after
# (10 + 5 in blocks 0 and 1, all of blocks 2 and 3: 10 + 5 + 16384)...
python3 "$HERE/verify_ranges.py" "$TMP/raw.log" "$TMP/before" "$ROOT" >"$TMP/verify.json" ||
  fail "verify_ranges.py: $(cat "$TMP/verify.json")"
grep -q '"bytes_changed": 16399' "$TMP/verify.json" || fail "verify counts: $(cat "$TMP/verify.json")"
# ...and it notices a byte changed behind the library's back
printf 'Z' | dd of="$ROOT/base/5/1259" bs=1 seek=5000 conv=notrunc status=none
if python3 "$HERE/verify_ranges.py" "$TMP/raw.log" "$TMP/before" "$ROOT" >"$TMP/verify.json"; then
  fail "verify_ranges.py missed an unlogged change"
fi
grep -q '"bytes_uncovered": 1' "$TMP/verify.json" || fail "verify: $(cat "$TMP/verify.json")"

printf 'base/5/1259,postgres.pg_catalog.pg_class:r\n' >"$TMP/names.csv"
python3 "$HERE/trace_post.py" io "$TMP/raw.log" "$TMP/names.csv" "$TMP/io" 100 host >"$TMP/io.json"
cat >"$TMP/ranges.want" <<'EOF'
op,page,ranges,new
R,0,,
W,0,0:3;4:4;100:1;8190:2,0
W,1,16:4;8000:1,2
W,2,0:8192,1
W,3,0:8192,1
R,131072,,
EOF
diff -u "$TMP/ranges.want" "$TMP/io.iotrace-ranges.csv" || fail "range I/O CSV differs"
cut -d, -f2- "$TMP/io.iotrace.msr.csv" | cut -d, -f1-5 >"$TMP/msr.cut"
cat >"$TMP/msr.want" <<'EOF'
host,0,Read,0,8192
host,0,Write,0,8192
host,0,Write,8192,8192
host,0,Write,16384,8192
host,0,Write,24576,8192
host,0,Read,1073741824,8192
EOF
diff -u "$TMP/msr.want" "$TMP/msr.cut" || fail "MSR CSV differs"
grep -q '"requests": 6' "$TMP/io.json" && grep -q '"writes": 4' "$TMP/io.json" &&
  grep -q '"overwrite_changed_bytes_mean": 10.0' "$TMP/io.json" || fail "io stats: $(cat "$TMP/io.json")"
grep -qx '0,base/5/1259,postgres.pg_catalog.pg_class:r' "$TMP/io.relations.csv" ||
  fail "relations.csv lacks the name"

cat >"$TMP/bt.log" <<'EOF'
Attaching 5 probes...
R 100 1663 5 1259 0 7
R 300 1664 0 1262 0 0
W 200 1663 5 1259 0 7
R 400 1663 5 1259 1 2
U 500 42
R 600 1663 5 1259 0 8
Lost 3 events
EOF
python3 "$HERE/trace_post.py" page "$TMP/bt.log" "$TMP/names.csv" "$TMP/pg" 4 >"$TMP/pg.json"
printf 'op,page\nR,7\nW,7\nR,16777216\nR,33554434\n' >"$TMP/page.want"  # time order
diff -u "$TMP/page.want" "$TMP/pg.pagetrace.csv" || fail "page-reference CSV differs"
grep -q '"bpftrace_lost_events": 3' "$TMP/pg.json" && grep -q '"probe_events": 6' "$TMP/pg.json" &&
  grep -q '"unmapped_dirty_marks": 0' "$TMP/pg.json" && grep -q '"distinct_pages": 3' "$TMP/pg.json" || fail "page stats: $(cat "$TMP/pg.json")"
grep -qx '2,base/5/1259_fsm,postgres.pg_catalog.pg_class:r_fsm' "$TMP/pg.relations.csv" ||
  fail "fork naming in relations.csv"
echo "capture tools: all checks passed"
