"""Where the shared third-party corpus is (read in place, never copied; PROVENANCE.md there).

``VERIAL_SHARED`` if set, else ``<repo>/../shared`` (where CI has it); tests that need a part
of it skip with the reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_root() -> Path | None:
    """The shared directory holding ``corpus/``, or None."""
    candidates = [os.environ.get("VERIAL_SHARED"), str(REPO.parent / "shared")]
    for c in candidates:
        if c and (Path(c) / "corpus").is_dir():
            return Path(c)
    return None


def corpus_path(relative: str) -> Path:
    """``corpus/<relative>`` of the shared directory; skips the test when it is absent."""
    root = shared_root()
    path = root / "corpus" / relative if root else None
    if path is None or not path.exists():
        pytest.skip(
            f"shared corpus file {relative} is absent: ../shared/corpus beside the repository "
            "(or VERIAL_SHARED) holds the third-party samples"
        )
    return path
