"""A real headless Chromium (Debian's `chromium`), driven over the DevTools protocol, for the page tests.

Browser() starts one chromium process with its own profile folder; page() opens a tab that records every
network request, console message, exception and log entry of what it loads. No test double: the page is
parsed, laid out, scripted and drawn by the browser users have.

    with Browser() as b:
        tab = b.page()
        tab.load("file:///tmp/run.html")
        tab.evaluate("document.title")
        tab.assert_clean(self, "file:///tmp/run.html")   # no console errors or CSP violations, no request beyond the page
        tab.screenshot("/tmp/run.png")
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.request

import websocket  # Debian's python3-websocket

CHROMIUM = os.environ.get("XLADB_CHROMIUM", "/usr/bin/chromium")


def have_chromium():
    return os.access(CHROMIUM, os.X_OK)


class Tab:
    """One page target. Events are kept in arrival order."""

    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        # Every Content-Security-Policy violation of every document, recorded before the page's own code runs
        # (DevTools-injected code is not subject to the page's policy).
        self.call("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.__cspViolations = [];
            document.addEventListener('securitypolicyviolation', e => window.__cspViolations.push(
                e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' ' + (e.sample || '')));"""})
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})

    def close(self):
        self.ws.close()

    def call(self, method, params=None, timeout=60):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params or {}}))
        deadline = time.time() + timeout
        while time.time() < deadline:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
        raise TimeoutError(method)

    def load(self, url, timeout=60):
        """Navigates and waits until page.js has run (it sets data-ready on <html>)."""
        self.events.clear()
        result = self.call("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise RuntimeError(f"cannot load {url}: {result['errorText']}")
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.evaluate("document.readyState === 'complete' && "
                             "document.documentElement.getAttribute('data-ready') === '1'"):
                return
            time.sleep(0.05)
        raise TimeoutError(f"{url} did not finish loading (page.js never ran)")

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse_move(self, x, y):
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def hover(self, selector):
        """Moves the mouse to the middle of the first element matching `selector` (scrolled into view)."""
        box = self.evaluate(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        self.mouse_move(box[0], box[1])

    def click(self, selector):
        self.evaluate(f"document.querySelector({json.dumps(selector)}).click()")

    def requests(self):
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def csp_violations(self):
        """The securitypolicyviolation events of the current document."""
        return self.evaluate("window.__cspViolations || []")

    def problems(self):
        """Console errors and warnings, uncaught exceptions, error log entries and CSP violations."""
        found = ["csp violation: " + v for v in self.csp_violations()]
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:500])
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                found.append(f"console.{p['type']}: " + json.dumps(p.get("args", []))[:500])
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") in ("error", "warning"):
                found.append(f"log {p['entry']['level']}: {p['entry'].get('text', '')[:500]}")
        return found

    def assert_clean(self, test, page_url):
        """No console error, exception or error log, and no request other than the page itself."""
        test.assertEqual(self.problems(), [], f"problems while loading {page_url}")
        others = [u for u in self.requests() if u != page_url]
        test.assertEqual(others, [], f"{page_url} made network requests")

    def screenshot(self, path):
        """The whole page, as a PNG file."""
        size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
        shot = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size[0], "height": min(size[1], 12000), "scale": 1}})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        return path


class Browser:
    """A headless chromium with a throwaway profile, on a DevTools port of its own choosing."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="xladb_chromium_")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
             "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={self.profile}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = os.path.join(self.profile, "DevToolsActivePort")

        def port_line():
            try:
                with open(port_file) as f:
                    text = f.read()
            except FileNotFoundError:
                return ""
            return text.split("\n")[0] if "\n" in text else ""

        deadline = time.time() + 60
        while not port_line():
            if self.proc.poll() is not None or time.time() > deadline:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""
                self.close()
                raise RuntimeError("chromium did not start: " + err[-2000:])
            time.sleep(0.05)
        self.port = int(port_line())
        self.tabs = []

    def page(self):
        with urllib.request.urlopen(
                urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT"),
                timeout=30) as r:
            target = json.load(r)
        tab = Tab(target["webSocketDebuggerUrl"])
        self.tabs.append(tab)
        return tab

    def close(self):
        for t in self.tabs:
            try:
                t.close()
            except Exception:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
