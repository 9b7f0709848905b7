"""Helpers of the store's tests: small benchmark projects and child pytest runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import (  # noqa: E402
    EXAMPLE_AGENTS,
    Project,
    interruptible_pytest,
    pytest_command,
    score_examples,
    shared_project,
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
    """``verial ARGS`` in ``path`` with a child's environment, run in this process (``main``,
    as the console script calls it, an argument error's ``SystemExit`` taken as its exit
    status): the store's commands need no process of their own, and a child's start-up
    (Python, pytest_verial and SQLAlchemy imported anew) cost ~1 s of CPU each. An exception
    escaping ``main`` fails the test, where the console script would print a traceback; a
    warning goes to the stderr returned, as a child prints it."""
    import contextlib
    import io
    import warnings

    import pytest

    from pytest_verial.cli import main

    wanted = {**child_env(), **(env or {})}
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n not in wanted]:
            patch.delenv(name)
        for name, value in wanted.items():
            patch.setenv(name, value)
        patch.chdir(path)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("default")  # Python's own, as in a child
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: usage errors, --help
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
                if isinstance(exc.code, str):
                    print(exc.code, file=sys.stderr)
        for w in caught:
            err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
    return subprocess.CompletedProcess(["verial", *args], code, out.getvalue(), err.getvalue())


__all__ = [
    "EXAMPLE_AGENTS",
    "Project",
    "child_env",
    "greeting_project",
    "interruptible_pytest",
    "pytest_command",
    "run_pytest",
    "run_verial",
    "score_examples",
    "shared_project",
]
