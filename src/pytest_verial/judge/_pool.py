"""A bounded pool for judge criteria scored at once (``--verial-judge-concurrency``).

Jobs start in the order submitted, at most ``limit`` at a time, each on a worker thread that
exists only while there is work (a pool with nothing queued holds no thread). A job's outcome,
result or exception (any, ``pytest.skip`` included), is its own future's, so an error stays
with the criterion whose job raised it.

The workers are daemon threads: after Ctrl-C or SIGTERM a judge request in flight (up to the
judge's timeout times its attempts) never holds up the end of the process. Such a request has
nothing to leave half-done: the reply cache writes atomically (:mod:`._cache`).
:meth:`JudgePool.cancel` drops the jobs not started.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class JudgePool:
    """Runs submitted jobs in order, at most ``limit`` at once; see the module docstring."""

    def __init__(self, limit: int, name: str = "verial-judge") -> None:
        self.limit = max(1, limit)
        self._name = name
        self._queue: deque[tuple[Future[Any], Callable[[], Any]]] = deque()
        self._workers = 0
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], Any]) -> Future[Any]:
        """Queue ``job``; its future holds what it returns or raises."""
        future: Future[Any] = Future()
        with self._lock:
            self._queue.append((future, job))
            if self._workers < self.limit:
                self._workers += 1
                thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                thread.start()
        return future

    def cancel(self) -> None:
        """Cancel the jobs no worker has started (running ones finish on their own)."""
        with self._lock:
            queued = list(self._queue)
            self._queue.clear()
        for future, _ in queued:
            future.cancel()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._workers -= 1
                    return
                future, job = self._queue.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = job()
            except BaseException as exc:  # noqa: BLE001 - the criterion taking it re-raises it
                future.set_exception(exc)
            else:
                future.set_result(result)
            del future, job  # a finished criterion run is its item's, not this thread's


__all__ = ["JudgePool"]
