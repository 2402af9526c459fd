"""xladbd's Prometheus metrics (issue 27): GET /metrics on --metrics-listen and on --http, scraped during real
ingests and calls, every scrape parsed by a strict parser of the text format (exposition_format.py), and each
figure checked against what the test did or what the dump files hold: files counted and bytes summed from the
folders, calls counted by the test, the process's own /proc entries, the version the binary prints.
"""
import http.client
import json
import os
import re
import socket
import sqlite3
import subprocess
import time
import unittest
import urllib.parse

import yaml  # Debian's python3-yaml

import exposition_format
from test_service import SOURCE_DIR, XLADBD, DaemonTestCase, make_run, wait_for
from xladb_client import Client, xladb_pb2

import grpc  # Debian's python3-grpcio


def served_ports(daemon, *names):
    """{name: port} of the HTTP servers xladbd prints after `listening on` ("pages", "metrics"), in that order."""
    ports = {}
    for name in names:
        line = daemon.proc.stdout.readline()
        match = re.match(r"xladbd (pages|metrics) on http://127\.0\.0\.1:(\d+)/", line)
        if not match or match.group(1) != name:
            raise AssertionError(f"expected xladbd's {name} address, got {line!r}")
        ports[name] = int(match.group(2))
    return ports


def get(port, path, token=None, headers=None):
    """(status, headers, body text) of GET http://127.0.0.1:port/path."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        sent = dict(headers or {})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        conn.request("GET", path, headers=sent)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode("utf-8")
    finally:
        conn.close()


def scrape(port, token=None):
    """The families of one scrape, parsed strictly."""
    status, headers, body = get(port, "/metrics", token)
    if status != 200:
        raise AssertionError(f"/metrics answered {status}: {body}")
    if headers.get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8":
        raise AssertionError(f"/metrics Content-Type {headers.get('Content-Type')!r}")
    return exposition_format.parse(body)


def measured_since(port, since):
    """The families of a scrape whose store measure was taken after `since` (Unix time), else None."""
    families = scrape(port)
    measured = families.get("xladb_store_measured_timestamp_seconds")
    return families if measured and measured.value() > since else None


def files_and_bytes(folder):
    """(files, bytes) of every file under `folder`, counted on disk."""
    files = size = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            files += 1
            size += os.path.getsize(os.path.join(parent, name))
    return files, size


class ExpositionParserTest(unittest.TestCase):
    """The parser the scrapes go through refuses what the format forbids (so a pass means something)."""

    GOOD = ('# HELP a_total A counter.\n# TYPE a_total counter\na_total{x="1"} 3\n'
            '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 3.5\nh_count 2\n')

    def test_a_good_text_parses(self):
        families = exposition_format.parse(self.GOOD)
        self.assertEqual(families["a_total"].value(x="1"), 3)
        self.assertEqual(families["h"].value("h_count"), 2)

    def test_what_the_format_forbids_is_refused(self):
        bad = {
            "no final newline": "a 1",
            "bad metric name": "1a 1\n",
            "bad label escape": 'a{x="\\t"} 1\n',
            "unterminated label": 'a{x="1} 1\n',
            "value not a float": "a one\n",
            "label twice": 'a{x="1",x="2"} 1\n',
            "sample twice": "a 1\na 2\n",
            "type after samples": "a 1\n# TYPE a gauge\n",
            "family split": "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# HELP a again\n",
            "unknown type": "# TYPE a meter\n",
            "negative counter": "# TYPE a_total counter\na_total -1\n",
            "bucket without le": "# TYPE h histogram\nh_bucket 1\nh_sum 1\nh_count 1\n",
            "no +Inf bucket": '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
            "not cumulative": '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
            "count differs": '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n',
            "reserved label": 'a{__name__="x"} 1\n',
        }
        for what, text in bad.items():
            with self.subTest(what):
                with self.assertRaises(exposition_format.FormatError):
                    exposition_format.parse(text)


class MetricsTest(DaemonTestCase):

    def start_with_metrics(self, *args, db=None):
        d = self.start("--metrics-listen", "127.0.0.1:0", *args, db=db)
        return d, served_ports(d, "metrics")

    def test_a_scrape_during_ingests_parses_and_counts_what_the_folders_hold(self):
        folders = []
        for attempt, copies in enumerate((20, 60, 150)):
            root = os.path.join(self.tmp, f"artifacts{attempt}")
            os.makedirs(root)
            d, ports = self.start_with_metrics("--allow-root", root, db=os.path.join(self.tmp, f"{attempt}.db"))
            port = ports["metrics"]
            folders = [os.path.join(root, f"run{i}") for i in range(4)]
            for folder in folders:
                make_run(folder, copies=copies)
            jobs = [d.client.ingest_path(path=f, timeout=30).job_id for f in folders]
            seen_busy = False
            while True:
                families = scrape(port)
                depth = families["xladb_ingest_queue_depth"].value()
                running = families["xladb_ingest_jobs_running"].value()
                age = families["xladb_ingest_oldest_queued_job_age_seconds"].value()
                self.assertIn(running, (0, 1))
                self.assertGreaterEqual(age, 0)
                if depth == 0:
                    self.assertEqual(age, 0)
                seen_busy = seen_busy or depth > 0 or running == 1
                states = [d.client.get_ingest_job(job_id=j, timeout=10).state for j in jobs]
                if all(s in (xladb_pb2.IngestJob.SUCCEEDED, xladb_pb2.IngestJob.FAILED) for s in states):
                    break
                time.sleep(0.02)
            self.assertTrue(all(s == xladb_pb2.IngestJob.SUCCEEDED for s in states))
            if seen_busy:
                break
            d.stop()  # the ingests were over before a scrape saw them: again, with more files
        else:
            self.fail("no scrape saw a job queued or running, even with 150 copies per run")

        jobs_ended = time.time()
        families = scrape(port)
        counts = [files_and_bytes(f) for f in folders]
        self.assertEqual(families["xladb_ingest_jobs_total"].value(state="succeeded"), 4)
        self.assertEqual(families["xladb_ingest_jobs_total"].value(state="failed"), 0)
        self.assertEqual(families["xladb_ingest_files_total"].value(verdict="ingested"), sum(c[0] for c in counts))
        for verdict in ("unchanged", "not_ingested", "error"):
            self.assertEqual(families["xladb_ingest_files_total"].value(verdict=verdict), 0)
        self.assertEqual(families["xladb_ingest_bytes_total"].value(), sum(c[1] for c in counts))
        rows = sum(d.client.get_ingest_job(job_id=j, timeout=10).rows for j in jobs)
        self.assertEqual(families["xladb_ingest_rows_total"].value(), rows)
        self.assertEqual(families["xladb_ingest_job_duration_seconds"].value("xladb_ingest_job_duration_seconds_count"), 4)
        self.assertEqual(families["xladb_ingest_queue_depth"].value(), 0)

        # The store's sizes, measured by the daemon after the jobs ended, against the file itself.
        families = wait_for(lambda: measured_since(port, jobs_ended), what="a measure of the store after the jobs")
        self.assertEqual(families["xladb_runs_stored"].value(), 4)
        with sqlite3.connect(f"file:{d.db}?mode=ro", uri=True) as conn:
            modules = conn.execute("SELECT COUNT(*) FROM modules").fetchone()[0]
        self.assertEqual(families["xladb_modules_stored"].value(), modules)
        # Per run, from make_run's file names: 3 buffer assignments per copy (each its own module), the HLO text
        # of `jit_splash_attention_kernel` (copies > 1 name their buffer assignments `…_0`, `…_1`: no match),
        # and the bundle profile's kernel.
        self.assertEqual(modules, 4 * (3 * copies + 2))
        wal = d.db + "-wal"
        on_disk = os.path.getsize(d.db) + (os.path.getsize(wal) if os.path.exists(wal) else 0)
        self.assertEqual(families["xladb_database_size_bytes"].value(), on_disk)  # nothing wrote since the measure

        # The process's figures against its /proc entries.
        pid = d.proc.pid
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        self.assertLessEqual(abs(families["process_open_fds"].value() - fds), 4)
        with open(f"/proc/{pid}/statm") as f:
            resident = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        self.assertLess(abs(families["process_resident_memory_bytes"].value() - resident), 0.25 * resident)
        with open(f"/proc/{pid}/limits") as f:
            soft = re.search(r"Max open files\s+(\d+)", f.read()).group(1)
        self.assertEqual(families["process_max_fds"].value(), int(soft))
        with open(f"/proc/{pid}/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, counted after the command
        with open("/proc/stat") as f:
            boot = int(re.search(r"^btime (\d+)", f.read(), re.MULTILINE).group(1))
        self.assertAlmostEqual(families["process_start_time_seconds"].value(),
                               boot + start_ticks / os.sysconf("SC_CLK_TCK"), places=2)

        # The build's version and commit, as `xladbd --version` prints them.
        line = subprocess.run([XLADBD, "--version"], capture_output=True, text=True, timeout=30).stdout
        version, commit, schema = re.match(r"xladbd (\S+) \(commit (\S+), schema version (\d+)\)", line).groups()
        self.assertEqual(families["xladb_build_info"].value(version=version, commit=commit, schema_version=schema), 1)

    def test_calls_are_timed_by_service_method_and_code(self):
        d, ports = self.start_with_metrics()
        make_run(os.path.join(self.tmp, "r"))
        d.cli("ingest", os.path.join(self.tmp, "r"))
        rpc = "xladb_rpc_duration_seconds"

        def count(method, code, families):
            try:
                return families[rpc].value(rpc + "_count", service="xladb.v1.QueryService", method=method, code=code)
            except KeyError:
                return 0

        before = scrape(ports["metrics"])
        for _ in range(3):
            d.client.list_runs(timeout=10)
        with self.assertRaises(grpc.RpcError) as refused:
            d.client.get_run(run_name="no-such-run", timeout=10)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.NOT_FOUND)
        after = scrape(ports["metrics"])
        self.assertEqual(count("ListRuns", "OK", after) - count("ListRuns", "OK", before), 3)
        self.assertEqual(count("GetRun", "NOT_FOUND", after) - count("GetRun", "NOT_FOUND", before), 1)
        self.assertEqual(count("GetRun", "OK", after), 0)
        self.assertGreater(after[rpc].value(rpc + "_sum", service="xladb.v1.QueryService", method="ListRuns",
                                            code="OK"), 0)
        # The upload the CLI made: one Upload call, counted under the ingest service.
        self.assertEqual(after[rpc].value(rpc + "_count", service="xladb.v1.IngestService", method="Upload", code="OK"), 1)

    def test_refusals_are_counted_by_cap(self):
        d, ports = self.start_with_metrics("--max-upload-bytes", "10000", "--query-max-bytes", "1000")
        port = ports["metrics"]
        caps = lambda: {l["cap"]: v for _, l, v in scrape(port)["xladb_refusals_total"].samples}
        before = caps()
        self.assertEqual(set(before), {"query_concurrency", "query_limits", "upload_bytes", "upload_files",
                                       "http_connections", "http_deadline", "http_request_size", "http_queue"})
        folder = os.path.join(self.tmp, "big")
        make_run(folder)  # ~140 KB: over the 10 kB upload cap
        self.assertNotEqual(d.cli("ingest", folder, check=False).returncode, 0)
        with self.assertRaises(grpc.RpcError) as refused:
            list(d.client.query(sql="SELECT hex(zeroblob(2000))", timeout=30))
        self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        status, _, _ = get(port, "/metrics", headers={"X-Padding": "x" * 20000})
        self.assertEqual(status, 431)
        after = caps()
        changed = {cap: after[cap] - before[cap] for cap in after if after[cap] != before[cap]}
        self.assertEqual(changed, {"upload_bytes": 1, "query_limits": 1, "http_request_size": 1})

    def test_a_slow_http_client_is_counted_and_an_idle_keep_alive_is_not(self):
        d, ports = self.start_with_metrics()
        port = ports["metrics"]
        deadline = lambda: scrape(port)["xladb_refusals_total"].value(cap="http_deadline")
        before = deadline()
        idle = http.client.HTTPConnection("127.0.0.1", port, timeout=30)  # a scrape, then idle past 5 s
        idle.request("GET", "/metrics")
        self.assertEqual(idle.getresponse().read()[:6], b"# HELP")
        slow = socket.create_connection(("127.0.0.1", port))  # half a request line, then nothing
        slow.sendall(b"GET /metr")
        slow.settimeout(30)
        self.assertEqual(slow.recv(100), b"", "the loop closes a request that does not arrive within 5 s")
        idle.sock.settimeout(30)
        self.assertEqual(idle.sock.recv(1), b"", "the loop closes a keep-alive connection idle for 5 s")
        slow.close()
        idle.close()
        self.assertEqual(deadline() - before, 1)

    def test_a_call_to_a_method_the_server_lacks_is_counted_as_unknown(self):
        d, ports = self.start_with_metrics()
        channel = grpc.insecure_channel(d.addr)
        for i in range(3):
            with self.assertRaises(grpc.RpcError) as refused:
                channel.unary_unary(f"/evil.Svc/Method{i}")(b"", timeout=10)
            self.assertEqual(refused.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        channel.close()
        rpc = scrape(ports["metrics"])["xladb_rpc_duration_seconds"]
        self.assertEqual(rpc.value("xladb_rpc_duration_seconds_count", service="unknown", method="unknown",
                                   code="UNIMPLEMENTED"), 3)
        self.assertFalse([labels for _, labels, _ in rpc.samples if "evil" in labels.get("service", "")])

    def test_prune_sets_the_last_prune_time(self):
        d, ports = self.start_with_metrics()
        self.assertEqual(scrape(ports["metrics"])["xladb_last_prune_timestamp_seconds"].value(), 0)
        started = time.time()
        d.cli("prune", "--keep-detail-days", "30")
        value = scrape(ports["metrics"])["xladb_last_prune_timestamp_seconds"].value()
        self.assertGreaterEqual(value, started - 1)
        self.assertLessEqual(value, time.time() + 1)

    def test_metrics_listen_serves_metrics_alone_and_http_serves_them_beside_the_pages(self):
        d = self.start("--metrics-listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
        ports = served_ports(d, "pages", "metrics")
        self.assertEqual(set(ports), {"pages", "metrics"})
        for path, status in (("/", 404), ("/runs", 404), ("/login", 404), ("/healthz", 200)):
            self.assertEqual(get(ports["metrics"], path)[0], status, path)
        self.assertIn("xladb_ingest_jobs_total", scrape(ports["pages"]))
        self.assertEqual(get(ports["pages"], "/runs")[0], 200)

    def test_the_read_token_guards_metrics_like_the_pages(self):
        token_file = os.path.join(self.tmp, "token")
        with open(token_file, "w") as f:
            f.write("s3cret-read-token\n")
        d = self.start("--token-file", token_file, "--metrics-listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
        for name, port in served_ports(d, "pages", "metrics").items():
            with self.subTest(name):
                status, headers, _ = get(port, "/metrics")
                self.assertEqual(status, 401)
                self.assertEqual(headers.get("WWW-Authenticate"), "Bearer")
                self.assertEqual(get(port, "/metrics", token="wrong")[0], 401)
                self.assertIn("process_open_fds", scrape(port, token="s3cret-read-token"))

    def test_a_metrics_address_beyond_loopback_needs_tls_and_a_token(self):
        out = subprocess.run([XLADBD, "--db", os.path.join(self.tmp, "x.db"), "--listen", "127.0.0.1:0",
                              "--metrics-listen", "0.0.0.0:0"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 2)
        self.assertIn("refusing --metrics-listen 0.0.0.0:0 without TLS and a token", out.stderr)
        out = subprocess.run([XLADBD, "--db", os.path.join(self.tmp, "x.db"), "--metrics-listen", "nope"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 2)
        self.assertIn("--metrics-listen wants host:port", out.stderr)


PROMETHEUS = "/usr/bin/prometheus"
PROMTOOL = "/usr/bin/promtool"


def documented_yaml():
    """(scrape config, alert rules): the two YAML blocks of docs/deploy.md's "Metrics" section, as text."""
    with open(os.path.join(SOURCE_DIR, "docs", "deploy.md"), encoding="utf-8") as f:
        section = f.read().split("### Metrics\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    if len(blocks) != 2:
        raise AssertionError(f"docs/deploy.md's Metrics section has {len(blocks)} YAML blocks, not 2")
    return blocks


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusTest(DaemonTestCase):
    """A real Prometheus (Debian's) scrapes xladbd with the scrape job docs/deploy.md shows and evaluates the
    alert rules it shows; promtool lints a scrape and checks both files."""

    def prometheus_api(self, port, path, **params):
        """The API's data; None while Prometheus is not listening or not ready yet (503)."""
        try:
            status, _, body = get(port, f"/api/v1/{path}" + ("?" + urllib.parse.urlencode(params) if params else ""))
        except ConnectionRefusedError:
            return None
        if status == 503:
            return None
        self.assertEqual(status, 200, body)
        answer = json.loads(body)
        self.assertEqual(answer["status"], "success", body)
        return answer["data"]

    def query_value(self, port, expr):
        data = self.prometheus_api(port, "query", query=expr)
        return float(data["result"][0]["value"][1]) if data and data["result"] else None

    def test_prometheus_scrapes_with_the_documented_job_and_evaluates_the_documented_alerts(self):
        for tool in (PROMETHEUS, PROMTOOL):
            self.assertTrue(os.access(tool, os.X_OK), f"{tool} is missing: scripts/install-deps.sh installs prometheus")
        scrape_text, rules_text = documented_yaml()
        token = os.path.join(self.tmp, "read.token")
        with open(token, "w") as f:
            f.write("read-token-for-prometheus\n")
        root = os.path.join(self.tmp, "artifacts")
        os.makedirs(root)
        d = self.start("--token-file", token, "--metrics-listen", "127.0.0.1:0", "--allow-root", root)
        metrics_port = served_ports(d, "metrics")["metrics"]

        # promtool's linter on a scrape: names, units, types, help.
        _, _, body = get(metrics_port, "/metrics", token="read-token-for-prometheus")
        lint = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True, text=True, timeout=60)
        self.assertEqual((lint.returncode, lint.stdout + lint.stderr), (0, ""))

        # The documented job, pointed at this daemon and this token file, scraping every second.
        config = yaml.safe_load(scrape_text)
        job = config["scrape_configs"][0]
        self.assertEqual(job["job_name"], "xladbd")
        job["static_configs"][0]["targets"] = [f"127.0.0.1:{metrics_port}"]
        job["authorization"]["credentials_file"] = token
        job["scrape_interval"] = "1s"
        rules_file = os.path.join(self.tmp, "xladb-rules.yml")
        with open(rules_file, "w") as f:
            f.write(rules_text)
        config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
        config["rule_files"] = [rules_file]
        config_file = os.path.join(self.tmp, "prometheus.yml")
        with open(config_file, "w") as f:
            yaml.safe_dump(config, f)
        checked = subprocess.run([PROMTOOL, "check", "rules", rules_file], capture_output=True, text=True, timeout=60)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        self.assertIn("SUCCESS: 3 rules found", checked.stdout)
        checked = subprocess.run([PROMTOOL, "check", "config", config_file], capture_output=True, text=True, timeout=60)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)

        port = free_port()
        with open(os.path.join(self.tmp, "prometheus.log"), "w") as log:
            prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={config_file}",
                                           f"--storage.tsdb.path={os.path.join(self.tmp, 'tsdb')}",
                                           f"--web.listen-address=127.0.0.1:{port}"],
                                          stdout=subprocess.DEVNULL, stderr=log)
        self.addCleanup(lambda: (prometheus.terminate(), prometheus.wait(timeout=30)))
        def scraped():
            if prometheus.poll() is not None:
                self.fail("prometheus exited: " + open(os.path.join(self.tmp, "prometheus.log")).read()[-2000:])
            return self.query_value(port, 'up{job="xladbd"}') == 1
        wait_for(scraped, what="Prometheus to scrape xladbd (up == 1)")

        def alerts():
            data = self.prometheus_api(port, "rules")
            return {r["name"]: r for g in (data or {}).get("groups", []) for r in g["rules"]}
        evaluated = wait_for(lambda: (lambda r: r if len(r) == 3 and all(x.get("lastEvaluation", "").startswith("2")
                                                                              and x["health"] == "ok"
                                                                              for x in r.values()) else None)(alerts()),
                             what="the three rules to be evaluated")
        self.assertEqual(evaluated["XladbIngestFailing"]["state"], "inactive")
        self.assertEqual(evaluated["XladbIngestQueueStuck"]["state"], "inactive")

        # A run with a file that cannot be read: the ingest-failing alert goes off, the others stay quiet.
        folder = os.path.join(root, "broken")
        make_run(folder)
        with open(os.path.join(folder, "module_0009.x.after_optimizations-buffer-assignment.txt"), "wb") as f:
            f.write(b"\x00\x01binary")
        Client(d.addr, token="read-token-for-prometheus").ingest_path(path=folder, wait=True, timeout=60)
        wait_for(lambda: self.query_value(port, 'xladb_ingest_files_total{verdict="error"}') == 1,
                 what="Prometheus to see the file with an error verdict")
        fired = wait_for(lambda: (lambda r: r if r["XladbIngestFailing"]["state"] in ("pending", "firing") else None)(
            alerts()), what="XladbIngestFailing to go off")
        self.assertEqual(fired["XladbIngestFailing"]["state"], "firing")  # no `for:`: it fires at once
        self.assertEqual(fired["XladbIngestQueueStuck"]["state"], "inactive")
        disk = os.statvfs(self.tmp)
        if disk.f_bavail / disk.f_blocks > 0.15:  # with less room the disk alert may rightly go off
            self.assertEqual(fired["XladbDiskFilling"]["state"], "inactive")
        self.assertEqual(self.query_value(port, 'xladb_ingest_files_total{verdict="ingested"}'), 5)


if __name__ == "__main__":
    unittest.main()
