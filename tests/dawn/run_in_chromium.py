#!/usr/bin/env python3
"""Runs WebGPU jobs in headless Chromium (Dawn on SwiftShader) and writes
what they read back.

    run_in_chromium.py JOBS.json RESULTS.json [--timeout SECONDS]

JOBS.json is a list of dispatches (tests/support/webgpu_job.hpp writes it);
RESULTS.json gets {"adapter": ..., "results": [{"name", "outputs" | "error"}]}.
The page (runner.html) is served and run as the web export's test pages are
(tests/web/run_web.py: the browser's flags, the loopback server, the report
posted back).
Exit codes: 0 done, 1 failed or timed out, 77 no Chromium here (a test skips).
"""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "web"))
import run_web  # noqa: E402  (a sibling folder's module)


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
        page = argparse.Namespace(site=site, page="runner.html", timeout=args.timeout, out=[args.results])
        return run_web.run_results(browser, page, work)


if __name__ == "__main__":
    sys.exit(main())
