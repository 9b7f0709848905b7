"""Make docs/img/run.png, docs/img/compare.png and docs/img/index.png: the pages of the
example runs as `verial view` serves them.

The example benchmarks are scored on the good run folder, then on the flawed one, into a
temporary store; `verial view` serves it on 127.0.0.1 (a child process, stopped by its PID);
headless chromium (Debian's chromium and chromium-driver, scripts/setup.d/50-browser.sh)
shoots the flawed session's run page (its failing criteria first, one opened to its evidence),
the two sessions compared (latest~1 latest) and the index. Run from the repository root with
the test extras installed:

    .venv/bin/python scripts/html_screenshot.py
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "example_benchmarks"
OUT = ROOT / "docs" / "img"


def _score(store: str) -> None:
    for agent in ("good-agent", "flawed-agent"):
        subprocess.run(
            [
                *(sys.executable, "-m", "pytest", str(EXAMPLES), "-q", "--tb=no"),
                *("-p", "no:cacheprovider", "--verial-store", store),
                *("--verial-run", str(EXAMPLES / "runs" / agent)),
            ],
            cwd=ROOT,
            check=False,
            capture_output=True,
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"verial view exited {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - our own 127.0.0.1
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("verial view did not answer in 60 s")


def _shoot(driver: webdriver.Chrome, url: str, name: str, height: int = 1100) -> None:
    driver.set_window_size(1280, height)
    driver.get(url)
    time.sleep(0.3)  # the run page draws itself from its data once loaded
    driver.save_screenshot(str(OUT / name))
    print(f"wrote {OUT / name}")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = f"sqlite:///{Path(tmp) / 'results.db'}"
        _score(store)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest_verial.cli",
                "view",
                "--store",
                store,
                "--port",
                str(port),
            ],
            cwd=tmp,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--hide-scrollbars"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            _ready(url + "/", proc)
            _shoot(driver, url + "/", "index.png", 1000)
            _shoot(driver, url + "/ui/compare?base=latest~1&head=latest", "compare.png")
            _shoot(driver, url + "/ui/runs/latest", "run.png", 900)
            # the run page again, one failing criterion opened to its evidence by its link
            row = driver.find_element(
                By.CSS_SELECTOR, "tr.failing-criterion[data-criterion='appointment-timing']"
            )
            row.find_element(By.CSS_SELECTOR, "a.ev-link").click()
            time.sleep(0.2)
            driver.save_screenshot(str(OUT / "run-evidence.png"))
            print(f"wrote {OUT / 'run-evidence.png'}")
        finally:
            driver.quit()
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
