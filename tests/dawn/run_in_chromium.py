#!/usr/bin/env python3
"""Runs WebGPU jobs in headless Chromium (Dawn on SwiftShader) and writes
what they read back.

    run_in_chromium.py JOBS.json RESULTS.json [--timeout SECONDS]

JOBS.json is a list of dispatches (tests/support/webgpu_job.hpp writes it);
RESULTS.json gets {"adapter": ..., "results": [{"name", "outputs" | "error"}]}.
Exit codes: 0 done, 1 failed or timed out, 77 no Chromium here (a test skips).
"""
import argparse
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("jobs")
    parser.add_argument("results")
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args()

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("chromium is not installed", file=sys.stderr)
        return 77

    with tempfile.TemporaryDirectory(prefix="vyre-dawn-") as work:
        site = os.path.join(work, "site")
        os.mkdir(site)
        shutil.copy(os.path.join(HERE, "runner.html"), site)
        shutil.copy(args.jobs, os.path.join(site, "jobs.json"))

        report = {}
        done = threading.Event()

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

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/runner.html"
        command = [browser, "--headless=new", "--no-sandbox", "--disable-gpu-sandbox", "--no-first-run",
                   "--enable-unsafe-webgpu", "--enable-features=Vulkan", "--use-webgpu-adapter=swiftshader",
                   "--use-vulkan=swiftshader", f"--user-data-dir={os.path.join(work, 'profile')}", url]
        log_path = os.path.join(work, "chromium.log")
        with open(log_path, "w") as log:
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
            finished = done.wait(args.timeout)
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        server.shutdown()
        if not finished:
            print(f"chromium gave no result within {args.timeout} s; its log:", file=sys.stderr)
            with open(log_path) as log:
                sys.stderr.write(log.read()[-4000:])
            return 1
        with open(args.results, "wb") as out:
            out.write(report["body"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
