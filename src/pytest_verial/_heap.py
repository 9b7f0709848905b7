"""Keep Python's cyclic garbage collector off what a scoring session keeps, only while the
plugin's own criterion items run.

A session keeps most of what it builds until it ends: each benchmark's plan, one item per
criterion, every criterion run. Python's full collections walk all of it again each time
enough new objects accumulate, so at 2,000 criteria the collector once took more time than
the checks (``bench/overhead.py``, BENCHMARKS.md "core: per-criterion overhead").

What is alive is moved to the collector's permanent generation (:func:`gc.freeze`), which
collections skip; reference counting still frees those objects. The freeze is **scoped**
(issue 21): a plugin must not change the collector for the user's tests and plugins in the
same session. So:

- :func:`enter` freezes when a criterion item's run protocol starts (the plugin's
  ``pytest_runtest_protocol`` wrapper, :class:`Scope`), and only if the collector is as
  Python starts it: enabled, a non-zero first threshold and nothing frozen by anyone else.
  A session whose conftest or plugin disabled the collector, set its threshold to 0 or froze
  objects itself is left exactly as configured;
- :func:`leave` hands the frozen objects back (:func:`gc.unfreeze`) before any other item's
  protocol starts, before the teardown that precedes a non-criterion item or the end of the
  run (fixtures of wider scopes are torn down there), and when the run loop ends. Outside
  criterion items, the user's tests, fixtures and plugins see every object
  (``gc.get_referrers()``, ``gc.get_objects()``), a freeze count of 0, and the thresholds
  and on/off state they set; the plugin never changes thresholds nor enables a collector;
- :func:`checkpoint`, once per :data:`EVERY` criterion runs inside the scope: one collection
  over what was made since the last freeze (garbage included), then a freeze;
- :func:`no_gc` around a bulk build (a benchmark file's plan, the report, the ``verial``
  commands' reads): no automatic collection while the block runs, then the collector is as
  it was (left off if it was off). It freezes nothing;
- :func:`keep` inside the scope: a sandbox's loaded FHIR snapshot is frozen with the rest.

Consecutive criterion items keep one freeze (one :func:`gc.freeze` call, which is cheap: it
moves list heads, not objects). A transition to a user's test costs one :func:`gc.unfreeze`;
the next full collection walks the session's objects once, as it would in plain pytest.

Freezing only inside the scope means a benchmark file's plan and the collected items are
walked by the full collections of the collection phase, and what is alive at the end by the
collections of the session's end, as plain pytest's items are. User code that runs as part of
a criterion item (an autouse fixture's set-up, a conftest's override of a source fixture,
another plugin's hooks about that item) runs inside the scope and sees the freeze.
``tests/core/test_core_gc_scope.py`` is the proof of the rest.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

#: criterion runs between two checkpoints
EVERY = 500

#: the objects frozen now were frozen by :func:`enter` (so :func:`leave` hands them back)
_ours = False
_runs = 0


def _untouched() -> bool:
    """The collector is as Python starts it: on, automatic, nothing frozen by anyone."""
    return gc.isenabled() and gc.get_threshold()[0] != 0 and gc.get_freeze_count() == 0


def enter() -> None:
    """A criterion item starts: freeze what is alive, unless this scope froze it already or
    someone configured the collector otherwise."""
    global _ours
    if not _ours and _untouched():
        gc.freeze()
        _ours = True


def leave() -> None:
    """Anything but a criterion item runs next: hand back what :func:`enter` froze."""
    global _ours
    if _ours:
        _ours = False
        gc.unfreeze()


def inside() -> bool:
    """True while the scope's freeze is in effect."""
    return _ours


def keep() -> None:
    """Freeze what is alive now, if the scope is in effect (a sandbox's loaded snapshot)."""
    if _ours:
        gc.freeze()


@contextmanager
def no_gc() -> Iterator[None]:
    """No automatic collection while a block builds a large structure that stays alive (a
    report read whole, its rows, the views of two reports being compared): each full
    collection would walk all of it again. Used by the plugin around its own bulk builds and
    by the ``verial`` commands, never around a user's tests; a collector that was off stays
    off."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def checkpoint() -> None:
    """Called once per criterion run: every :data:`EVERY` runs in the scope, collect and
    freeze."""
    global _runs
    _runs += 1
    if _runs >= EVERY and _ours:
        _runs = 0
        gc.collect()  # only what is not frozen: the runs since the last checkpoint
        gc.freeze()


def release() -> None:
    """A new session starts: nothing of a previous session's scope stays frozen."""
    global _runs
    _runs = 0
    leave()


class Scope:
    """The plugin's hooks that open and close the freeze around criterion items.

    ``is_criterion`` tells the plugin's items (criterion and no-criteria items) from others.
    The wrappers are ``tryfirst``: they run outside other plugins' wrappers of the same hook.
    """

    def __init__(self, is_criterion: Any) -> None:
        self.is_criterion = is_criterion

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        if self.is_criterion(item):
            enter()
        else:
            leave()
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        # The teardown before another kind of item, or the last one, may tear down a user's
        # fixtures of wider scope: they see the collector as configured.
        if nextitem is None or not self.is_criterion(nextitem):
            leave()
        return (yield)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        try:
            return (yield)
        finally:
            leave()
