"""Hardening round 3 (issue 26): inert text wherever text leaves xladb (item 3), run times in range (item 4) and
--db that must be a regular file (item 5), against real xladb and xladbd processes on 127.0.0.1 and a Python
grpcio client. The gate's Markdown is rendered with Debian's cmark-gfm (GitHub's CommonMark fork, with its
table, autolink and strikethrough extensions), as a PR comment would be. docs/RELIABILITY.md lists each case.

Run by ctest like test_service.py (same environment variables). Every wait is bounded.
"""
import calendar
import csv
import html.parser
import io
import json
import os
import shutil
import sqlite3
import subprocess
import time
import unittest

from test_service import (SOURCE_DIR, XLADB, XLADBD, DaemonTestCase, arrive_in_watched_folder, make_run, wait_for,
                          xladb_pb2)
from test_hardening import upload_messages

import grpc  # noqa: E402

GATE_FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "gate")
BA_SUFFIX = ".after_optimizations-buffer-assignment.txt"
CMARK_GFM = shutil.which("cmark-gfm") or "/usr/bin/cmark-gfm"

# The file name, as a dump's source_file.
HOSTILE_SOURCE = ("src/![pwn](https://evil.example/p.png) [Click to approve](https://evil.example/login) "
                  "@octocat **bold**.py")
# The rest of Markdown's metacharacters, in a module name (a file name part: no '/' or '.').
HOSTILE_MODULE = "jit_`t``u`|p_<img src=x onerror=alert(1)>_&amp;_~~s~~_![m](https:evil)_@octocat_**b**_#h"
HOSTILE_RUN = "base ![r](https://evil.example/r.png) @octocat **b** `c` <i>x</i> www.evil.example"
HOSTILE_LABEL = "[a](https://evil.example/l) **b** @octocat <img src=x> ~~s~~ www.evil.example _i_ `c`"
# What renders a value active: links, images, emphasis, strikethrough, raw HTML.
ACTIVE_TAGS = {"a", "img", "em", "strong", "del", "i", "script", "b"}

TERMINAL_MODULE = "jit_\x1b]0;PWN\x07\x1b[2J_\u202egnp"  # ESC/BEL, a screen clear and a right-to-left override


def run_xladb(*args, timeout=60):
    return subprocess.run([XLADB, *args], capture_output=True, timeout=timeout)


def render_markdown(md):
    out = subprocess.run([CMARK_GFM, "--unsafe", "-e", "table", "-e", "autolink", "-e", "strikethrough"],
                         input=md.encode(), capture_output=True, timeout=30, check=True)
    return out.stdout.decode()


class RenderedText(html.parser.HTMLParser):
    """The tags of rendered HTML; its text inside <code> and outside it; and each active element (ACTIVE_TAGS)
    as (tag, its text)."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.code, self.plain, self.active, self._open = set(), [], [], [], []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "code":
            self.code.append("")
        if tag in ACTIVE_TAGS:
            self.active.append([tag, ""])
        self._open.append(tag)

    def handle_endtag(self, tag):
        if tag in self._open:
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag):]

    def handle_data(self, data):
        if "code" in self._open:
            self.code[-1] += data
        else:
            self.plain.append(data)
        if any(t in ACTIVE_TAGS for t in self._open):
            self.active[-1][1] += data

    def active_elements(self):
        return [tuple(a) for a in self.active]


def hostile_gate_fixture(root):
    """The gate fixture (jit_step regresses by 64 KiB at model.py:123) with jit_step renamed HOSTILE_MODULE and
    its source file HOSTILE_SOURCE, in both runs; returns the base and head folders."""
    folders = []
    for run in ("base", "head"):
        folder = os.path.join(root, run)
        shutil.copytree(os.path.join(GATE_FIXTURE, run), folder)
        step = os.path.join(folder, "module_0001.jit_step" + BA_SUFFIX)
        with open(step) as f:
            text = f.read()
        assert 'source_file="model.py" source_line=123' in text
        os.remove(step)
        with open(os.path.join(folder, f"module_0001.{HOSTILE_MODULE}{BA_SUFFIX}"), "w") as f:
            f.write(text.replace('source_file="model.py"', f'source_file="{HOSTILE_SOURCE}"'))
        folders.append(folder)
    return folders


class InertTextTest(DaemonTestCase):

    # --- 3. Markdown ------------------------------------------------------------------------------------------

    def test_3_markdown_of_hostile_names_renders_as_inert_text(self):
        self.assertTrue(os.path.exists(CMARK_GFM), "cmark-gfm is missing: scripts/install-deps.sh installs it")
        base, head = hostile_gate_fixture(self.tmp)
        db = os.path.join(self.tmp, "gate.db")
        self.assertEqual(run_xladb("ingest", "--db", db, base, "--run", HOSTILE_RUN).returncode, 0)
        self.assertEqual(run_xladb("ingest", "--db", db, head, "--run", "head").returncode, 0)
        out = run_xladb("check", "head", "--baseline", HOSTILE_RUN, "--db", db, "--format", "markdown")
        self.assertEqual(out.returncode, 1, out.stderr)
        md = out.stdout.decode()
        rendered = RenderedText(render_markdown(md))
        # Only xladb's own bold words; nothing of a value is a link, an image, emphasis or HTML.
        self.assertEqual(rendered.active_elements(), [("strong", "xladb check: FAIL"),
                                                      ("strong", "By jit name:"),
                                                      ("strong", "Compile counts that changed:")], md)
        self.assertIn("table", rendered.tags)  # the module table is still a table
        # Each value still reads as its own characters, whole, in one code element.
        self.assertIn(HOSTILE_SOURCE + ":123", rendered.code)  # the by-source line and the buffer table
        self.assertEqual(rendered.code.count(HOSTILE_SOURCE + ":123"), 2, rendered.code)
        self.assertIn(HOSTILE_MODULE + "#1", rendered.code)  # the module table and the <details> summary
        self.assertEqual(rendered.code.count(HOSTILE_MODULE + "#1"), 2, rendered.code)
        self.assertIn(HOSTILE_RUN, rendered.code)
        # No mention outside code, and the rows of the buffer table are intact (the `|` in the name is text).
        self.assertNotIn("@octocat", "".join(rendered.plain))
        self.assertEqual(md.count("<details>"), md.count("</details>"))

    def test_3_change_points_of_hostile_names_are_inert_in_markdown_and_on_a_terminal(self):
        self.assertTrue(os.path.exists(CMARK_GFM), "cmark-gfm is missing: scripts/install-deps.sh installs it")
        base, head = hostile_gate_fixture(self.tmp)
        db = os.path.join(self.tmp, "gate.db")
        self.assertEqual(run_xladb("ingest", "--db", db, base, "--run", HOSTILE_RUN, "--time", "2026-11-01").returncode, 0)
        self.assertEqual(run_xladb("ingest", "--db", db, head, "--run", "head", "--time", "2026-11-02").returncode, 0)
        out = run_xladb("changes", "--db", db, "--format", "markdown", "--attribute", "all")
        self.assertEqual(out.returncode, 0, out.stderr)
        md = out.stdout.decode()
        rendered = RenderedText(render_markdown(md))
        # Only the headline is bold; no value is a link, an image, emphasis or HTML.
        self.assertEqual([tag for tag, _ in rendered.active_elements()], ["strong"], md)
        self.assertTrue(rendered.active_elements()[0][1].startswith("xladb changes: "), md)
        self.assertIn("table", rendered.tags)
        self.assertIn(HOSTILE_SOURCE + ":123", rendered.code)  # the jit_step growth's source line
        self.assertIn(HOSTILE_MODULE + "#1", rendered.code)
        self.assertIn(HOSTILE_RUN, rendered.code)
        self.assertNotIn("@octocat", "".join(rendered.plain))
        self.assertEqual(md.count("<details>"), md.count("</details>"))
        # On a terminal: a module name with controls is shown escaped.
        folder = os.path.join(self.tmp, "t")
        shutil.copytree(head, folder)
        os.rename(os.path.join(folder, f"module_0001.{HOSTILE_MODULE}{BA_SUFFIX}"),
                  os.path.join(folder, f"module_0001.{TERMINAL_MODULE}{BA_SUFFIX}"))
        self.assertEqual(run_xladb("ingest", "--db", db, folder, "--run", "t1", "--time", "2026-11-03").returncode, 0)
        # t2: that module with base's smaller temp, so the controlled name has a change point.
        shrunk = os.path.join(self.tmp, "t2")
        shutil.copytree(folder, shrunk)
        shutil.copy(os.path.join(base, f"module_0001.{HOSTILE_MODULE}{BA_SUFFIX}"),
                    os.path.join(shrunk, f"module_0001.{TERMINAL_MODULE}{BA_SUFFIX}"))
        self.assertEqual(run_xladb("ingest", "--db", db, shrunk, "--run", "t2", "--time", "2026-11-04").returncode, 0)
        table = run_xladb("changes", "--db", db, "--since", "t1").stdout
        self.assertIn(b"jit_\\x1b]0;PWN\\x07\\x1b[2J_\\u202egnp", table)
        for raw in (b"\x1b", b"\x07", "\u202e".encode()):
            self.assertNotIn(raw, table)

    def test_3_a_hostile_label_in_the_gates_reason_is_escaped_text(self):
        base, head = hostile_gate_fixture(self.tmp)
        db = os.path.join(self.tmp, "gate.db")
        self.assertEqual(run_xladb("ingest", "--db", db, head, "--run", "head").returncode, 0)
        out = run_xladb("check", "head", "--baseline", "label:note=" + HOSTILE_LABEL, "--db", db,
                        "--format", "markdown")
        self.assertEqual(out.returncode, 3, out.stderr)  # no such baseline: inconclusive, its reason quotes it
        md = out.stdout.decode()
        rendered = RenderedText(render_markdown(md))
        self.assertEqual(rendered.active_elements(), [("strong", "xladb check: INCONCLUSIVE")], md)
        plain = "".join(rendered.plain)
        self.assertIn("note=" + HOSTILE_LABEL, plain)
        # Outside a code span, every @ of a value has a backslash before it in the Markdown.
        self.assertEqual(md.count("@octocat"), md.count("\\@octocat"))

    def test_3_report_url_must_be_http_or_https(self):
        base, head = hostile_gate_fixture(self.tmp)
        db = os.path.join(self.tmp, "gate.db")
        for run, folder in (("base", base), ("head", head)):
            self.assertEqual(run_xladb("ingest", "--db", db, folder, "--run", run).returncode, 0)
        for url in ("javascript:alert(1)", "JavaScript://x%0aalert(1)", "data:text/html,x", "https://x/a b",
                    "https://x/a)[y](javascript:z", "//evil.example/x", "https://"):
            out = run_xladb("check", "head", "--baseline", "base", "--db", db, "--format", "markdown",
                            "--report-url", url)
            self.assertEqual(out.returncode, 2, url)
            self.assertIn(b"--report-url", out.stderr)
            self.assertEqual(out.stdout, b"", url)
        out = run_xladb("check", "head", "--baseline", "base", "--db", db, "--format", "markdown",
                        "--report-url", "https://ci.example/artifacts/gate.html")
        self.assertEqual(out.returncode, 1)
        links = [t for t in render_markdown(out.stdout.decode()).split("<a ")[1:]]
        self.assertEqual(len(links), 1)
        self.assertTrue(links[0].startswith('href="https://ci.example/artifacts/gate.html"'), links)

    # --- 3. Terminal, CSV, JSON and pages -----------------------------------------------------------------------

    def test_3_terminal_tables_escape_controls_csv_keeps_bytes_json_escapes(self):
        folder = os.path.join(self.tmp, "r")
        make_run(folder)
        os.rename(os.path.join(folder, "module_0002.jit_train_step" + BA_SUFFIX),
                  os.path.join(folder, f"module_0002.{TERMINAL_MODULE}{BA_SUFFIX}"))
        db = os.path.join(self.tmp, "t.db")
        run = "nightly-\u202e4pm.exe"
        self.assertEqual(run_xladb("ingest", "--db", db, folder, "--run", run).returncode, 0)

        table = run_xladb("modules", run, "--db", db).stdout
        self.assertIn(b"jit_\\x1b]0;PWN\\x07\\x1b[2J_\\u202egnp", table)
        for raw in (b"\x1b", b"\x07", "\u202e".encode()):
            self.assertNotIn(raw, table)
        runs_table = run_xladb("runs", "--db", db).stdout
        self.assertIn(b"nightly-\\u202e4pm.exe", runs_table)
        self.assertNotIn("\u202e".encode(), runs_table)

        csv_out = run_xladb("modules", run, "--db", db, "--format", "csv").stdout.decode()
        names = [row["module"] for row in csv.DictReader(io.StringIO(csv_out))]
        self.assertIn(TERMINAL_MODULE, names)  # exact bytes: CSV is for programs

        json_out = run_xladb("modules", run, "--db", db, "--format", "json").stdout
        self.assertIn(TERMINAL_MODULE, [m["module"] for m in json.loads(json_out)])
        self.assertNotIn(b"\x1b", json_out)
        self.assertIn(b"\\u001b]0;PWN\\u0007", json_out)

        # The verdict lines of an ingest name a file as it is, with its controls escaped.
        with open(os.path.join(folder, f"module_0009.{TERMINAL_MODULE}{BA_SUFFIX}"), "wb") as f:
            f.write(b"\x00\x01 not a dump\n")
        errors = run_xladb("ingest", "--db", db, folder, "--run", run, "--append")
        self.assertEqual(errors.returncode, 1)
        self.assertIn(b"error: module_0009.jit_\\x1b]0;PWN\\x07\\x1b[2J_\\u202egnp", errors.stderr)
        for raw in (b"\x1b", b"\x07", "\u202e".encode()):
            self.assertNotIn(raw, errors.stderr + errors.stdout)

        # Pages show a bidi control as text, never apply it.
        page = os.path.join(self.tmp, "run.html")
        self.assertEqual(run_xladb("report", run, "--db", db, "-o", page).returncode, 0)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn("\u202e", text)
        self.assertIn("nightly-\\u202e4pm.exe", text)
        self.assertIn("\\u202egnp", text)

    # --- 3. Labels --------------------------------------------------------------------------------------------

    BAD_LABELS = [  # (key, value, what the message shows)
        ("note", "\x1b]0;PWN\x07\x1b[2J", "note=\\x1b]0;PWN\\x07\\x1b[2J"),
        ("note", "ring\x07", "note=ring\\x07"),
        ("note", "two\nlines", "note=two\\nlines"),
        ("note", "tab\there", "note=tab\\there"),
        ("bad key", "v", "bad key=v"),
        ("k\x1b", "v", "k\\x1b=v"),
        ("k" * 65, "v", "the key is 65 bytes"),
        ("note", "v" * 1025, "the value is 1025 bytes"),
    ]

    def test_3_labels_are_validated_on_the_command_line(self):
        folder = os.path.join(self.tmp, "r")
        make_run(folder)
        db = os.path.join(self.tmp, "l.db")
        for key, value, shown in self.BAD_LABELS:
            out = run_xladb("ingest", "--db", db, folder, "--run", "r", "--label", f"{key}={value}")
            self.assertEqual(out.returncode, 2, (key, value))
            self.assertIn(shown.encode(), out.stderr)
            self.assertNotIn(b"\x1b", out.stderr)
        self.assertFalse(os.path.exists(db))  # refused before anything was opened
        self.assertEqual(run_xladb("ingest", "--db", db, folder, "--run", "r", "--label", "ok=fine").returncode, 0)
        for key, value, shown in self.BAD_LABELS:
            out = run_xladb("label", "r", f"{key}={value}", "--db", db)
            self.assertEqual(out.returncode, 2, (key, value))
            self.assertIn(shown.encode(), out.stderr)
        runs = json.loads(run_xladb("runs", "--db", db, "--format", "json").stdout)
        self.assertEqual([(r["run"], r["labels"]) for r in runs], [("r", "ok=fine")])

    def test_3_labels_are_validated_by_the_rpcs(self):
        folder = os.path.join(self.tmp, "allowed", "r")
        make_run(folder)
        d = self.start("--allow-root", os.path.join(self.tmp, "allowed"))
        bad = [(k, v, s) for k, v, s in self.BAD_LABELS] + [("", "v", "the key is empty"),
                                                            ("note", "a\x00b", "note=a\\x00b")]
        for key, value, shown in bad:
            label = xladb_pb2.Label(key=key, value=value)
            with self.assertRaises(grpc.RpcError) as err:
                d.client.upload_chunks(upload_messages("up", [("x.txt", b"x")], labels=[label]), timeout=30)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, (key, value))
            self.assertIn(shown, err.exception.details())
            with self.assertRaises(grpc.RpcError) as err:
                d.client.ingest_path(path=folder, labels=[label], wait=True, timeout=30)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, (key, value))
            self.assertIn(shown, err.exception.details())
        self.assertEqual(d.cli_json("runs"), [])
        d.cli("ingest", folder, "--run", "r")
        for key, value, shown in bad:
            with self.assertRaises(grpc.RpcError) as err:
                d.client.label_run(run_name="r", set=[xladb_pb2.Label(key=key, value=value)], timeout=30)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, (key, value))
            self.assertIn(shown, err.exception.details())
        self.assertEqual(d.cli_json("runs")[0]["labels"], "")

    def test_3_bad_labels_in_a_watched_toml_are_its_error_and_the_run_is_ingested_without_them(self):
        root = os.path.join(self.tmp, "artifacts")
        os.makedirs(root)
        d = self.start("--watch", root, "--quiet-seconds", "0.3")
        arrive_in_watched_folder(self.tmp, root, "ci-9",
                                 'time = "2026-11-02T06:00:00Z"\n[labels]\nbranch = "main"\nnote = "\\u001b]0;PWN\\u0007"\n'
                                 '"" = "empty key"\nnul = "a\\u0000b"\n"bad key" = "v"\n')
        runs = wait_for(lambda: [r for r in d.cli_json("runs") if r["run"] == "ci-9" and r["modules"] == 3],
                        what="the watched run to be ingested")
        self.assertEqual(runs[0]["labels"], "branch=main")
        self.assertEqual(runs[0]["run_time"], "2026-11-02T06:00:00Z")
        con = sqlite3.connect(f"file:{d.db}?mode=ro", uri=True)
        verdict, reason = con.execute("SELECT verdict, reason FROM dump_files WHERE path = 'xladb-run.toml'").fetchone()
        con.close()
        self.assertEqual(verdict, "error")
        for shown in ("line 4: label 'note=\\x1b]0;PWN\\x07'", "line 5: label '=empty key': the key is empty",
                      "line 6: label 'nul=a\\x00b'", "line 7: label 'bad key=v'", "1 labels and the run time applied"):
            self.assertIn(shown, reason)

    # --- 4. Run times -----------------------------------------------------------------------------------------

    OUT_OF_RANGE_TIMES = ["99999999999999", '"9999-12-31T23:59:59Z"', "-99999999999", '"0001-01-01"',
                          "9223372036854775807", '"1969-12-31T23:59:59Z"', '"2200-01-01T00:00:01Z"']

    def test_4_a_run_time_outside_1970_to_2200_is_an_error_naming_it(self):
        folder = os.path.join(self.tmp, "r")
        make_run(folder)
        db = os.path.join(self.tmp, "t.db")
        started = time.time()
        for i, value in enumerate(self.OUT_OF_RANGE_TIMES):
            with open(os.path.join(folder, "xladb-run.toml"), "w") as f:
                f.write(f"time = {value}\n[labels]\nbranch = \"main\"\n")
            out = run_xladb("ingest", "--db", db, folder, "--run", f"r{i}")
            self.assertEqual(out.returncode, 1, value)  # the toml's error verdict
            self.assertIn(f"time '{value.strip(chr(34))}' is outside 1970-01-01 .. 2200-01-01".encode(), out.stderr)
            bare = value.strip('"')
            flag = run_xladb("ingest", "--db", db, folder, "--run", f"flag{i}", f"--time={bare}")
            self.assertEqual(flag.returncode, 2, bare)
            self.assertIn(f"time '{bare}' is outside".encode(), flag.stderr)
            label = run_xladb("ingest", "--db", db, folder, "--run", f"label{i}", "--label", f"date={bare}")
            self.assertEqual(label.returncode, 2, bare)
            self.assertIn(f"label date: time '{bare}' is outside".encode(), label.stderr)
        runs = {r["run"]: r for r in json.loads(run_xladb("runs", "--db", db, "--format", "json").stdout)}
        self.assertEqual(sorted(runs), sorted(f"r{i}" for i in range(len(self.OUT_OF_RANGE_TIMES))))
        # Each run is still ingested, at its newest file's time (written by this test), never at the refused one.
        for r in runs.values():
            self.assertEqual(r["modules"], 3)
            stored = calendar.timegm(time.strptime(r["run_time"], "%Y-%m-%dT%H:%M:%SZ"))
            self.assertLess(abs(stored - started), 600, r)
        # The ends of the range are accepted.
        for value, shown in (("0", "1970-01-01T00:00:00Z"), ('"2200-01-01T00:00:00Z"', "2200-01-01T00:00:00Z")):
            with open(os.path.join(folder, "xladb-run.toml"), "w") as f:
                f.write(f"time = {value}\n")
            self.assertEqual(run_xladb("ingest", "--db", db, folder, "--run", "edge" + value[:2]).returncode, 0)
            edge = [r for r in json.loads(run_xladb("runs", "--db", db, "--format", "json").stdout)
                    if r["run"] == "edge" + value[:2]]
            self.assertEqual(edge[0]["run_time"], shown)

    def test_4_the_rpcs_refuse_a_run_time_out_of_range(self):
        folder = os.path.join(self.tmp, "allowed", "r")
        make_run(folder)
        d = self.start("--allow-root", os.path.join(self.tmp, "allowed"))
        for us in (-1, 7258118400 * 1000000 + 1, 2**63 - 1):
            with self.assertRaises(grpc.RpcError) as err:
                d.client.ingest_path(path=folder, run_time_us=us, wait=True, timeout=30)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, us)
            self.assertIn(str(us), err.exception.details())
            with self.assertRaises(grpc.RpcError) as err:
                d.client.upload_chunks(upload_messages("up", [("x.txt", b"x")], run_time_us=us), timeout=30)
            self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, us)
        with self.assertRaises(grpc.RpcError) as err:
            d.client.upload_chunks(upload_messages("up", [("x.txt", b"x")],
                                                   labels=[xladb_pb2.Label(key="time", value="9999-12-31")]),
                                   timeout=30)
        self.assertEqual(err.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("label time: time '9999-12-31' is outside", err.exception.details())
        self.assertEqual(d.cli_json("runs"), [])

    # --- 5. --db must be a regular file ---------------------------------------------------------------------

    def test_5_db_that_is_a_fifo_a_device_or_a_folder_is_refused_at_once(self):
        fifo = os.path.join(self.tmp, "f.db")
        os.mkfifo(fifo)
        folder = os.path.join(self.tmp, "r")
        make_run(folder)
        for path, kind in ((fifo, b"a FIFO"), ("/dev/null", b"a device"), (self.tmp, b"a folder")):
            for args in (["runs"], ["ingest", folder], ["check", "a", "--baseline", "b"], ["label", "r", "a=b"],
                         ["sql", "SELECT 1"]):
                started = time.monotonic()
                out = run_xladb(*args, "--db", path, timeout=20)  # a hang would be the timeout's exception
                self.assertEqual(out.returncode, 2, (path, args))
                self.assertIn(kind + b", not a regular file", out.stderr)
                self.assertLess(time.monotonic() - started, 10)
            daemon = subprocess.run([XLADBD, "--db", path, "--listen", "127.0.0.1:0"], capture_output=True,
                                    timeout=20)
            self.assertEqual(daemon.returncode, 2, path)
            self.assertIn(kind + b", not a regular file", daemon.stderr)
            copy = run_xladb("copy", path, "postgresql://nobody@127.0.0.1:1/none", timeout=20)
            self.assertEqual(copy.returncode, 2, path)
            self.assertIn(kind + b", not a regular file", copy.stderr)
        # A missing file is still created by a command that writes.
        fresh = os.path.join(self.tmp, "new.db")
        self.assertEqual(run_xladb("ingest", folder, "--db", fresh).returncode, 0)
        self.assertEqual(json.loads(run_xladb("runs", "--db", fresh, "--format", "json").stdout)[0]["modules"], 3)


if __name__ == "__main__":
    unittest.main()
