"""Fixtures of the core suite; the helpers themselves are in ``core_support.py``."""

from __future__ import annotations

import os
from pathlib import Path

import hypothesis  # noqa: F401
import pytest
from core_support import NO_STORE, Project, score_examples, shared_project

# Imported here, once: pytester restores sys.modules after each in-process run, and the
# hypothesis plugin of every inner session would otherwise re-import (and assert-rewrite)
# hypothesis in its terminal summary, ~2 s per run.


@pytest.fixture
def project(pytester: pytest.Pytester) -> Project:
    """A project in pytester's directory (run it with ``pytester.runpytest``)."""
    return Project(pytester.path)


@pytest.fixture(scope="session")
def shared_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory all xdist workers of this session see (the recipe of xdist's docs)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return base / "core-shared"


@pytest.fixture(autouse=True)
def no_default_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """The results store off in this directory's in-process runs and child sessions, as
    ``core_support.child_env`` has it: a test of the store names its URL, and one of the
    default store sets ``$VERIAL_STORE`` to ``DEFAULT_STORE``."""
    monkeypatch.setenv("VERIAL_STORE", NO_STORE)


@pytest.fixture(scope="session")
def example_runs(shared_base: Path) -> Path:
    """The example benchmarks scored on good-agent and flawed-agent (``score_examples``),
    once for every test that reads those reports, pages or outputs."""
    return shared_project(shared_base, "example-runs", score_examples)
