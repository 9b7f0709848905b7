"""A live FHIR R4 server as the ``fhir`` source (docs/fhir.md, "Live server").

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
        concurrency: 8     # searches of one task run sent at once; 1: one after another

Each distinct search is sent once per task run and its pages kept, so criteria that share a
search share its requests; later pages are fetched only when a criterion needs more than the
first (``match: any/all/none``, ``count``). When the source is first searched, the distinct
searches of every criterion of the task run this session runs (``planner``) are sent at once,
``concurrency`` at a time, in the order the criteria need them
(:mod:`pytest_verial._sandbox_io.prefetch`); each criterion waits only for its own search, and an
error stays with the search that met it. Tokens are fetched and refreshed once, whichever
thread needs them. Failures are :class:`SourceError` naming the URL and the cause; a search
the server rejects (400) is a :class:`~pytest_verial._errors.CheckError` with its diagnostics.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urljoin

from .._errors import CriterionError, SourceError
from .._sandbox_io.deadline import Deadline
from .._sandbox_io.prefetch import Prefetch, ahead
from .._secrets import register
from ._answers import fhir_json, google_token, retry_after
from ._index import SearchResult
from ._query import Query
from ._settings import AUTH_KINDS, DEFAULT_CONCURRENCY, check_settings, env_value, number_setting

#: the searches a task run's criteria will send: (query, whether every page is needed)
Planner = Callable[[], list[tuple[Query, bool]]]


@dataclass
class _Search:
    """The pages of one search fetched so far; ``lock`` is held while pages are fetched."""

    resources: list[dict[str, Any]] = field(default_factory=list)
    total: int | None = None
    next_url: str | None = None
    pages: int = 0
    error: CriterionError | None = None
    #: pages read before ``error``: a criterion needing only the first page still scores
    error_after: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)


class _Closed(SourceError):
    """A request refused because the task run's prefetch was being cancelled."""


class LiveFhir:
    """Searches sent to a FHIR REST server, cached per task run."""

    kind = "live"

    def __init__(self, settings: dict[str, Any], where: str = "run.yaml") -> None:
        settings = check_settings(settings, where)
        base = settings.get("base_url") or settings.get("fhir_base_url")
        if settings.get("base_url_env"):
            base = env_value(settings, "base_url")
        if not base:
            raise SourceError("sources.fhir: base_url (or base_url_env) is required")
        self.base_url = str(base).rstrip("/") + "/"
        self.settings = settings
        self.timeout = number_setting(settings, "timeout", 10.0, float, positive=True)
        self.retries = number_setting(settings, "retries", 3, int)
        self.backoff = number_setting(settings, "backoff", 0.5, float)
        self.max_pages = number_setting(settings, "max_pages", 50, int, positive=True)
        self.validate_params = bool(settings.get("validate_params", True))
        self.auth = str(settings.get("auth") or self._infer_auth())
        if self.auth not in AUTH_KINDS:
            raise SourceError(f"sources.fhir.auth must be one of {', '.join(AUTH_KINDS)}")
        self.deadline = Deadline(
            float(settings.get("deadline", 60)),
            f"FHIR server {self.base_url}",
            "sources.fhir.deadline",
        )
        self.concurrency = int(settings.get("concurrency") or DEFAULT_CONCURRENCY)
        #: the task run's searches, sent at once on the first search (set by the sandbox)
        self.planner: Planner | None = None
        self.requests_sent = 0
        self._token: str | None = None
        self._token_expires = 0.0
        self._searches: dict[str, _Search] = {}
        self._lock = threading.Lock()  # the search table, the client, the counter
        self._token_lock = threading.Lock()  # one token request at a time, not one per thread
        self._client: Any = None
        self._planned = False
        self._prefetch: Prefetch | None = None
        self._stop = threading.Event()  # set by close: no new request, no retry sleep

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
        with self._lock:
            if self._client is None:
                httpx = _httpx()
                self._client = httpx.Client(timeout=self.timeout, follow_redirects=True)
            return self._client

    def _sent(self) -> None:
        with self._lock:
            self.requests_sent += 1

    def settle(self) -> None:
        """The task run ended: cancel the searches not started and wait for those under way
        (no retry once settling). The source stays usable, one request at a time."""
        prefetch, self._prefetch = self._prefetch, None
        if prefetch is not None:
            self._stop.set()
            prefetch.close()
            self._stop = threading.Event()

    def close(self) -> None:
        """:meth:`settle`, then close the connection pool."""
        self.settle()
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _bearer(self, refresh: bool = False, stale: str | None = None) -> str | None:
        """The bearer token; ``refresh`` replaces ``stale`` (once, whichever thread asks)."""
        if self.auth == "none":
            return None
        if self.auth == "bearer":
            if self.settings.get("token") is not None:
                raise SourceError("sources.fhir: give the token as token_env, never as a value")
            return env_value(self.settings, "token")
        with self._token_lock:
            if refresh and self._token is not None and self._token != stale:
                return self._token  # another thread refreshed it meanwhile
            if not refresh and self._token and time.monotonic() < self._token_expires - 30:
                return self._token
            if self.auth == "google":
                self._token, lifetime = google_token()
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
            "client_id": env_value(self.settings, "client_id") or "",
            "client_secret": env_value(self.settings, "client_secret") or "",
        }
        if self.settings.get("scope"):
            form["scope"] = str(self.settings["scope"])
        try:
            budget = self.deadline.budget(self.timeout)
            self._sent()
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
            if self._stop.is_set():
                raise _Closed(f"FHIR server {self.base_url}: source closed; GET {url} not sent")
            token = self._bearer()
            if token:
                headers["Authorization"] = f"Bearer {token}"
            budget = self.deadline.budget(self.timeout)
            try:
                self._sent()
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
                self._bearer(refresh=True, stale=token)
                continue
            if (status == 429 or status >= 500) and attempt < self.retries:
                attempt += 1
                self._sleep(retry_after(response) or self.backoff * 2 ** (attempt - 1))
                continue
            return fhir_json(url, response)

    def _sleep(self, seconds: float) -> None:
        """Back off before a retry, never past the deadline (then the retry is refused)."""
        self._stop.wait(self.deadline.cap(seconds))

    # --- searching -------------------------------------------------------------------------

    def search(self, query: Query, need_all: bool = True) -> SearchResult:
        """Matches of ``query``; only the first page unless ``need_all``."""
        self._start_prefetch()
        key = query.url_path()
        if self._prefetch is not None:
            self._prefetch.claim(key)  # not started: sent here; else wait for its lock below
        state = self._state(key)
        with state.lock:
            self._load(query, state, need_all)
            if need_all:
                self._complete_or_raise(query, state)
            resources = list(state.resources)
            total = state.total if state.total is not None else len(resources)
        if query.count is not None:
            resources = resources[: query.count]
        return SearchResult(resources, total)

    def _state(self, key: str) -> _Search:
        with self._lock:
            return self._searches.setdefault(key, _Search())

    def _load(self, query: Query, state: _Search, need_all: bool) -> None:
        """Fetch what ``need_all`` asks and is not fetched yet (``state.lock`` held)."""
        if state.error is not None:
            if need_all or state.error_after == 0:
                raise state.error
            return  # a later page failed; the first is still good for match: first
        try:
            if state.pages == 0:
                self._fetch(query, urljoin(self.base_url, query.url_path()), state)
            while (
                need_all
                and state.next_url
                and state.pages < self.max_pages
                and (query.count is None or len(state.resources) < query.count)
            ):
                self._fetch(query, state.next_url, state)
        except _Closed:
            raise  # not the search's fault: a criterion asking later sends the rest itself
        except CriterionError as exc:
            state.error, state.error_after = exc, state.pages
            raise
        except Exception as exc:  # an answer the checks of _fetch let through, half read
            state.error, state.error_after = _odd(self.base_url, query, exc), 0
            raise state.error from None

    def _start_prefetch(self) -> None:
        """On the first search: send the task run's planned searches at once (once)."""
        if self._planned:
            return
        with self._lock:
            if self._planned:
                return
            self._planned = True
        if self.planner is None or self.concurrency <= 1:
            return
        wanted: dict[str, tuple[Query, bool]] = {}
        try:
            planned = self.planner()
        except Exception:  # only a head start: each criterion still sends its own search
            return
        for query, need_all in planned:
            old = wanted.get(query.url_path())
            wanted[query.url_path()] = (query, need_all or (old is not None and old[1]))
        jobs = {
            key: partial(self._prefetch_one, query, need_all)
            for key, (query, need_all) in wanted.items()
        }
        self._prefetch = ahead(jobs, self.concurrency, "verial-fhir")

    def _prefetch_one(self, query: Query, need_all: bool) -> None:
        """One planned search, sent by a worker; its error is kept for its criteria."""
        state = self._state(query.url_path())
        # an error is raised again to each criterion that needs this search
        with state.lock, contextlib.suppress(CriterionError):
            self._load(query, state, need_all)

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


def _odd(base_url: str, query: Query, exc: Exception) -> SourceError:
    """One line for an answer that broke reading it (never a traceback)."""
    return SourceError(
        f"FHIR search {query.text()} on {base_url}: unreadable answer ({type(exc).__name__}: {exc})"
    )
