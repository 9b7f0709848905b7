"""Helpers of the store's tests: small benchmark projects and child pytest runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import (  # noqa: E402
    Project,
    interruptible_pytest,
    pytest_command,
    voice_criterion,
)
from core_support import child_env as _core_child_env  # noqa: E402


def child_env() -> dict[str, str]:
    """The core suite's child environment with the results store as a user has it: the
    core suite turns the store off in its children (``$VERIAL_STORE=none``), the store's own
    tests are about the default store."""
    env = _core_child_env()
    env.pop("VERIAL_STORE", None)
    if "VERIAL_STORE" in os.environ:
        env["VERIAL_STORE"] = os.environ["VERIAL_STORE"]
    return env


GREETS = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}]}

#: a check that kills the process scoring it (kill -9 mid-session)
KILL_CHECK = """
import os, signal
from typing import Literal
from pydantic import Field
from pytest_verial import AssertionSpec, CheckSpec


class Kill(AssertionSpec):
    kind: Literal["kill"] = Field(alias="assert")


def kill(spec, ctx):
    os.kill(os.getpid(), signal.SIGKILL)


def pytest_verial_checks():
    return [CheckSpec(name="kill", model=Kill, run=kill)]
"""


def greeting_project(
    path: Path, tasks: int = 4, criteria: int = 2, kill_at: int | None = None
) -> Project:
    """``tasks`` tasks of ``criteria`` voice criteria (one in two fails); task ``kill_at``
    (1-based) kills the process at its second criterion."""
    project = Project(path)
    if kill_at is not None:
        project.conftest(KILL_CHECK)
    spec = []
    for t in range(1, tasks + 1):
        crits: list[dict[str, Any]] = []
        for c in range(1, criteria + 1):
            word = "good morning" if c % 2 else "goodbye"
            crits.append(voice_criterion(f"c{c}", contains=[word]))
        if t == kill_at:
            crits.insert(1, {"id": "boom", "assertion": {"assert": "kill"}})
        spec.append({"id": f"t{t:03d}", "criteria": crits})
        project.sandbox(f"t{t:03d}", GREETS)
    project.benchmark("greet", {"benchmark": "greet", "version": 1, "tasks": spec})
    return project


def run_pytest(
    path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        pytest_command("-p", "no:randomly", *args),
        cwd=path,
        env={**child_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_verial(
    path: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", *args],
        cwd=path,
        env={**child_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


__all__ = [
    "Project",
    "child_env",
    "greeting_project",
    "interruptible_pytest",
    "pytest_command",
    "run_pytest",
    "run_verial",
]
