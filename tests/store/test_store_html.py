"""``verial html`` from the results store: a run by ref (with its benchmark's trend plot),
a file path that stays a file, bad refs, and ``--index`` (ids newest first, escaped text,
scored runs elided, a trend plot per benchmark, no script and no network)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from trend_support import report

from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import write_json_report
from pytest_verial.store import open_store

EVIL = '<script>alert("x")</script>'


@pytest.fixture
def store(store_url: str) -> tuple[str, list[str]]:
    """Four runs (one cancelled, one scored of another benchmark), on SQLite and PostgreSQL."""
    url = store_url
    ids = []
    with open_store(url) as s:
        ids += s.import_report(
            report(0, 0.25, {"t1": 0.25}, agent=EVIL, axes={"acc<b>": 0.2})
        ).run_ids
        ids += s.import_report(report(1, None, {"t1": None})).run_ids
        ids += s.import_report(
            report(2, 0.9, {"t1": 0.9}, details="DETAIL-TEXT", axes={"acc<b>": 0.8})
        ).run_ids
        ids += s.import_report(
            report(3, 0.5, {"t1": 0.5}, scored=True, details="HIDDEN-DETAIL", benchmark="sc")
        ).run_ids
    return url, ids


def _embedded(page: str) -> dict:
    data = re.search(r'id="verial-data">(.*?)</script>', page, re.S)
    assert data is not None
    return json.loads(data.group(1))


def test_html_of_a_stored_run_has_its_trend_plot(
    store: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, ids = store
    out = tmp_path / "run.html"
    assert main(["html", ids[2].lower(), "-o", str(out), "--store", url]) == 0
    page = out.read_text()
    data = _embedded(page)
    assert data["report"]["benchmark_runs"][0]["score"] == 0.9
    assert "DETAIL-TEXT" in page  # not scored: details kept
    assert page.index('id="main"') < page.index('id="trends"')  # what failed comes first
    plot = page.split('id="trends"')[1].split("</div>\n<script")[0]
    assert "<svg" in plot and "Trend: bench@1" in plot
    assert plot.count("<circle") == 2  # the run without a score is a gap, not a dot
    assert 'class="gap"' in plot
    assert ids[2] in plot and 'r="4.5"' in plot  # this run is marked
    # the axis is a line of its own (broken by the cancelled run), its name escaped
    assert plot.count('class="axis-line"') == 2 and "axis acc&lt;b&gt;" in plot
    assert "<b>" not in plot
    assert EVIL not in page
    assert "HTML report" in capsys.readouterr().err


def test_html_latest_default_path_and_scored_run_elided(
    store: tuple[str, list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, ids = store
    monkeypatch.chdir(tmp_path)
    assert main(["html", "latest", "--store", url]) == 0  # the newest session: its report
    with open_store(url) as opened:
        session = opened.session_of_run(ids[3])
    page = (tmp_path / f"{session}.html").read_text()
    assert "HIDDEN-DETAIL" not in page and "SECRET-EXPECTED" not in page
    assert "label of t1" not in page and "feedback of t1" not in page
    assert _embedded(page)["report"]["benchmark_runs"][0]["scored"] is True


def test_an_existing_file_stays_a_file(
    store: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ids = store
    monkeypatch.chdir(tmp_path)
    write_json_report(tmp_path / "latest", report(9, 0.1, {"fromfile": 0.1}))
    assert main(["html", "latest", "-o", "x.html", "--store", url]) == 0
    page = (tmp_path / "x.html").read_text()
    assert "fromfile" in page and 'id="trends"' not in page


@pytest.mark.parametrize(
    ("ref", "says"),
    [("br_ZZZZZZZZ", "no benchmark run"), ("br_0", "at least 6"), ("latest~9", "not 10")],
)
def test_bad_refs_are_one_line(
    store: tuple[str, list[str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    ref: str,
    says: str,
) -> None:
    url, _ids = store
    out = tmp_path / "o.html"
    assert main(["html", ref, "-o", str(out), "--store", url]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err and ref in err
    assert not out.exists()


def test_missing_store_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "no" / "results.db"
    assert main(["html", "--index", "-o", str(tmp_path / "i.html"), "--store", f"sqlite:///{db}"])
    assert "no results store" in capsys.readouterr().err
    assert not db.parent.exists()


def test_index_page(
    store: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, ids = store
    (tmp_path / f"{ids[0]}.html").write_text("a run page")
    out = tmp_path / "index.html"
    assert main(["html", "--index", "-o", str(out), "--store", url]) == 0
    page = out.read_text()
    # every run, newest first; a run whose page exists beside the index is a link
    positions = [page.index(f"<code>{i}</code>") for i in ids]
    assert positions == sorted(positions, reverse=True)
    assert f'<a href="{ids[0]}.html">' in page and f'<a href="{ids[1]}.html">' not in page
    # sandbox text is escaped, there is no script and no network
    assert EVIL not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "<script" not in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    assert "https://" not in page
    # a trend plot per benchmark, with the gap
    assert page.count("<svg") == 2 and "Trend: bench@1" in page and "Trend: sc@1" in page
    # scored run: score and verdict shown, nothing of its tasks
    assert "HIDDEN-DETAIL" not in page and "SECRET-EXPECTED" not in page and "scored" in page
    assert "0.500" in page
    assert "HTML index" in capsys.readouterr().err


def test_index_refuses_to_overwrite_the_store(
    store: tuple[str, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url, _ids = store
    if not url.startswith("sqlite"):
        pytest.skip("a SQLite store is a file an output can name")
    db = Path(url.removeprefix("sqlite:///"))
    before = db.read_bytes()
    assert main(["html", "--index", "-o", str(db), "--store", url]) == 4
    assert "results store" in capsys.readouterr().err
    assert db.read_bytes() == before


def test_index_of_an_empty_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'results.db'}"
    open_store(url).close()
    assert main(["html", "--index", "-o", str(tmp_path / "i.html"), "--store", url]) == 0
    assert "holds no runs" in (tmp_path / "i.html").read_text()


def test_index_and_stored_run_in_a_headless_browser(
    store: tuple[str, list[str]], tmp_path: Path
) -> None:
    """Both pages load from disk with no console error and no request but the file itself,
    and the plots are drawn (chromium + chromedriver, as tests/core/test_core_html.py)."""
    import shutil

    if not store[0].startswith("sqlite"):
        pytest.skip("the pages are the same on both backends: the browser opens them once")
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.skip("chromium and chromedriver are not installed (scripts/setup.d/50-browser.sh)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    url, ids = store
    index, run = tmp_path / "index.html", tmp_path / f"{ids[2]}.html"
    assert main(["html", ids[2], "-o", str(run), "--store", url]) == 0
    assert main(["html", "--index", "-o", str(index), "--store", url]) == 0
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1400"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    browser = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        for page in (index, run):
            browser.get(page.as_uri())
            assert browser.get_log("browser") == []
            events = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
            urls = [
                m["params"]["request"]["url"]
                for m in events
                if m["method"] == "Network.requestWillBeSent"
            ]
            assert urls == [page.as_uri()]
            plots = browser.find_elements(By.CSS_SELECTOR, "svg.trend")
            assert plots and all(p.size["width"] > 100 for p in plots)
        assert browser.find_elements(By.CSS_SELECTOR, "section.run")  # the report still renders
        browser.get(index.as_uri())
        link = browser.find_element(By.LINK_TEXT, ids[2])
        assert link.get_attribute("href") == run.as_uri()
        link.click()
        WebDriverWait(browser, 10).until(lambda b: b.current_url == run.as_uri())
    finally:
        browser.quit()


def test_html_argument_errors(
    store: tuple[str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    url, ids = store
    assert main(["html", "--store", url]) == 2
    assert "--index" in capsys.readouterr().err
    assert main(["html", ids[0], "--index", "--store", url]) == 2
    assert "not both" in capsys.readouterr().err


def test_open_opens_the_written_page(
    store: tuple[str, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or True)
    url, _ids = store
    out = tmp_path / "i.html"
    assert main(["html", "--index", "-o", str(out), "--open", "--store", url]) == 0
    assert main(["html", "latest", "-o", str(tmp_path / "r.html"), "--open", "--store", url]) == 0
    assert opened == [out.resolve().as_uri(), (tmp_path / "r.html").resolve().as_uri()]
