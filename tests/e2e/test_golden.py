"""Golden tests of what the store holds (as Perfetto's diff tests): each case under tests/golden/cases/ names
the dump folders to ingest, as runs, with `xladb ingest` (the real CLI, into a fresh SQLite file); then every
named query of tests/golden/queries/ runs through `xladb sql --format csv`, and its output must equal the
case's expected CSV, byte for byte.

    XLADB_GOLDEN_UPDATE=1 python3 -m unittest test_golden   # rewrite the expected CSVs on purpose

A rewrite is a change of what the store holds: review its diff as you would code. Cases that read the corpus
(a path starting with $CORPUS/) are skipped, and say so, where the corpus is absent.

Every backend must produce the same CSVs: each case also runs on PostgreSQL (test_<case>_postgresql): the
runs are ingested there by `xladb ingest --db postgresql://…`, and the queries run through psql --csv (and,
for the fixtures case, the CLI's query commands with --db postgresql://… must print what they print on a
SQLite file of the same runs) on the PostgreSQL test server that ctest starts (XLADB_TEST_POSTGRES_DIR; without it
those tests skip and say why). The queries are written in SQL both accept, and print no floating-point text:
ratios and percentages are integers in billionths.

The expected CSVs are checked against the dumps themselves too: GoldenCasesAgreeWithTheirDumps reads each
per-format case's dump files with this file's own small parsers (docs/formats.md) and finds their figures in the
case's CSVs; GoldenAgreesWithTheDumps does so for the fixtures case's buffer-assignment totals."""
import difflib
import os
import shutil
import subprocess
import tempfile
import unittest

from dump_figures import DumpFigures, dump_kind

SOURCE_DIR = os.environ.get("XLADB_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
XLADB = os.environ.get("XLADB", os.path.join(SOURCE_DIR, "build", "test", "cli", "xladb"))
CORPUS_DIR = os.environ.get("XLADB_CORPUS_DIR", os.path.join(SOURCE_DIR, "..", "shared", "corpus"))
GOLDEN_DIR = os.path.join(SOURCE_DIR, "tests", "golden")
UPDATE = os.environ.get("XLADB_GOLDEN_UPDATE") == "1"
POSTGRES_DIR = os.environ.get("XLADB_TEST_POSTGRES_DIR")
PSQL = "/usr/lib/postgresql/15/bin/psql"


def queries():
    """name -> SQL of every tests/golden/queries/*.sql."""
    folder = os.path.join(GOLDEN_DIR, "queries")
    out = {}
    for f in sorted(os.listdir(folder)):
        if f.endswith(".sql"):
            with open(os.path.join(folder, f)) as fh:
                out[f[:-4]] = fh.read()
    return out


class Case:
    """A tests/golden/cases/NAME/case.txt: `run NAME TIME PATH...` lines (paths relative to the repository, or
    $CORPUS/...), `label RUN KEY=VALUE...` lines (set with `xladb label` after the ingests) and an optional
    `queries Q...` line (default: every query)."""

    def __init__(self, name):
        self.name = name
        self.folder = os.path.join(GOLDEN_DIR, "cases", name)
        self.runs, self.labels, self.queries, self.needs_corpus = [], [], None, False
        with open(os.path.join(self.folder, "case.txt")) as fh:
            for number, line in enumerate(fh, 1):
                words = line.split()
                if not words or words[0].startswith("#"):
                    continue
                if words[0] == "run" and len(words) >= 4:
                    paths = []
                    for p in words[3:]:
                        if p.startswith("$CORPUS/"):
                            self.needs_corpus = True
                            paths.append(os.path.join(CORPUS_DIR, p[len("$CORPUS/"):]))
                        else:
                            paths.append(os.path.join(SOURCE_DIR, p))
                    self.runs.append((words[1], words[2], paths))
                elif words[0] == "label" and len(words) >= 3:
                    self.labels.append((words[1], words[2:]))
                elif words[0] == "queries":
                    self.queries = words[1:]
                else:
                    raise ValueError(f"{self.folder}/case.txt:{number}: not `run NAME TIME PATH...`, "
                                     f"`label RUN KEY=VALUE...` or `queries Q...`: {line.rstrip()}")


def run_xladb(*args):
    return subprocess.run([XLADB, *args], capture_output=True, timeout=600)


class GoldenTest(unittest.TestCase):
    maxDiff = None

    def check_case(self, name):
        case = Case(name)
        if case.needs_corpus and not os.path.isdir(os.path.join(CORPUS_DIR, "public")):
            self.skipTest(f"the corpus is absent ({CORPUS_DIR}): golden case {name} needs it")
        all_queries = queries()
        wanted = case.queries or sorted(all_queries)
        unknown = [q for q in wanted if q not in all_queries]
        self.assertEqual(unknown, [], f"case {name} names queries that tests/golden/queries lacks")
        tmp = tempfile.mkdtemp(prefix="xladb_golden.")
        try:
            db = self.ingest_case(case, tmp)
            mismatches = []
            for q in wanted:
                out = run_xladb("--db", db, "--format", "csv", "sql", "--max-rows", "0", all_queries[q])
                self.assertEqual(out.returncode, 0, f"query {q}: {out.stderr.decode(errors='replace')}")
                expected_path = os.path.join(case.folder, q + ".csv")
                if UPDATE:
                    with open(expected_path, "wb") as fh:
                        fh.write(out.stdout)
                    continue
                mismatches += compare(name, q, expected_path, out.stdout)
            if mismatches:
                self.fail("the store no longer holds what the golden files say:\n\n" + "\n\n".join(mismatches))
            if not UPDATE:
                stale = sorted(f for f in os.listdir(case.folder)
                               if f.endswith(".csv") and f[:-4] not in wanted)
                self.assertEqual(stale, [], f"case {name} has expected files of queries it does not run")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


    def ingest_case(self, case, tmp, db=None):
        """The case's runs ingested by `xladb ingest` into `db` (a postgresql:// URI), or into a fresh SQLite
        file in `tmp`."""
        db = db or os.path.join(tmp, "golden.db")
        for run, when, paths in case.runs:
            out = run_xladb("--db", db, "ingest", *paths, "--run", run, "--time", when)
            # Exit 1 means some files were errors: fixtures hold broken files on purpose, and their verdicts are
            # part of the golden output. Anything else is a failure.
            self.assertIn(out.returncode, (0, 1), f"ingest of {run}: {out.stderr.decode(errors='replace')}")
        for run, pairs in case.labels:
            out = run_xladb("--db", db, "label", run, *pairs)
            self.assertEqual(out.returncode, 0, f"labels of {run}: {out.stderr.decode(errors='replace')}")
        return db

    def check_case_postgresql(self, name):
        """The case on PostgreSQL: its runs ingested there by `xladb ingest --db postgresql://…`, each query
        through psql, the same expected CSVs."""
        if not POSTGRES_DIR:
            self.skipTest("XLADB_TEST_POSTGRES_DIR is not set: ctest's postgres_server fixture starts PostgreSQL")
        case = Case(name)
        if case.needs_corpus and not os.path.isdir(os.path.join(CORPUS_DIR, "public")):
            self.skipTest(f"the corpus is absent ({CORPUS_DIR}): golden case {name} needs it")
        with open(os.path.join(POSTGRES_DIR, "uri")) as fh:
            uri = fh.read().strip()
        all_queries = queries()
        wanted = case.queries or sorted(all_queries)
        schema = f"golden_{name.replace('-', '_')}_{os.getpid()}"
        scoped = f"{uri}?options=-csearch_path%3D{schema}"
        tmp = tempfile.mkdtemp(prefix="xladb_golden_pg.")
        psql = lambda target, *args: subprocess.run([PSQL, target, "-X", "-q", "-v", "ON_ERROR_STOP=1", *args],
                                                     capture_output=True, timeout=600)
        try:
            made = psql(uri, "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
            self.assertEqual(made.returncode, 0, made.stderr.decode(errors="replace"))
            self.ingest_case(case, tmp, scoped)
            mismatches = []
            for q in wanted:
                path = os.path.join(tmp, q + ".sql")
                with open(path, "w") as fh:
                    fh.write(all_queries[q])
                out = psql(scoped, "--csv", "-f", path)
                self.assertEqual(out.returncode, 0, f"query {q} on PostgreSQL: {out.stderr.decode(errors='replace')}")
                mismatches += compare(name, q, os.path.join(case.folder, q + ".csv"), out.stdout, "PostgreSQL")
            if mismatches:
                self.fail("PostgreSQL does not answer what the golden files say:\n\n" + "\n\n".join(mismatches))
            if name == "fixtures":
                self.check_commands_agree(self.ingest_case(case, tmp), scoped, tmp)
        finally:
            psql(uri, "-c", f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            shutil.rmtree(tmp, ignore_errors=True)


    # The query commands of the real CLI, offline on the SQLite file and on the PostgreSQL store: the same
    # output and exit code. The fixtures case's gate runs regress (jit_step's total bytes 6144 -> 71680), so the
    # gate must say so (exit 1) on both.
    COMMANDS = [
        ["runs"], ["runs", "--name", "gate_*"], ["modules", "gate_head"], ["modules", "seeds", "--name", "00[0-2]_*"],
        ["trend", "jit_step", "--metric", "total"], ["trend", "jit_*"], ["spills"], ["spills", "--limit", "3"],
        ["top", "seeds", "000_edd6dfbd09ed8e41"], ["top", "seeds", "000_edd6dfbd09ed8e41", "--at", "padded"],
        ["modules", "gate_head", "--sort", "total", "--limit", "3"], ["modules", "gate_head", "--all"],
        ["trend", "jit_twice", "--run", "gate_head"], ["diff", "gate_base", "gate_head"], ["retraces", "gate_head"],
        ["check", "gate_head", "--baseline", "gate_base"], ["check", "gate_head", "--baseline", "label:branch=main"],
        ["check", "gate_head", "--baseline", "commit:1111111", "--format", "markdown"],
        ["oom", "oom_report"], ["top", "oom_report", "report_with_log_preamble"], ["modules", "oom_report"],
    ]

    def check_commands_agree(self, db, uri, tmp):
        for command in self.COMMANDS:
            if "--format" not in command:
                command = [*command, "--format", "json" if command[0] == "check" else "csv"]
            on_sqlite = run_xladb("--db", db, *command)
            on_postgres = run_xladb("--db", uri, *command)
            self.assertIn(on_sqlite.returncode, (0, 1), f"{command} on SQLite: {on_sqlite.stderr.decode(errors='replace')}")
            self.assertEqual(on_postgres.returncode, on_sqlite.returncode,
                             f"{command} on PostgreSQL: {on_postgres.stderr.decode(errors='replace')}")
            self.assertEqual(on_postgres.stdout.decode(errors="replace"), on_sqlite.stdout.decode(errors="replace"),
                             f"{command}: PostgreSQL answers otherwise")
            self.assertTrue(on_sqlite.stdout, f"{command} printed nothing")
            if command[0] == "check":
                self.assertEqual(on_postgres.returncode, 1, f"{command}: the gate must fail (jit_step grew)")
        pages = []
        for target in (db, uri):
            page = os.path.join(tmp, f"report{len(pages)}.html")
            out = run_xladb("--db", target, "report", "report_head", "--baseline", "report_base", "-o", page)
            self.assertEqual(out.returncode, 0, out.stderr.decode(errors="replace"))
            with open(page, "rb") as fh:
                pages.append(fh.read())
        self.assertIn(b"jit_mlp", pages[0])
        self.assertEqual(pages[1], pages[0], "the report page differs on PostgreSQL")


def compare(name, q, expected_path, got, backend="SQLite"):
    """[] when `got` equals the expected file, else one message with the start of the diff."""
    if not os.path.exists(expected_path):
        return [f"{q}: no expected file {expected_path} (XLADB_GOLDEN_UPDATE=1 writes it)"]
    with open(expected_path, "rb") as fh:
        expected = fh.read()
    if got == expected:
        return []
    diff = difflib.unified_diff(expected.decode(errors="replace").splitlines(), got.decode(errors="replace").splitlines(),
                                f"{name}/{q}.csv (expected)", f"{name}/{q}.csv ({backend} now)", lineterm="", n=1)
    return ["\n".join(list(diff)[:40])]


class GoldenAgreesWithTheDumps(unittest.TestCase):
    """The expected CSVs are written by the code under test, so one review is not enough: every buffer
    assignment the fixtures case reads must have, in its modules.csv row, the `Total bytes used:` its text
    prints and as many allocations as it has `allocation N:` lines."""

    def test_every_fixture_buffer_assignment(self):
        import csv
        import re
        case = Case("fixtures")
        folders = {run: paths[0] for run, _, paths in case.runs}
        with open(os.path.join(case.folder, "files.csv"), newline="") as fh:
            files = [r for r in csv.DictReader(fh) if r["kind"] == "buffer_assignment" and r["verdict"] == "ingested"]
        with open(os.path.join(case.folder, "modules.csv"), newline="") as fh:
            modules = list(csv.DictReader(fh))
        self.assertGreater(len(files), 10)
        checked = 0
        for f in files:
            with open(os.path.join(folders[f["run"]], f["path"]), encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            allocations = len(re.findall(r"^allocation \d+:", text, re.M))
            total = re.search(r"^Total bytes used: (\d+)", text, re.M)
            rows = [m for m in modules if (m["run"], m["module"], m["stage"]) == (f["run"], f["module"], f["stage"])]
            self.assertTrue(rows, f"{f['run']}/{f['path']}: no module row for {f['module']} {f['stage']}")
            # A 2026 split dump prints its total in a sibling file: then only the allocations are this file's.
            found = [(m["allocation_count"], m["total_bytes"] if total else "") for m in rows]
            self.assertIn((str(allocations), total.group(1) if total else ""), found,
                          f"{f['run']}/{f['path']}: modules.csv disagrees with the dump's own lines")
            checked += 1
        self.assertEqual(checked, len(files))


    def test_every_corpus_run_hlo_text_sharding(self):
        # modules.hlo_entry_sharding of every module of the corpus runs with HLO text, against this test's own
        # reading of the text's ENTRY computation: each `parameter(N)` line's and the ROOT line's `sharding={…}`
        # (docs/formats.md §7.3); and entry_sharding is the before_optimizations text's where there is one.
        import csv
        import re
        case = Case("corpus-runs")
        if not all(os.path.isdir(paths[0]) for _, _, paths in case.runs):
            self.skipTest("shared corpus not present")
        folders = {run: paths[0] for run, _, paths in case.runs}
        with open(os.path.join(case.folder, "files.csv"), newline="") as fh:
            texts = [r for r in csv.DictReader(fh) if r["kind"] == "hlo_module" and r["verdict"] == "ingested"
                     and (r["stage"] == "before_optimizations" or r["stage"].endswith("after_optimizations"))]
        with open(os.path.join(case.folder, "modules.csv"), newline="") as fh:
            modules = list(csv.DictReader(fh))

        def sharding_of(line):
            at = line.find(", sharding={")
            if at < 0:
                return "none"
            start = at + len(", sharding=")
            depth, quoted, i = 0, False, start
            while i < len(line):
                c = line[i]
                if quoted:
                    i += 2 if c == "\\" else 1
                    quoted = quoted and c != '"'
                    continue
                if c == '"':
                    quoted = True
                elif c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        return line[start:i + 1]
                i += 1
            return line[start:]

        def expected(text):
            entry = text[text.index("\nENTRY "):]
            body = entry[:entry.index("\n}")].split("\n")[2:]
            params, root = {}, "none"
            for line in body:
                number = re.search(r" parameter\((\d+)\)", line)
                if number:
                    params[int(number.group(1))] = sharding_of(line)
                if line.lstrip().startswith("ROOT "):
                    root = sharding_of(line)
            if all(v == "none" for v in params.values()) and root == "none":
                return ""
            spelled = [params.get(n, "none") for n in range(max(params) + 1 if params else 0)]
            return "(" + ", ".join(spelled) + ") -> " + root

        own, checked, sharded = {}, 0, 0
        for f in texts:
            with open(os.path.join(folders[f["run"]], f["path"]), encoding="utf-8") as fh:
                want = expected(fh.read())
            number = int(re.match(r"module_(\d+)\.", os.path.basename(f["path"])).group(1))
            folder = os.path.dirname(f["path"])
            folder = "" if folder == "xla_dump" else folder
            rows = [m for m in modules if (m["run"], m["module"], m["stage"], m["xla_module_id"], m["folder"]) ==
                    (f["run"], f["module"], f["stage"], str(number), folder)]
            self.assertEqual(len(rows), 1, f["path"])
            self.assertEqual(rows[0]["hlo_entry_sharding"], want, f["path"])
            own[(f["run"], f["module"], number, folder, f["stage"])] = want
            checked += 1
            sharded += want != ""
        for (run, module, number, folder, stage), sharding in own.items():
            before = own.get((run, module, number, folder, "before_optimizations"), sharding)
            row = next(m for m in modules if (m["run"], m["module"], m["stage"], m["xla_module_id"], m["folder"]) ==
                       (run, module, stage, str(number), folder))
            self.assertEqual(row["entry_sharding"], before, (run, module, number, stage))
        self.assertGreater(checked, 1900)
        self.assertGreater(sharded, 900)  # the corpus runs are SPMD programs on 4 GPUs


class GoldenCasesAgreeWithTheirDumps(unittest.TestCase):
    """Each per-format case's expected CSVs against the figures its own dump files print (DumpFigures): byte
    counts, allocation and value lines, live ranges, the peak list and the stack-trace tree, schedules,
    instructions and computations, memory-report rows and totals, OOM statistics and buffers, TPU counters, and
    how numbered-only files are named (docs/formats.md §1.1). The cases that need the corpus, and `fixtures`
    (whose truncated and invariant-breaking files say on purpose less than they print; GoldenAgreesWithTheDumps
    checks its buffer assignments' totals), are left to their own tests."""

    def check(self, name):
        import csv
        import re
        case = Case(name)
        expected = {}
        for f in sorted(os.listdir(case.folder)):
            if f.endswith(".csv"):
                with open(os.path.join(case.folder, f), newline="") as fh:
                    expected[f[:-4]] = list(csv.DictReader(fh))
        self.assertIn("files", expected, f"case {name}: runs no files query, so its files cannot be told apart")
        figures, names = [], {}
        dumps = []
        for run, _, paths in case.runs:
            root = paths[0]
            if os.path.isdir(root):
                for folder, _, files in os.walk(root):
                    dumps += [(run, os.path.join(folder, f), os.path.relpath(os.path.join(folder, f), root))
                              for f in sorted(files)]
            else:
                dumps.append((run, root, os.path.basename(root)))
        for run, full, path in dumps:
            with open(full, encoding="utf-8") as fh:
                text = fh.read()
            number = re.match(r"module_(\d{4,})\.((?:before|after)_optimizations)\.txt$", os.path.basename(path))
            if number and text.startswith("HloModule "):
                names[(run, number.group(1))] = re.match(r"HloModule ([^\s,]+)", text).group(1)
        for run, full, path in dumps:
            with open(full, encoding="utf-8") as fh:
                text = fh.read()
            kind = dump_kind(text)
            self.assertIsNotNone(kind, f"{name}/{path}: this test cannot tell what the file is")
            where = f"{name}: {run}/{path}"
            figures.append(DumpFigures(where))
            rows = [r for r in expected["files"] if (r["run"], r["path"]) == (run, path)]
            self.assertEqual(len(rows), 1, f"{where}: files.csv has {len(rows)} rows for it")
            figures[-1].claim("files", dict(run=run, path=path), kind=kind, verdict="ingested",
                              size_bytes=os.path.getsize(full), line_count=text.count("\n"))
            # §1.1: a numbered-only file names its module by the HLO text of its number, else `module_<ID>`.
            numbered = re.match(r"module_(\d{4,})\.((?:before|after)_optimizations)[.-]", os.path.basename(path))
            if numbered:
                figures[-1].claim("files", dict(run=run, path=path), stage=numbered.group(2),
                                  module=names.get((run, numbered.group(1)), f"module_{int(numbered.group(1))}"))
            xla_id = re.match(r"module_(\d{4,})\.", os.path.basename(path))
            module = dict(run=run, module=rows[0]["module"], stage=rows[0]["stage"], folder="",
                          xla_module_id=str(int(xla_id.group(1))) if xla_id else "")
            if kind in ("buffer_assignment", "buffer_assignment_values", "live_range"):
                figures[-1].buffer_assignment(text, module)
            elif kind == "hlo_module":
                figures[-1].hlo_module(text, module)
            else:
                getattr(figures[-1], kind)(text, dict(run=run, path=path))
        failures, checked = [], {q: 0 for q in expected}
        match = lambda rows, key: [r for r in rows if all(r[k] == str(v) for k, v in key.items())]
        for f in figures:
            for query, key, want, where in f.claims:
                if query not in expected:
                    continue  # the case does not run that query
                rows = match(expected[query], key)
                if len(rows) != 1:
                    failures.append(f"{where}: {query}.csv has {len(rows)} rows where {key}, not 1")
                    continue
                got = {k: rows[0][k] for k in want}
                if got != want:
                    failures.append(f"{where}: {query}.csv row {key}:\n  dump says {want}\n  csv says  {got}")
                checked[query] += 1
            for query, key, n, where in f.counts:
                if query in expected and len(match(expected[query], key)) != n:
                    failures.append(f"{where}: {query}.csv has {len(match(expected[query], key))} rows where {key}; "
                                    f"the dump prints {n}")
        if failures:
            self.fail(f"case {name}: the expected CSVs disagree with the dump files:\n" + "\n".join(failures))
        unchecked = sorted(q for q, n in checked.items() if n == 0)
        self.assertEqual(unchecked, [], f"case {name}: expected CSVs that no figure of the dumps checks")


def add_dump_figure_tests():
    # The per-format cases only: the fixtures case has GoldenAgreesWithTheDumps, and the corpus cases are
    # checked against their dumps by the corpus tests of the other suites (a test here would only skip).
    for name in sorted(os.listdir(os.path.join(GOLDEN_DIR, "cases"))):
        if name != "fixtures" and not Case(name).needs_corpus:
            setattr(GoldenCasesAgreeWithTheirDumps, "test_" + name.replace("-", "_"), lambda self, n=name: self.check(n))


add_dump_figure_tests()


def add_case_tests():
    for name in sorted(os.listdir(os.path.join(GOLDEN_DIR, "cases"))):
        setattr(GoldenTest, "test_" + name.replace("-", "_"), lambda self, n=name: self.check_case(n))
        setattr(GoldenTest, "test_" + name.replace("-", "_") + "_postgresql",
                lambda self, n=name: self.check_case_postgresql(n))


add_case_tests()

if __name__ == "__main__":
    unittest.main()
