"""The files source of a live sandbox: GCS objects under the sandbox's SFTP prefix.

One paged listing (``list_blobs`` with ``prefix="<prefix>/"``, so ``sandbox-1`` never sees
``sandbox-10``) per task run, shared by all its criteria; each object is downloaded only when a
criterion reads its content, at most once. Credentials are Google's default credentials, or
none against an emulator (``endpoint`` in the settings, or ``STORAGE_EMULATOR_HOST``).
google-cloud-storage is imported here only, on first use (``pip install 'pytest-verial[gcp]'``).

All requests of one task run share ``deadline`` (default 60 s): each request's timeout is cut
to what is left, and once it has passed every further listing or read is a one-line
:class:`SourceError` naming the bucket, with nothing sent.

Every HTTP request is counted in :attr:`requests` (a transport adapter on the session), which the
tests and ``bench/files.py`` use to prove the one-listing rule.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ...errors import SourceError
from ..deadline import Deadline
from .base import DEFAULT_MAX_READ_BYTES, BaseFilesSource, FileEntry

_READ_ONLY = "https://www.googleapis.com/auth/devstorage.read_only"
_CLIENTS: dict[tuple[str | None, str | None], tuple[Any, list[int]]] = {}
_CLIENTS_LOCK = threading.Lock()


def _make_client(emulator: str | None, project: str | None, where: str) -> tuple[Any, list[int]]:
    """A storage client and its request counter (one-item list, bumped by the transport)."""
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
    counter = [0]

    class CountingAdapter(requests.adapters.HTTPAdapter):
        """Counts every HTTP request actually sent (retries included)."""

        def send(self, *args: Any, **kwargs: Any) -> Any:
            counter[0] += 1
            return super().send(*args, **kwargs)

    for scheme in ("http://", "https://"):
        session.mount(scheme, CountingAdapter())
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
        self._client: Any = None
        self._counter: list[int] | None = None

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
        return self._counter[0] if self._counter else 0

    def _retry(self, budget: float) -> Any:
        from google.cloud.storage.retry import DEFAULT_RETRY  # type: ignore[import-untyped]

        return DEFAULT_RETRY.with_timeout(budget)

    def _list(self) -> list[FileEntry]:
        client = self.client()
        before = self._sent()
        try:
            return self._list_pages(client)
        finally:
            self.requests += self._sent() - before

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
            self.requests += self._sent() - before
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

    def close(self) -> None:
        super().close()
        self._client = None  # shared with other task runs of this process; kept open
