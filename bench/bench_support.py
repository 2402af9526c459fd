"""What every step of the benchmark uses: running a tool and measuring it (wall time, peak RSS), the
databases it writes, xladbd as a context manager, the Python gRPC stubs."""
import collections
import dataclasses
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time


BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
MIB = 1024 * 1024


class StepError(Exception):
    """A step of the bench failed (not a missed target)."""


# --- processes ---------------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Measured:
    seconds: float            # wall time, start to exit
    rss_bytes: int            # the process's own peak resident set
    stdout: str
    stderr: str


def run_tool(cmd, *, timeout=3600, stdout_path=None, check=True):
    """Runs `cmd` to completion and returns its wall time and peak RSS (wait4 on that one child). stdout goes to
    `stdout_path` when given (and is then not returned). Raises StepError when it exits non-zero (if `check`) or
    runs past `timeout` seconds."""
    cmd = [str(c) for c in cmd]
    # Dirty pages of an earlier step (a generated input, a database since deleted) are written back first, so
    # that writeback does not land in this run's own fsyncs.
    os.sync()
    out = open(stdout_path, "wb") if stdout_path else tempfile.TemporaryFile()
    with out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            proc.kill()
        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        stdout = ""
        if not stdout_path:
            out.seek(0)
            stdout = out.read().decode(errors="replace")
    name = os.path.basename(cmd[0])
    if name.startswith("python"):
        name = next((os.path.basename(c) for c in cmd[1:] if c.endswith(".py")), name + " -c")
    if timed_out.is_set():
        raise StepError(f"{name} ran past {timeout} s")
    if check and proc.returncode != 0:
        raise StepError(f"{name} exited {proc.returncode}: {(stderr or stdout).strip()[-600:]}")
    return Measured(seconds, usage.ru_maxrss * 1024, stdout, stderr)


def best(runs):
    """The fastest of several Measured runs, with the highest peak RSS among them (the conservative one)."""
    fastest = min(runs, key=lambda m: m.seconds)
    return dataclasses.replace(fastest, rss_bytes=max(m.rss_bytes for m in runs))


def database_bytes(path):
    """A SQLite database's size on disk: the main file plus a WAL not yet checkpointed."""
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def table_breakdown(db_path):
    """(table, rows, bytes with its indexes) of every table holding data, largest first; [] without dbstat."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        owner = {name: tbl for name, tbl in db.execute(
            "SELECT name, tbl_name FROM sqlite_schema WHERE type IN ('table', 'index')")}
        try:
            pages = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
        except sqlite3.OperationalError:
            return []
        size = collections.Counter()
        for name, nbytes in pages:
            size[owner.get(name, name)] += nbytes
        out = []
        for table, nbytes in size.most_common():
            if table in owner and owner[table] == table and not table.startswith("sqlite_"):
                rows = db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
                if rows:
                    out.append((table, rows, nbytes))
        return out
    finally:
        db.close()


def remove_database(path):
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p):
            os.remove(p)


def count_all_rows(db_path):
    """Rows in every table of a database (read-only), to check that a pass wrote nothing."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
        return sum(db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables)
    finally:
        db.close()


INGEST_LINE = re.compile(r"^run (\S+): (\d+) files \(([^)]*)\); (\d+) rows, ([\d.]+) MB in", re.M)


@dataclasses.dataclass
class IngestSummary:
    files: int
    verdicts: dict
    rows: int
    mb: float                 # the text the CLI says it read and parsed


def parse_ingest_output(stdout):
    """Sums the `run NAME: N files (...); R rows, M MB in ...` lines of `xladb ingest --db`."""
    total = IngestSummary(0, {}, 0, 0.0)
    matches = INGEST_LINE.findall(stdout)
    if not matches:
        raise StepError(f"xladb ingest printed no summary line: {stdout.strip()[:300]}")
    for _, files, verdicts, rows, mb in matches:
        total.files += int(files)
        total.rows += int(rows)
        total.mb += float(mb)
        for part in verdicts.split(", "):
            count, _, verdict = part.partition(" ")
            total.verdicts[verdict] = total.verdicts.get(verdict, 0) + int(count)
    if total.verdicts.get("error", 0):
        raise StepError(f"xladb ingest gave {total.verdicts['error']} files an error verdict")
    return total


class Daemon:
    """An xladbd on a free loopback port, stopped (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, xladbd, db, *args, log=None):
        self.log = open(log or db + ".xladbd.log", "w")
        self.proc = subprocess.Popen([xladbd, "--db", db, "--listen", "127.0.0.1:0", *args],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            self.stop()
            raise StepError(f"xladbd did not start: {line.strip()} (log: {db}.xladbd.log)")
        self.addr = line.split("listening on ")[1].split()[0]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def count_lines(path):
    with open(path, "rb") as f:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))


def load_grpc_stubs(out_dir):
    """Generates the xladb.v1 Python stubs with protoc and imports them with grpc (python3-grpcio)."""
    os.makedirs(out_dir, exist_ok=True)
    run_tool(["protoc", "-I" + os.path.join(REPO_DIR, "proto"), "--python_out=" + out_dir, "--grpc_out=" + out_dir,
              "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin", "xladb/v1/xladb.proto"])
    sys.path.insert(0, out_dir)
    try:
        import grpc
        from xladb.v1 import xladb_pb2, xladb_pb2_grpc
    except ImportError as e:
        raise StepError(f"cannot import the gRPC client ({e}); scripts/install-deps.sh installs python3-grpcio")
    return grpc, xladb_pb2, xladb_pb2_grpc
