#!/usr/bin/python3
"""The baseline xladb is measured against: a short loader of XLA `*-buffer-assignment.txt` dumps into SQLite,
written the way a user would write it (the standard library's re and sqlite3; one transaction, WAL, batched
executemany). It loads the same allocations, allocated values and live ranges that xladb stores in its
`allocations`, `buffer_values` and `live_ranges` tables, so the row counts of the two must be equal.

    /usr/bin/python3 bench/baseline.py FILE... --db OUT.db

Prints one line per file and a summary: MB/s and the rows per table (`rows: allocations=… buffer_values=…
live_ranges=…`).
"""
import argparse
import os
import re
import sqlite3
import sys
import time

# `allocation 3: [0x…, ]size 1024, flags…:`
ALLOCATION = re.compile(r"allocation (\d+): (?:0x[0-9a-f]+, )?size (\d+)(.*):$")
# ` value: <12 fusion.3{1} @0> (size=1024,offset=0): f32[16,16]{1,0}`
VALUE = re.compile(r" value: <(\d+) ([\w.\-]+?)(\{[\d,]*\})?(?: \(phi\))?(?: @(\d+))?> "
                   r"\(size=(\d+),offset=(\d+)\): (.*)$")
# `    fusion.3{1}:12-40`
LIVE_RANGE = re.compile(r"    ([\w.\-]+?)(\{[\d,]*\}):(\d+)-(\d+)$")
PARAMETER = re.compile(r"parameter (\d+)")
COLOR = re.compile(r", color (\d+)")

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (file_id INTEGER PRIMARY KEY, path TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS allocations (file_id INTEGER, allocation_index INTEGER, size_bytes INTEGER,
  color INTEGER, parameter_number INTEGER, is_output INTEGER, is_constant INTEGER, is_thread_local INTEGER,
  is_maybe_live_out INTEGER, is_preallocated_temp INTEGER);
CREATE TABLE IF NOT EXISTS buffer_values (file_id INTEGER, value_id INTEGER, instruction TEXT, shape_index TEXT,
  color INTEGER, allocation_index INTEGER, offset_bytes INTEGER, size_bytes INTEGER, shape TEXT);
CREATE TABLE IF NOT EXISTS live_ranges (file_id INTEGER, instruction TEXT, shape_index TEXT, live_start INTEGER,
  live_end INTEGER);
"""

BATCH = 10000


def load(db, path):
    """Loads one buffer-assignment file; returns (allocations, values, live ranges) row counts."""
    file_id = db.execute("INSERT INTO files(path) VALUES (?)", (path,)).lastrowid
    allocations, values, ranges = [], [], []
    counts = [0, 0, 0]

    def flush():
        db.executemany("INSERT INTO allocations VALUES (?,?,?,?,?,?,?,?,?,?)", allocations)
        db.executemany("INSERT INTO buffer_values VALUES (?,?,?,?,?,?,?,?,?)", values)
        db.executemany("INSERT INTO live_ranges VALUES (?,?,?,?,?)", ranges)
        counts[0] += len(allocations)
        counts[1] += len(values)
        counts[2] += len(ranges)
        allocations.clear()
        values.clear()
        ranges.clear()

    section = None
    allocation = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("allocation "):
                section = "allocations"
                m = ALLOCATION.match(line)
                if m:
                    allocation = int(m.group(1))
                    flags = m.group(3)
                    color = COLOR.search(flags)
                    param = PARAMETER.search(flags)
                    allocations.append((file_id, allocation, int(m.group(2)), int(color.group(1)) if color else 0,
                                        int(param.group(1)) if param else None, int("output shape is" in flags),
                                        int(", constant" in flags), int("thread-local" in flags),
                                        int("maybe-live-out" in flags), int("preallocated-temp" in flags)))
            elif section == "allocations" and line.startswith(" value: "):
                m = VALUE.match(line)
                if m:
                    values.append((file_id, int(m.group(1)), m.group(2), m.group(3) or "{}",
                                   int(m.group(4) or 0), allocation, int(m.group(6)), int(m.group(5)), m.group(7)))
            elif line.startswith("Used values:"):
                section = None
            elif line == "  BufferLiveRange:":
                section = "ranges"
            elif section == "ranges":
                m = LIVE_RANGE.match(line)
                if m:
                    ranges.append((file_id, m.group(1), m.group(2), int(m.group(3)), int(m.group(4))))
                elif not line.startswith("    "):
                    section = None
            if len(values) + len(ranges) >= BATCH:
                flush()
    flush()
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="*-buffer-assignment.txt files")
    parser.add_argument("--db", required=True, help="SQLite database to create or extend")
    args = parser.parse_args()

    db = sqlite3.connect(args.db, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    total_bytes = 0
    totals = [0, 0, 0]
    start = time.perf_counter()
    db.execute("BEGIN")
    for path in args.files:
        t0 = time.perf_counter()
        counts = load(db, path)
        size = os.path.getsize(path)
        total_bytes += size
        totals = [a + b for a, b in zip(totals, counts)]
        seconds = time.perf_counter() - t0
        print(f"baseline: {path}: {size / 1e6:.1f} MB in {seconds:.2f} s ({size / 1e6 / seconds:.1f} MB/s), "
              f"{sum(counts)} rows")
    db.execute("COMMIT")
    db.close()
    seconds = time.perf_counter() - start
    print(f"baseline: {total_bytes / 1e6:.1f} MB in {seconds:.2f} s ({total_bytes / 1e6 / seconds:.1f} MB/s)")
    print(f"rows: allocations={totals[0]} buffer_values={totals[1]} live_ranges={totals[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
