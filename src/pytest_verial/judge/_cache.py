"""Disk cache of judge replies, keyed by prompt hash: a re-run of the same evaluation costs
nothing. Only validated replies are stored. Files are written atomically (temp file + rename),
so parallel xdist workers and an interrupted run never leave a half-written entry; an entry
that cannot be read is ignored (and overwritten by the next good reply).

Secrets (:mod:`pytest_verial._secrets`) are masked in an entry before it is stored, and again
when it is read (an entry written by an older version, or before a key was registered), so a
judge that quotes its API key in a reply never puts the key on disk or into a re-run's report.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .._safeparse import load_json
from .._secrets import redact_json


class ReplyCache:
    """``<dir>/<hash[:2]>/<hash>.json`` holding ``{content, usage, model}``."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None (no cache, no entry, unreadable entry)."""
        if self.directory is None:
            return None
        try:
            data = load_json(self._path(key).read_text(encoding="utf-8"), "judge cache")
        except (OSError, ValueError):  # DataError is a ValueError
            return None
        if not (isinstance(data, dict) and isinstance(data.get("content"), str)):
            return None
        return dict(redact_json(data))

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store an entry; a cache that cannot be written is skipped silently (it is a cache)."""
        if self.directory is None:
            return
        path = self._path(key)
        entry = redact_json(entry)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle, sort_keys=True)
            os.replace(tmp, path)
        except OSError:
            return
