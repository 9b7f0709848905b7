"""The service's pages (issue 20): stored runs, a run's report, two runs side by side and a
benchmark's trend, for an org key signed in by a cookie; in-process, then in a headless browser
against a real server."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_support import FILES, RUNS, Api, new_key, serve

BODY = {"benchmark": "sftp-drops@1", "task_id": "sftp-claims-batch"}


def _two_runs(api: Api) -> list[str]:
    ids = []
    for run_dir in ("good-agent", "flawed-agent"):
        body = {**BODY, "sandbox": {"run_dir": run_dir}}
        answer = api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))
        ids.append(answer.json()["benchmark_run_id"])
    return ids


def form_token(api: Api, page: str = "/ui/login") -> str:
    """The token the form at ``page`` is served with (its cookie kept by the client)."""
    found = re.search(r'name="form_token" value="([^"]+)"', api.client.get(page).text)
    assert found is not None
    return found.group(1)


def _sign_in(api: Api, key: str) -> Any:
    return api.client.post(
        "/ui/login",
        content=f"key={key}&form_token={form_token(api)}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )


def test_pages_need_an_org_key_and_never_show_it(api: Api) -> None:
    good, flawed = _two_runs(api)
    pages = ["/", f"/ui/runs/{good}", f"/ui/compare?base={good}&head={flawed}"]
    pages.append("/ui/benchmarks/sftp-drops@1")
    for page in pages:
        answer = api.client.get(page)
        assert answer.status_code == 401 and 'action="/ui/login"' in answer.text, page
        assert api.client.get(page, headers=api.h(api.solver)).status_code == 404, page
        assert api.client.get(page, headers=api.h("vk_" + "x" * 40)).status_code == 401
    assert _sign_in(api, api.solver).status_code == 401  # a solver key cannot sign in
    assert _sign_in(api, "vk_nothing").status_code == 401
    signed = _sign_in(api, api.org)
    assert signed.status_code == 303 and signed.headers["location"] == "/"
    cookie = signed.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    for page in pages:  # the client keeps the cookie
        answer = api.client.get(page)
        assert answer.status_code == 200, (page, answer.text[:300])
        assert answer.headers["content-type"].startswith("text/html")
        assert answer.headers["cache-control"] == "no-store"
        assert api.org not in answer.text
    index = api.client.get("/").text
    assert f'href="/ui/runs/{good}"' in index and 'action="/ui/compare"' in index
    assert "svg" in api.client.get("/ui/benchmarks/sftp-drops@1").text
    assert api.client.get("/ui/runs/br_nothing").status_code == 404
    assert api.client.get("/ui/compare?base=latest&head=br_nothing").status_code == 404
    assert api.client.get("/ui/benchmarks/no-such@1").status_code == 404
    signed_out = api.client.post(
        "/ui/logout",
        content=f"form_token={form_token(api, '/ui/logout')}",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert signed_out.status_code == 303
    api.client.cookies.clear()
    assert api.client.get("/").status_code == 401


def test_the_pages_in_a_headless_browser(tmp_path: Path) -> None:
    """A browser signs in with the form, opens a run from the list, opens two runs side by
    side from the compare form and a trend page: no console error, nothing fetched from
    anywhere but the server."""
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver_path):
        pytest.skip("chromium and chromedriver are not installed (scripts/setup.d/50-browser.sh)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    store = f"sqlite:///{tmp_path / 'store.db'}"
    _, org = new_key(tmp_path, store, "org")
    with serve(tmp_path, store, str(FILES), "--runs-root", str(RUNS)) as server:
        ids = []
        for run_dir in ("good-agent", "flawed-agent"):
            body = {**BODY, "sandbox": {"run_dir": run_dir}}
            answer = httpx.post(
                server.url + "/v1/verify-task",
                json=body,
                headers={"Authorization": f"Bearer {org}"},
            )
            ids.append(answer.json()["benchmark_run_id"])
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1400"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
        browser = webdriver.Chrome(service=Service(driver_path), options=options)

        def loaded(url: str) -> None:
            WebDriverWait(browser, 15).until(lambda b: b.current_url.startswith(url))
            WebDriverWait(browser, 15).until(
                lambda b: b.execute_script("return document.readyState") == "complete"
            )

        try:
            browser.get(server.url + "/")
            assert browser.find_element(By.NAME, "key")  # the sign-in form
            browser.find_element(By.NAME, "key").send_keys(org)
            browser.find_element(By.CSS_SELECTOR, "form button").click()
            loaded(server.url + "/")
            signed_out = browser.get_log("browser")  # the sign-in page was a 401
            assert all("401" in e["message"] for e in signed_out), signed_out
            browser.find_element(By.LINK_TEXT, ids[0]).click()
            loaded(f"{server.url}/ui/runs/{ids[0]}")
            assert browser.find_elements(By.CSS_SELECTOR, "section.run")  # the report renders
            assert browser.find_elements(By.CSS_SELECTOR, "svg.trend")
            browser.get(server.url + "/")
            browser.find_element(By.NAME, "base").send_keys(ids[0])
            browser.find_element(By.NAME, "head").send_keys(ids[1])
            browser.find_element(By.CSS_SELECTOR, 'form[action="/ui/compare"] button').click()
            loaded(f"{server.url}/ui/compare")
            assert browser.find_elements(By.CSS_SELECTOR, "table.side-by-side")
            assert "regression" in browser.page_source
            browser.get(server.url + "/ui/benchmarks/sftp-drops@1")
            assert browser.find_elements(By.CSS_SELECTOR, "svg.trend")
            assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
            events = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
            urls = {
                m["params"]["request"]["url"]
                for m in events
                if m["method"] == "Network.requestWillBeSent"
            }
            assert urls and all(u.startswith(server.url) for u in urls), urls
            # issue 31: a page elsewhere (here a data: URL) posting the sign-in form with
            # another key, as a browser sends it, is refused: the browser stays signed in
            # with its own key, whose pages it still sees
            _, other = new_key(tmp_path, store, "org")
            forged = (
                f'<form method="post" action="{server.url}/ui/login">'
                f'<input name="key" value="{other}"><button>go</button></form>'
            )
            browser.get("data:text/html," + forged)
            browser.find_element(By.TAG_NAME, "button").click()
            WebDriverWait(browser, 15).until(lambda b: "refused" in b.page_source)
            assert "nothing changed" in browser.page_source
            browser.get(server.url + "/")
            assert browser.find_elements(By.LINK_TEXT, ids[0])  # still the first key's session
        finally:
            browser.quit()
        assert org not in server.text()  # the key is in no log line
