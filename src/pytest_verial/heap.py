"""Keep Python's cyclic garbage collector off what collection built.

Collection builds objects that live as long as the session: each benchmark's plan, one item
per criterion, and every module imported so far (pytest's, the plugins', ours). Python's full
collections walk all of them again each time enough new objects accumulate, and again while
the interpreter shuts down, so a session of thousands of criteria spent more time in the
collector than in its checks (``bench/overhead.py``, BENCHMARKS.md).

After collection :func:`settle` moves what is alive to the collector's permanent generation
(:func:`gc.freeze`), which collections skip; reference counting still frees those objects.
They are handed back (:func:`gc.unfreeze`) when a later session starts in the same process
(``pytest.main()`` called again, pytester's in-process runs), so that session's collections
free the reference cycles of the one before; a process that ends after its session never
walks them again.
"""

from __future__ import annotations

import gc

#: whether a session of this process froze the heap and nobody has handed it back yet
_frozen = False


def settle() -> None:
    """Freeze the objects alive after collection (a session with benchmark criteria)."""
    global _frozen
    _frozen = True
    gc.freeze()


def release() -> None:
    """A new session starts: give the previous session's frozen objects back."""
    global _frozen
    if _frozen:
        _frozen = False
        gc.unfreeze()
