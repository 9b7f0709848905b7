"""The service's pages (issue 20): stored runs, a run's report, two runs side by side and a
benchmark's trend, for an org key signed in by a cookie; in-process (in a headless browser
against a real server: test_service_ui_browser.py)."""

from __future__ import annotations

import re
from typing import Any

from service_support import Api

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


def test_a_bad_ref_is_a_page_with_the_way_back_and_its_text_stays_text(api: Api) -> None:
    """A ref that names nothing answers 404 with a page in the site's shell (the way back, the
    sign-out form whose token is the browser's cookie); what the URL carried is escaped."""
    _two_runs(api)
    assert _sign_in(api, api.org).status_code == 303
    hostile = "<img src=x onerror=alert(1)>"
    for page in (
        f"/ui/compare?base=latest&head={hostile}",
        f"/ui/runs/{hostile}",
        f"/ui/benchmarks/{hostile}",
    ):
        answer = api.client.get(page)
        assert answer.status_code == 404, page
        assert '<a class="back" href="/">' in answer.text and "<style>" in answer.text, page
        assert hostile not in answer.text and "&lt;img src=x" in answer.text, page
        token = re.search(r'name="form_token" value="([^"]+)"', answer.text)
        assert token is not None and 'action="/ui/logout"' in answer.text
        assert api.client.cookies.get("verial_form") == token.group(1)
    # the side-by-side page of a pair: both runs' columns, linking their pages
    base, head = (r.id for r in api.app.state.store.list_runs()[:2][::-1])
    page = api.client.get(f"/ui/compare?base={base}&head={head}").text
    assert 'class="side-by-side"' in page
    assert f'href="/ui/runs/{base}"' in page and f'href="/ui/runs/{head}"' in page
