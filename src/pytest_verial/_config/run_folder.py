"""Run directories and their ``run.yaml`` metadata (README, "Run directories").

A run directory holds one sandbox per task run (``<task_id>/`` or ``<task_id>[<entity>]/``)
and an optional ``run.yaml``. Secrets are never values here: live sources name environment
variables (``client_secret_env: FHIR_SECRET``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from .._errors import RunConfigError
from .._models import Model
from .._safeparse import DataError, load_yaml
from .._sandbox_io.sizes import ReadLimits, over_file_limit
from .source_table import unknown_setting


class TaskRunMeta(Model):
    """Per-task facts about the rollout, used by the judge's bypass rules (PRD-103 §8)."""

    cost: float | None = Field(default=None, ge=0)
    task_type: str | None = None
    skip_verification: bool | None = None


class RunConfig(Model):
    """The contents of ``run.yaml``."""

    id: str | None = None
    agent: str | None = None
    executor_model: str | None = None
    scored: bool | None = None
    started_at: str | None = None
    completed_at: str | None = None
    tasks: dict[str, TaskRunMeta] = Field(default_factory=dict)
    #: live-source settings by source name (``fhir``, ``files``, ``hl7``, ``portal``, ...)
    sources: dict[str, dict[str, Any]] = Field(default_factory=dict)


#: run.yaml source keys that read state live rather than from the task folder
LIVE_KEYS = (
    "base_url",
    "base_url_env",
    "fhir_base_url",
    "bucket",
    "events",
    "records",
    "database_url",
    "database_url_env",
)


class RunDir:
    """One run directory: its path, label and parsed ``run.yaml`` (``config``: already read),
    and the limits every read of its sandboxes is held to (run.yaml's own read included)."""

    def __init__(
        self,
        path: Path,
        label: str | None = None,
        config: RunConfig | None = None,
        limits: ReadLimits | None = None,
        files_root: Path | None = None,
    ):
        self.path = path
        self.label = label or path.name
        self.limits = limits if limits is not None else ReadLimits()
        #: the folder every file run.yaml names (a live events or records file, a database)
        #: must resolve inside: the service's --runs-root; None in the plugin (the user's own
        #: settings may name any file)
        self.files_root = files_root
        self.config = config if config is not None else load_run_config(path, self.limits)

    def sandbox_path(self, task_key: str) -> Path:
        """The sandbox directory of one task run (a missing one is an error: README, "Run
        directories")."""
        return self.path / task_key

    def task_meta(self, task_key: str, task_id: str) -> TaskRunMeta:
        """``tasks.<key>`` of run.yaml, falling back to the bare task id, else empty."""
        return self.config.tasks.get(task_key) or self.config.tasks.get(task_id) or TaskRunMeta()

    @property
    def reads_live(self) -> bool:
        """True when run.yaml names a live source (a server, bucket, events or records file,
        database): its task runs may have no folder, so a missing one is not an error."""
        return any(
            isinstance(settings, dict) and any(settings.get(k) for k in LIVE_KEYS)
            for settings in self.config.sources.values()
        )

    def folder_missing(self, task_key: str) -> bool:
        """True when the task run's folder is missing and nothing is read live."""
        return not self.sandbox_path(task_key).is_dir() and not self.reads_live

    def missing_message(self, task_key: str) -> str:
        """The details of every criterion of a task run whose folder is missing."""
        return f"no sandbox folder for task run {task_key!r}: {self.sandbox_path(task_key)} " + (
            "is not a directory" if self.sandbox_path(task_key).exists() else "does not exist"
        )


def expected_folders(keys: list[str], shown: int = 5) -> str:
    """``a/, b/, c/ ... and 7 more``: the task folders a run directory should hold."""
    names = ", ".join(f"{k}/" for k in keys[:shown])
    return names + (f" ... and {len(keys) - shown} more" if len(keys) > shown else "")


def empty_run_problem(file: str, run: RunDir, keys: list[str], explicit: bool) -> str | None:
    """One line when ``run`` holds no folder for any of ``keys`` (the selected task runs of
    ``file``), else None. Scoring such a run would score every task against nothing."""
    if run.reads_live or any(run.sandbox_path(k).is_dir() for k in keys):
        return None
    where = (
        f"--verial-run {run.path}" if explicit else f"{run.path} (the default sandbox/ beside it)"
    )
    state = "does not exist" if not run.path.exists() else "holds none of its task folders"
    return (
        f"{file}: no sandbox for any task run: {where} {state}; "
        f"expected task folders {expected_folders(sorted(set(keys)))}"
    )


RUN_FILES = ("run.yaml", "run.yml", "run.json")


def load_run_config(path: Path, limits: ReadLimits | None = None) -> RunConfig:
    """Parse ``<path>/run.yaml`` (or ``run.json``); a missing file is an empty config. It is
    read as any file of the run is (:mod:`.._sandbox_io.limits`): over the per-file limit it is
    refused, by its size, before it is read."""
    for name in RUN_FILES:
        file = path / name
        if file.is_file():
            break
    else:
        return RunConfig()
    raw = _read_bounded(file, limits or ReadLimits())
    try:
        data = load_yaml(raw.decode("utf-8-sig"), str(file)) or {}
    except UnicodeDecodeError as exc:
        raise RunConfigError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    except DataError as exc:
        raise RunConfigError(exc.located()) from None
    if not isinstance(data, dict):
        raise RunConfigError(f"{file}: expected a mapping at the top level")
    try:
        config = RunConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"field {'.'.join(str(p) for p in e['loc'])!r}: {e['msg']}" for e in exc.errors()
        )
        raise RunConfigError(f"{file}: {problems}") from None
    problem = unknown_setting(config.sources)
    if problem is not None:
        raise RunConfigError(f"{file}: {problem}")
    return config


def _read_bounded(file: Path, limits: ReadLimits) -> bytes:
    """``run.yaml``'s bytes, its size checked against the per-file limit before it is read and
    the read stopped there (named by its file name: never the server's path)."""
    try:
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise RunConfigError(f"{file.name}: cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise RunConfigError(f"{file.name}: not a regular file")
        refused = over_file_limit(file.name, st.st_size, limits)
        if refused is not None:
            raise RunConfigError(refused)
        data = handle.read(st.st_size + 1)
    if len(data) > st.st_size:
        raise RunConfigError(f"{file.name}: grew while it was read; not read")
    return data


def shared_folders(claims: list[tuple[str, RunDir, str]]) -> list[str]:
    """Warnings for task runs of different benchmark files reading one sandbox folder.

    ``claims`` are (benchmark file, run directory, task key) in collection order; two files
    with the same task id score the same folder, which is rarely meant (README, "Run directories").
    """
    owners: dict[tuple[str, str], list[str]] = {}
    for file, run, key in claims:
        files = owners.setdefault((str(run.path), key), [])
        if file not in files:
            files.append(file)
    return [
        f"task run {key!r} of {' and '.join(files)} reads the same sandbox folder "
        f"{Path(run_path) / key}: rename one task id or score the files on separate runs"
        for (run_path, key), files in owners.items()
        if len(files) > 1
    ]
