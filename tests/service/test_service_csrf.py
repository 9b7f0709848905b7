"""Issue 31: browser sign-in resists cross-site requests, over SQLite and PostgreSQL. A page
elsewhere that posts the sign-in form (any Origin, even ``text/plain``) no longer signs the
browser in with the attacker's key, nor signs it out; a request with no Origin and no token
(not from this server's form) is refused too; the server's own form still works."""

from __future__ import annotations

from typing import Any

import pytest
from service_support import Api
from test_service_views import form_token

FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _post(api: Api, path: str, body: str, headers: dict[str, str]) -> Any:
    return api.client.post(path, content=body, headers=headers, follow_redirects=False)


def _signed_in(answer: Any) -> bool:
    return "verial_key=" in answer.headers.get("set-cookie", "")


@pytest.mark.parametrize(
    "headers, why",
    [
        ({**FORM, "Origin": "https://evil.example"}, "a request from another origin"),
        ({**FORM, "Origin": "null"}, "a request from another origin"),
        ({**FORM, "Sec-Fetch-Site": "cross-site"}, "a cross-site request"),
        ({**FORM, "Sec-Fetch-Site": "same-site"}, "a same-site request"),
        ({"Content-Type": "text/plain", "Origin": "https://evil.example"}, "x-www-form-urlencoded"),
        ({"Content-Type": "text/plain"}, "application/x-www-form-urlencoded"),
        ({"Content-Type": "multipart/form-data; boundary=x"}, "x-www-form-urlencoded"),
    ],
)
def test_a_cross_site_sign_in_is_refused_even_with_a_good_key_and_token(
    api: Api, headers: dict[str, str], why: str
) -> None:
    token = form_token(api)  # even one the attacker could not have had
    answer = _post(api, "/ui/login", f"key={api.org}&form_token={token}", headers)
    assert answer.status_code == 403 and why in answer.text, answer.text
    assert not _signed_in(answer)
    assert api.client.get("/").status_code == 401


def test_a_sign_in_without_the_forms_token_is_refused(api: Api) -> None:
    """No Origin at all (a form from a page served by file, an old browser, curl): only the
    token the server's own form carries signs in."""
    api.client.cookies.clear()
    answer = _post(api, "/ui/login", f"key={api.org}", FORM)  # no token, no cookie
    assert answer.status_code == 403 and "token" in answer.text and not _signed_in(answer)
    form_token(api)  # the cookie now held, the field still missing or made up
    for body in (f"key={api.org}", f"key={api.org}&form_token=guessed"):
        answer = _post(api, "/ui/login", body, FORM)
        assert answer.status_code == 403 and not _signed_in(answer)
    answer = _post(api, "/ui/login", f"key={api.org}&form_token={form_token(api)}", FORM)
    assert answer.status_code == 303 and _signed_in(answer)  # the server's own form


def test_the_servers_own_form_signs_in_with_its_origin(api: Api) -> None:
    headers = {**FORM, "Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
    answer = _post(api, "/ui/login", f"key={api.org}&form_token={form_token(api)}", headers)
    assert answer.status_code == 303 and _signed_in(answer)
    assert api.client.get("/").status_code == 200


def test_a_cross_site_sign_out_is_refused(api: Api) -> None:
    answer = _post(api, "/ui/login", f"key={api.org}&form_token={form_token(api)}", FORM)
    assert answer.status_code == 303
    for headers in (
        {**FORM, "Origin": "https://evil.example"},
        {"Content-Type": "text/plain"},
        FORM,  # no token
    ):
        answer = _post(api, "/ui/logout", "form_token=x", headers)
        assert answer.status_code == 403 and "verial_key" not in answer.headers.get(
            "set-cookie", ""
        )
        assert api.client.get("/").status_code == 200  # still signed in
    answer = _post(api, "/ui/logout", f"form_token={form_token(api, '/ui/logout')}", FORM)
    assert answer.status_code == 303
    api.client.cookies.clear()
    assert api.client.get("/").status_code == 401
