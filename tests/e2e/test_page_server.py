"""The page server of `xladbd --http` at the HTTP level (issue 26): slow and idle clients cannot starve it,
methods other than GET and HEAD are 405 whatever their body, and the login form's session cookie. Real xladbd
processes on 127.0.0.1; every attack is bounded in count and time. (test_pages.py loads the pages in Chromium.)
"""
import http.client
import os
import resource
import socket
import ssl
import subprocess
import threading
import time
import unittest
import urllib.parse
import urllib.request

from test_service import DaemonTestCase


def self_signed_certificate(folder):
    """(cert.pem, key.pem) in `folder`, for 127.0.0.1 and localhost, valid for a day."""
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


def pages_port(daemon):
    """The port of `xladbd --http 127.0.0.1:0`, from the line the daemon prints."""
    line = daemon.proc.stdout.readline()
    return int(line.split("pages on http://127.0.0.1:")[1].strip().rstrip("/"))


def raw_http(port, request, timeout=5.0):
    """Sends `request` (bytes) on a fresh connection and returns every byte answered until the server closes
    or `timeout` passes; b"" when the connection fails."""
    data = b""
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(request)
            while time.monotonic() < deadline:
                s.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError:
        pass
    return data


def healthz_seconds(port, limit):
    """How long /healthz took to answer "ok" in full, or None when it did not within `limit` seconds."""
    start = time.monotonic()
    answer = raw_http(port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", limit)
    took = time.monotonic() - start
    return took if answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\nok\n") and took <= limit else None


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def login(port, token, next_path="/", tls_context=None):
    """POST /login with `token`; (status, headers as a dict of lowercase names, body)."""
    conn = (http.client.HTTPSConnection("127.0.0.1", port, context=tls_context, timeout=30) if tls_context
            else http.client.HTTPConnection("127.0.0.1", port, timeout=30))
    try:
        conn.request("POST", "/login", urllib.parse.urlencode({"token": token, "next": next_path}),
                     {"Content-Type": "application/x-www-form-urlencoded"})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def get_status(port, path, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


class PageServerHttpTest(DaemonTestCase):
    """The page server at the HTTP level (issue 26): slow and idle clients, methods, the login form's cookie.
    On 127.0.0.1, bounded in count and time."""

    SLOWLORIS = 64
    IDLE = 2000

    def test_healthz_answers_within_1s_under_64_slowloris_and_2000_idle_connections(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = self.IDLE + self.SLOWLORIS + 512
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
        d = self.start("--http", "127.0.0.1:0")
        port = pages_port(d)
        self.assertIsNotNone(healthz_seconds(port, 1.0), "/healthz does not answer before the attack")
        stop = threading.Event()
        closed_by_server = [0]  # slowloris sockets the server closed (each is reopened)

        def slowloris():
            # Each socket starts a request and adds one header line every 0.5 s, never ending it.
            socks = [None] * self.SLOWLORIS
            while not stop.is_set():
                for i in range(self.SLOWLORIS):
                    try:
                        if socks[i] is None:
                            socks[i] = socket.create_connection(("127.0.0.1", port), timeout=1)
                            socks[i].sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                        else:
                            socks[i].sendall(b"X-Slow: 1\r\n")
                    except OSError:
                        if socks[i] is not None:
                            closed_by_server[0] += 1
                            socks[i].close()
                        socks[i] = None
                stop.wait(0.5)
            for s in socks:
                if s is not None:
                    s.close()

        idle = []
        filled = threading.Event()  # all 2,000 were open at once

        def idle_opener():
            # 2,000 connections that send nothing, opened as fast as the kernel accepts them; then 50 new ones
            # every 0.1 s in place of the 50 oldest, so the server keeps meeting its cap.
            while not stop.is_set():
                if len(idle) >= self.IDLE:
                    filled.set()
                    for s in idle[:50]:
                        s.close()
                    del idle[:50]
                    stop.wait(0.1)
                try:
                    for _ in range(50):
                        idle.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                except OSError:
                    stop.wait(0.01)

        threads = [threading.Thread(target=slowloris), threading.Thread(target=idle_opener)]
        for t in threads:
            t.start()
        try:
            opened = filled.wait(20)
            # Ten probes, one a second, while all of them are open and the slowloris sockets keep coming back.
            probes = []
            for _ in range(10):
                probes.append(healthz_seconds(port, 1.0))
                time.sleep(1.0)
            fds = open_fds(d.proc.pid)
        finally:
            stop.set()
            for t in threads:
                t.join(timeout=30)
            for s in idle:
                s.close()
        self.assertEqual([p for p in probes if p is None], [], f"/healthz probes (seconds): {probes}")
        self.assertTrue(opened, "the server stopped accepting idle connections")
        # The connection cap holds: the daemon keeps far fewer descriptors than the 2,064 connections open.
        self.assertLess(fds, 1000)
        # The whole-request deadline closed the slowloris sockets (each stays at most a few seconds).
        self.assertGreaterEqual(closed_by_server[0], self.SLOWLORIS)

    def test_keep_alive_pipelining_idle_timeout_and_header_cap(self):
        port = pages_port(self.start("--http", "127.0.0.1:0"))
        get = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        # Two requests in one send: two answers on the one connection, which then stays open while idle, and
        # is closed by the server after its idle timeout (5 s) with nothing more sent.
        with socket.create_connection(("127.0.0.1", port), timeout=15) as s:
            s.sendall(get + get)
            start = time.monotonic()
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            idle = time.monotonic() - start
        self.assertEqual(data.count(b"HTTP/1.1 200 OK"), 2, data)
        self.assertEqual(data.count(b"\r\n\r\nok\n"), 2, data)
        self.assertGreater(idle, 3.0)
        self.assertLess(idle, 10.0)
        # Headers past 16 KiB: 431, and the rest is not read.
        big = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Pad: " + b"a" * (20 << 10) + b"\r\n\r\n"
        self.assertTrue(raw_http(port, big).startswith(b"HTTP/1.1 431 "))
        # A GET with a body is answered, then the connection closes: the body is never read as a request.
        answer = raw_http(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 25\r\n\r\n"
                                b"GET /etc HTTP/1.1\r\n\r\n")
        self.assertEqual(answer.count(b"HTTP/1.1 "), 1, answer)
        self.assertTrue(answer.endswith(b"ok\n"), answer)

    def test_requests_that_the_loop_and_httplib_could_frame_differently_are_400(self):
        # The loop finds where a request ends by its own header scan, httplib parses it again: any header the
        # two could read differently (a bare LF hiding a Content-Length, a folded line, a second
        # Content-Length or Transfer-Encoding) would let a body pass for a request. Each is refused, once.
        port = pages_port(self.start("--http", "127.0.0.1:0", "--token-file", self.token_file()))
        body = b"GET /run?name=x HTTP/1.1\r\n\r\n"
        for name, request in (
                ("bare LF", b"GET /healthz HTTP/1.1\r\nX-A: a\nContent-Length: %d\r\n\r\n" % len(body) + body),
                ("folded line", b"GET /healthz HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n"),
                ("two lengths", b"POST /login HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\n"
                                b"token" + body),
                ("two encodings", b"GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                                  b"transfer-encoding: identity\r\n\r\n0\r\n\r\n")):
            with self.subTest(name):
                answer = raw_http(port, request)
                self.assertTrue(answer.startswith(b"HTTP/1.1 400 "), answer)
                self.assertEqual(answer.count(b"HTTP/1.1 "), 1, answer)
        # The same requests written cleanly are served.
        self.assertTrue(raw_http(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200 "))

    def token_file(self):
        path = os.path.join(self.tmp, "token")
        with open(path, "w") as f:
            f.write("s3cret\n")
        return path

    def test_login_sets_a_strict_httponly_session_cookie_that_is_not_the_token(self):
        port = pages_port(self.start("--http", "127.0.0.1:0", "--token-file", self.token_file()))
        status, headers, body = login(port, "wrong", "/run?name=head")
        self.assertEqual(status, 401)
        self.assertNotIn("set-cookie", headers)
        self.assertIn(b"Wrong token.", body)
        status, headers, _ = login(port, "s3cret", "/run?name=head")
        self.assertEqual(status, 303)
        self.assertEqual(headers["location"], "/run?name=head")
        cookie = headers["set-cookie"]
        attributes = [a.strip() for a in cookie.split(";")]
        name, value = attributes[0].split("=", 1)
        self.assertEqual(name, "xladb_session")
        self.assertRegex(value, r"^[0-9a-f]{64}$")
        self.assertNotIn("s3cret", cookie)
        self.assertIn("HttpOnly", attributes)
        self.assertIn("SameSite=Strict", attributes)
        self.assertIn("Path=/", attributes)
        self.assertNotIn("Secure", attributes)  # plain HTTP: a Secure cookie would never come back
        self.assertEqual(get_status(port, "/", {"Cookie": f"other=1; xladb_session={value}"}), 200)
        self.assertEqual(get_status(port, "/", {"Cookie": "xladb_session=" + "0" * 64}), 401)
        self.assertEqual(get_status(port, "/", {"Cookie": "xladb_session=s3cret"}), 401)
        self.assertEqual(get_status(port, "/", {}), 401)
        # `next` is a local path or nothing: no redirect off the server.
        for target in ("//evil.example/", "https://evil.example/", "/\\evil.example", "/x\r\nSet-Cookie: a=b"):
            status, headers, _ = login(port, "s3cret", target)
            self.assertEqual((status, headers["location"]), (303, "/"), target)
        # The form is the one body read, and a small one: past 4 KiB 413, chunked or without a length 411.
        post = b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        too_large = post + b"Content-Length: 5000\r\n\r\n" + b"a" * 5000
        self.assertTrue(raw_http(port, too_large).startswith(b"HTTP/1.1 413 "))
        self.assertTrue(raw_http(port, post + b"Transfer-Encoding: chunked\r\n\r\n3\r\na=b\r\n0\r\n\r\n")
                        .startswith(b"HTTP/1.1 411 "))
        self.assertTrue(raw_http(port, post + b"\r\n").startswith(b"HTTP/1.1 411 "))
        # Under TLS the cookie is Secure.
        cert, key = self_signed_certificate(self.tmp)
        tls = self.start("--http", "127.0.0.1:0", "--token-file", self.token_file(), "--tls-cert", cert,
                         "--tls-key", key, db=os.path.join(self.tmp, "tls.db"))
        tls_port = int(tls.proc.stdout.readline().strip().rstrip("/").rsplit(":", 1)[1])
        status, headers, _ = login(tls_port, "s3cret", "/", ssl.create_default_context(cafile=cert))
        self.assertEqual(status, 303)
        self.assertIn("Secure", [a.strip() for a in headers["set-cookie"].split(";")])

    def test_bearer_scheme_is_case_insensitive(self):
        port = pages_port(self.start("--http", "127.0.0.1:0", "--token-file", self.token_file()))
        for scheme in ("Bearer", "bearer", "BEARER"):
            self.assertEqual(get_status(port, "/", {"Authorization": scheme + " s3cret"}), 200, scheme)
        self.assertEqual(get_status(port, "/", {"Authorization": "bearer wrong"}), 401)

    def test_methods_other_than_get_and_head_are_405_with_or_without_a_body(self):
        port = pages_port(self.start("--http", "127.0.0.1:0", "--token-file", self.token_file()))
        bodies = {"no body": b"\r\n",
                  "a body": b"Content-Length: 5\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\na=b&c",
                  "a chunked body": b"Transfer-Encoding: chunked\r\n\r\n5\r\na=b&c\r\n0\r\n\r\n"}
        for method in ("POST", "PUT", "PATCH", "TRACE", "PROPFIND", "DELETE", "OPTIONS", "CONNECT", "BREW"):
            for path in ("/", "/run?name=head", "/healthz", "/nope"):
                for what, tail in bodies.items():
                    answer = raw_http(port, f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + tail)
                    self.assertTrue(answer.startswith(b"HTTP/1.1 405 "), f"{method} {path} with {what}: {answer[:80]}")
                    self.assertIn(b"\r\nAllow: GET, HEAD\r\n", answer)
        # HEAD is served like GET, without a body.
        head = raw_http(port, b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 200 "), head)
        self.assertTrue(head.endswith(b"\r\n\r\n"), head)

    def test_tls_sockets_that_never_finish_a_handshake_are_closed_and_healthz_answers(self):
        cert, key = self_signed_certificate(self.tmp)
        d = self.start("--http", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key)
        url = d.proc.stdout.readline().split("pages on ")[1].strip()
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        context = ssl.create_default_context(cafile=cert)

        def probe():
            start = time.monotonic()
            try:
                body = urllib.request.urlopen(url + "healthz", context=context, timeout=1.0).read()
            except OSError:
                return None
            return time.monotonic() - start if body == b"ok\n" else None

        # 64 sockets that send half a ClientHello and stop, and 64 that send nothing.
        stalled = []
        for i in range(2 * self.SLOWLORIS):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            if i % 2 == 0:
                s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
            stalled.append(s)
        try:
            probes = [probe() for _ in range(4)]
            self.assertEqual([p for p in probes if p is None], [], f"https /healthz probes (seconds): {probes}")
            # Past the whole-request deadline (a few seconds) the server has closed every one of them.
            for s in stalled:
                s.settimeout(15)
                try:
                    self.assertEqual(s.recv(1024), b"")
                except ConnectionResetError:
                    pass
        finally:
            for s in stalled:
                s.close()



if __name__ == "__main__":
    unittest.main()
