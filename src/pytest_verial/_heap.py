"""Keep Python's cyclic garbage collector off what a scoring session keeps.

A session keeps most of what it builds until it ends: each benchmark's plan, one item per
criterion, every criterion run and the report. Python's full collections walk all of it again
each time enough new objects accumulate, and again while the interpreter shuts down, so at
2,000 criteria the collector took more time than the checks, and at 20,000 three times what
plain pytest spends in it (``bench/overhead.py``, BENCHMARKS.md).

So what the session keeps is moved to the collector's permanent generation
(:func:`gc.freeze`), which collections skip; reference counting still frees those objects:

- :func:`settle` after collection (the plan, the items, every module imported so far);
- :func:`building` around a bulk build (a benchmark file's plan, the report): the collector
  is off while it runs, then one pass over what it made frees its cycles and the rest is
  frozen;
- :func:`checkpoint` once per :data:`EVERY` criterion runs: a collection over what was made
  since the last freeze (garbage included), then a freeze.

While frozen objects are out of the collector's sight, ``gc.get_referrers()`` and
``gc.get_objects()`` do not see them either. So :func:`thaw` gives them back when the session
ends, before the terminal summary and other plugins' end-of-session code run (hypothesis, for
one, checks with ``gc.get_referrers()`` the random generators it registers on import); until
the last hook (``pytest_unconfigure``) only explicit ``gc.collect()`` calls collect, and then
:func:`end` freezes everything once more and turns automatic collection back on, so the
interpreter's collections at exit do not walk it. A later session in the same process
(``pytest.main()`` called again, pytester's in-process runs) hands it back first
(:func:`release`), so its collections free the reference cycles of this one.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: criterion runs between two checkpoints
EVERY = 500

#: frozen objects that nobody has handed back yet
_frozen = False
#: this session froze something (so :func:`end` freezes again)
_session = False
#: automatic collection was on when :func:`thaw` turned it off
_paused = False
_runs = 0


def _freeze() -> None:
    global _frozen, _session
    _frozen = _session = True
    gc.freeze()


def settle() -> None:
    """Freeze the objects alive after collection."""
    _freeze()


@contextmanager
def no_gc() -> Iterator[None]:
    """No automatic collection while a block builds a large structure that stays alive (a
    report read whole, its rows, the views of two reports being compared): each full
    collection would walk all of it again. Used by the ``verial`` commands, never around a
    user's tests."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def building() -> Iterator[None]:
    """No collections while the block builds; then collect what it made and freeze the rest."""
    try:
        with no_gc():
            yield
    finally:
        gc.collect(0)  # the collector was off: everything the block made is in generation 0
        _freeze()


def checkpoint() -> None:
    """Called once per criterion run: every :data:`EVERY` runs, collect and freeze."""
    global _runs
    _runs += 1
    if _runs >= EVERY:
        _runs = 0
        gc.collect()  # only what is not frozen: the runs since the last checkpoint
        _freeze()


def thaw() -> None:
    """The session ends: every object back in sight, no automatic collection until
    :func:`end` (explicit ``gc.collect()`` calls still collect)."""
    global _frozen, _paused
    if _frozen:
        _frozen = False
        gc.unfreeze()
        if gc.isenabled():
            _paused = True
            gc.disable()


def end() -> None:
    """After the session's last hook: freeze again if the session froze anything, and turn
    automatic collection back on if :func:`thaw` turned it off."""
    global _paused
    if _session:
        _freeze()
    if _paused:
        _paused = False
        gc.enable()


def release() -> None:
    """A new session starts: give the previous session's frozen objects back."""
    global _runs, _frozen, _session
    _runs = 0
    _session = False
    if _frozen:
        _frozen = False
        gc.unfreeze()
