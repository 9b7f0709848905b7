"""The files source of a live sandbox: GCS objects under the sandbox's SFTP prefix.

One paged listing (``list_blobs`` with ``prefix="<prefix>/"``, so ``sandbox-1`` never sees
``sandbox-10``) per task run, shared by all its criteria; each object is downloaded only when a
criterion reads its content, at most once. Credentials are Google's default credentials, or
none against an emulator (``endpoint`` in the settings, or ``STORAGE_EMULATOR_HOST``).
google-cloud-storage is imported here only, on first use (``pip install 'pytest-verial[gcp]'``).

All requests of one task run share ``deadline`` (default 60 s): each request's timeout is cut
to what is left, and once it has passed every further listing or read is a one-line
:class:`SourceError` naming the bucket, with nothing sent.

Every HTTP request is counted in :attr:`GCSFiles.requests` (a transport adapter on the session, per
thread), which the tests and ``bench/files.py`` use to prove the one-listing rule.

Once listed, the objects the task run's criteria will certainly read (``planner``, asking each
assertion that is :class:`ReadsAhead`: for an ``sftp-file-present``
criterion that checks content and whose count is within its bounds, the
first matching object, which the check always reads) are downloaded at once, ``concurrency``
at a time (:mod:`pytest_verial._sandbox_io.prefetch`); a criterion waits only for the objects it
reads, and a failed download is that criterion's error.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol, runtime_checkable

from ..._errors import SourceError
from ..._sandbox_io.deadline import Deadline
from ..._sandbox_io.prefetch import Prefetch, ahead
from .base import DEFAULT_MAX_READ_BYTES, BaseFilesSource, FileEntry

#: objects of one task run downloaded at once (``sources.files.concurrency``); 1: one at a time
DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 64

_READ_ONLY = "https://www.googleapis.com/auth/devstorage.read_only"
_CLIENTS: dict[tuple[str | None, str | None], tuple[Any, _Counter]] = {}
_CLIENTS_LOCK = threading.Lock()


class _Counter(threading.local):
    """Requests sent by the current thread (a source measures its own by difference)."""

    sent = 0


def _make_client(emulator: str | None, project: str | None, where: str) -> tuple[Any, _Counter]:
    """A storage client and its request counter (bumped by the transport, per thread)."""
    try:
        import requests
        import requests.adapters
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage  # type: ignore[import-untyped]
    except ImportError as exc:
        raise SourceError(
            f"reading {where} needs google-cloud-storage (pip install 'pytest-verial[gcp]'): {exc}"
        ) from None
    if emulator:
        if "://" not in emulator:
            emulator = f"http://{emulator}"
        session: Any = requests.Session()
        credentials: Any = AnonymousCredentials()  # type: ignore[no-untyped-call]
    else:
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError
        from google.auth.transport.requests import AuthorizedSession

        try:
            credentials, default_project = google.auth.default(scopes=[_READ_ONLY])
        except DefaultCredentialsError as exc:
            raise SourceError(
                f"{where}: no Google default credentials ({exc}); set "
                "GOOGLE_APPLICATION_CREDENTIALS or use an emulator"
            ) from None
        project = project or default_project
        session = AuthorizedSession(credentials)  # type: ignore[no-untyped-call]
    counter = _Counter()

    class CountingAdapter(requests.adapters.HTTPAdapter):
        """Counts every HTTP request actually sent (retries included)."""

        def send(self, *args: Any, **kwargs: Any) -> Any:
            counter.sent += 1
            return super().send(*args, **kwargs)

    for scheme in ("http://", "https://"):  # connections for every thread of a full pool
        session.mount(scheme, CountingAdapter(pool_maxsize=MAX_CONCURRENCY))
    client = storage.Client(
        project=project or "<none>",
        credentials=credentials,
        client_options={"api_endpoint": emulator} if emulator else None,
        _http=session,
    )
    # google-cloud-storage 3.x starts a background thread that GETs the bucket's metadata for
    # trace attributes on the first call naming a bucket: an extra request per client, denied
    # to read-only (objectViewer) credentials. Scoring needs none of it.
    if getattr(client, "_bucket_metadata_cache", None) is not None:
        client._bucket_metadata_cache = None
    return client, counter


class GCSFiles(BaseFilesSource):
    """Objects under ``gs://<bucket>/<prefix>/``."""

    def __init__(
        self,
        bucket: str,
        prefix: str,
        *,
        endpoint: str | None = None,
        project: str | None = None,
        timeout: float = 30.0,
        page_size: int = 1000,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        deadline: float = 60.0,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        super().__init__(max_read_bytes)
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.endpoint = endpoint
        self.project = project
        self.timeout = timeout
        self.page_size = page_size
        #: shared by every request of one task run (listing pages, downloads, retries)
        self.deadline = Deadline(deadline, self.describe(), "sources.files.deadline")
        self.requests = 0
        self.list_pages = 0
        self.concurrency = concurrency
        #: the assertions of the task run's criteria, for reading ahead (set by the sandbox)
        self.planner: Callable[[], Sequence[Any]] | None = None
        self._client: Any = None
        self._counter: _Counter | None = None
        self._planned = False
        self._prefetch: Prefetch | None = None

    @property
    def list_prefix(self) -> str:
        """The prefix sent to the listing: always ending with ``/`` (or empty: whole bucket)."""
        return f"{self.prefix}/" if self.prefix else ""

    def describe(self) -> str:
        return f"gs://{self.bucket}/{self.list_prefix}"

    def client(self) -> Any:
        """The storage client, shared by every source of this process with the same endpoint."""
        if self._client is None:
            emulator = self.endpoint or os.environ.get("STORAGE_EMULATOR_HOST")
            key = (emulator, self.project)
            with _CLIENTS_LOCK:
                if key not in _CLIENTS:
                    _CLIENTS[key] = _make_client(emulator, self.project, self.describe())
                self._client, self._counter = _CLIENTS[key]
        return self._client

    def _sent(self) -> int:
        return self._counter.sent if self._counter else 0

    def _count(self, before: int) -> None:
        sent = self._sent() - before
        with self._state:
            self.requests += sent

    def entries(self) -> list[FileEntry]:
        """Listed once; then the objects the criteria will read start downloading."""
        found = super().entries()
        if not self._planned:
            self._read_ahead()
        return found

    def _read_ahead(self) -> None:
        with self._state:
            if self._planned:
                return
            self._planned = True
        if self.planner is None or self.concurrency <= 1:
            return
        wanted: dict[str, FileEntry] = {}
        try:
            for spec in self.planner():
                entry = spec.first_read(self) if isinstance(spec, ReadsAhead) else None
                if entry is not None:
                    wanted.setdefault(entry.path, entry)
        except Exception:  # noqa: BLE001 - only a head start: each criterion reads for itself
            return
        jobs = {path: partial(self.read_ahead, entry) for path, entry in wanted.items()}
        self._prefetch = ahead(jobs, self.concurrency, "verial-files")

    def read(self, entry: FileEntry) -> bytes:
        if self._prefetch is not None:
            self._prefetch.claim(entry.path)  # not started: read here; else wait for it
        return super().read(entry)

    def _retry(self, budget: float) -> Any:
        from google.cloud.storage.retry import DEFAULT_RETRY  # type: ignore[import-untyped]

        return DEFAULT_RETRY.with_timeout(budget)

    def _list(self) -> list[FileEntry]:
        client = self.client()
        before = self._sent()
        try:
            return self._list_pages(client)
        finally:
            self._count(before)

    def _list_pages(self, client: Any) -> list[FileEntry]:
        start = self.list_prefix
        found: list[FileEntry] = []
        budget = self.deadline.budget(self.timeout)
        try:
            iterator = client.list_blobs(
                self.bucket,
                prefix=start,
                page_size=self.page_size,
                timeout=budget,
                retry=self._retry(budget),
            )
            for page in iterator.pages:
                self.list_pages += 1
                for blob in page:
                    name: str = blob.name
                    if name.endswith("/"):
                        continue  # a "directory" placeholder object
                    if not name.startswith(start):
                        self.refused.append(name)
                        continue
                    updated = blob.updated.isoformat() if blob.updated else None
                    size = int(blob.size or 0)
                    found.append(FileEntry(name[len(start) :], size, blob.content_type, updated))
        except Exception as exc:  # noqa: BLE001 - mapped to a clear SourceError below
            raise self._error("listing", exc) from None
        return found

    def _fetch(self, entry: FileEntry) -> bytes:
        client = self.client()
        blob = client.bucket(self.bucket).blob(self.list_prefix + entry.path)
        budget = self.deadline.budget(self.timeout)
        before = self._sent()
        try:
            data: bytes = blob.download_as_bytes(
                end=self.max_read_bytes, timeout=budget, retry=self._retry(budget)
            )
        except Exception as exc:  # noqa: BLE001 - mapped to a clear SourceError below
            raise self._error(f"reading {entry.path!r} from", exc) from None
        finally:
            self._count(before)
        if len(data) > self.max_read_bytes:
            raise SourceError(
                f"{self.describe()}{entry.path}: larger than the size limit of "
                f"{self.max_read_bytes} bytes (sources.files.max_read_bytes); not read"
            )
        return data

    def _error(self, action: str, exc: Exception) -> SourceError:
        """A SourceError that says what failed, in words, for any client or HTTP failure."""
        where = self.describe()
        text = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
        code = getattr(exc, "code", None)
        name = type(exc).__name__
        if isinstance(exc, SourceError):
            return exc
        if self.deadline.passed():
            return self.deadline.error()
        if code == 404 and action == "listing":
            return SourceError(f"{action} {where}: bucket {self.bucket!r} not found")
        if code == 404:
            return SourceError(f"{action} {where}: object not found (deleted since the listing?)")
        if code in (401, 403):
            return SourceError(f"{action} {where}: access denied (HTTP {code}): {text}")
        if "Timeout" in name or "timed out" in text.lower() or name == "RetryError":
            return SourceError(f"{action} {where}: timed out after {self.timeout:g} s ({name})")
        if "ConnectionError" in name:
            return SourceError(f"{action} {where}: cannot connect: {text}")
        return SourceError(f"{action} {where}: {name}: {text}")

    def settle(self) -> None:
        """The task run ended: cancel the downloads not started, wait for those under way."""
        prefetch, self._prefetch = self._prefetch, None
        if prefetch is not None:
            prefetch.close()

    def close(self) -> None:
        """:meth:`settle`, then drop the cache."""
        self.settle()
        super().close()
        self._client = None  # shared with other task runs of this process; kept open


@runtime_checkable
class ReadsAhead(Protocol):
    """A criterion's assertion that can name the object its check will certainly read (the
    ``sftp-file-present`` check does), so the source downloads it ahead."""

    def first_read(self, source: BaseFilesSource) -> FileEntry | None:
        """The object the check will certainly read from ``source``, or None."""
