#!/usr/bin/env python3
"""Checks a flashbuf_iolog.so capture end to end against the data directory itself.

  verify_ranges.py RAW BEFORE_DIR AFTER_DIR

RAW is the library's log of a whole run (capture.sh keeps it as WORK/NAME/raw.log),
BEFORE_DIR the data directory before the server started (capture.sh's cached copy) and
AFTER_DIR the one after the server stopped (WORK/NAME/data). A byte of a relation file can
differ between the two only if some logged write changed it, so the union of the logged
ranges of each block must cover every byte that differs (a block that did not exist before
counts as all zeros). Prints one JSON object; exit status 1 if any changed byte is uncovered.
"""
import json
import os
import sys

BLOCK_BYTES = 8192


def logged_ranges(raw):
    """{(relpath, offset): bytearray, 1 at each covered byte}, from the writes of the log."""
    cover = {}
    with open(raw) as f:
        for line in f:
            op, _t, _lat, path, off, _new, ranges = line.rstrip("\n").split(",", 6)
            if op != "W":
                continue
            covered = cover.setdefault((path, int(off)), bytearray(BLOCK_BYTES))
            for run in filter(None, ranges.split(";")):
                start, length = (int(x) for x in run.split(":"))
                covered[start:start + length] = b"\1" * length
    return cover


def compare_block(old, new, covered, chunk=64):
    """(bytes that differ, of those not covered): compares 64-byte slices first."""
    changed = uncovered = 0
    for c in range(0, len(new), chunk):
        if new[c:c + chunk] == old[c:c + chunk]:
            continue
        for i in range(c, min(c + chunk, len(new))):
            if new[i] != old[i]:
                changed += 1
                uncovered += not (covered and covered[i])
    return changed, uncovered


def relation_files(root):
    for top in ("base", "global"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name[0].isdigit():
                    yield os.path.relpath(os.path.join(d, name), root)


def verify(raw, before_dir, after_dir):
    cover = logged_ranges(raw)
    stats = {"files": 0, "blocks_compared": 0, "blocks_changed": 0, "bytes_changed": 0,
             "bytes_uncovered": 0, "blocks_uncovered": 0, "logged_blocks": len(cover)}
    for rel in sorted(relation_files(after_dir)):
        stats["files"] += 1
        before_path = os.path.join(before_dir, rel)
        old = open(before_path, "rb") if os.path.exists(before_path) else None
        with open(os.path.join(after_dir, rel), "rb") as new:
            off = 0
            while True:
                b_new = new.read(BLOCK_BYTES)
                if not b_new:
                    break
                b_old = old.read(BLOCK_BYTES) if old else b""
                b_old = b_old.ljust(len(b_new), b"\0")
                stats["blocks_compared"] += 1
                if b_new != b_old:
                    changed, uncovered = compare_block(b_old, b_new, cover.get((rel, off)))
                    stats["blocks_changed"] += 1
                    stats["bytes_changed"] += changed
                    stats["bytes_uncovered"] += uncovered
                    stats["blocks_uncovered"] += bool(uncovered)
                off += BLOCK_BYTES
        if old:
            old.close()
    return stats


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    stats = verify(argv[1], argv[2], argv[3])
    print(json.dumps(stats, sort_keys=True))
    sys.exit(1 if stats["bytes_uncovered"] else 0)


if __name__ == "__main__":
    main(sys.argv)
