"""The service's pages for a browser: stored runs, a run's HTML report, two runs side by side,
a benchmark's trend.

- ``GET /``: every stored run, newest first, each linking to its report and its benchmark's
  page, a form that opens two runs side by side, then a trend plot per benchmark;
- ``GET /ui/runs/{id}``: the run's HTML report (the same page ``--verial-html`` writes: what
  failed first, then the runs, then the benchmark's trend plot);
- ``GET /ui/compare?base=REF&head=REF``: the two side by side down to criteria, regressions
  first (:mod:`pytest_verial._ui._compare_html`, ``verial compare``'s comparison); refs are
  store refs (a session: ``latest``, ``latest~N``, ``ses_...``, every benchmark run paired;
  a benchmark run: ``br_...``; :mod:`pytest_verial.store._repo_sessions`);
- ``GET /ui/benchmarks/{ref}``: the benchmark's trend over its newest runs.

Every page has a way back to the index and, signed in, the sign-out form; a ref that names
nothing is a page saying so, with the way back.

``verial view`` (:mod:`pytest_verial._commands.view`) installs the same pages ``keyless``: no
sign-in, no sign-out, nothing but these GET pages, for 127.0.0.1 only.

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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from .._ui._compare_html import render_compare
from .._ui._index_html import PLOT_RUNS, benchmark_page, nav_bar, page, render_index, trend_section
from ..reporting._html import render_html
from ..store import Store, StoreError
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
#: the sign-in and sign-out forms (in the pages' shell: :func:`page`)
_LOGIN = """<section><p>{message}</p>
<form method="post" action="/ui/login"><label>org key
<input type="password" name="key" autocomplete="off" required style="width:28em"></label>
<input type="hidden" name="form_token" value="{token}">
<button type="submit">Sign in</button></form></section>"""
_LOGOUT = """<section><form method="post" action="/ui/logout">
<input type="hidden" name="form_token" value="{token}">
<button type="submit">Sign out</button></form></section>"""
_COMPARE_FORM = """<section><h2>Compare two runs</h2><form method="get" action="/ui/compare">
<label>base <input name="base" placeholder="latest~1" required></label>
<label>head <input name="head" placeholder="latest" required></label>
<button type="submit">Open side by side</button></form></section>"""


def _page(body: str, status: int = 200, headers: dict[str, str] | None = None) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={**_HEADERS, **(headers or {})})


def _with_token(template: str, status: int, title: str, **values: str) -> HTMLResponse:
    """A form page with a fresh token, in the page and in its cookie (see the module)."""
    token = secrets.token_urlsafe(32)
    answer = _page(page(title, template.format(token=token, **values)), status)
    answer.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/ui")
    return answer


def _login_page(message: str, status: int = 401) -> HTMLResponse:
    return _with_token(_LOGIN, status, "pytest-verial: sign in", message=html.escape(message))


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
    try:
        form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=5)
    except ValueError:  # over max_num_fields: no form of ours has that many
        return {}, "the form has more fields than the sign-in form"
    sent = (form.get("form_token") or [""])[0]
    held = request.cookies.get(CSRF_COOKIE, "")
    if not sent or not held or not hmac.compare_digest(sent.encode(), held.encode()):
        return {}, "the form's token is missing or does not match (open the form again)"
    return form, None


def _nav_token(request: Request) -> str:
    """The sign-out form's token: the one the browser holds (two tabs keep working), else new."""
    held = request.cookies.get(CSRF_COOKIE, "")
    return held if 20 <= len(held) <= 100 and held.isascii() else secrets.token_urlsafe(32)


def _refused(why: str) -> HTMLResponse:
    body = (
        f"<section><p>refused: {html.escape(why)}; nothing changed</p>"
        '<p><a href="/">back to every stored run</a></p></section>'
    )
    return _page(page("pytest-verial", body), 403)


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


@dataclass(frozen=True)
class _Pages:
    """The pages over ``store``; ``keyless``: see :func:`install_views`. Each page method
    answers the sign-in page instead when the request has no org key."""

    store: Store
    keyless: bool

    def viewer(self, request: Request) -> ApiKey | HTMLResponse | None:
        return None if self.keyless else _viewer(request, self.store)

    def answer(self, request: Request, build: Callable[[str], str], status: int = 200) -> Response:
        """A page whose header holds the way back and, signed in, the sign-out form (its
        token also set as the form's cookie)."""
        if self.keyless:
            return _page(build(nav_bar()), status)
        token = _nav_token(request)
        response = _page(build(nav_bar(sign_out=token)), status)
        response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", path="/ui")
        return response

    def problem(self, request: Request, message: str, status: int) -> Response:
        """A ref that names nothing, an unreachable store: a page saying so, with the way back."""
        body = (
            f'<section class="problem"><h2>{html.escape(message)}</h2>'
            '<p><a href="/">back to every stored run</a></p></section>'
        )
        return self.answer(request, lambda nav: page("pytest-verial", body, nav=nav), status)

    def index(self, request: Request) -> Response:
        found = self.viewer(request)
        if isinstance(found, Response):
            return found
        return self.answer(
            request,
            lambda nav: render_index(
                self.store,
                link=lambda run_id: f"/ui/runs/{run_id}",
                extra=_COMPARE_FORM,
                hint="a run's id opens its report, a benchmark its trend",
                source="the results store",  # a page names no path of the server
                nav=nav,
                bench_link=benchmark_page,
            ),
        )

    def run(self, request: Request, ref: str) -> Response:
        found = self.viewer(request)
        if isinstance(found, Response):
            return found
        store = self.store
        try:  # a session (latest, latest~N, ses_...) or one benchmark run (br_...)
            resolved = store.resolve_ref(ref)
            report = store.report_of(resolved)
            ids = store.run_ids(resolved)
        except StoreError as exc:
            return self.problem(request, str(exc), 404)
        ref_of = report.benchmark_runs[0].benchmark.ref if len(ids) == 1 else None
        trend = (
            trend_section(
                ref_of,
                store.trend(ref_of, last=PLOT_RUNS, per_task=False),
                ids[0],
                benchmark_page(ref_of),
            )
            if ref_of
            else ""
        )
        return self.answer(request, lambda nav: render_html(report, trend=trend, nav=nav))

    def compare(self, request: Request, base: str, head: str) -> Response:
        found = self.viewer(request)
        if isinstance(found, Response):
            return found
        store = self.store
        try:
            sides = [store.resolve_ref(ref) for ref in (base, head)]
            reports = [store.report_of(ref) for ref in sides]
            # a benchmark run's id in its report -> in the store (both in the session's order)
            stored = [
                dict(zip((b.id for b in r.benchmark_runs), store.run_ids(ref), strict=False))
                for r, ref in zip(reports, sides, strict=True)
            ]
        except StoreError as exc:
            return self.problem(request, f"cannot compare {base} with {head}: {exc}", 404)
        return self.answer(
            request,
            lambda nav: render_compare(
                reports[0], reports[1], (base, head), nav=nav, stored=(stored[0], stored[1])
            ),
        )

    def trend(self, request: Request, benchmark: str) -> Response:
        found = self.viewer(request)
        if isinstance(found, Response):
            return found
        try:
            points = self.store.trend(benchmark, last=PLOT_RUNS, per_task=False)
        except StoreError as exc:
            return self.problem(request, str(exc), 503)
        if not points:
            return self.problem(request, f"no stored run of {benchmark}", 404)
        runs = "".join(
            f'<li><a href="/ui/runs/{html.escape(p.id)}"><code>{html.escape(p.id)}</code></a> '
            f"{p.created_at:%Y-%m-%d %H:%M} "
            f"{'no score' if p.score is None else f'{p.score:.3f}'}</li>"
            for p in reversed(points)
        )
        body = (
            f"{trend_section(benchmark, points, None)}"
            f"<section><h2>Runs, newest first</h2><ul>{runs}</ul></section>"
        )
        return self.answer(request, lambda nav: page(f"trend: {benchmark}", body, nav=nav))


def install_views(app: FastAPI, store: Store, *, keyless: bool = False) -> None:
    """Add the pages to ``app`` (kept out of /openapi.json: they answer HTML). ``keyless``
    (``verial view``): every page for anyone who reaches the server, no sign-in or sign-out
    routes (the caller binds 127.0.0.1 only)."""
    pages = _Pages(store, keyless)

    @app.get("/", include_in_schema=False)
    def index(request: Request) -> Response:
        return pages.index(request)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204, headers=_HEADERS)  # none: but no 404 in the console

    if not keyless:
        _install_sign_in(app, store)

    @app.get("/ui/runs/{ref}", include_in_schema=False)
    def run_page(request: Request, ref: str) -> Response:
        return pages.run(request, ref)

    @app.get("/ui/compare", include_in_schema=False)
    def compare_page(
        request: Request,
        base: Annotated[str, Query(min_length=1, max_length=100)],
        head: Annotated[str, Query(min_length=1, max_length=100)],
    ) -> Response:
        return pages.compare(request, base, head)

    @app.get("/ui/benchmarks/{benchmark}", include_in_schema=False)
    def trend_page(request: Request, benchmark: str) -> Response:
        return pages.trend(request, benchmark)


def _install_sign_in(app: FastAPI, store: Store) -> None:
    """The sign-in and sign-out forms and their posts (see the module: CSRF)."""

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
        return _with_token(_LOGOUT, 200, "pytest-verial: sign out")

    @app.post("/ui/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        _, cross_site = _form(request, await request.body())
        if cross_site is not None:
            return _refused(cross_site)
        answer = RedirectResponse("/ui/login", status_code=303, headers=_HEADERS)
        answer.delete_cookie(COOKIE, path="/")
        return answer
