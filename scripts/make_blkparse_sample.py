#!/usr/bin/env python3
"""Builds testdata/traces/pgbench-sample.blkparse.txt.zst: real `blkparse` output (the
Debian `blktrace` package's blkparse, default format, summary included) of a binary
blktrace stream made from the first N requests of the shared MSR I/O trace of pgbench.

usage: make_blkparse_sample.py MSR_TRACE(.zst) N OUT.txt.zst   (needs blkparse and zstd)

The stream follows what the block layer logs for each request (blktrace_api.h): a Q event
at the request's time; if it starts where the pending request of the same kind ends, an M
(back merge) into it, else the pending request is dispatched (I, D, U) and the new one gets
a G. Completions (C) come 120 us (reads) or 30 us (writes) after dispatch. Every 250
requests a preflush without data (Q/D/C with RWBS FWS) and every 400 a discard of 64
sectors. Two CPUs, four postgres back ends (pids 3101-3104), device 8,16. The requests
(kind, sector, size, time) are the MSR trace's; the rest is this model.
"""
import struct, subprocess, sys, tempfile, os

MAGIC = 0x65617400 | 0x07
TC = {'read': 1, 'write': 2, 'flush': 4, 'sync': 8, 'queue': 16, 'issue': 64,
      'complete': 128, 'fs': 256, 'notify': 1024, 'discard': 8192}
ACT = {'Q': 1, 'M': 2, 'G': 4, 'D': 7, 'C': 8, 'P': 9, 'U': 10, 'I': 12}
CAT = {'Q': 'queue', 'M': 'queue', 'G': 'queue', 'I': 'queue', 'P': 'queue', 'U': 'queue',
       'D': 'issue', 'C': 'complete'}
DEV = (8 << 20) | 16
PIDS = [3101, 3102, 3103, 3104]


def act(kind, flags):
    a = ACT[kind] | ((TC[CAT[kind]] | TC['fs']) << 16)
    for f in flags:
        a |= TC[f] << 16
    return a


def main():
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    lines = subprocess.run(['zstd', '-dcf', src], capture_output=True, text=True,
                           check=True).stdout.splitlines()[:n]
    events = []  # (time_ns, cpu, pid, action, sector, bytes, pdu)

    def ev(t, cpu, pid, kind, flags, sector, nbytes, pdu=b''):
        events.append((t, cpu, pid, act(kind, flags), sector, nbytes, pdu))

    t0 = int(lines[0].split(',')[0])
    pending = None  # dict: op, sector, bytes, cpu, pid, t

    def dispatch(p, t):
        ev(t, p['cpu'], p['pid'], 'I', [p['op']], p['sector'], p['bytes'])
        ev(t + 500, p['cpu'], p['pid'], 'U', [], 0, 0, struct.pack('>Q', 1))
        ev(t + 1000, p['cpu'], p['pid'], 'D', [p['op']], p['sector'], p['bytes'])
        lat = 120_000 if p['op'] == 'read' else 30_000
        ev(t + 1000 + lat, 0, 0, 'C', [p['op']], p['sector'], p['bytes'])

    for i, line in enumerate(lines):
        ts, _host, _disk, ty, off, size, _resp = line.split(',')
        t = (int(ts) - t0) * 100 + 1000
        op = 'read' if ty.lower() == 'read' else 'write'
        pid = PIDS[i % 4]
        cpu = pid % 2
        sector, nbytes = int(off) // 512, int(size)
        if i and i % 250 == 0:
            ev(t - 600, cpu, pid, 'Q', ['write', 'flush', 'sync'], 0, 0)
            ev(t - 500, cpu, pid, 'D', ['write', 'flush', 'sync'], 0, 0)
            ev(t - 400, 0, 0, 'C', ['write', 'flush', 'sync'], 0, 0)
        if i and i % 400 == 0:
            ev(t - 300, cpu, pid, 'Q', ['write', 'discard'], 1 << 24, 64 * 512)
            ev(t - 200, cpu, pid, 'D', ['write', 'discard'], 1 << 24, 64 * 512)
            ev(t - 100, 0, 0, 'C', ['write', 'discard'], 1 << 24, 64 * 512)
        ev(t, cpu, pid, 'Q', [op], sector, nbytes)
        if pending and pending['op'] == op and pending['sector'] + pending['bytes'] // 512 == sector:
            ev(t + 200, cpu, pid, 'M', [op], sector, nbytes)
            pending['bytes'] += nbytes
            continue
        if pending:
            dispatch(pending, t + 100)
        ev(t + 200, cpu, pid, 'P', [], 0, 0)
        ev(t + 300, cpu, pid, 'G', [op], sector, nbytes)
        pending = dict(op=op, sector=sector, bytes=nbytes, cpu=cpu, pid=pid, t=t)
    dispatch(pending, events[-1][0] + 1000)

    events.sort(key=lambda e: e[0])
    with tempfile.TemporaryDirectory() as d:
        files = [open(os.path.join(d, f'sdb.blktrace.{c}'), 'wb') for c in (0, 1)]
        seq = [0, 0]
        notify = (TC['notify'] << 16)
        for c in (0, 1):
            for pid in PIDS:
                comm = b'postgres'.ljust(16, b'\0')
                files[c].write(struct.pack('<IIQQIIIIIHH', MAGIC, 0, 0, 0, 0, notify, pid,
                                           DEV, c, 0, len(comm)) + comm)
        for t, cpu, pid, a, sector, nbytes, pdu in events:
            seq[cpu] += 1
            files[cpu].write(struct.pack('<IIQQIIIIIHH', MAGIC, seq[cpu], t, sector, nbytes, a,
                                         pid, DEV, cpu, 0, len(pdu)) + pdu)
        for f in files:
            f.close()
        text = subprocess.run(['blkparse', '-i', 'sdb'], cwd=d, capture_output=True,
                              check=True).stdout
    with open(out, 'wb') as o:
        o.write(subprocess.run(['zstd', '-19', '-c'], input=text, capture_output=True,
                               check=True).stdout)


if __name__ == '__main__':
    main()
