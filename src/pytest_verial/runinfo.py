"""Run directories and their ``run.yaml`` metadata (DESIGN §3.2).

A run directory holds one sandbox per task run (``<task_id>/`` or ``<task_id>[<entity>]/``)
and an optional ``run.yaml``. Secrets are never values here: live sources name environment
variables (``client_secret_env: FHIR_SECRET``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from .errors import RunConfigError
from .models import Model
from .safeparse import DataError, load_yaml


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


class RunDir:
    """One run directory: its path, label and parsed ``run.yaml``."""

    def __init__(self, path: Path, label: str | None = None) -> None:
        self.path = path
        self.label = label or path.name
        self.config = load_run_config(path)

    def sandbox_path(self, task_key: str) -> Path:
        """The sandbox directory of one task run (it may not exist: empty sources)."""
        return self.path / task_key

    def task_meta(self, task_key: str, task_id: str) -> TaskRunMeta:
        """``tasks.<key>`` of run.yaml, falling back to the bare task id, else empty."""
        return self.config.tasks.get(task_key) or self.config.tasks.get(task_id) or TaskRunMeta()


def load_run_config(path: Path) -> RunConfig:
    """Parse ``<path>/run.yaml`` (or ``run.json``); a missing file is an empty config."""
    for name in ("run.yaml", "run.yml", "run.json"):
        file = path / name
        if file.is_file():
            break
    else:
        return RunConfig()
    try:
        data = load_yaml(file.read_text(encoding="utf-8-sig"), str(file)) or {}
    except UnicodeDecodeError as exc:
        raise RunConfigError(f"{file}: not UTF-8 text (byte {exc.start})") from None
    except DataError as exc:
        raise RunConfigError(f"{exc}") from None
    if not isinstance(data, dict):
        raise RunConfigError(f"{file}: expected a mapping at the top level")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"field {'.'.join(str(p) for p in e['loc'])!r}: {e['msg']}" for e in exc.errors()
        )
        raise RunConfigError(f"{file}: {problems}") from None
