#!/usr/bin/env python3
"""Opens pages of exported vyre kernels in headless Chromium (WebGPU on
SwiftShader), serving their folder on loopback.

    run_web.py results SITE PAGE RESULTS.json [--timeout SECONDS]
        PAGE posts one JSON report to /result; it is written to RESULTS.json.
    run_web.py page SITE PAGE DOM.html SHOT.png [--timeout SECONDS]
        Opens PAGE (a demo page), waits until its #status leaves "running",
        writes its DOM and a screenshot. Chromium's --dump-dom and
        --screenshot capture at the load event, before a page's WebGPU work
        (all asynchronous) is done, so this asks Chromium through its
        DevTools protocol on a pipe instead.

Exit codes: 0 done, 1 failed or timed out, 77 no Chromium here (a test skips).
"""
import argparse
import base64
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu-sandbox", "--no-first-run", "--enable-unsafe-webgpu",
         "--enable-features=Vulkan", "--use-webgpu-adapter=swiftshader", "--use-vulkan=swiftshader",
         "--window-size=1000,1200", "--hide-scrollbars"]


def serve(site, report, done):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=site, **kw)

        def do_POST(self):
            length = int(self.headers["Content-Length"])
            report["body"] = self.rfile.read(length)
            self.send_response(200)
            self.end_headers()
            done.set()

        def log_message(self, *a):
            pass

    Handler.extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map, **{".js": "text/javascript"})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_results(browser, args, work):
    report, done = {}, threading.Event()
    server = serve(args.site, report, done)
    url = f"http://127.0.0.1:{server.server_address[1]}/{args.page}"
    log_path = os.path.join(work, "chromium.log")
    with open(log_path, "w") as log:
        process = subprocess.Popen([browser, *FLAGS, f"--user-data-dir={os.path.join(work, 'profile')}", url],
                                   stdout=subprocess.DEVNULL, stderr=log)
        finished = done.wait(args.timeout)
        stop(process)
    server.shutdown()
    if not finished:
        print(f"chromium gave no result within {args.timeout} s; its log:", file=sys.stderr)
        with open(log_path) as log:
            sys.stderr.write(log.read()[-4000:])
        return 1
    with open(args.out[0], "wb") as out:
        out.write(report["body"])
    return 0


def stop(process):
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe: JSON
    messages ending in NUL, commands on fd 3, answers and events on fd 4."""

    def __init__(self, browser, work):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        self.log = open(os.path.join(work, "chromium.log"), "w")

        def fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.process = subprocess.Popen(
            [browser, *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={os.path.join(work, 'profile')}",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=self.log, preexec_fn=fds, pass_fds=(3, 4))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self.read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self.events.append(answer)

    def wait_event(self, method, timeout):
        deadline = time.monotonic() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self.read_message(deadline))

    def close(self):
        stop(self.process)
        self.log.close()


WAIT_FOR_STATUS = """new Promise(resolve => {
  const poll = () => {
    const s = document.getElementById("status");
    if (s && s.dataset.state && s.dataset.state !== "running") resolve(s.dataset.state); else setTimeout(poll, 50);
  };
  poll();
})"""


def run_page(browser, args, work):
    server = serve(args.site, {}, threading.Event())
    url = f"http://127.0.0.1:{server.server_address[1]}/{args.page}"
    tools = DevTools(browser, work)
    try:
        targets = tools.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        session = tools.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        tools.send("Page.enable", session=session)
        tools.send("Page.navigate", {"url": url}, session=session)
        tools.wait_event("Page.loadEventFired", args.timeout)
        state = tools.send("Runtime.evaluate", {"expression": WAIT_FOR_STATUS, "awaitPromise": True,
                                                "returnByValue": True}, session=session, timeout=args.timeout)
        print(f"page status: {state['result'].get('value')}", file=sys.stderr)
        dom = tools.send("Runtime.evaluate", {"expression": "document.documentElement.outerHTML",
                                              "returnByValue": True}, session=session)["result"]["value"]
        shot = tools.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
    except (TimeoutError, RuntimeError, StopIteration) as e:
        print(f"chromium: {e}; its log:", file=sys.stderr)
        tools.close()
        with open(os.path.join(work, "chromium.log")) as log:
            sys.stderr.write(log.read()[-4000:])
        return 1
    finally:
        server.shutdown()
    tools.close()
    with open(args.out[0], "w") as out:
        out.write("<!doctype html>\n" + dom)
    with open(args.out[1], "wb") as out:
        out.write(base64.b64decode(shot))
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["results", "page"])
    parser.add_argument("site")
    parser.add_argument("page")
    parser.add_argument("out", nargs="+")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()
    if len(args.out) != (1 if args.mode == "results" else 2):
        parser.error("results takes RESULTS.json; page takes DOM.html SHOT.png")

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("chromium is not installed", file=sys.stderr)
        return 77
    with tempfile.TemporaryDirectory(prefix="vyre-web-", ignore_cleanup_errors=True) as work:
        return (run_results if args.mode == "results" else run_page)(browser, args, work)


if __name__ == "__main__":
    sys.exit(main())
