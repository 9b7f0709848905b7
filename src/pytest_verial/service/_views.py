"""The service's pages for a browser: stored runs, a run's HTML report, two runs side by side,
a benchmark's trend.

- ``GET /``: every stored run, newest first, each linking to its report, a trend plot per
  benchmark, and a form that opens two runs as a comparison;
- ``GET /ui/runs/{id}``: the run's HTML report (the same page ``--verial-html`` writes, with
  the benchmark's trend plot);
- ``GET /ui/compare?base=ID&head=ID``: HEAD's report with BASE as its base (``verial html
  HEAD BASE``); ids are store refs (a session: ``latest``, ``latest~N``, ``ses_...``; a
  benchmark run: ``br_...``; :mod:`pytest_verial.store._repo_sessions`);
- ``GET /ui/benchmarks/{ref}``: the benchmark's trend over its newest runs.

The pages are an org key's (they show every run, evidence included, as ``verial html`` does
from the store). A browser signs in once at ``GET /ui/login`` with its key, which the server
sets as an ``HttpOnly``, ``SameSite=Strict`` cookie (never in a URL, never logged); a
``Authorization: Bearer`` header works too. Without a valid org key a page answers 401 with the
sign-in form; a solver key or a run token gets a 404, as for anything it may not see.

Signing in and out resist cross-site requests (issue 31: a page elsewhere could post the
sign-in form with its own key, and sign the browser in as someone else): every form that
changes state (``POST /ui/login``, ``POST /ui/logout``) must come as
``application/x-www-form-urlencoded`` (never ``text/plain``), from this server's own origin when
the browser says where it comes from (``Origin``, ``Sec-Fetch-Site``), and carry the token the
form was served with, which the browser also holds as an ``HttpOnly``, ``SameSite=Strict``
cookie no other site can read or send (a double-submitted token). Anything else is a 403 and
changes nothing.
"""

from __future__ import annotations

import hmac
import html
import secrets
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..reporting._html import render_html
from ..store import Store, StoreError
from ..store._index_html import PLOT_RUNS, render_index, trend_section
from ._keys import ApiKey, authenticate

COOKIE = "verial_key"
#: the sign-in and sign-out forms' token, double-submitted: a form field and this cookie
CSRF_COOKIE = "verial_form"
#: every page: no script but the report's own, nothing fetched, never cached, never framed
_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # no referrer to other sites; on this server's own form posts the browser then sends
    # their Origin (with no-referrer it sends "Origin: null", which the sign-in check refuses)
    "Referrer-Policy": "same-origin",
}
_LOGIN = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pytest-verial: sign in</title>
<style>body{{font:14px/1.45 system-ui,sans-serif;margin:40px;color:#1d2330}}
input{{font:inherit;padding:4px 8px;width:28em}}</style></head>
<body><h1>pytest-verial</h1><p>{message}</p>
<form method="post" action="/ui/login"><label>org key
<input type="password" name="key" autocomplete="off" required></label>
<input type="hidden" name="form_token" value="{token}">
<button type="submit">Sign in</button></form></body></html>
"""
_LOGOUT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>pytest-verial: sign out</title></head>
<body><h1>pytest-verial</h1><form method="post" action="/ui/logout">
<input type="hidden" name="form_token" value="{token}">
<button type="submit">Sign out</button></form></body></html>
"""
_COMPARE_FORM = """<section><h2>Compare two runs</h2><form method="get" action="/ui/compare">
<label>base <input name="base" placeholder="latest~1" required></label>
<label>head <input name="head" placeholder="latest" required></label>
<button type="submit">Open side by side</button></form></section>"""


def _page(body: str, status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={**_HEADERS, **(headers or {})})


def _with_token(template: str, status: int, **values: str) -> HTMLResponse:
    """A form page with a fresh token, in the page and in its cookie (see the module)."""
    token = secrets.token_urlsafe(32)
    answer = _page(template.format(token=token, **values), status)
    answer.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/ui")
    return answer


def _login_page(message: str, status: int = 401) -> HTMLResponse:
    return _with_token(_LOGIN, status, message=html.escape(message))


def _form(request: Request, body: bytes) -> tuple[dict[str, list[str]], str | None]:
    """A state-changing form's fields, and why it is refused as a cross-site request (None
    when it comes from this server's own page)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        return {}, "the form must be sent as application/x-www-form-urlencoded"
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return {}, f"a {site} request"
    origin = request.headers.get("origin")
    own = f"{request.url.scheme}://{request.url.netloc}"
    if origin is not None and origin != own:
        return {}, "a request from another origin"
    form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=5)
    sent = (form.get("form_token") or [""])[0]
    held = request.cookies.get(CSRF_COOKIE, "")
    if not sent or not held or not hmac.compare_digest(sent.encode(), held.encode()):
        return {}, "the form's token is missing or does not match (open the form again)"
    return form, None


def _refused(why: str) -> HTMLResponse:
    return _page(f"<p>refused: {html.escape(why)}; nothing changed</p>", 403)


def _viewer(request: Request, store: Store) -> ApiKey | HTMLResponse:
    """The org key of the request (cookie or Bearer header), or the page to answer instead."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    presented = token.strip() if scheme.lower() == "bearer" else request.cookies.get(COOKIE, "")
    if not presented:
        return _login_page("Sign in with an org key to see the stored runs.")
    try:
        key = authenticate(store, presented)
    except StoreError:
        return _page("<p>the results store is not reachable</p>", 503)
    if key is None:
        return _login_page("That key is unknown, revoked or expired.")
    if not key.org:
        return _page("<p>not found</p>", 404)
    return key


def install_views(app: FastAPI, store: Store) -> None:
    """Add the pages to ``app`` (kept out of /openapi.json: they answer HTML)."""

    @app.get("/", include_in_schema=False)
    def index(request: Request) -> Response:
        viewer = _viewer(request, store)
        if isinstance(viewer, Response):
            return viewer
        page = render_index(
            store,
            link=lambda run_id: f"/ui/runs/{run_id}",
            extra=_COMPARE_FORM,
            hint="a run's id opens its report",
            source="the results store",  # a page names no path of the server
        )
        return _page(page)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204, headers=_HEADERS)  # none: but no 404 in the console

    @app.get("/ui/login", include_in_schema=False)
    def login_form() -> Response:
        return _login_page("Sign in with an org key to see the stored runs.", 200)

    @app.post("/ui/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        # the form's fields, read here (FastAPI's Form needs python-multipart)
        form, cross_site = _form(request, await request.body())
        if cross_site is not None:
            return _refused(cross_site)
        key = (form.get("key") or [""])[0].strip()
        if not key or len(key) > 200:
            return _login_page("Give an org key.")
        try:
            found = await run_in_threadpool(authenticate, store, key)
        except StoreError:
            return _page("<p>the results store is not reachable</p>", 503)
        if found is None or not found.org:
            return _login_page("That is not an active org key.")
        answer = RedirectResponse("/", status_code=303, headers=_HEADERS)
        answer.set_cookie(
            COOKIE,
            key,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return answer

    @app.get("/ui/logout", include_in_schema=False)
    def logout_form() -> Response:
        return _with_token(_LOGOUT, 200)

    @app.post("/ui/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        _, cross_site = _form(request, await request.body())
        if cross_site is not None:
            return _refused(cross_site)
        answer = RedirectResponse("/ui/login", status_code=303, headers=_HEADERS)
        answer.delete_cookie(COOKIE, path="/")
        return answer

    @app.get("/ui/runs/{ref}", include_in_schema=False)
    def run_page(request: Request, ref: str) -> Response:
        viewer = _viewer(request, store)
        if isinstance(viewer, Response):
            return viewer
        try:  # a session (latest, latest~N, ses_...) or one benchmark run (br_...)
            found = store.resolve_ref(ref)
            report = store.report_of(found)
            ids = store.run_ids(found)
        except StoreError as exc:
            return _page(f"<p>{html.escape(str(exc))}</p>", 404)
        ref_of = report.benchmark_runs[0].benchmark.ref if len(ids) == 1 else None
        trend = (
            trend_section(ref_of, store.trend(ref_of, last=PLOT_RUNS, per_task=False), ids[0])
            if ref_of
            else ""
        )
        return _page(render_html(report, trend=trend))

    @app.get("/ui/compare", include_in_schema=False)
    def compare_page(
        request: Request,
        base: Annotated[str, Query(min_length=1, max_length=100)],
        head: Annotated[str, Query(min_length=1, max_length=100)],
    ) -> Response:
        viewer = _viewer(request, store)
        if isinstance(viewer, Response):
            return viewer
        try:
            head_report = store.report_of(store.resolve_ref(head))
            base_report = store.report_of(store.resolve_ref(base))
        except StoreError as exc:
            return _page(f"<p>{html.escape(str(exc))}</p>", 404)
        return _page(render_html(head_report, base_report))

    @app.get("/ui/benchmarks/{benchmark}", include_in_schema=False)
    def trend_page(request: Request, benchmark: str) -> Response:
        viewer = _viewer(request, store)
        if isinstance(viewer, Response):
            return viewer
        try:
            points = store.trend(benchmark, last=PLOT_RUNS, per_task=False)
        except StoreError as exc:
            return _page(f"<p>{html.escape(str(exc))}</p>", 503)
        if not points:
            return _page(f"<p>no stored run of {html.escape(benchmark)}</p>", 404)
        section = trend_section(benchmark, points, None)
        return _page(
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>trend: {html.escape(benchmark)}</title></head><body>{section}"
            '<p><a href="/">every run</a></p></body></html>\n'
        )
