"""What a session loads and keeps: checks imported on first use, the heap frozen only while
criterion items run (issue 12: per-criterion overhead; issue 21: a scoped freeze, whose
session-level proof is in ``test_core_gc_scope.py``)."""

from __future__ import annotations

import gc
import importlib
import json
import pkgutil
import weakref
from collections.abc import Iterator

import pytest
from core_support import DEFAULT_STORE, Project, criterion_runs, portal_criterion, run_subprocess

import pytest_verial.checks

# private: unit test of the garbage-collector scope (_heap), which has no public face
from pytest_verial import _heap as heap
from pytest_verial.checks import BUILTIN, default_registry

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.checks._registry import builtin_check

# A conftest that writes, at the end of the session, the check modules and the top-level
# packages the session imported.
RECORD_MODULES = """
import json, sys

def pytest_sessionfinish(session):
    checks = sorted(m for m in sys.modules if m.startswith("pytest_verial.checks."))
    packages = sorted({m.partition(".")[0] for m in sys.modules})
    with open("modules.json", "w") as out:
        json.dump({"checks": checks, "packages": packages}, out)
"""


def portal_project(project: Project) -> None:
    """One task, one portal criterion that passes."""
    submitted = [{"path": "status", "expected": "submitted"}]
    criterion = portal_criterion("submitted", "prior_auth_requests", None, None, submitted)
    project.benchmark("pa", {"tasks": [{"id": "pa", "criteria": [criterion]}]})
    project.sandbox("pa", {"portal/prior_auth_requests.json": [{"status": "submitted"}]})


@pytest.mark.parametrize(("workers", "store"), [(0, "none"), (2, "default")])
def test_a_portal_run_imports_no_other_check(project: Project, workers: int, store: str) -> None:
    # and with --verial-store none no SQLAlchemy (half of the plugin's start-up), which it
    # used to import all the same; with the store on the controller imports it to write it
    portal_project(project)
    (project.path / "conftest.py").write_text(RECORD_MODULES, encoding="utf-8")
    args = ("--verial-store", "none") if store == "none" else ()
    code, output = run_subprocess(
        project.path,
        *("-n", str(workers), "--verial-report", "r.json", *args),
        env={"VERIAL_STORE": DEFAULT_STORE},
    )
    assert code == 0, output[-2000:]
    runs = criterion_runs(project.read_report("r.json"))
    assert [run["status"] for run in runs.values()] == ["passed"], runs
    recorded = json.loads((project.path / "modules.json").read_text(encoding="utf-8"))
    loaded = set(recorded["checks"])
    assert "pytest_verial.checks._portal" in loaded or workers  # the controller scores nothing
    heavy = {"fhir", "hl7", "x12", "files", "llm_rubric", "output_consistency", "output_schema"}
    assert not loaded & {f"pytest_verial.checks.{name}" for name in heavy}, loaded
    database = {"sqlalchemy", "alembic", "psycopg", "psycopg2"} & set(recorded["packages"])
    if store == "none":
        assert not database, database
        assert not (project.path / ".verial").exists()
    else:
        assert "sqlalchemy" in database


@pytest.mark.parametrize("workers", [0, 2])
def test_a_session_with_every_plugin_on_ends_without_warnings(
    project: Project, workers: int
) -> None:
    # hypothesis's plugin imports hypothesis in the terminal summary, which checks the random
    # generators it registers with gc.get_referrers(): blind to frozen objects, it warned
    # "register_random was passed an object that could be garbage collected".
    portal_project(project)
    code, output = run_subprocess(
        project.path, "-n", str(workers), env={"PYTEST_ADDOPTS": "", "VERIAL_STORE": DEFAULT_STORE}
    )
    assert code == 0, output[-2000:]
    assert "warnings summary" not in output and "Warning" not in output, output[-2000:]


def test_every_check_module_is_in_the_builtin_table() -> None:
    package = pytest_verial.checks
    defined = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        check = getattr(module, "CHECK", None)
        if check is not None:
            defined[check.name] = info.name
    assert defined == BUILTIN
    assert [builtin_check(name).name for name in BUILTIN] == list(BUILTIN)


def test_a_conftest_check_cannot_take_a_builtin_name() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="'portal-state-match' is registered twice"):
        registry.register(builtin_check("portal-state-match"))
    assert registry.get("no-such-check") is None
    assert "voice-transcript" in registry and len(list(registry)) == len(BUILTIN)


class Node:
    """An object in a reference cycle with itself."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def collector_untouched() -> Iterator[None]:
    """The collector as Python starts it; whatever the test froze is handed back after."""
    heap.release()  # an in-process session before this test may have counted runs
    gc.unfreeze()
    enabled = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        heap.release()
        gc.unfreeze()
        (gc.enable if enabled else gc.disable)()


def test_a_checkpoint_in_the_scope_frees_cycles_before_freezing(
    collector_untouched: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heap, "EVERY", 2)
    heap.enter()
    assert heap.inside() and gc.get_freeze_count() > 0
    gc.disable()  # only the code under test collects
    gc.unfreeze()
    dead = weakref.ref(Node())
    kept = Node()
    heap.checkpoint()
    assert dead() is not None and gc.get_freeze_count() == 0  # not yet: 1 run of 2
    heap.checkpoint()
    assert dead() is None  # collected, not frozen with the rest
    assert gc.get_freeze_count() > 0 and kept.me is kept
    gc.enable()
    heap.leave()
    assert gc.get_freeze_count() == 0 and not heap.inside()


def test_a_checkpoint_outside_the_scope_touches_nothing(
    collector_untouched: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(heap, "EVERY", 1)
    gc.disable()
    dead = weakref.ref(Node())
    heap.checkpoint()
    assert dead() is not None and gc.get_freeze_count() == 0
    gc.enable()


@pytest.mark.parametrize("setting", ["disabled", "threshold 0", "frozen"])
def test_the_scope_leaves_a_configured_collector_alone(
    collector_untouched: None, setting: str
) -> None:
    if setting == "disabled":
        gc.disable()
    elif setting == "threshold 0":
        threshold = gc.get_threshold()
        gc.set_threshold(0)
    else:
        gc.freeze()
    frozen = gc.get_freeze_count()

    def untouched() -> bool:
        """A freeze by the scope would raise the count and an unfreeze empty it; a frozen
        object that dies meanwhile (another thread of the worker frees it) lowers it a little."""
        return (
            frozen // 2 < gc.get_freeze_count() <= frozen if frozen else not gc.get_freeze_count()
        )

    try:
        heap.enter()
        assert not heap.inside() and untouched()
        heap.leave()  # not the scope's freeze: the user's stays
        assert untouched()
    finally:
        gc.enable()
        if setting == "threshold 0":
            gc.set_threshold(*threshold)


def test_a_bulk_build_runs_without_collections_and_freezes_nothing(
    collector_untouched: None,
) -> None:
    with heap.no_gc():
        assert not gc.isenabled()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    with heap.no_gc():  # a caller that had the collector off keeps it off
        pass
    assert not gc.isenabled()
    gc.enable()


SPREAD = """
import os
import pytest


@pytest.mark.parametrize("n", range(8))
def test_where(n):
    with open(f"ran-{n}.txt", "w") as out:
        out.write(os.environ["PYTEST_XDIST_WORKER"])
"""


@pytest.mark.parametrize("dist", ["load", "worksteal"])
def test_python_tests_of_one_module_are_spread_over_the_workers(
    project: Project, dist: str
) -> None:
    # The plugin schedules a session's task runs whole; Python tests beside them used to be
    # grouped by module too, so one slow module kept one worker busy while the other idled.
    portal_project(project)
    (project.path / "test_spread.py").write_text(SPREAD, encoding="utf-8")
    code, output = run_subprocess(project.path, "-n", "2", "--dist", dist)
    assert code == 0, output[-2000:]
    workers = {(project.path / f"ran-{n}.txt").read_text(encoding="utf-8") for n in range(8)}
    assert workers == {"gw0", "gw1"}


@pytest.mark.parametrize("benchmark", ["good", "broken"])
def test_automatic_collection_is_back_on_after_a_session(
    pytester: pytest.Pytester, project: Project, benchmark: str
) -> None:
    # The plugin builds with automatic collection paused (heap.no_gc); a session whose only
    # benchmark file is broken (no criteria, a collection error) must resume it too.
    portal_project(project)
    if benchmark == "broken":
        project.benchmark("pa", "tasks: [unclosed")
    assert gc.isenabled()
    try:
        result = pytester.runpytest_inprocess()
        assert result.ret == (0 if benchmark == "good" else 1)
        assert gc.isenabled()
    finally:
        heap.release()
        gc.enable()


def test_warning_filters_import_nothing_a_plain_install_lacks() -> None:
    """pytest imports the module of each filter's warning class for every item: a class from a
    test-only package (hypothesis) made ./scripts/demo, which installs no test extras, print
    a PytestConfigWarning per item (56 warnings)."""
    import builtins
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    filters = config["tool"]["pytest"]["ini_options"].get("filterwarnings", [])
    for line in filters:
        parts = line.split(":")
        category = parts[2].strip() if len(parts) > 2 else ""
        assert not category or (
            "." not in category and isinstance(getattr(builtins, category, None), type)
        ), line
