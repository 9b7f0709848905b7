"""Fixtures of the core suite; the helpers themselves are in ``core_support.py``."""

from __future__ import annotations

from pathlib import Path

import hypothesis  # noqa: F401
import pytest
from core_support import Project

# Imported here, once: pytester restores sys.modules after each in-process run, and the
# hypothesis plugin of every inner session would otherwise re-import (and assert-rewrite)
# hypothesis in its terminal summary, ~2 s per run.


@pytest.fixture
def project(pytester: pytest.Pytester) -> Project:
    """A project in pytester's directory (run it with ``pytester.runpytest``)."""
    return Project(pytester.path)


@pytest.fixture(scope="module")
def module_dir(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A fresh directory per test module, for projects shared by module-scoped runs."""
    return tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])

