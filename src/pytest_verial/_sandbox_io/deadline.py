"""One deadline per live source per task run (docs/limits.md, "Live sources").

A server that accepts a connection and never answers would otherwise cost every distinct
request its own timeout, with retries. A :class:`Deadline` starts at a source's first request
(whichever thread sends it, when a source sends requests concurrently); each request's timeout
is cut to what is left, and once it has passed every further request is refused with one line
naming the server.
"""

from __future__ import annotations

import threading
import time

from .._errors import SourceError


class Deadline:
    """The wall-clock budget shared by every request of one live source in one task run."""

    def __init__(self, seconds: float, where: str, setting: str) -> None:
        self.seconds = seconds
        self.where = where  # the server or bucket, named in the error (never a secret)
        self.setting = setting  # the run.yaml key, e.g. ``sources.fhir.deadline``
        self._ends_at: float | None = None
        self._lock = threading.Lock()  # the clock starts once when threads share the source

    def budget(self, timeout: float) -> float:
        """Seconds the next request may take: ``timeout`` cut to what is left (the clock
        starts now if it has not yet). None left: the deadline's SourceError, nothing sent."""
        now = time.monotonic()
        with self._lock:
            if self._ends_at is None:
                self._ends_at = now + self.seconds
            left = self._ends_at - now
        if left <= 0:
            raise self.error()
        return min(timeout, left)

    def passed(self) -> bool:
        """Whether the deadline has passed (False before the first request)."""
        return self._ends_at is not None and time.monotonic() >= self._ends_at

    def cap(self, seconds: float) -> float:
        """A back-off sleep of ``seconds``, never past the deadline."""
        if self._ends_at is None:
            return seconds
        return max(0.0, min(seconds, self._ends_at - time.monotonic()))

    def error(self) -> SourceError:
        """The one-line error of every request after the deadline."""
        return SourceError(
            f"{self.where}: the task run's deadline of {self.seconds:g} s ({self.setting}) "
            "passed; no further request sent"
        )
