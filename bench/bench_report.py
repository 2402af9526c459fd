"""The benchmark's report: how figures are written, the targets table and sections the steps fill, and
docs/PERFORMANCE.md rendered from them (the history below HISTORY_MARKER kept)."""
import math
import os
import platform
import sqlite3
import subprocess
import time

from bench_support import MIB, REPO_DIR, StepError


# --- formatting --------------------------------------------------------------------------------------------------

def mb(n_bytes):
    return n_bytes / 1e6


def fmt_mib(n_bytes):
    return f"{n_bytes / MIB:,.0f} MiB" if n_bytes >= 100 * MIB else f"{n_bytes / MIB:,.1f} MiB"


def fmt_size_label(spec):
    """'10M' -> '10 MiB', '1G' -> '1 GiB' (xladb_gen's units are binary)."""
    return spec[:-1] + {"K": " KiB", "M": " MiB", "G": " GiB"}[spec[-1]]


def fmt_rate(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}"


def fmt_ms(x):
    return f"{x:,.1f} ms" if x >= 10 else f"{x:,.2f} ms"


def percentile(values, p):
    """Nearest-rank percentile; NaN of no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def verdict(parts):
    """'met' when every (name, ok) part holds, else 'not met (names)'."""
    missed = [name for name, ok in parts if not ok]
    return "met" if not missed else "not met (" + ", ".join(missed) + ")"


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# --- the report --------------------------------------------------------------------------------------------------

TARGET_HEADER = ["scenario", "input", "xladb", "baseline", "ratio", "peak RSS", "target", "met"]


class Report:
    """What the steps measured: the targets table, detail tables, notes and failures, in order."""

    def __init__(self):
        self.targets = []         # rows of TARGET_HEADER
        self.sections = []        # (title, text)
        self.notes = []
        self.failures = []

    def target(self, *row):
        assert len(row) == len(TARGET_HEADER)
        self.targets.append(list(row))

    def section(self, title, text):
        self.sections.append((title, text))

    def step(self, name, fn, *args):
        """Runs one step; a StepError (or any exception) is recorded as a failure and the bench goes on."""
        print(f"== {name}", flush=True)
        t0 = time.perf_counter()
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001 (every failure is reported; the bench goes on)
            message = str(e) if isinstance(e, StepError) else f"{type(e).__name__}: {e}"
            print(f"FAILED: {name}: {message}", flush=True)
            self.failures.append(f"{name}: {message}")
            self.target(name, "", "FAILED", "", "", "", "", "step failed: " + message.replace("|", "/")[:200])
        print(f"   ({time.perf_counter() - t0:.1f} s)", flush=True)


# --- the document ------------------------------------------------------------------------------------------------

def machine_description():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.machine())
    mem = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    os_name = "Linux"
    if os.path.exists("/etc/os-release"):
        fields = dict(line.rstrip("\n").split("=", 1) for line in open("/etc/os-release") if "=" in line)
        os_name = fields.get("PRETTY_NAME", os_name).strip('"')
    return f"{os.cpu_count()} cores ({cpu}), {mem / MIB:.0f} GiB, {os_name}, SQLite {sqlite3.sqlite_version}"


def source_revision():
    try:
        rev = subprocess.run(["git", "-C", REPO_DIR, "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO_DIR, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev + (" with uncommitted changes" if dirty else "") if rev else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# docs/PERFORMANCE.md holds this run's report above this line, and the measurements of each issue's work below
# it, which a new run keeps.
HISTORY_MARKER = "<!-- Below: measurements kept across runs of scripts/bench.sh (bench/run_bench.py keeps them). -->"


def kept_history(path):
    """The part of the report at `path` from HISTORY_MARKER on ("" without one)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    at = text.find(HISTORY_MARKER)
    return "\n" + text[at:] if at >= 0 else ""


def render(bench, size_name, started, load_before, load_after, seconds):
    p = bench.p
    r = bench.report
    out = ["# Performance", "",
           f"Written by `scripts/bench.sh{'' if size_name == 'full' else ' --size ' + size_name}` "
           f"(bench/run_bench.py) on {started:%Y-%m-%d}: {machine_description()}; Release build of "
           f"{source_revision()}; {seconds / 60:.1f} min in all. The machine was shared with other work "
           f"(load average {load_before:.1f} before, {load_after:.1f} after), so times are the best of "
           f"{p.repeat} and latencies are percentiles over many calls. Ratios are xladb over the baseline "
           "(higher is better for xladb).", "",
           "## Targets", "", markdown_table(TARGET_HEADER, r.targets), ""]
    for title, text in r.sections:
        out += ["## " + title, "", text, ""]
    big = getattr(bench, "big_file_result", None)
    if big:
        out += ["## What bounds ingest (measured in this run)", ""]
        rows_s = big["rows"] / big["seconds"]
        out.append(
            f"* The {fmt_size_label(big['spec'])} file becomes {big['rows']:,} rows in xladb's tables "
            f"({big['rows'] / mb(big['bytes']):,.0f} rows per MB of text): end to end that is {rows_s:,.0f} rows/s, "
            "against the issue's calibration of SQLite on this machine class (at best about 0.5 to 0.7 million "
            "rows per second).")
        parse_seconds = mb(big["bytes"]) / big["parse_mb_s"]
        out.append(
            f"* Parsing alone takes {parse_seconds:.2f} s of the {big['seconds']:.2f} s "
            f"({parse_seconds / big['seconds'] * 100:.0f}%), on a second thread beside the writer; the rest is "
            "building rows and writing them to SQLite. Rows are written in the order of their table's key (values "
            "and live ranges by value id, the schedule by time; instructions and texts appended under a rowid with "
            "their key in a narrow index), values, live ranges and the schedule 64 rows per INSERT, and under WAL "
            "every page is written twice (to the WAL at commit, to the database at the checkpoint).")
        if big.get("tables"):
            out.append(
                f"* Where its {mb(big['db_bytes']):,.1f} MB database goes (each table with its indexes; rows):")
            out.append("")
            out.append("  | table | rows | MB | bytes per row |")
            out.append("  |---|---|---|---|")
            for table, rows, nbytes in big["tables"]:
                out.append(f"  | `{table}` | {rows:,} | {mb(nbytes):,.1f} | {nbytes / rows:,.0f} |")
            out.append("")
        out.append(
            f"* The baseline stores fewer facts (allocations, values, live ranges: "
            f"{big['base_db_bytes'] / big['bytes']:.2f}× the text as a database against xladb's "
            f"{big['db_bytes'] / big['bytes']:.2f}×), so its MB/s is an upper bound of what a simple loader does.")
        out.append("")
    out += ["## Reproduce", "", "```sh",
            "scripts/bench.sh                  # this table (full size: ~45 min, ~35 GB under $TMPDIR)",
            "scripts/bench.sh --size quick     # the same with a 100-run query store, in minutes",
            "scripts/bench.sh --size smoke     # tiny inputs, well under a minute (a ctest: bench_smoke)",
            "```", ""]
    return "\n".join(out)
