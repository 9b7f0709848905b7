"""The HTML report (issue 11) in a real headless browser: Debian's chromium, driven by Selenium
through Debian's chromedriver (scripts/setup.d/50-browser.sh installs both). Skipped with the
reason where they are missing, except in CI, where that is a failure."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from core_support import REPO, example_output, run_subprocess

from pytest_verial.cli import main

EXAMPLES = REPO / "example_benchmarks"
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")


def _need_browser() -> None:
    if CHROMIUM and DRIVER:
        return
    reason = "chromium and chromedriver are not installed (scripts/setup.d/50-browser.sh)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def reports(example_runs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The example benchmarks scored on both example runs: JSON reports and HTML pages (the
    sessions are ``example_runs``', shared with the compare and benchmark-run tests)."""
    out = tmp_path_factory.mktemp("html")
    paths: dict[str, Path] = {}
    for agent in ("flawed-agent", "good-agent"):
        code, output = example_output(example_runs, agent)
        assert code in (0, 1), output[-3000:]
        assert f"HTML report: {example_runs / f'{agent}.html'}" in output
        paths[agent] = example_runs / f"{agent}.html"
        paths[agent + ".json"] = example_runs / f"{agent}.json"
    # the flawed run (head) compared with the good one (base): regressions everywhere
    head, base = paths["flawed-agent.json"], paths["good-agent.json"]
    assert main(["html", str(head), str(base), "-o", str(out / "compare.html")]) == 0
    paths["compare"] = out / "compare.html"
    return paths


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    _need_browser()
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1800"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _open(browser: Any, page: Path) -> tuple[list[Any], list[str]]:
    """Load a page; its console messages and every URL it requested."""
    browser.get(page.as_uri())
    console = browser.get_log("browser")
    events = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    urls = [
        m["params"]["request"]["url"] for m in events if m["method"] == "Network.requestWillBeSent"
    ]
    return console, urls


def test_page_loads_without_errors_or_network(browser: Any, reports: dict[str, Path]) -> None:
    console, urls = _open(browser, reports["flawed-agent"])
    assert console == []
    assert urls == [reports["flawed-agent"].as_uri()]  # the file itself, nothing else
    from selenium.webdriver.common.by import By

    runs = browser.find_elements(By.CSS_SELECTOR, "section.run")
    assert len(runs) == 5
    scores = [r.find_element(By.CSS_SELECTOR, ".run-score").text for r in runs]
    assert "0.497" in scores  # front-office@3 on the flawed run
    assert browser.find_elements(By.CSS_SELECTOR, "rect.axis-bar")  # the per-axis chart


def test_a_click_opens_a_criterions_evidence(browser: Any, reports: dict[str, Path]) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, reports["flawed-agent"])
    task = browser.find_element(By.CSS_SELECTOR, "tr.task[data-task='schedule-followup']")
    marker = "window.getComputedStyle(arguments[0].firstElementChild, '::before').content"
    assert "\u25b8" in browser.execute_script(f"return {marker}", task)  # visibly clickable
    task.click()
    assert "open" in task.get_attribute("class")
    assert "\u25be" in browser.execute_script(f"return {marker}", task)
    crit = browser.find_element(By.CSS_SELECTOR, "td.crit[data-criterion='appointment-booked']")
    # failed criteria first in the task's detail
    statuses = [
        row.find_elements(By.TAG_NAME, "td")[1].text.split()[-1]
        for row in browser.find_elements(By.CSS_SELECTOR, ".task-detail tr")
        if row.find_elements(By.CSS_SELECTOR, "td.crit")
    ]
    assert statuses[0] != "passed" and statuses == sorted(statuses, key=lambda s: s == "passed")
    crit.click()
    detail = browser.find_element(By.CSS_SELECTOR, ".criterion-detail")
    assert detail.is_displayed()
    assert "Dr. Ramirez" in detail.text and "FAIL" in detail.text  # expected / actual rows
    assert browser.get_log("browser") == []


def test_filter_and_sort_the_task_table(browser: Any, reports: dict[str, Path]) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, reports["flawed-agent"])
    section = browser.find_element(
        By.CSS_SELECTOR, "section.run[data-run$='interop.verial.yaml@flawed-agent']"
    )

    def rows() -> list[str]:
        return [
            r.get_attribute("data-task") for r in section.find_elements(By.CSS_SELECTOR, "tr.task")
        ]

    # failures first: fail, then partial, then pass, each in the report's order
    report = json.loads(reports["flawed-agent.json"].read_text())
    (run,) = [
        r for r in report["benchmark_runs"] if r["id"].endswith("interop.verial.yaml@flawed-agent")
    ]
    rank = {"fail": 0, "partial": 1, "pass": 2}
    expected = [
        t["task_key"] for t in sorted(run["task_runs"], key=lambda t: rank.get(t["verdict"], -1))
    ]
    assert rows() == expected and len(expected) == 7
    assert (
        rank[
            run["task_runs"][[t["task_key"] for t in run["task_runs"]].index(rows()[0])]["verdict"]
        ]
        < 2
    )
    section.find_element(By.CSS_SELECTOR, "input.task-filter").send_keys("x12")
    assert rows() == [key for key in expected if key.startswith("x12")]
    assert len(rows()) == 4
    section.find_element(By.XPATH, ".//th[text()='score']").click()  # ascending
    assert rows()[-1] == "x12-claim-status"  # 1.000, the highest


def test_compare_view_lists_regressions_first(browser: Any, reports: dict[str, Path]) -> None:
    from selenium.webdriver.common.by import By

    console, urls = _open(browser, reports["compare"])
    assert console == [] and len(urls) == 1
    # verial html HEAD BASE: the two side by side, one table of two columns per benchmark
    pairs = browser.find_elements(By.CSS_SELECTOR, "section.pair")
    assert len(pairs) == 5
    heads = pairs[0].find_elements(By.CSS_SELECTOR, "thead th")
    assert [h.text.split(":")[0] for h in heads[1:3]] == ["base", "head"]
    tasks = pairs[0].find_elements(By.CSS_SELECTOR, "tr.task-row")
    assert tasks, "no task rows"
    assert "regression" in (tasks[0].get_attribute("class") or ""), (
        "the flawed run compared with the good one does not open on a regression"
    )
    assert pairs[0].find_elements(By.CSS_SELECTOR, "tr.criterion-row.regression")


def test_a_scored_run_is_embedded_without_details(tmp_path: Path) -> None:
    """No browser needed: what the page holds is what it can show."""
    report = tmp_path / "scored.json"
    page = tmp_path / "scored.html"
    code, output = run_subprocess(
        REPO,
        str(EXAMPLES / "prior-auth.verial.yaml"),
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "--verial-scored",
        "--verial-run",
        str(EXAMPLES / "runs" / "flawed-agent"),
        "--verial-report",
        str(report),
        "--verial-html",
        str(page),
    )
    assert code == 1, output[-2000:]
    text = page.read_text(encoding="utf-8")
    data = text.split('id="verial-data">', 1)[1].split("</script>", 1)[0]
    assert "Dr. Ramirez" in report.read_text(encoding="utf-8")  # the JSON keeps it
    assert "Dr. Ramirez" not in text
    assert "assertionResults" not in data and '"evidence": null' in data


def test_hostile_text_stays_text(tmp_path: Path) -> None:
    """A value from the sandbox is shown, never run: no markup can leave the data block."""
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.reporting._html import render_html
    from pytest_verial.reporting._json_report import load_report

    source = tmp_path / "r.json"
    code, _ = run_subprocess(
        REPO,
        str(EXAMPLES / "prior-auth.verial.yaml"),
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "--verial-run",
        str(EXAMPLES / "runs" / "flawed-agent"),
        "--verial-report",
        str(source),
    )
    assert code == 1
    raw = json.loads(source.read_text(encoding="utf-8"))
    hostile = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"
    raw["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][0]["details"] = hostile
    del raw["integrity"]  # edited by hand: an unsealed report, shown as it is
    source.write_text(json.dumps(raw), encoding="utf-8")
    page = render_html(load_report(source))
    assert hostile not in page and "</script><script>" not in page
    assert page.count("<script") == 2  # the data block and the page's own script
