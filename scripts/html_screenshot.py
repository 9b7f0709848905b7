"""Make docs/html-report.png: the HTML report of the flawed example run, one criterion open.

Run from the repository root with the test extras installed and Debian's chromium and
chromium-driver present (scripts/setup.d/50-browser.sh):

    .venv/bin/python scripts/html_screenshot.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "flawed.html"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "example_benchmarks",
                "-q",
                "--tb=no",
                "-p",
                "no:cacheprovider",
                "--verial-run",
                "example_benchmarks/runs/flawed-agent",
                "--verial-html",
                str(page),
            ],
            cwd=ROOT,
            check=False,
            capture_output=True,
        )
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for arg in ("--headless=new", "--no-sandbox", "--window-size=1200,1500"):
            options.add_argument(arg)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.get(page.as_uri())
            section = driver.find_element(By.CSS_SELECTOR, "section.run[data-run*='prior-auth']")
            section.find_element(By.CSS_SELECTOR, "tr.task[data-task='schedule-followup']").click()
            section.find_element(
                By.CSS_SELECTOR, "td.crit[data-criterion='appointment-booked']"
            ).click()
            driver.execute_script("arguments[0].scrollIntoView();", section)
            out = ROOT / "docs" / "html-report.png"
            driver.save_screenshot(str(out))
            print(f"wrote {out}")
        finally:
            driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
