#!/usr/bin/env python3
"""Turns raw capture logs into the project's trace formats (../../traces/README.md).

  trace_post.py page  RAW NAMES OUT_PREFIX MAX_REFS
      RAW: pagetrace.bt output (R/W t spc db rel fork block, U t buffer, bpftrace notices),
      sorted by the time t
      -> OUT_PREFIX.pagetrace.csv (op,page), OUT_PREFIX.relations.csv, stats on stdout
  trace_post.py io    RAW NAMES OUT_PREFIX MAX_REQS HOSTNAME
      RAW: flashbuf_iolog.so log -> OUT_PREFIX.iotrace.msr.csv (MSR Cambridge),
      OUT_PREFIX.iotrace-ranges.csv (op,page,ranges,new), OUT_PREFIX.relations.csv, stats

NAMES: `path,name` lines (path relative to the data directory, as pg_relation_filepath
gives it) naming the relations that existed at the end of the run.
Relations (each fork its own) are numbered in order of first appearance; a page trace page
is relation * 2^24 + block, an MSR offset relation * 2^32 + block * 8192.
Stats are one JSON object: counts, distinct pages, losses, and for the range trace the
changed-byte statistics of overwrites.
"""
import json
import re
import sys

BLOCK_BYTES = 8192
SEGMENT_BLOCKS = 131072  # 1 GiB segment files
FORKS = {0: "", 1: "_fsm", 2: "_vm", 3: "_init"}


class Relations:
    def __init__(self):
        self.ids = {}

    def rel(self, path):
        if path not in self.ids:
            self.ids[path] = len(self.ids)
        return self.ids[path]

    def write(self, out_path, names):
        with open(out_path, "w") as f:
            f.write("rel,path,name\n")
            for path, rel in sorted(self.ids.items(), key=lambda kv: kv[1]):
                base = re.sub(r"_(fsm|vm|init)$", "", path)
                fork = path[len(base):]
                name = names.get(base, "?")
                f.write(f"{rel},{path},{name}{fork}\n")


def read_names(path):
    names = {}
    with open(path) as f:
        for line in f:
            p, _, n = line.rstrip("\n").partition(",")
            if p:
                names[p] = n
    return names


def tag_path(spc, db, rel, fork):
    prefix = "global" if spc == 1664 else (f"base/{db}" if spc == 1663 else f"pg_tblspc/{spc}/{db}")
    return f"{prefix}/{rel}{FORKS.get(fork, f'_fork{fork}')}"


def read_probe_events(raw):
    """(events sorted by time, lost count): events are (t, op, fields) from pagetrace.bt."""
    events, lost = [], 0
    with open(raw) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 7 and parts[0] in ("R", "W"):
                events.append((int(parts[1]), parts[0], tuple(int(x) for x in parts[2:])))
            elif len(parts) == 3 and parts[0] == "U":
                events.append((int(parts[1]), "U", ()))
            else:
                m = re.search(r"Lost (\d+) events", line)
                if m:
                    lost += int(m.group(1))
    events.sort(key=lambda e: e[0])  # stable: one CPU's events keep their order
    return events, lost


def page_trace(raw, names, prefix, max_refs):
    rels = Relations()
    refs = writes = unknown = 0
    distinct = set()
    events, lost = read_probe_events(raw)
    with open(prefix + ".pagetrace.csv", "w") as out:
        out.write("op,page\n")
        for _, op, tag in events:
            if refs == max_refs:
                break
            if op == "U":
                unknown += 1
                continue
            spc, db, rel, fork, block = tag
            page = (rels.rel(tag_path(spc, db, rel, fork)) << 24) | block
            out.write(f"{op},{page}\n")
            refs += 1
            writes += op == "W"
            distinct.add(page)
    rels.write(prefix + ".relations.csv", names)
    return {"references": refs, "writes": writes, "distinct_pages": len(distinct),
            "unmapped_dirty_marks": unknown, "bpftrace_lost_events": lost,
            "probe_events": len(events), "relations": len(rels.ids)}


def block_of(path, offset):
    m = re.match(r"^(.*?)(?:\.(\d+))?$", path)
    seg = int(m.group(2) or 0)
    return m.group(1), seg * SEGMENT_BLOCKS + offset // BLOCK_BYTES


def percentile(sorted_values, q):
    if not sorted_values:
        return 0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def io_trace(raw, names, prefix, max_reqs, host):
    rows = []
    with open(raw) as f:
        for line in f:
            op, t, lat, path, off, new, ranges = line.rstrip("\n").split(",", 6)
            rows.append((int(t), op, int(lat), path, int(off), new, ranges))
    rows.sort(key=lambda r: r[0])  # stable: issue order
    rels = Relations()
    stats = {"requests": 0, "writes": 0, "new_1": 0, "new_2": 0, "unreadable_old_image": 0}
    distinct = set()
    changed, runs, lsn = [], [], 0
    with open(prefix + ".iotrace.msr.csv", "w") as msr, \
            open(prefix + ".iotrace-ranges.csv", "w") as rng:
        rng.write("op,page,ranges,new\n")
        for t, op, lat, path, off, new, ranges in rows[:max_reqs]:
            relpath, block = block_of(path, off)
            rel = rels.rel(relpath)
            page = (rel << 24) | block
            distinct.add(page)
            kind = "Read" if op == "R" else "Write"
            msr.write(f"{t},{host},0,{kind},{(rel << 32) + block * BLOCK_BYTES},{BLOCK_BYTES},{lat}\n")
            stats["requests"] += 1
            if op == "R":
                rng.write(f"R,{page},,\n")
                continue
            stats["writes"] += 1
            if new == "3":  # the old image could not be read: logged as a whole-block write
                stats["unreadable_old_image"] += 1
                new = "0"
            elif new in ("1", "2"):
                stats["new_" + new] += 1
            elif new == "0":
                pairs = [tuple(map(int, r.split(":"))) for r in ranges.split(";") if r]
                changed.append(sum(n for _, n in pairs))
                runs.append(len(pairs))
                lsn += any(o < 8 for o, _ in pairs)
            rng.write(f"W,{page},{ranges},{new}\n")
    rels.write(prefix + ".relations.csv", names)
    changed.sort()
    runs.sort()
    n = len(changed)
    stats.update({
        "distinct_pages": len(distinct), "relations": len(rels.ids),
        "captured_requests": len(rows), "overwrites": n,
        "overwrite_changed_bytes_mean": round(sum(changed) / n, 1) if n else 0,
        "overwrite_changed_bytes_median": percentile(changed, 0.5),
        "overwrite_changed_bytes_p90": percentile(changed, 0.9),
        "overwrite_changed_bytes_p99": percentile(changed, 0.99),
        "overwrite_runs_median": percentile(runs, 0.5),
        "overwrite_share_le_512B": round(sum(c <= 512 for c in changed) / n, 4) if n else 0,
        "overwrite_share_lsn_changed": round(lsn / n, 4) if n else 0,
    })
    return stats


def main(argv):
    if len(argv) >= 6 and argv[1] == "page":
        stats = page_trace(argv[2], read_names(argv[3]), argv[4], int(argv[5]))
    elif len(argv) >= 7 and argv[1] == "io":
        stats = io_trace(argv[2], read_names(argv[3]), argv[4], int(argv[5]), argv[6])
    else:
        sys.exit(__doc__)
    print(json.dumps(stats, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv)
