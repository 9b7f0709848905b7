"""Files named relative to the task's sandbox folder in what a check reports.

A criterion run's ``details``, ``evidence`` (``source``, an HL7 or X12 message's ``origin``, a
portal or voice file...) and error messages name the files they read. They are written for
whoever reads the report, a coordinator calling :func:`pytest_verial.verify_task`, or a client
of ``verial serve``, none of whom should learn where the sandbox sits on the machine that
scored it (README, "Paths in evidence"). :class:`SandboxPaths` rewrites every place a text
names the task folder, by any of the forms it was reached by (as given, absolute, with its
links resolved), into a path relative to it: ``/srv/runs/r1/pa-mri/hl7_outbound/a.hl7`` becomes
``hl7_outbound/a.hl7``, the folder itself ``.``; a file elsewhere in its run folder (a live
events file, another task's output) ``../<name>``.

The engine applies it once to every criterion run it returns
(:func:`pytest_verial._engine.run_criterion`), so each source and check names files as it likes
and none can leak a path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

#: what may come right before a path's first character without being part of a longer path
_BEFORE = r"(?<![\w./~-])"
#: characters JSON's text writes escaped (``json.dumps(..., ensure_ascii=False)``)
_ESCAPED = re.compile(r'["\\\x00-\x1f]')


class SandboxPaths:
    """Rewrites the paths of one task folder (and of its run folder) in texts and JSON."""

    def __init__(self, task_folder: Path | str, run_folder: Path | str | None = None) -> None:
        task = _forms(task_folder)
        run = _forms(run_folder) - task if run_folder is not None else set()
        # the longest first: a task folder is inside its run folder
        prefixes = sorted(((p, "") for p in task), key=lambda x: -len(x[0]))
        prefixes += sorted(((p, "../") for p in run), key=lambda x: -len(x[0]))
        self._prefixes = [p for p, _ in prefixes]
        self._into = dict(prefixes)
        #: compiled when a text first names a folder: most criteria's never do, and compiling
        #: was most of what a task run's rewriter cost (BENCHMARKS.md, "issue 33, wave 7")
        self._pattern: re.Pattern[str] | None = None
        #: a folder written with a character JSON escapes cannot be looked for in JSON's text
        self._plain = not any(_ESCAPED.search(p) for p in self._prefixes)

    def _compiled(self) -> re.Pattern[str]:
        if self._pattern is None:
            alternatives = "|".join(re.escape(p) for p in self._prefixes)
            # a folder followed by "/" names something inside it; alone, the folder itself
            self._pattern = re.compile(f"{_BEFORE}({alternatives})(/|(?![\\w.~-]))")
        return self._pattern

    def _replace(self, match: re.Match[str]) -> str:
        into = self._into[match.group(1)]
        if match.group(2) == "/":
            return into
        return into.rstrip("/") or "."

    def text(self, value: str) -> str:
        """``value`` with every path into the folders made relative to the task folder."""
        for prefix in self._prefixes:
            if prefix in value:
                return self._compiled().sub(self._replace, value)
        return value

    def json(self, value: Any) -> Any:
        """A JSON value with :meth:`text` applied to every string in it, keys included; a value
        whose strings name no folder is returned as it is (not copied)."""
        if not self._named_in(value):
            return value
        return self._json(value)

    def _json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self._json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self._json(v) for k, v in value.items()}
        return value

    def _named_in(self, value: Any) -> bool:
        """Whether some string in ``value`` (keys included) may contain a folder: looked for
        in its JSON text at once (a string holding a folder holds it in its JSON text too,
        unescaped, when the folder has no character JSON escapes), rather than string by
        string. True whenever that cannot be told (a value JSON cannot write)."""
        if not self._prefixes:
            return False
        if isinstance(value, str):
            return True
        if not self._plain:
            return True
        try:
            written = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            return True
        return any(p in written for p in self._prefixes)


def _forms(folder: Path | str) -> set[str]:
    """The ways a folder may be written in a message: as given, absolute, links resolved."""
    given = os.fspath(folder)
    forms: Iterable[str] = (given, os.path.abspath(given), os.path.realpath(given))
    # "/" or "" would match every path: never a sandbox's folder
    return {f.rstrip("/") for f in forms if f.rstrip("/") not in ("", ".")}


def sandbox_paths(sandbox: Any) -> SandboxPaths | None:
    """The rewriter of a sandbox (a :class:`~pytest_verial.sources.Sandbox`, or anything with
    its ``path`` and ``run.path``); None when it has no folder."""
    path = getattr(sandbox, "path", None)
    if path is None:
        return None
    run = getattr(getattr(sandbox, "run", None), "path", None)
    return _paths_of(os.fspath(path), os.fspath(run if run is not None else Path(path).parent))


@lru_cache(maxsize=64)
def _paths_of(task_folder: str, run_folder: str) -> SandboxPaths:
    """One rewriter per task folder, shared by the criteria of its task run: making one
    resolves the folders' links and compiles a pattern, which cost more than the check
    itself when it was done per criterion (BENCHMARKS.md, "plain records")."""
    return SandboxPaths(task_folder, run_folder)


__all__ = ["SandboxPaths", "sandbox_paths"]
