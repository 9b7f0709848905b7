"""A live FHIR R4 server as the ``fhir`` source (DESIGN §3.3).

Settings come from ``run.yaml`` (``sources.fhir``); secrets only as names of environment
variables::

    sources:
      fhir:
        base_url: https://fhir.example.org/r4        # or base_url_env / fhir_base_url
        auth: client_credentials                    # none | bearer | client_credentials | google
        token_url: https://auth.example.org/token
        client_id_env: FHIR_CLIENT_ID               # or client_id (not a secret)
        client_secret_env: FHIR_CLIENT_SECRET
        # bearer: token_env: FHIR_TOKEN
        timeout: 10        # seconds per request
        deadline: 60       # seconds for all requests of one task run (tokens, pages, retries)
        retries: 3         # on 429 and 5xx, with exponential backoff (Retry-After honoured)
        max_pages: 50      # pages read at most; a check needing every result errs beyond

Each distinct search is sent once per task run and its pages kept, so criteria that share a
search share its requests; later pages are fetched only when a criterion needs more than the
first (``match: any/all/none``, ``count``). Failures are :class:`SourceError` naming the URL and
the cause; a search the server rejects (400) is a :class:`CheckError` with its diagnostics.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from ..errors import CheckError, CriterionError, SourceError
from ..secrets import register, register_setting
from ..sources.deadline import Deadline
from .index import SearchResult
from .query import Query
from .settings import AUTH_KINDS, check_settings

GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass
class _Search:
    """The pages of one search fetched so far."""

    resources: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    next_url: str | None = None
    pages: int = 0
    error: CriterionError | None = None


def _env(settings: dict[str, Any], key: str, required: bool = True) -> str | None:
    """``key`` itself (non-secret) or the variable named by ``key_env`` (masked in every
    artifact when it holds a secret: :func:`~pytest_verial.secrets.is_secret_setting`)."""
    name = settings.get(f"{key}_env")
    if name:
        value = register_setting(f"{key}_env", os.environ.get(str(name)))
        if not value and required:
            raise SourceError(f"sources.fhir.{key}_env: environment variable ${name} is not set")
        return value
    value = settings.get(key)
    if value is None and required:
        raise SourceError(f"sources.fhir: {key} or {key}_env is required")
    return None if value is None else str(value)


def _setting(
    settings: dict[str, Any], key: str, default: Any, kind: type, positive: bool = False
) -> Any:
    """A number from ``sources.fhir``: finite, not negative (or > 0 when ``positive``)."""
    value = settings.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if ok and kind is int:
        ok = float(value).is_integer()
    if not ok or value < 0 or (positive and value == 0):
        wanted = "a positive" if positive else "a non-negative"
        noun = "integer" if kind is int else "number"
        raise SourceError(f"run.yaml sources.fhir.{key}: expected {wanted} {noun}, got {value!r}")
    return kind(value)


class LiveFhir:
    """Searches sent to a FHIR REST server, cached per task run."""

    kind = "live"

    def __init__(self, settings: dict[str, Any], where: str = "run.yaml") -> None:
        settings = check_settings(settings, where)
        base = settings.get("base_url") or settings.get("fhir_base_url")
        if settings.get("base_url_env"):
            base = _env(settings, "base_url")
        if not base:
            raise SourceError("sources.fhir: base_url (or base_url_env) is required")
        self.base_url = str(base).rstrip("/") + "/"
        self.settings = settings
        self.timeout = _setting(settings, "timeout", 10.0, float, positive=True)
        self.retries = _setting(settings, "retries", 3, int)
        self.backoff = _setting(settings, "backoff", 0.5, float)
        self.max_pages = _setting(settings, "max_pages", 50, int, positive=True)
        self.validate_params = bool(settings.get("validate_params", True))
        self.auth = str(settings.get("auth") or self._infer_auth())
        if self.auth not in AUTH_KINDS:
            raise SourceError(f"sources.fhir.auth must be one of {', '.join(AUTH_KINDS)}")
        self.deadline = Deadline(
            float(settings.get("deadline", 60)),
            f"FHIR server {self.base_url}",
            "sources.fhir.deadline",
        )
        self.requests_sent = 0
        self._token: str | None = None
        self._token_expires = 0.0
        self._searches: dict[str, _Search] = {}
        self._lock = threading.Lock()
        self._client: Any = None

    def _infer_auth(self) -> str:
        if self.settings.get("token_url"):
            return "client_credentials"
        if self.settings.get("token_env") or self.settings.get("token"):
            return "bearer"
        return "none"

    def describe(self) -> str:
        """The server's base URL, for messages."""
        return self.base_url

    # --- HTTP ------------------------------------------------------------------------------

    def _http(self) -> Any:
        if self._client is None:
            httpx = _httpx()
            self._client = httpx.Client(timeout=self.timeout, follow_redirects=True)
        return self._client

    def close(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _bearer(self, refresh: bool = False) -> str | None:
        if self.auth == "none":
            return None
        if self.auth == "bearer":
            if self.settings.get("token") is not None:
                raise SourceError("sources.fhir: give the token as token_env, never as a value")
            return _env(self.settings, "token")
        if not refresh and self._token and time.monotonic() < self._token_expires - 30:
            return self._token
        if self.auth == "google":
            self._token, lifetime = _google_token()
        else:
            self._token, lifetime = self._client_credentials()
        self._token_expires = time.monotonic() + lifetime
        return self._token

    def _client_credentials(self) -> tuple[str, float]:
        httpx = _httpx()
        token_url = str(self.settings.get("token_url"))
        if self.settings.get("client_secret") is not None:
            raise SourceError(
                "sources.fhir: give the client secret as client_secret_env, never as a value"
            )
        form = {
            "grant_type": "client_credentials",
            "client_id": _env(self.settings, "client_id") or "",
            "client_secret": _env(self.settings, "client_secret") or "",
        }
        if self.settings.get("scope"):
            form["scope"] = str(self.settings["scope"])
        try:
            budget = self.deadline.budget(self.timeout)
            self.requests_sent += 1
            response = self._http().post(
                token_url, data=form, headers={"Accept": "application/json"}, timeout=budget
            )
        except httpx.TimeoutException:
            if self.deadline.passed():
                raise self.deadline.error() from None
            raise SourceError(
                f"token endpoint {token_url} did not answer within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            raise SourceError(f"token endpoint {token_url} unreachable: {exc}") from None
        if response.status_code != 200:
            raise SourceError(
                f"token endpoint {token_url} refused the client credentials "
                f"(HTTP {response.status_code})"
            )
        try:
            body = response.json()
            token = str(register(str(body["access_token"])))
            return token, float(body.get("expires_in", 300))
        except (ValueError, KeyError, TypeError):
            raise SourceError(
                f"token endpoint {token_url} answered without an access_token"
            ) from None

    def _get(self, url: str) -> dict[str, Any]:
        """GET one URL with auth, retries on 429/5xx/timeouts, and FHIR JSON checks."""
        httpx = _httpx()
        headers = {"Accept": "application/fhir+json"}
        refreshed = False
        attempt = 0
        while True:
            token = self._bearer()
            if token:
                headers["Authorization"] = f"Bearer {token}"
            budget = self.deadline.budget(self.timeout)
            try:
                self.requests_sent += 1
                response = self._http().get(url, headers=headers, timeout=budget)
            except httpx.TimeoutException:
                if self.deadline.passed():
                    raise self.deadline.error() from None
                if attempt < self.retries:
                    attempt += 1
                    self._sleep(self.backoff * 2 ** (attempt - 1))
                    continue
                raise SourceError(
                    f"FHIR server did not answer GET {url} within {self.timeout:g} s "
                    f"({attempt + 1} attempts)"
                ) from None
            except httpx.HTTPError as exc:
                raise SourceError(f"FHIR server unreachable: GET {url}: {exc}") from None
            status = response.status_code
            if status == 401 and self.auth in ("client_credentials", "google") and not refreshed:
                refreshed = True
                self._bearer(refresh=True)
                continue
            if (status == 429 or status >= 500) and attempt < self.retries:
                attempt += 1
                self._sleep(_retry_after(response) or self.backoff * 2 ** (attempt - 1))
                continue
            return _fhir_json(url, response)

    def _sleep(self, seconds: float) -> None:
        """Back off before a retry, never past the deadline (then the retry is refused)."""
        time.sleep(self.deadline.cap(seconds))

    # --- searching -------------------------------------------------------------------------

    def search(self, query: Query, need_all: bool = True) -> SearchResult:
        """Matches of ``query``; only the first page unless ``need_all``."""
        key = query.url_path()
        with self._lock:
            state = self._searches.setdefault(key, _Search())
            if state.error is not None:
                raise state.error
            try:
                if state.pages == 0:
                    self._fetch(query, urljoin(self.base_url, key), state)
                while (
                    need_all
                    and state.next_url
                    and state.pages < self.max_pages
                    and (query.count is None or len(state.resources) < query.count)
                ):
                    self._fetch(query, state.next_url, state)
            except CriterionError as exc:
                state.error = exc
                raise
            if need_all:
                self._complete_or_raise(query, state)
        resources = list(state.resources)
        total = state.total if state.total is not None else len(resources)
        if query.count is not None:
            resources = resources[: query.count]
        return SearchResult(resources, total)

    def _complete_or_raise(self, query: Query, state: _Search) -> None:
        """Refuse to answer from a partial result when paging stopped at ``max_pages``.

        A check that needs every result (``any``, ``all``, ``none``, ``count``) scored on the
        pages read so far would pass silently on data it never saw (docs/fhir.md, Sources).
        The search itself stays cached: ``match: first`` still uses its first page.
        """
        read = len(state.resources)
        if not state.next_url or (query.count is not None and read >= query.count):
            return
        if state.total is not None and read >= state.total:
            return
        of = (
            f"read {read} of {state.total} results"
            if state.total is not None
            else f"read {read} results, of at least {read + 1}; more pages remained"
        )
        raise SourceError(
            f"FHIR search {query.text()} on {self.base_url} stopped at max_pages "
            f"{self.max_pages} before the last page: {of}; raise sources.fhir.max_pages "
            "or narrow the search"
        )

    def _fetch(self, query: Query, url: str, state: _Search) -> None:
        bundle = self._get(url)
        if bundle.get("resourceType") != "Bundle":
            raise SourceError(f"GET {url}: expected a Bundle, got {bundle.get('resourceType')!r}")
        state.pages += 1
        if isinstance(bundle.get("total"), int):
            state.total = bundle["total"]
        entries = bundle.get("entry")
        links = bundle.get("link")
        if not isinstance(entries, (list, type(None))) or not isinstance(links, (list, type(None))):
            raise SourceError(f"GET {url}: Bundle.entry and Bundle.link must be lists")
        for entry in entries or []:
            resource = entry.get("resource") if isinstance(entry, dict) else None
            mode = (entry.get("search") or {}).get("mode") if isinstance(entry, dict) else None
            if (
                isinstance(resource, dict)
                and mode != "include"
                and (resource.get("resourceType") == query.resource_type)
            ):
                state.resources.append(resource)
        state.next_url = next(
            (
                link.get("url")
                for link in links or []
                if isinstance(link, dict)
                and link.get("relation") == "next"
                and isinstance(link.get("url"), str)
            ),
            None,
        )
        if state.next_url:
            state.next_url = urljoin(url, state.next_url)


def _httpx() -> Any:
    try:
        import httpx
    except ImportError:
        raise SourceError(
            "a live FHIR source needs httpx: pip install 'pytest-verial[live]'"
        ) from None
    return httpx


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(float(value), 30.0) if value is not None else None
    except ValueError:
        return None


def _fhir_json(url: str, response: Any) -> dict[str, Any]:
    status = response.status_code
    ctype = response.headers.get("content-type", "")
    body: Any = None
    if "json" in ctype:
        try:
            body = response.json()
        except ValueError:
            raise SourceError(f"GET {url}: HTTP {status} with invalid JSON") from None
    if status >= 400 or body is None:
        diagnostics = _diagnostics(body) if isinstance(body, dict) else ""
        if body is None and status < 400:
            snippet = " ".join(response.text[:80].split())
            raise SourceError(
                f"GET {url}: answered {ctype or 'no content type'}, not FHIR JSON "
                f"(HTTP {status}: {snippet!r})"
            )
        message = f"GET {url}: HTTP {status}" + (f": {diagnostics}" if diagnostics else "")
        if status == 400:
            raise CheckError(f"the FHIR server rejected the search: {message}")
        if status in (401, 403):
            raise SourceError(f"authentication failed: {message}")
        raise SourceError(message)
    if not isinstance(body, dict):
        raise SourceError(f"GET {url}: expected a JSON object")
    return body


def _diagnostics(body: dict[str, Any]) -> str:
    if body.get("resourceType") != "OperationOutcome":
        return ""
    texts = [
        str(i.get("diagnostics") or (i.get("details") or {}).get("text") or i.get("code"))
        for i in body.get("issue") or []
        if isinstance(i, dict)
    ]
    return "; ".join(texts)[:500]


def _google_token() -> tuple[str, float]:
    """An access token from Google application default credentials (Cloud Healthcare API)."""
    try:
        import google.auth
        import google.auth.transport.requests
    except ImportError:
        raise SourceError(
            "sources.fhir.auth google needs google-auth and requests "
            "(pip install 'pytest-verial[gcp]')"
        ) from None
    try:
        credentials, _ = google.auth.default(scopes=[GOOGLE_SCOPE])
        credentials.refresh(google.auth.transport.requests.Request())  # type: ignore[no-untyped-call]
    except Exception as exc:  # google-auth raises several unrelated types
        raise SourceError(
            f"Google default credentials unusable: {type(exc).__name__}: {exc}"
        ) from None
    return str(register(str(credentials.token))), 3000.0
