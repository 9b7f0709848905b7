"""The sandbox contract: the final state of one task run (:class:`Sandbox`), split by source,
and the helpers a source uses to read its run.yaml settings.

A :class:`Sandbox` builds each source lazily on first use, from a factory chosen by name
(:mod:`pytest_verial._config.source_table`), and caches it, so all criteria of a task run share one
loaded source. The engine, the judge and every source implementation import it from here, below
them all; :mod:`pytest_verial.sources` re-exports it.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Protocol

from .._config.run_folder import RunDir, TaskRunMeta
from .._config.source_table import SOURCE_FACTORIES, load
from .._errors import RunConfigError, SourceError
from .._models import Entity, Task
from .._sandbox_io.limits import Reads


class Source(Protocol):
    """Any source a sandbox builds by name (:mod:`pytest_verial._config.source_table`); the sandbox
    calls its ``settle()`` and ``close()`` when it has them. Each built-in kind has its own
    protocol in :mod:`pytest_verial.sources`: :class:`~pytest_verial.sources.FhirSource`,
    :class:`~pytest_verial.sources.FilesSource`, :class:`~pytest_verial.sources.Hl7Source`,
    :class:`~pytest_verial.sources.OutputSource`, :class:`~pytest_verial.sources.PortalSource`,
    :class:`~pytest_verial.sources.VoiceSource`, :class:`~pytest_verial.sources.X12Source`."""


class Sandbox:
    """The final state of one task run, split by source."""

    def __init__(
        self,
        run: RunDir,
        task: Task,
        task_key: str,
        entity: Entity | None = None,
        options: dict[str, Any] | None = None,
        planned: Callable[[], Sequence[Any]] | None = None,
    ) -> None:
        self.run = run
        self.task = task
        self.task_key = task_key
        self.entity = entity
        self.path: Path = run.sandbox_path(task_key)
        self.options = options or {}
        self._sources: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._planned = planned
        self._reads: Reads | None = None
        self._reads_lock = threading.Lock()

    @property
    def reads(self) -> Reads:
        """Every read of this task run's sandbox, bounded by the run folder's limits (per file
        and for the sandbox as a whole: :mod:`pytest_verial._sandbox_io.limits`); file names
        in its errors are relative to the task folder."""
        with self._reads_lock:
            if self._reads is None or self._reads.root != self.path:
                limits = getattr(self.run, "limits", None)
                self._reads = Reads(self.path, limits)
            return self._reads

    @property
    def meta(self) -> TaskRunMeta:
        """run.yaml's facts about this task run (cost, task_type, ...)."""
        return self.run.task_meta(self.task_key, self.task.id)

    def settings(self, name: str, known: AbstractSet[str] | None = None) -> dict[str, Any]:
        """Live-source settings for ``name`` from run.yaml (empty: use the snapshot).

        With ``known``, a key outside it is a RunConfigError naming the file and the key.
        """
        settings = dict(self.run.config.sources.get(name, {}) or {})
        unknown = sorted(set(settings) - known) if known is not None else []
        if unknown:
            raise RunConfigError(
                f"{run_yaml(self)}: sources.{name}.{unknown[0]}: unknown key; "
                f"known: {', '.join(sorted(known or ()))}"
            )
        return settings

    def planned_criteria(self) -> Sequence[Any]:
        """The criterion plans of this task run the session will score, in run order (a live
        source sends their requests ahead, concurrently); empty when not known."""
        return self._planned() if self._planned is not None else ()

    def source(self, name: str) -> Any:
        """The source ``name``, built on first use and cached for this task run."""
        with self._lock:
            if name not in self._sources:
                self._own_folder()
                self._sources[name] = load(SOURCE_FACTORIES[name])(self)
            return self._sources[name]

    def _own_folder(self) -> None:
        """A task folder that is a link into its own run folder (to a sibling task's folder,
        or below one) would score this task on another task's sandbox: a SourceError. A link
        out of the run folder stays allowed (a run assembled from elsewhere); what is read
        below the folder is confined to it by :mod:`pytest_verial._sandbox_io.confine`."""
        if not self.path.is_symlink():
            return
        real = Path(os.path.realpath(self.path))
        run = Path(os.path.realpath(self.run.path))
        if real == run or real.is_relative_to(run):
            raise SourceError(  # named as the run names it: never the link's target
                f"{self.path.name}: the task folder is a symbolic link into its own run "
                "folder: another task's sandbox; each task run reads only its own folder; "
                "refused"
            )

    def settle(self) -> None:
        """The task run ended: sources stop what they started ahead (live prefetches)."""
        with self._lock:
            sources = list(self._sources.values())
        for source in sources:
            settle = getattr(source, "settle", None)
            if callable(settle):
                settle()

    def close(self) -> None:
        """Close sources that hold connections or files."""
        for source in self._sources.values():
            close = getattr(source, "close", None)
            if callable(close):
                close()
        self._sources.clear()


def run_yaml(sandbox: Sandbox) -> str:
    """How errors name the run's settings file: its path, else ``run.yaml``."""
    path = getattr(getattr(sandbox, "run", None), "path", None)
    if path is None:
        return "run.yaml"
    for name in ("run.yaml", "run.yml", "run.json"):
        if (path / name).is_file():
            return str(path / name)
    return str(path / "run.yaml")


def setting_number(
    sandbox: Sandbox, source: str, settings: dict[str, Any], key: str, default: float, kind: type
) -> Any:
    """A positive, finite number setting (an integer when ``kind`` is int), else one line."""
    value = settings.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    ok = ok and math.isfinite(value) and value > 0
    if ok and kind is int and not float(value).is_integer():
        ok = False
    if not ok:
        wanted = "a whole number > 0" if kind is int else "a number > 0"
        raise RunConfigError(
            f"{run_yaml(sandbox)}: sources.{source}.{key}: expected {wanted}, got {value!r}"
        )
    return kind(value)


def setting_text(sandbox: Sandbox, source: str, settings: dict[str, Any], key: str) -> str | None:
    """A text setting (absent: None), else one line naming the file and key."""
    value = settings.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RunConfigError(
            f"{run_yaml(sandbox)}: sources.{source}.{key}: expected text, got {value!r}"
        )
    return value


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def fill_template(
    sandbox: Sandbox, source: str, key: str, template: str, values: dict[str, str]
) -> str:
    """Plain substitution of ``{name}`` for the names in ``values``; nothing is evaluated.

    Anything else in braces (``{task_key.__class__}``, ``{0}``, ``{}``) or a stray brace is a
    RunConfigError naming the file and key.
    """

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise RunConfigError(
                f"{run_yaml(sandbox)}: sources.{source}.{key}: unknown placeholder "
                f"{{{name}}} in {template!r}; use " + ", ".join(f"{{{n}}}" for n in values)
            )
        return values[name]

    filled = _PLACEHOLDER.sub(fill, template)
    if "{" in _PLACEHOLDER.sub("", template) or "}" in _PLACEHOLDER.sub("", template):
        raise RunConfigError(
            f"{run_yaml(sandbox)}: sources.{source}.{key}: unbalanced brace in {template!r}"
        )
    return filled


class SandboxCache:
    """Sandboxes by (run path, task key); a few kept, older ones closed.

    With xdist's per-task scheduling all criteria of a task run are consecutive on one
    worker, so a small cache loads each sandbox once. For the same reason a task run has ended
    when another one asks for its sandbox: the previous one is settled then (its live sources
    cancel what they fetch ahead and stop their threads).
    """

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], Sandbox] = OrderedDict()
        self._last: tuple[str, str] | None = None

    def get(self, key: tuple[str, str], make: Any) -> Sandbox:
        """The cached sandbox for ``key``, or a new one from ``make()``."""
        if key != self._last:
            previous = self._items.get(self._last) if self._last is not None else None
            if previous is not None:
                previous.settle()
            self._last = key
        sandbox = self._items.get(key)
        if sandbox is None:
            sandbox = make()
            self._items[key] = sandbox
            while len(self._items) > self.size:
                _, old = self._items.popitem(last=False)
                old.close()
        else:
            self._items.move_to_end(key)
        return sandbox

    def close(self) -> None:
        """Close every cached sandbox."""
        for sandbox in self._items.values():
            sandbox.close()
        self._items.clear()
