#!/usr/bin/env bash
# Captures one PostgreSQL 15 trace end to end (see traces/README.md for what came out).
#
#   capture.sh MODE WORKLOAD NAME
#     MODE      load  only load the workload's data into the cached data directory
#               page  every buffer access via bpftrace (pagetrace.bt); needs root
#               io    reads/write-backs below the buffer with exact changed bytes, via the
#                     LD_PRELOAD library flashbuf_iolog.so (MSR CSV + range I/O CSV)
#     WORKLOAD  pgbench | oltp (sysbench oltp_read_write) | tpcc (sysbench-tpcc Lua scripts)
#     NAME      output prefix, e.g. pgbench-pg15-s50 -> $OUT/NAME.pagetrace.csv.zst ...
# Environment (defaults in brackets):
#   OUT [traces]  DURATION_S [60]  MAX_REFS [2000000]  SHARED_BUFFERS [128MB page, 256kB io]
#   SCALE [50] (pgbench)  CLIENTS [4]  TABLES [8]  TABLE_SIZE [200000] (oltp)
#   WAREHOUSES [4] (tpcc)  TPCC_DIR [git clone of Percona-Lab/sysbench-tpcc at capture time]
#   PGBIN [/usr/lib/postgresql/15/bin]  WORK [/tmp/flashbuf-capture]  PORT [5499]
#   PGUSER_OS [pgcap] (a non-root user created when run as root, owns the data directory)
# Needs: PostgreSQL 15, pgbench, sysbench, bpftrace (page mode), gcc, zstd, python3.
set -euo pipefail

MODE=${1:?MODE page|io}; WORKLOAD=${2:?WORKLOAD pgbench|oltp|tpcc}; NAME=${3:?NAME}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$(mkdir -p "${OUT:-traces}" && cd "${OUT:-traces}" && pwd)
DURATION_S=${DURATION_S:-60}; MAX_REFS=${MAX_REFS:-2000000}
SCALE=${SCALE:-50}; CLIENTS=${CLIENTS:-4}; TABLES=${TABLES:-8}; TABLE_SIZE=${TABLE_SIZE:-200000}
WAREHOUSES=${WAREHOUSES:-4}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}; WORK=${WORK:-/tmp/flashbuf-capture}
PORT=${PORT:-5499}; PGUSER_OS=${PGUSER_OS:-pgcap}
if [ "$MODE" = page ]; then SHARED_BUFFERS=${SHARED_BUFFERS:-128MB}; else SHARED_BUFFERS=${SHARED_BUFFERS:-256kB}; fi

RUN=$WORK/$NAME; DATA=$RUN/data; SOCK=$RUN/sock; LOG=$RUN/capture.log
case $WORKLOAD in
  pgbench) DB=pgbench; CACHE=$WORK/cache-pgbench-s$SCALE ;;
  oltp) DB=sbtest; CACHE=$WORK/cache-oltp-t$TABLES-n$TABLE_SIZE ;;
  tpcc) DB=tpcc; CACHE=$WORK/cache-tpcc-w$WAREHOUSES ;;
  *) echo "unknown workload $WORKLOAD" >&2; exit 2 ;;
esac

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u "$PGUSER_OS" -- "$@"; else "$@"; fi; }
note() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$LOG"; }
psql_db() { as_pg "$PGBIN/psql" -h "$SOCK" -p "$PORT" -X -q -At -d "$1" -c "$2"; }
pg_start() { # extra environment for the server as arguments (env VAR=value ...)
  as_pg env "$@" "$PGBIN/pg_ctl" -D "$DATA" -l "$RUN/server.log" -w start >/dev/null
}
pg_stop() { as_pg "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null; }

SB_PG=(--db-driver=pgsql --pgsql-host="$SOCK" --pgsql-port="$PORT" --pgsql-user="$PGUSER_OS"
       --pgsql-db="$DB")
tpcc_dir() {
  if [ -z "${TPCC_DIR:-}" ]; then
    TPCC_DIR=$WORK/sysbench-tpcc
    [ -d "$TPCC_DIR" ] || git clone -q https://github.com/Percona-Lab/sysbench-tpcc "$TPCC_DIR"
  fi
  echo "$TPCC_DIR"
}
load() {
  case $WORKLOAD in
    pgbench) as_pg "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -i -q -s "$SCALE" "$DB" ;;
    oltp) as_pg sysbench oltp_read_write "${SB_PG[@]}" --tables="$TABLES" \
            --table-size="$TABLE_SIZE" prepare ;;
    tpcc) (cd "$(tpcc_dir)" && as_pg sysbench ./tpcc.lua "${SB_PG[@]}" --tables=1 \
            --scale="$WAREHOUSES" --threads="$CLIENTS" prepare) ;;
  esac
}
bench() {
  case $WORKLOAD in
    pgbench) as_pg "$PGBIN/pgbench" -h "$SOCK" -p "$PORT" -c "$CLIENTS" -j "$CLIENTS" \
               -T "$DURATION_S" -n "$DB" ;;
    oltp) as_pg sysbench oltp_read_write "${SB_PG[@]}" --tables="$TABLES" \
            --table-size="$TABLE_SIZE" --threads="$CLIENTS" --time="$DURATION_S" \
            --report-interval=0 run ;;
    tpcc) (cd "$(tpcc_dir)" && as_pg sysbench ./tpcc.lua "${SB_PG[@]}" --tables=1 \
            --scale="$WAREHOUSES" --threads="$CLIENTS" --time="$DURATION_S" run) ;;
  esac
}

# 1. A data directory with the workload's data loaded (cached across captures).
if [ "$(id -u)" = 0 ] && ! id "$PGUSER_OS" >/dev/null 2>&1; then useradd -M -r "$PGUSER_OS"; fi
rm -rf "$RUN"; mkdir -p "$RUN" "$SOCK"; chmod 755 "$WORK" "$RUN"; chmod 777 "$SOCK"
[ "$(id -u)" = 0 ] && chown "$PGUSER_OS" "$RUN"
note "capture $MODE $WORKLOAD $NAME: $(hostname), $("$PGBIN/postgres" --version)"
if [ ! -d "$CACHE" ]; then
  as_pg "$PGBIN/initdb" -D "$DATA" -U "$PGUSER_OS" --no-sync -A trust >/dev/null
  cat >>"$DATA/postgresql.conf" <<EOF
listen_addresses = ''
port = $PORT
unix_socket_directories = '$SOCK'
max_connections = 100
EOF
  pg_start; as_pg "$PGBIN/createdb" -h "$SOCK" -p "$PORT" "$DB"
  note "loading: $(declare -f load | grep -A2 "^ *$WORKLOAD)" | tr -s ' ' | tr '\n' ' ')"
  load >>"$LOG" 2>&1; psql_db "$DB" "VACUUM ANALYZE"; psql_db "$DB" "CHECKPOINT"; pg_stop
  cp -a "$DATA" "$CACHE"
else
  cp -a "$CACHE" "$DATA"
fi
[ "$MODE" = load ] && exit 0
sed -i -e "s|^unix_socket_directories = .*|unix_socket_directories = '$SOCK'|" \
  -e "s|^port = .*|port = $PORT|" "$DATA/postgresql.conf"
cat >>"$DATA/postgresql.conf" <<EOF
shared_buffers = $SHARED_BUFFERS
EOF

# 2. A cold server, the probe or library attached, the benchmark, the server stopped.
RAW=$RUN/raw.log
if [ "$MODE" = page ]; then
  pg_start
  BPFTRACE_PERF_RB_PAGES=${BPFTRACE_PERF_RB_PAGES:-16384} BPFTRACE_MAP_KEYS_MAX=1048576 \
    bpftrace -q "$HERE/pagetrace.bt" "$PGBIN/postgres" >"$RAW" 2>"$RUN/bpftrace.err" &
  BPF=$!
  for _ in $(seq 60); do grep -q . "$RAW" 2>/dev/null && break; psql_db "$DB" "SELECT 1" >/dev/null; sleep 1; done
  [ -s "$RAW" ] || { echo "bpftrace produced nothing (see $RUN/bpftrace.err)" >&2; exit 1; }
else
  gcc -O2 -Wall -Wextra -shared -fPIC -o "$RUN/flashbuf_iolog.so" "$HERE/flashbuf_iolog.c" -ldl
  touch "$RAW"; chmod 666 "$RAW"
  pg_start LD_PRELOAD="$RUN/flashbuf_iolog.so" FLASHBUF_IOLOG="$RAW" FLASHBUF_IOLOG_ROOT="$DATA"
fi
note "settings: $(psql_db postgres "SELECT string_agg(name || '=' || current_setting(name), ' ') FROM pg_settings WHERE source NOT IN ('default', 'override')")"
note "benchmark: $(declare -f bench | grep -A2 "^ *$WORKLOAD)" | tr -s ' ' | tr '\n' ' ')"
START=$(date +%s.%N)
bench >"$RUN/bench.out" 2>&1
note "benchmark done in $(awk -v a="$START" -v b="$(date +%s.%N)" "BEGIN{printf \"%.1f\", b - a}") s; $(grep -E 'tps|transactions:|queries:' "$RUN/bench.out" | head -3 | tr -s ' ' | tr '\n' ' ')"
if [ "$MODE" = page ]; then sleep 2; kill -INT "$BPF"; wait "$BPF" || true; fi
NAMES=$RUN/names.csv
for db in $(psql_db postgres "SELECT datname FROM pg_database WHERE datallowconn"); do
  psql_db "$db" "SELECT pg_relation_filepath(c.oid) || ',' || CASE WHEN c.relisshared THEN 'shared' ELSE current_database() END || '.' || n.nspname || '.' || c.relname || ':' || c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE pg_relation_filepath(c.oid) IS NOT NULL" >>"$NAMES"
done
pg_stop

# 3. The trace files and their statistics.
if [ "$MODE" = page ]; then
  python3 "$HERE/trace_post.py" page "$RAW" "$NAMES" "$RUN/$NAME" "$MAX_REFS" | tee "$RUN/stats.json"
  zstd -q -19 -T2 -f "$RUN/$NAME.pagetrace.csv" -o "$OUT/$NAME.pagetrace.csv.zst"
  cat "$RUN/bpftrace.err" >>"$LOG"
else
  python3 "$HERE/trace_post.py" io "$RAW" "$NAMES" "$RUN/$NAME" "$MAX_REFS" "$NAME" | tee "$RUN/stats.json"
  zstd -q -19 --long=27 -T2 -f "$RUN/$NAME.iotrace.msr.csv" -o "$OUT/$NAME.iotrace.msr.csv.zst"
  zstd -q -19 --long=27 -T2 -f "$RUN/$NAME.iotrace-ranges.csv" -o "$OUT/$NAME.iotrace-ranges.csv.zst"
  note "verify_ranges (the whole run's ranges against the data directory before/after): $(
    python3 "$HERE/verify_ranges.py" "$RAW" "$CACHE" "$DATA")"
fi
cp "$RUN/$NAME.relations.csv" "$OUT/$NAME.relations.csv"
note "stats: $(cat "$RUN/stats.json")"
cp "$LOG" "$OUT/$NAME.capture.log"
