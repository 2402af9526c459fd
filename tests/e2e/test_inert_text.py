"""Hardening round 3 (issue 26): inert text wherever text leaves xladb (item 3), against real xladb processes.
The gate's Markdown is rendered with Debian's cmark-gfm (GitHub's CommonMark fork, with its
table, autolink and strikethrough extensions), as a PR comment would be. docs/RELIABILITY.md lists each case.

Run by ctest like test_service.py (same environment variables). Every wait is bounded.
"""
import csv
import html.parser
import io
import json
import os
import shutil
import subprocess
import unittest

from test_service import SOURCE_DIR, XLADB, DaemonTestCase, make_run

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

        # Pages show a bidi control as text, never apply it.
        page = os.path.join(self.tmp, "run.html")
        self.assertEqual(run_xladb("report", run, "--db", db, "-o", page).returncode, 0)
        with open(page, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn("\u202e", text)
        self.assertIn("nightly-\\u202e4pm.exe", text)
        self.assertIn("\\u202egnp", text)


if __name__ == "__main__":
    unittest.main()
