#!/usr/bin/env python3
"""Loads a report of scripts/report.py (synthetic run and sweep folders) in headless Chromium: the page
must load from file:// with no console error and no network request, and render every section.

Usage: tests/check_report_browser.py            (ctest report_browser; exit 77 = skipped: no chromium)
       tests/check_report_browser.py PAGE.html  (check an existing page, e.g. a quickstart report)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import report  # noqa: E402

# Chromium's --enable-logging lines that say the page did something wrong.
BAD = re.compile(r"CONSOLE|Uncaught|net::ERR_|Not allowed to load|Failed to load")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def check(page, browser):
    """Problems found loading `page` (empty: none)."""
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                           "--v=0", "--dump-dom", "file://" + os.path.abspath(page)],
                          capture_output=True, text=True, timeout=90)
    problems = [line for line in proc.stderr.splitlines() if BAD.search(line)]
    if proc.returncode != 0:
        problems.append(f"chromium exit {proc.returncode}")
    dom = proc.stdout
    with open(page, encoding="utf-8") as f:
        want = f.read().count("<img")
    got = dom.count("<img")
    if got == 0 or got != want:
        problems.append(f"{got} images in the rendered DOM, {want} in the page")
    if 'data-section="headline"' not in dom:
        problems.append("no headline section in the rendered DOM")
    return problems


def main(argv):
    browser = chromium()
    if browser is None:
        print("check_report_browser: SKIPPED: no chromium (apt-get install chromium)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        if len(argv) > 1:
            page = argv[1]
        else:
            run, sweep, page = os.path.join(tmp, "run"), os.path.join(tmp, "sweep"), os.path.join(tmp, "r.html")
            report.fake_run(run, services=True, failures=True)
            report.fake_sweep(sweep)
            if report.main(["report.py", run, sweep, "--out", page]) != 0:
                print("check_report_browser: report.py failed", file=sys.stderr)
                return 1
        problems = check(page, browser)
    for p in problems:
        print(f"check_report_browser: {p}", file=sys.stderr)
    if not problems:
        print(f"check_report_browser: {page} loads in {browser} with no console error")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
