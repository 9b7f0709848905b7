"""Issue 31: nothing secret in the service's log. A key sent in a URL's query string is refused
(a 400 that does not repeat it) and the real server's log masks every credential form the
server accepts: a key anywhere in a request line (query or path, plain or percent-encoded),
``Bearer`` and the sign-in cookie."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from service_support import FILES, RUNS, Api, new_key, serve
from test_service_api import is_problem


@pytest.mark.parametrize(
    "query, named",
    [
        ("key={org}", "'key'"),
        ("limit=5&token={org}", "'token'"),
        ("access_token={solver}", "'access_token'"),
        ("API_KEY=anything", "'API_KEY'"),
        ("agent={org}", "'agent'"),  # a value that is a key, whatever its name
        ("agent={org_encoded}", "'agent'"),
    ],
)
def test_a_key_in_the_query_string_is_a_400_that_does_not_repeat_it(
    api: Api, query: str, named: str
) -> None:
    encoded = quote(api.org, safe="").replace("_", "%5F")
    url = "/v1/benchmark-runs?" + query.format(org=api.org, solver=api.solver, org_encoded=encoded)
    detail = is_problem(api.client.get(url, headers=api.h(api.org)), 400)["detail"]
    assert detail == (
        f"query {named}: a credential in a URL is refused; send the key only in "
        "Authorization: Bearer"
    )
    assert api.org not in detail and api.solver not in detail
    # refused before any route: a page, or a request with no key at all, alike
    assert (
        api.client.get(
            "/ui/login?" + query.format(org=api.org, solver="", org_encoded=encoded)
        ).status_code
        == 400
    )


def test_the_real_servers_log_masks_every_credential_form(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    _, org = new_key(tmp_path, store, "org")
    _, solver = new_key(tmp_path, store, "solver")
    with serve(tmp_path, store, str(FILES), "--runs-root", str(RUNS)) as server:
        bearer = {"Authorization": f"Bearer {org}"}
        with httpx.Client(base_url=server.url) as http:
            assert http.get(f"/v1/benchmark-runs?key={org}").status_code == 400
            encoded = quote(solver, safe="").replace("_", "%5F")
            assert http.get(f"/v1/benchmark-runs?x={encoded}").status_code == 400
            assert http.get("/v1/benchmark-runs", headers=bearer).status_code == 200
            assert http.get(f"/v1/task-runs/{solver}", headers=bearer).status_code == 404
            cookie = {"Cookie": f"verial_key={org}"}
            assert http.get("/", headers=cookie).status_code == 200
            assert http.get(f"/ui/runs/{org}", headers=cookie).status_code == 404
        log = server.text()
    assert org not in log and solver not in log
    assert org[3:] not in log and solver[8:] not in log  # not even without their prefix
    assert '"GET /v1/benchmark-runs?key=*** HTTP/1.1" 400' in log
    assert '"GET /v1/task-runs/vrl_slv_*** HTTP/1.1" 404' in log
    assert '"GET /ui/runs/vk_*** HTTP/1.1" 404' in log
