"""SIGTERM ends a session the way Ctrl-C does, so completed task runs are kept.

``kill``, ``timeout``, a CI runner cancelling a job and container runtimes stop a process with
SIGTERM, whose default action ends Python at once: no ``pytest_sessionfinish``, so no JSON
report and neither JUnit file. While a session runs, the first SIGTERM raises
``KeyboardInterrupt`` in the main thread instead, and pytest (and pytest-xdist, on the controller
and on each worker) winds down exactly as after Ctrl-C: the report is written with the completed
task runs and status ``cancelled`` (see the README, "Interrupted and crashed runs").

The handler puts the previous disposition back before raising, so a second SIGTERM acts as it
would have without the plugin (it kills). A SIGTERM that the parent process set to be ignored
stays ignored, as Python itself leaves an ignored SIGINT alone. The previous handler is
restored at ``pytest_unconfigure``.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any

import pytest


class TermAsInterrupt:
    """A plugin object owning the SIGTERM handler for the length of one session."""

    def __init__(self) -> None:
        self._previous: Any = None
        self._installed = False

    def install(self) -> bool:
        """Install the handler when it can be (main thread, SIGTERM not ignored or taken)."""
        if threading.current_thread() is not threading.main_thread():
            return False
        previous = signal.getsignal(signal.SIGTERM)
        if previous is not signal.SIG_DFL:  # ignored on purpose, or someone else's handler
            return False
        self._previous = previous
        signal.signal(signal.SIGTERM, self._on_term)
        self._installed = True
        return True

    def _on_term(self, signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, self._previous)  # a second SIGTERM acts as before
        self._installed = False
        raise KeyboardInterrupt("SIGTERM")

    def restore(self) -> None:
        """Put the previous handler back if ours is still installed."""
        if self._installed and signal.getsignal(signal.SIGTERM) == self._on_term:
            signal.signal(signal.SIGTERM, self._previous)
        self._installed = False

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.restore()
