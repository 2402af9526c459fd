"""End-to-end tests of the HTML report: `xladb report` (offline and through the Report RPC), `xladb check --html`
and the live pages of `xladbd --http`, loaded in a real headless Chromium (browser.py).

Every page is checked for console errors and for network requests beyond the page itself, and screenshotted
into $XLADB_ARTIFACTS_DIR/pages (the CI artifact). Expected numbers come from the dump files' text:
tests/fixtures/report (jit_mlp, base and head; see its README) and, where present, the corpus run folders.
"""
import base64
import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

from browser import Browser, have_chromium
from test_page_server import self_signed_certificate
from test_service import (HAVE_CORPUS, RUNS_DIR, SOURCE_DIR, XLADB, DaemonTestCase, Daemon, read_text)

FIXTURE = os.path.join(SOURCE_DIR, "tests", "fixtures", "report")
HISTORY = os.path.join(SOURCE_DIR, "tests", "fixtures", "history")
MLP = "module_0007.jit_mlp.after_optimizations-buffer-assignment.txt"
ARTIFACTS = os.path.join(os.environ.get("XLADB_ARTIFACTS_DIR") or os.path.join(tempfile.gettempdir(), "xladb-artifacts"),
                         "pages")
TWO_MIB = 2 << 20


def xladb(*args, check_rc=0):
    out = subprocess.run([XLADB, *args], capture_output=True, timeout=300)
    if check_rc is not None and out.returncode != check_rc:
        raise AssertionError(f"xladb {' '.join(args)} exited {out.returncode}, wanted {check_rc}: "
                             f"{out.stderr.decode(errors='replace')}")
    return out


def fixture_text(run):
    return read_text(os.path.join(FIXTURE, run, MLP))


def dump_peak(text):
    """(time, [(buffer, bytes)]) of `Live ranges at <t> (peak):`, read from a dump's text. A buffer is
    NAME{INDEX} (V2/V3 lines) or NAME (V1 lines)."""
    head, rest = text.split(" (peak):\n", 1)
    time = int(re.search(r"Live ranges at (\d+)$", head).group(1))
    buffers = []
    for line in rest.splitlines():
        m = re.match(r"^    (\S+): (\d+) bytes", line)
        if not m:
            break
        buffers.append((m.group(1), int(m.group(2))))
    return time, buffers


def dump_live_range(text, buffer):
    start, end = re.search(r"^    " + re.escape(buffer) + r":(\d+)-(\d+)$", text, re.M).groups()
    return int(start), int(end)


def dump_value_size(text, name):
    return int(re.search(r"<\d+ " + re.escape(name) + r" @\d+> \(size=(\d+)", text).group(1))


def total_bytes(text):
    return int(re.search(r"^Total bytes used: (\d+)", text, re.M).group(1))


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def file_url(path):
    return "file://" + os.path.abspath(path)


class BrowserTestCase(DaemonTestCase):
    """A headless Chromium for the class's tests (a missing one fails them: nothing can be checked without it)."""

    @classmethod
    def setUpClass(cls):
        if not have_chromium():
            raise AssertionError("chromium is missing: scripts/install-deps.sh installs Debian's chromium; the page "
                                 "tests cannot check anything without it")
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()


class PagesTest(BrowserTestCase):

    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.tmp, "report.db")
        xladb("ingest", "--db", self.db, os.path.join(FIXTURE, "base"), "--run", "base", "--time", "2026-11-01")
        xladb("ingest", "--db", self.db, os.path.join(FIXTURE, "head"), "--run", "head", "--time", "2026-11-02")
        self.tab = self.browser.page()

    def report(self, *args, db=None):
        path = os.path.join(self.tmp, f"page{len(os.listdir(self.tmp))}.html")
        out = xladb("report", *args, "--db", db or self.db, "-o", path)
        self.assertEqual(out.stdout.decode().strip(), path)
        return path

    def open(self, url, shot):
        self.tab.load(url)
        self.tab.assert_clean(self, url)
        self.tab.screenshot(os.path.join(ARTIFACTS, shot + ".png"))

    # -- what a module page must show, checked against the dump's text
    def check_module_page(self, text, chart="chart-memory"):
        peak_time, peak_list = dump_peak(text)
        peak_bytes = sum(b for _, b in peak_list)
        marker = self.tab.evaluate(f"Object.assign({{}}, document.getElementById('{chart}-peak-xla').dataset)")
        self.assertEqual((int(marker["time"]), int(marker["bytes"])), (peak_time, peak_bytes))
        # The curve is drawn, and it reaches the printed peak at the printed time (first maximum).
        width = self.tab.evaluate(f"document.querySelector('#{chart} polyline.logical').getBBox().width")
        self.assertGreater(width, 100)
        data = json.loads(self.tab.evaluate(f"document.getElementById('{chart}-data').textContent"))
        logical = next(s["v"] for s in data["series"] if s["key"] == "logical")
        padded = next(s["v"] for s in data["series"] if s["key"] == "padded")
        bucket = max(i for i, t in enumerate(data["t"]) if t <= peak_time)
        # The logical curve counts each allocation slice once: never above the padded curve. Where values live
        # at XLA's peak share a slice, XLA counted them each and the page says so (#shared-slices).
        self.assertTrue(all(l <= p for l, p in zip(logical, padded) if l is not None and p is not None))
        if self.tab.evaluate("document.getElementById('shared-slices') === null"):
            if data["w"] == 1:
                self.assertEqual(logical[bucket], peak_bytes)
            self.assertGreaterEqual(logical[bucket], peak_bytes)
            self.assertGreaterEqual(max(logical), peak_bytes)
        # The peak table lists exactly the buffers of the dump's peak list, with their logical bytes.
        rows = self.tab.evaluate("""Array.from(document.querySelectorAll('#peak-buffers tbody tr')).map(r =>
            [r.dataset.instruction, r.dataset.shapeIndex, Number(r.cells[2].dataset.v)])""")
        listed = sorted((b if "{" in b else b + "{}", n) for b, n in peak_list)
        if all("{" in b for b, _ in peak_list):
            self.assertEqual(sorted((i + s, n) for i, s, n in rows), listed)
        else:  # V1 prints no index: compare names
            self.assertEqual(sorted((i, n) for i, _, n in rows), sorted(peak_list))
        return peak_time, peak_bytes

    def test_module_page_from_a_file(self):
        head = fixture_text("head")
        page = self.report("head", "--module", "jit_mlp")
        self.open(file_url(page), "module-file")
        self.check_module_page(head)
        # Hovering a buffer draws its lifetime, from its live range in the dump.
        start, end = dump_live_range(head, "dot.2{}")
        geometry = self.tab.evaluate("Object.assign({}, document.getElementById('chart-memory').dataset)")
        self.tab.hover('#peak-buffers tbody tr[data-instruction="dot.2"]')
        rect = self.tab.evaluate("""(() => { const r = document.querySelector('#chart-memory rect.lifetime');
            return r ? [Number(r.getAttribute('x')), Number(r.getAttribute('width'))] : null; })()""")
        self.assertIsNotNone(rect, "hovering a buffer row drew no lifetime")
        left, width, last = (float(geometry[k]) for k in ("plotLeft", "plotWidth", "lastTime"))
        self.assertAlmostEqual(rect[0], left + start / last * width, places=3)
        self.assertAlmostEqual(rect[1], (end + 1 - start) / last * width, places=3)
        self.tab.hover("h1")
        self.assertEqual(self.tab.evaluate("document.querySelectorAll('rect.lifetime').length"), 0)
        # The hover card names the instruction the schedule has at that time.
        self.tab.hover("#chart-memory")
        card = self.tab.evaluate("document.getElementById('chart-memory-card').textContent")
        self.assertRegex(card, r"^time \d+  \S+")
        # Sorting by program order: the earliest-starting buffer first, then the latest.
        order = lambda: self.tab.evaluate(
            "Array.from(document.querySelectorAll('#peak-buffers tbody tr')).map(r => Number(r.cells[5].dataset.v))")
        self.tab.click("#peak-buffers thead th:nth-child(6)")
        self.assertEqual(order(), sorted(order(), reverse=True))
        self.tab.click("#peak-buffers thead th:nth-child(6)")
        self.assertEqual(order(), sorted(order()))
        # The trend over the module's identity: both runs, with their dumps' peaks.
        trend = self.tab.evaluate("""Array.from(document.querySelectorAll('#trend-table tbody tr')).map(r =>
            [r.cells[0].textContent, Number(r.cells[3].dataset.v)])""")
        self.assertEqual(trend, [["base", sum(b for _, b in dump_peak(fixture_text("base"))[1])],
                                 ["head", sum(b for _, b in dump_peak(head)[1])]])
        self.assertLess(os.path.getsize(page), TWO_MIB)

    def test_run_page_and_gate_page_from_files(self):
        head, base = fixture_text("head"), fixture_text("base")
        self.open(file_url(self.report("head")), "run-file")
        total = self.tab.evaluate("""Number(document.querySelector('#modules-table tr[data-module="jit_mlp"]')
            .cells[2].dataset.v)""")
        self.assertEqual(total, total_bytes(head))
        diff = self.report("head", "--baseline", "base")
        self.open(file_url(diff), "diff-file")
        self.assertEqual(self.tab.evaluate("document.getElementById('verdict').dataset.verdict"), "fail")
        section = self.tab.evaluate("document.querySelector('section.changed-module').id")
        chart = "chart-" + section
        # Both charts overlaid, each run's printed peak marked where its dump puts it.
        self.assertEqual(self.tab.evaluate(f"document.querySelectorAll('#{chart} polyline').length"), 4)
        marks = self.tab.evaluate(f"""['xla', 'base-xla'].map(k => Number(document.getElementById('{chart}-peak-' + k)
            .dataset.time))""")
        self.assertEqual(marks, [dump_peak(head)[0], dump_peak(base)[0]])
        # The buffers that changed, highlighted by kind, with sizes from the dumps' value lines.
        rows = self.tab.evaluate(f"""Array.from(document.querySelectorAll('#{chart}-buffers tbody tr[class]')).map(r =>
            [r.className, r.cells[1].textContent, Number(r.cells[4].dataset.v)])""")
        self.assertEqual(sorted(rows), sorted([
            ["appeared", "exp.6{}", dump_value_size(head, "exp.6")],
            ["grew", "dot.2{}", dump_value_size(head, "dot.2") - dump_value_size(base, "dot.2")],
            ["shrank", "mul.4{}", dump_value_size(head, "mul.4") - dump_value_size(base, "mul.4")]]))
        # `xladb check --html` writes the same page, and its Markdown links to it.
        html = os.path.join(self.tmp, "gate.html")
        md = xladb("check", "head", "--baseline", "base", "--db", self.db, "--format", "markdown", "--html", html,
                   "--report-url", "https://ci.example/artifacts/gate.html", check_rc=1).stdout.decode()
        self.assertIn("[The memory report, with charts](https://ci.example/artifacts/gate.html)", md)
        self.assertEqual(read_bytes(html), read_bytes(diff))

    def test_live_pages_the_report_rpc_and_links(self):
        d = self.start("--http", "127.0.0.1:0", db=self.db)
        line = d.proc.stdout.readline()
        self.assertIn("pages on http://127.0.0.1:", line)
        base_url = line.split("pages on ")[1].strip().rstrip("/")
        for path, shot in (("/", "live-home"), ("/runs", "live-runs"), ("/run?name=head", "live-run"),
                           ("/module?run=head&name=jit_mlp", "live-module"), ("/diff?run=head&baseline=base", "live-diff")):
            self.open(base_url + path, shot)
        # The live module page is the file's page, with links: the same checks hold.
        self.tab.load(base_url + "/module?run=head&name=jit_mlp&xla_id=7")
        self.check_module_page(fixture_text("head"))
        # From the runs page, through the run page, to the module page, by following links.
        self.tab.load(base_url + "/runs")
        run_link = self.tab.evaluate("""document.querySelector('#runs-table tbody tr a').getAttribute('href')""")
        self.assertEqual(run_link, "/run?name=head")  # newest first
        self.tab.load(base_url + run_link)
        self.assertEqual(self.tab.evaluate("document.querySelector('h1').textContent"), "head")
        href = self.tab.evaluate("""document.querySelector('#modules-table tr[data-module="jit_mlp"] a')
            .getAttribute('href')""")
        self.assertEqual(href, "/module?run=head&name=jit_mlp&stage=after_optimizations&xla_id=7")
        # The Report RPC (Python grpcio) and `xladb report` through the daemon give the offline file, byte for byte.
        offline = read_bytes(self.report("head", "--module", "jit_mlp"))
        chunks = list(d.client.report(run_name="head", module="jit_mlp"))
        self.assertTrue(chunks[-1].last)
        self.assertEqual(b"".join(c.html for c in chunks), offline)
        remote = os.path.join(self.tmp, "remote.html")
        xladb("report", "head", "--module", "jit_mlp", "--addr", d.addr, "-o", remote)
        self.assertEqual(read_bytes(remote), offline)
        # Errors: an unknown run is 404 with its name escaped; writes are refused; unknown paths are 404.
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base_url + "/run?name=%3Cb%3Enope", timeout=30)
        self.assertEqual(e.exception.code, 404)
        body = e.exception.read().decode()
        self.assertIn("&lt;b&gt;nope", body)
        self.assertNotIn("<b>nope", body)
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(urllib.request.Request(base_url + "/run", data=b"x", method="POST"), timeout=30)
        self.assertEqual(e.exception.code, 405)
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base_url + "/etc/passwd", timeout=30)
        self.assertEqual(e.exception.code, 404)

    def test_token_and_address_rules_are_the_grpc_ones(self):
        token = os.path.join(self.tmp, "token")
        with open(token, "w") as f:
            f.write("s3cret\n")
        d = self.start("--http", "127.0.0.1:0", "--token-file", token, db=self.db)
        url = d.proc.stdout.readline().split("pages on ")[1].strip()
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(url, timeout=30)
        self.assertEqual(e.exception.code, 401)
        ok = urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": "Bearer s3cret"}), timeout=30)
        self.assertEqual(ok.status, 200)
        self.assertIn("Content-Security-Policy", ok.headers)
        # With a certificate the pages are HTTPS, verified against that certificate.
        cert, key = self_signed_certificate(self.tmp)
        tls = self.start("--http", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key,
                         db=os.path.join(self.tmp, "tls.db"))
        https = tls.proc.stdout.readline().split("pages on ")[1].strip()
        self.assertTrue(https.startswith("https://127.0.0.1:"), https)
        page = urllib.request.urlopen(https + "healthz", context=ssl.create_default_context(cafile=cert), timeout=30)
        self.assertEqual(page.read(), b"ok\n")
        with self.assertRaises((urllib.error.URLError, ConnectionError)):  # plain HTTP gets no page
            urllib.request.urlopen(https.replace("https://", "http://") + "healthz", timeout=30)
        # Not loopback, no TLS and no token: refused before anything listens.
        out = subprocess.run([os.environ["XLADBD"], "--db", self.db, "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 2)
        self.assertIn("refusing --http 0.0.0.0:0", out.stderr)

    def wait_until(self, expression, timeout=30):
        """Polls `expression` in the tab (across navigations) until page.js has run and it is true."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if self.tab.evaluate("document.documentElement.getAttribute('data-ready') === '1' && "
                                     "document.readyState === 'complete' && (" + expression + ")"):
                    return
            except RuntimeError:
                pass  # the document is being replaced
            time.sleep(0.05)
        raise TimeoutError(expression)

    def check_policy(self, html, policy):
        """`policy` has no 'unsafe-inline', and its hashes are those of the page's one <style> and one
        <script>, computed here from the page's bytes."""
        self.assertNotIn("unsafe-inline", policy)
        meta = re.search(rb'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html).group(1).decode()
        self.assertTrue(policy.startswith(meta), policy)
        for directive, pattern in (("style-src", rb"<style>(.*?)</style>"),
                                   ("script-src", rb"<script>(.*?)</script>")):
            inline = re.findall(pattern, html, re.S)
            self.assertEqual(len(inline), 1, directive)
            digest = base64.b64encode(hashlib.sha256(inline[0]).digest()).decode()
            self.assertIn(f"{directive} 'sha256-{digest}';", policy)
        self.assertNotIn(b" style=", html)

    def test_csp_allows_only_the_hashed_inline_style_and_script_in_files_and_live(self):
        path = self.report("head", "--module", "jit_mlp")
        html = read_bytes(path)
        self.check_policy(html, re.search(rb'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
                          .group(1).decode())
        d = self.start("--http", "127.0.0.1:0", db=self.db)
        base_url = d.proc.stdout.readline().split("pages on ")[1].strip().rstrip("/")
        for path_and_query in ("/", "/runs", "/run?name=head", "/module?run=head&name=jit_mlp", "/diff?run=head&baseline=base",
                               "/run?name=nope"):
            try:
                r = urllib.request.urlopen(base_url + path_and_query, timeout=30)
            except urllib.error.HTTPError as e:
                r = e
            policy = r.headers["Content-Security-Policy"]
            self.check_policy(r.read(), policy)
            self.assertTrue(policy.endswith("; frame-ancestors 'none'"), policy)
        # The error page (404) in Chromium: nothing but the 404 itself is reported.
        self.tab.load(base_url + "/run?name=nope")
        self.assertEqual([p for p in self.tab.problems() if "status of 404" not in p], [])
        # The policy is enforced: a script element or a style attribute added to a page does nothing, and
        # each is reported as a violation.
        for url in (file_url(path), base_url + "/module?run=head&name=jit_mlp"):
            self.tab.load(url)
            self.tab.assert_clean(self, url)
            self.assertIsNone(self.tab.evaluate("""(() => {
                const s = document.createElement('script'); s.textContent = 'window.__ran = 1';
                document.body.appendChild(s); return window.__ran; })()"""))
            self.assertEqual(self.tab.evaluate("""(() => { document.body.setAttribute('style', 'color: rgb(1, 2, 3)');
                return getComputedStyle(document.body).color; })()"""), "rgb(29, 36, 48)")  # page.css's --fg
            # (Live pages carry the policy twice, header and <meta>: each reports.)
            self.assertEqual(sorted({v.split(" ")[0] for v in self.tab.csp_violations()}),
                             ["script-src-elem", "style-src-attr"])

    def problems_besides_401(self):
        return [p for p in self.tab.problems() if "the server responded with a status of 401" not in p]

    def test_login_form_lets_a_browser_follow_links_on_a_protected_server(self):
        token = os.path.join(self.tmp, "token")
        with open(token, "w") as f:
            f.write("s3cret\n")
        d = self.start("--http", "127.0.0.1:0", "--token-file", token, db=self.db)
        base_url = d.proc.stdout.readline().split("pages on ")[1].strip().rstrip("/")
        # A link followed without a session: 401, and the page is the login form, remembering the link. Chromium
        # logs the 401 itself as an error; nothing else may be logged.
        self.tab.load(base_url + "/run?name=head")
        self.tab.screenshot(os.path.join(ARTIFACTS, "live-login.png"))
        self.assertEqual(self.problems_besides_401(), [])
        self.assertEqual(self.tab.evaluate("document.title"), "xladb · log in")
        self.assertEqual(self.tab.evaluate("document.querySelector('#login input[name=next]').value"),
                         "/run?name=head")
        submit = ("document.querySelector('#login input[name=token]').value = {!r}; "
                  "document.querySelector('#login button').click()")
        # A wrong token: the form again, and no cookie.
        self.tab.evaluate(submit.format("wrong"))
        self.wait_until("document.getElementById('error').textContent === 'Wrong token.'")
        self.assertEqual(self.problems_besides_401(), [])
        self.assertEqual(self.tab.call("Network.getCookies", {"urls": [base_url + "/"]})["cookies"], [])
        # The right token: back to the page asked for, with a session cookie that scripts cannot read.
        self.tab.evaluate(submit.format("s3cret"))
        self.wait_until("document.querySelector('h1') && document.querySelector('h1').textContent === 'head'")
        cookies = self.tab.call("Network.getCookies", {"urls": [base_url + "/"]})["cookies"]
        self.assertEqual([(c["name"], c["httpOnly"], c["sameSite"], c["secure"]) for c in cookies],
                         [("xladb_session", True, "Strict", False)])
        self.assertNotIn("s3cret", cookies[0]["value"])
        self.assertEqual(self.tab.evaluate("document.cookie"), "")
        # Links now work: runs page, then a click through to a module page.
        self.open(base_url + "/runs", "live-runs-logged-in")
        self.assertEqual(self.tab.evaluate("document.querySelector('h1').textContent"), "Runs")
        self.tab.click('#runs-table tbody tr a')
        self.wait_until("document.querySelector('h1').textContent === 'head'")
        self.tab.click('#modules-table tr[data-module="jit_mlp"] a')
        self.wait_until("location.pathname === '/module'")
        self.check_module_page(fixture_text("head"))
        self.assertEqual(self.problems_besides_401(), [])

    def test_names_with_markup_and_invalid_utf8_are_text(self):
        run = os.path.join(self.tmp, "evil")
        os.makedirs(run)
        evil = "jit_<img src=x onerror=window.__xss=1>"
        text = fixture_text("head").replace("tanh.3", "tanh<script>window.__xss=2</script>.3")
        with open(os.path.join(run, f"module_0001.{evil}.after_optimizations-buffer-assignment.txt"), "w") as f:
            f.write(text)
        with open(os.path.join(os.fsencode(run), b"module_0002.jit_\xff\xfe.after_optimizations-buffer-assignment.txt"),
                  "w") as f:
            f.write(fixture_text("base"))
        xladb("ingest", "--db", self.db, run, "--run", "evil<script>", "--time", "2026-11-03")
        for args, shot in ((("evil<script>",), "escaped-run"), (("evil<script>", "--module", evil), "escaped-module")):
            page = self.report(*args)
            read_bytes(page).decode("utf-8")  # strict: the page is valid UTF-8 whatever the names were
            self.open(file_url(page), shot)
            self.assertIsNone(self.tab.evaluate("window.__xss === undefined ? null : window.__xss"))
            self.assertEqual(self.tab.evaluate("document.querySelectorAll('img').length"), 0)
            self.assertEqual(self.tab.evaluate("document.querySelectorAll('script:not([type])').length"), 1)
            body = self.tab.evaluate("document.body.textContent")
            self.assertIn(evil, body)
        self.assertIn("tanh<script>window.__xss=2</script>.3", body)
        self.assertIn("jit_\ufffd\ufffd", read_bytes(self.report("evil<script>")).decode("utf-8"))

    def test_module_page_says_which_peak_and_how_the_name_was_resolved(self):
        fixtures = os.path.join(SOURCE_DIR, "tests", "fixtures")
        peaks = os.path.join(fixtures, "peaks")
        xladb("ingest", "--db", self.db, peaks, "--run", "peaks", "--time", "2026-11-03")
        self.open(file_url(self.report("peaks", "--module", "jit_peaks")), "peak-gap")
        text = read_text(os.path.join(peaks, "module_0009.jit_peaks.after_optimizations-buffer-assignment.txt"))
        self.check_module_page(text)
        # tests/fixtures/peaks/README.md, by hand: XLA's printed peak 24608, the padded live peak 40976, both at 4.
        note = self.tab.evaluate("document.getElementById('peak-gap').textContent")
        self.assertEqual(note, "XLA's printed peak (24.0 KiB at time 4) is 40% below the padded live peak (40.0 KiB "
                               "at time 4); XLA counted ags.3{1} (f32[4096]{0}, 16.0 KiB) as 16 bytes")
        padding = self.tab.evaluate("""Object.fromEntries(Array.from(document.querySelectorAll(
            '#peak-buffers tbody tr')).map(r =>
                [r.dataset.instruction + r.dataset.shapeIndex, r.cells[4].textContent]))""")
        self.assertEqual(padding["ags.3{1}"], "tuple (pointers)")
        self.assertNotEqual(padding["agd.5{}"], "tuple (pointers)")
        # The in-place pair fft.1 (1-3) / cmul.4 (3-4) on one slice counts once at time 3: 4096 + 4096 + 16 + 16.
        data = json.loads(self.tab.evaluate("document.getElementById('chart-memory-data').textContent"))
        logical = next(s["v"] for s in data["series"] if s["key"] == "logical")
        self.assertEqual(logical[3], 8224)
        # A name with several compiles: the page says which one it shows.
        xladb("ingest", "--db", self.db, os.path.join(fixtures, "gate", "head"), "--run", "gate-head",
              "--time", "2026-11-04")
        self.open(file_url(self.report("gate-head", "--module", "jit_twice")), "resolved")
        self.assertEqual(self.tab.evaluate("document.getElementById('resolved').textContent"),
                         "jit_twice: 2 compiles in run gate-head; showing #6, the largest by total_bytes; "
                         "choose with --xla-id")
        self.open(file_url(self.report("gate-head", "--module", "jit_twice", "--xla-id", "5")), "resolved-by-id")
        self.assertIsNone(self.tab.evaluate("document.getElementById('resolved')"))

    def test_a_module_without_live_ranges_says_what_is_missing(self):
        gate = os.path.join(SOURCE_DIR, "tests", "fixtures", "gate", "base")
        xladb("ingest", "--db", self.db, gate, "--run", "gate-base", "--time", "2026-11-04")
        self.open(file_url(self.report("gate-base", "--module", "jit_step")), "no-live-ranges")
        self.assertEqual(self.tab.evaluate("document.querySelectorAll('svg.memchart').length"), 0)
        note = self.tab.evaluate("document.getElementById('no-live-ranges').textContent")
        self.assertIn("No live ranges are stored", note)
        self.assertIsNotNone(self.tab.evaluate("document.getElementById('no-peak-list')"))

    def test_module_and_gate_pages_show_a_modules_entry_sharding(self):
        # tests/fixtures/campaign/r3: jit_sharded #8's HLO text prints sharding={devices=[2]0,1} on its ENTRY
        # parameter and ROOT, #7's sharding={replicated}; r2 has neither (both are added in r3).
        campaign = os.path.join(SOURCE_DIR, "tests", "fixtures", "campaign")
        for run in ("r2", "r3"):
            xladb("ingest", "--db", self.db, os.path.join(campaign, run), "--run", run)
        self.open(file_url(self.report("r3", "--module", "jit_sharded", "--xla-id", "8")), "module-sharded")
        header = self.tab.evaluate("Array.from(document.querySelectorAll('header p.sub')).map(p => p.textContent)"
                                   ".join('\\n')")
        self.assertIn("sharding ({devices=[2]0,1}) -> {devices=[2]0,1}", header)
        self.open(file_url(self.report("r3", "--baseline", "r2")), "diff-sharded")
        cells = self.tab.evaluate("""Array.from(document.querySelectorAll('tr[data-module="jit_sharded"]'))
            .map(r => r.cells[r.cells.length - 1].textContent)""")
        self.assertEqual(sorted(cells), ["(f32[256]) -> f32[256] sharding ({devices=[2]0,1}) -> {devices=[2]0,1}",
                                         "(f32[256]) -> f32[256] sharding ({replicated}) -> {replicated}"])

    def test_the_gate_page_shows_budget_headroom_with_and_without_a_baseline(self):
        # tests/fixtures/campaign/README.md: in r3 jit_step totals 10240 bytes, jit_accumulate 145152, jit_tau
        # 12288, the rest at most 6144; a budget of 8 KiB puts those three over it.
        campaign = os.path.join(SOURCE_DIR, "tests", "fixtures", "campaign")
        for run in ("r2", "r3"):
            xladb("ingest", "--db", self.db, os.path.join(campaign, run), "--run", run)
        self.open(file_url(self.report("r3", "--baseline", "r2", "--budget", "total_bytes=8KiB")), "diff-budgets")
        self.assertEqual(self.tab.evaluate("document.getElementById('verdict').dataset.verdict"), "fail")
        items = self.tab.evaluate("""Array.from(document.querySelectorAll('ul.budgets li'))
            .map(li => [li.className, li.textContent])""")
        self.assertEqual(len(items), 7)
        self.assertEqual(sorted(t.split(" ")[0] for c, t in items if c == "over"),
                         ["jit_accumulate", "jit_step", "jit_tau"])
        self.assertIn(["over",
                       "jit_step #1 (after_optimizations): total_bytes 10.0 KiB of 8.0 KiB (125%): over budget"], items)
        # `check --html` without a baseline: the budgets alone, on the same page.
        html = os.path.join(self.tmp, "budgets.html")
        xladb("check", "r3", "--db", self.db, "--budget", "total_bytes=146000", "--html", html, check_rc=0)
        self.open(file_url(html), "budgets-only")
        self.assertEqual(self.tab.evaluate("document.getElementById('verdict').dataset.verdict"), "pass")
        self.assertIn("(no baseline)", self.tab.evaluate("document.querySelector('h1').textContent"))
        warned = self.tab.evaluate(
            "Array.from(document.querySelectorAll('ul.budgets li.warn')).map(li => li.textContent)")
        self.assertEqual(warned, ["jit_accumulate #5 (after_optimizations): total_bytes 141.8 KiB of 142.6 KiB (99%): "
                                  "near the budget"])  # 145152 of 146000

    def test_an_oom_only_run_page_shows_its_oom_report(self):
        # tests/fixtures/oom_run: one report, after the BFC allocator's stats (`Limit: 15739125760`) and
        # `Out of memory while trying to allocate 1073741824 bytes.`; `total allocation: 4.75GiB`; 3 buffers.
        oom = os.path.join(SOURCE_DIR, "tests", "fixtures", "oom_run")
        xladb("ingest", "--db", self.db, oom, "--run", "oom", "--time", "2026-11-05")
        self.open(file_url(self.report("oom")), "run-oom")
        note = self.tab.evaluate("document.querySelector('#modules ~ p.note').textContent")
        self.assertIn("No module of this run has a buffer assignment", note)
        self.assertIn("1 OOM report", note)
        figures = self.tab.evaluate("""Array.from(document.querySelectorAll('section.oom-report table.oom-figures tr'))
            .map(r => [r.cells[0].textContent, Number(r.cells[1].dataset.v)])""")
        self.assertEqual(figures, [["failed allocation", 1073741824], ["limit", 15739125760],
                                   ["total allocation", 4.75 * 2**30]])
        rows = self.tab.evaluate("""Array.from(document.querySelectorAll(
            'section.oom-report table.oom-buffers tbody tr'))
            .map(r => [Number(r.cells[0].dataset.v), Number(r.cells[1].dataset.v), r.cells[2].textContent,
                       r.cells[3].textContent, r.cells[5].textContent])""")
        self.assertEqual(rows, [[1, 2**30, "f32[16384,16384]", "custom-call", "/home/user/model.py:88"],
                                [2, 512 * 2**20, "bf16[16384,16384]", "parameter", ""],
                                [3, 384 * 2**10, "(f32[256,128,3], s32[])", "fusion", '/home/user/say "hi".py:7']])
        # A run with buffer assignments and no report says so in the section.
        self.open(file_url(self.report("head")), "run-no-oom")
        after_heading = self.tab.evaluate("document.getElementById('oom').nextElementSibling.textContent")
        self.assertIn("No OOM report", after_heading)

    def test_run_pages_of_500_and_5000_modules_stay_under_2_mib(self):
        text = fixture_text("head")
        for count in (500, 5000):
            run = os.path.join(self.tmp, f"big{count}")
            os.makedirs(run)
            for i in range(count):
                with open(os.path.join(run, f"module_{i:04d}.jit_model_{i:04d}_with_a_longer_name.after_optimizations"
                                            "-buffer-assignment.txt"), "w") as f:
                    f.write(text)
            xladb("ingest", "--db", self.db, run, "--run", f"big{count}", "--time", "2026-11-05")
            page = self.report(f"big{count}")
            self.assertLess(os.path.getsize(page), TWO_MIB)
            self.open(file_url(page), f"run-{count}-modules")
            rows = self.tab.evaluate("document.querySelectorAll('#modules-table tbody tr').length")
            note = self.tab.evaluate("(document.querySelector('p.left-out') || {}).textContent || ''")
            if count <= 1000:
                self.assertEqual((rows, note), (count, ""))
            else:
                self.assertEqual(rows, 1000)
                self.assertIn(f"Showing 1000 of {count} modules", note)

    @unittest.skipUnless(HAVE_CORPUS, "shared corpus not present (../shared/corpus/runs)")
    def test_corpus_run_folder_pages(self):
        run_dir = os.path.join(RUNS_DIR, "21_lorrax_scan_C")
        xladb("ingest", "--db", self.db, run_dir, "--run", "lorrax", "--time", "2026-07-01")
        self.open(file_url(self.report("lorrax")), "corpus-run")
        # The module with the largest printed peak, found from the dump files themselves.
        best = None
        for folder, _, files in os.walk(run_dir):
            for name in files:
                m = re.fullmatch(r"module_(\d{4})\.(.+)\.sm_8\.0_gpu_after_optimizations-buffer-assignment\.txt", name)
                if not m:
                    continue
                text = read_text(os.path.join(folder, name))
                if " (peak):\n" not in text:
                    continue
                peak = sum(b for _, b in dump_peak(text)[1])
                if best is None or peak > best[0]:
                    best = (peak, m.group(2), int(m.group(1)), text)
        self.assertIsNotNone(best)
        _, module, xla_id, text = best
        self.open(file_url(self.report("lorrax", "--module", module, "--xla-id", str(xla_id))), "corpus-module")
        self.check_module_page(text)



def history_total(run, stem):
    """`Total bytes used` of a tests/fixtures/history dump (its README states the figures)."""
    with open(os.path.join(HISTORY, run, stem + ".after_optimizations-buffer-assignment.txt")) as f:
        return total_bytes(f.read())


class FrontPageTest(BrowserTestCase):
    """The front page (`xladb report --home`, `/` of `xladbd --http`) over tests/fixtures/history: six nightly runs
    of branch main and one of branch dev, with a growth at h3, a shrink at h5 and a reshape at h6."""

    def setUp(self):
        super().setUp()
        self.db = os.path.join(self.tmp, "history.db")
        for run in ("h1", "h2", "dev1", "h3", "h4", "h5", "h6"):
            xladb("ingest", "--db", self.db, os.path.join(HISTORY, run), "--run", run)
        self.tab = self.browser.page()

    def check_front_page(self, url, shot):
        self.tab.load(url)
        self.tab.assert_clean(self, url)
        self.tab.screenshot(os.path.join(ARTIFACTS, shot + ".png"))
        groups = self.tab.evaluate("Array.from(document.querySelectorAll('section.group h3')).map(h => h.textContent)")
        self.assertEqual(groups, ["branch=main", "branch=dev"])  # newest latest run first
        # main's latest run, h6, against h5: jit_accumulate over its 12 KiB budget fails it.
        self.assertEqual(self.tab.evaluate("document.querySelector('#group-0 [data-verdict]').dataset.verdict"), "fail")
        largest = self.tab.evaluate("""Array.from(document.querySelectorAll('#group-0 table.largest tbody tr')).map(r =>
            [r.cells[0].textContent, Number(r.cells[2].dataset.v), r.cells[3].className])""")
        self.assertEqual(largest[0], ["jit_accumulate #4", history_total("h6", "module_0004.jit_accumulate"), "over"])
        self.assertEqual(largest[1], ["jit_step #1", history_total("h6", "module_0001.jit_step"), "within"])
        # Recent changes: the change points of branch main, largest first, with their source lines.
        rows = self.tab.evaluate("""Array.from(document.querySelectorAll('#changes-table tbody tr')).map(r =>
            [r.dataset.run, r.dataset.module, Number(r.cells[5].dataset.v), r.cells[7].textContent])""")
        step = [history_total(r, "module_0001.jit_step") for r in ("h2", "h3", "h4", "h5")]
        acc = [history_total(r, "module_0004.jit_accumulate") for r in ("h5", "h6")]
        self.assertEqual(rows, [["h6", "jit_accumulate", acc[1] - acc[0], "(no source line) +8.0 KiB, model.py:200 +4.0 KiB"],
                                ["h5", "jit_step", step[3] - step[2], "model.py:123 -6.0 KiB"],
                                ["h3", "jit_step", step[1] - step[0], "model.py:123 +4.0 KiB"]])
        # The chart: one line per jit name of h6, over main's six runs; jit_accumulate's value per run.
        data = json.loads(self.tab.evaluate("document.getElementById('home-chart-data').textContent"))
        self.assertEqual([s["label"] for s in data["series"]], ["jit_accumulate", "jit_step", "jit_retrace"])
        self.assertEqual(data["series"][0]["v"], [history_total(r, "module_0004.jit_accumulate")
                                                  for r in ("h1", "h2", "h3", "h4", "h5", "h6")])
        self.assertEqual(data["i"], ["h1", "h2", "h3", "h4", "h5", "h6"])
        self.assertEqual(self.tab.evaluate("document.querySelectorAll('#home-chart polyline').length"), 3)

    def test_the_front_page_as_a_file(self):
        path = os.path.join(self.tmp, "index.html")
        xladb("report", "--home", "--home-label", "branch", "--budget", "total_bytes=12KiB", "--db", self.db, "-o", path)
        self.assertLess(os.path.getsize(path), TWO_MIB)
        self.check_front_page(file_url(path), "home-file")
        # A file links nowhere outside itself.
        self.assertEqual(self.tab.evaluate("document.querySelectorAll('a[href]').length"), 0)

    def test_the_front_page_live_and_its_links(self):
        d = self.start("--http", "127.0.0.1:0", "--home-label", "branch", db=self.db)
        base_url = d.proc.stdout.readline().split("pages on ")[1].strip().rstrip("/")
        # Live pages take the budgets of no config: the verdict is the comparison's alone.
        self.tab.load(base_url + "/")
        self.tab.assert_clean(self, base_url + "/")
        self.assertEqual(self.tab.evaluate("document.querySelector('#group-0 [data-verdict]').dataset.verdict"), "pass")
        first = self.tab.evaluate("""Array.from(document.querySelector('#changes-table tbody tr').querySelectorAll('a'))
            .map(a => a.getAttribute('href'))""")
        self.assertEqual(first, ["/run?name=h6", "/module?run=h6&name=jit_accumulate&stage=after_optimizations&xla_id=4",
                                 "/diff?run=h6&baseline=h5"])
        self.tab.click('#changes-table tbody tr a[href^="/diff"]')
        self.wait_until_path("/diff")
        diff_url = self.tab.evaluate("location.href")
        self.tab.load(diff_url)
        self.tab.assert_clean(self, diff_url)
        self.assertEqual(self.tab.evaluate("document.querySelector('[data-verdict]').dataset.verdict"), "pass")
        # Without the label every run is one group, dev1 among them.
        self.tab.load(base_url + "/?label=")
        self.assertEqual(self.tab.evaluate("document.querySelector('section.group h3').textContent"), "every run")
        # The runs page moved to /runs.
        self.tab.load(base_url + "/runs")
        self.assertEqual(self.tab.evaluate("document.querySelectorAll('#runs-table tbody tr').length"), 7)

    def test_the_live_front_page_is_the_files_page_with_links(self):
        d = self.start("--http", "127.0.0.1:0", "--home-label", "branch", db=self.db)
        base_url = d.proc.stdout.readline().split("pages on ")[1].strip().rstrip("/")
        path = os.path.join(self.tmp, "index.html")
        xladb("report", "--home", "--home-label", "branch", "--db", self.db, "-o", path)
        self.check_front_page_without_budgets(file_url(path))
        self.check_front_page_without_budgets(base_url + "/")

    def check_front_page_without_budgets(self, url):
        self.tab.load(url)
        self.tab.assert_clean(self, url)
        rows = self.tab.evaluate("Array.from(document.querySelectorAll('#changes-table tbody tr')).map(r => r.dataset.run)")
        self.assertEqual(rows, ["h6", "h5", "h3"])
        self.assertEqual(self.tab.evaluate("document.querySelectorAll('#group-0 table.largest th').length"), 3)

    def test_the_run_page_draws_each_modules_recent_totals_and_marks_changes(self):
        path = os.path.join(self.tmp, "h3.html")
        xladb("report", "h3", "--db", self.db, "-o", path)
        self.tab.load(file_url(path))
        self.tab.assert_clean(self, file_url(path))
        self.tab.screenshot(os.path.join(ARTIFACTS, "run-sparklines.png"))
        cells = self.tab.evaluate("""Object.fromEntries(Array.from(document.querySelectorAll('#modules-table tbody tr'))
            .map(r => [r.dataset.module, [r.querySelector('td.spark').dataset.change,
                                          r.querySelector('td.spark').textContent.trim(),
                                          r.querySelectorAll('td.spark polyline').length,
                                          r.querySelectorAll('td.spark circle').length]]))""")
        # Every run counts on the run page: dev1 (branch dev) is jit_step's previous run before h3.
        step = history_total("h3", "module_0001.jit_step") - history_total("dev1", "module_0001.jit_step")
        self.assertEqual(cells["jit_step"], [str(step), "▼ -8.0 KiB since dev1", 1, 1])  # a line and h3's dot
        # jit_retrace is absent from dev1: a line over h1 and h2, a gap, h3 alone (a dot) and h3's dot; no change
        # against h2.
        self.assertEqual(cells["jit_retrace"], ["0", "", 1, 2])
        self.assertEqual(cells["jit_accumulate"], ["0", "", 1, 2])

    def wait_until_path(self, path, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.tab.evaluate("location.pathname") == path:
                return
            time.sleep(0.05)
        raise AssertionError(f"the page did not go to {path}")


if __name__ == "__main__":
    unittest.main()
