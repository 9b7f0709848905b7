"""Helpers of the core suite: benchmark projects on disk, child pytest runs, report lookups.

A plain module with a name no other test directory uses (``conftest`` is re-imported per
directory, so importing helpers from it is fragile). Fixtures live in ``conftest.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
JUNIT_XSD = REPO.parent / "shared" / "data" / "junit-10.xsd"
REPORT_SCHEMA = REPO / "src" / "pytest_verial" / "report.schema.json"
#: keys whose values legitimately differ between two runs of the same benchmark
TIMING_KEYS = frozenset({"started_at", "completed_at", "duration"})


class Project:
    """A directory holding benchmark files, run directories and conftests for one test."""

    def __init__(self, path: Path) -> None:
        self.path = path
        ini = path / "pytest.ini"
        if not ini.exists():  # pin rootdir: node ids are relative to this directory
            ini.write_text("[pytest]\n", encoding="utf-8")

    def benchmark(self, name: str, data: Any, fmt: str = "yaml") -> Path:
        """Write ``<name>.verial.<fmt>``; ``data`` is text (written as is) or an object."""
        path = self.path / f"{name}.verial.{fmt}"
        if isinstance(data, bytes):
            path.write_bytes(data)
        elif isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        elif fmt == "json":
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    def sandbox(self, task_key: str, files: dict[str, Any], run: str = "sandbox") -> Path:
        """Write files of one task run's sandbox (objects as JSON, str/bytes as they are)."""
        base = self.path / run / task_key
        for rel, content in files.items():
            target = base / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            elif isinstance(content, str):
                target.write_text(content, encoding="utf-8")
            else:
                target.write_text(json.dumps(content), encoding="utf-8")
        base.mkdir(parents=True, exist_ok=True)
        return base

    def run_yaml(self, data: dict[str, Any], run: str = "sandbox") -> None:
        """Write ``run.yaml`` of a run directory."""
        (self.path / run).mkdir(parents=True, exist_ok=True)
        (self.path / run / "run.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")

    def conftest(self, source: str) -> None:
        """Write ``conftest.py`` at the project root."""
        (self.path / "conftest.py").write_text(source, encoding="utf-8")

    def read_report(self, name: str = "report.json") -> dict[str, Any]:
        """Load a JSON report written into the project."""
        return json.loads((self.path / name).read_text(encoding="utf-8"))


def pytest_command(*args: str) -> list[str]:
    """``python -m pytest`` for a child process, without the cache plugin."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]


def child_env() -> dict[str, str]:
    """The environment for a child pytest: nothing from the outer session leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_subprocess(path: Path, *args: str, timeout: float = 120) -> tuple[int, str]:
    """Run pytest in ``path`` in a child process; return (exit code, stdout + stderr)."""
    proc = subprocess.run(
        pytest_command(*args), cwd=path, env=child_env(), capture_output=True, text=True,
        timeout=timeout, check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def strip_timing(value: Any) -> Any:
    """A copy of a report without the keys that hold times."""
    if isinstance(value, dict):
        return {k: strip_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


def criterion_runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every criterion run of a report, by node id."""
    return {
        c["nodeid"]: c
        for t in report["benchmark_run"]["task_runs"]
        for c in t["criterion_runs"]
    }


def task_runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every task run of a report, by its id (``file::task``)."""
    return {t["id"]: t for t in report["benchmark_run"]["task_runs"]}


def portal_criterion(cid: str, resource: str, key: str | None, value: Any,
                     assertions: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A ``portal-state-match`` criterion."""
    correlate: dict[str, Any] = {"resource": resource}
    if key is not None:
        correlate["key"] = key
    if value is not None:
        correlate["value"] = value
    return {"id": cid, **extra, "assertion": {
        "assert": "portal-state-match", "correlate_by": correlate, "assertions": assertions}}


def voice_criterion(cid: str, speaker: str | None = "agent", contains: list[str] | None = None,
                    not_contains: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """A ``voice-transcript`` criterion."""
    assertion: dict[str, Any] = {"assert": "voice-transcript"}
    if speaker is not None:
        assertion["speaker"] = speaker
    if contains:
        assertion["contains"] = contains
    if not_contains:
        assertion["not_contains"] = not_contains
    return {"id": cid, **extra, "assertion": assertion}
