"""Independent requests of one task run sent at once, through a bounded pool (issue 12).

A live source whose requests are known before its criteria run (the distinct FHIR searches of
a task run, the GCS objects its file criteria read) hands them to a :class:`Prefetch` when it is
first used. Jobs start in the order given (the order the criteria need them), at most
``workers`` at a time. A criterion never waits for the pool as a whole: it first calls
:meth:`Prefetch.claim` for its own key, which takes the job back when no worker has started it
(the criterion then sends the request itself), and otherwise waits only on that key's own lock
in the source, held by the worker sending it.

Jobs store their outcome (result or error) in the source, never in the future, so a failed
prefetch fails only the criteria that need that request. :meth:`Prefetch.close` (the source's
``close``, when the task run's sandbox is closed or the session ends, interrupted or not)
cancels the jobs not started and joins the workers; the pool also shuts itself down once its
last job is done, so no idle thread outlives the work.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor


class Prefetch:
    """A bounded pool running keyed jobs once each, in order; see the module docstring."""

    def __init__(self, workers: int, name: str) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix=name)
        self._futures: dict[str, Future[None]] = {}
        self._left = 0
        # reentrant: a future already done runs its callback (``_done``) inside ``start``
        self._lock = threading.RLock()
        self._closed = False

    def start(self, jobs: Iterable[tuple[str, Callable[[], object]]]) -> None:
        """Submit ``jobs`` (key, function) in order; a key seen before is skipped."""
        with self._lock:
            self._left += 1  # held while submitting: the pool cannot shut down half-way
            for key, job in jobs:
                if self._closed or key in self._futures:
                    continue
                self._left += 1
                future = self._pool.submit(_quiet, job)
                self._futures[key] = future
                future.add_done_callback(self._done)
        self._done(None)

    def claim(self, key: str) -> bool:
        """Take ``key``'s job back if no worker started it: True when the caller must do the
        work itself (also when there was no such job), False when a worker has it."""
        future = self._futures.get(key)
        if future is None:
            return True
        return future.cancel() or future.cancelled()

    def _done(self, _: Future[None] | None) -> None:
        with self._lock:
            self._left -= 1
            # closed: ``close`` is shutting the pool down (and may be cancelling this job)
            finished = self._left == 0 and not self._closed
        if finished:  # nothing left to run: let the idle workers exit now
            self._pool.shutdown(wait=False)

    def close(self) -> None:
        """Cancel the jobs not started and wait for the running ones (each bounded by its
        request's timeout and the source's deadline; sources stop retrying once closed)."""
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)


def ahead(jobs: Mapping[str, Callable[[], object]], concurrency: int, name: str) -> Prefetch | None:
    """A started :class:`Prefetch` of ``jobs`` (key -> job, in the order needed), or None when
    there is nothing to overlap: a pool of one, or fewer than two jobs."""
    if concurrency <= 1 or len(jobs) < 2:
        return None
    prefetch = Prefetch(min(concurrency, len(jobs)), name)
    prefetch.start(jobs.items())
    return prefetch


def _quiet(job: Callable[[], object]) -> None:
    """Run a job whose outcome the source keeps; an exception is the job's to record."""
    with contextlib.suppress(Exception):  # the criterion needing it sends the request itself
        job()


__all__ = ["Prefetch", "ahead"]
