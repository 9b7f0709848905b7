"""Hooks of the whole suite."""

from __future__ import annotations

import compileall
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy  # noqa: F401  (see below)
import pytest
import sqlalchemy.dialects.postgresql  # noqa: F401  (see below)
import sqlalchemy.dialects.sqlite  # noqa: F401
from hypothesis import HealthCheck, settings

# The suite runs on two shared cores, often beside other work: a property test is judged by
# what its examples find, never by how fast they run (hypothesis's deadline and its too-slow
# health check are timed assertions, which failed under load).
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

# numpy is imported here, before any in-process pytester run: pytester takes a snapshot of
# sys.modules around each inline run and drops what the run imported, and numpy's C core
# cannot be imported twice in one process ("cannot load module more than once per process").
# The first compare (a paired bootstrap) inside an inline run would otherwise break every
# later one in the same worker. SQLAlchemy's compiled modules likewise: a session on an
# existing SQLite store imports none of it (the plugin's _load_store_driver), and one that
# then creates or migrates a store would import it inside the inline run.

SRC = Path(__file__).resolve().parents[1] / "src"

#: The conftest of the session that writes the bytecode caches: it imports every module of
#: the plugin and of xdist after pytest has installed its assertion-rewriting import hook.
IMPORT_EVERYTHING = """
import importlib, pkgutil

def pytest_configure(config):
    for name in ("pytest_verial", "xdist"):
        try:
            package = importlib.import_module(name)
        except ImportError:
            continue
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            if not info.name.endswith("__main__"):
                try:
                    importlib.import_module(info.name)
                except Exception:
                    pass
"""


def pytest_configure(config: pytest.Config) -> None:
    """Once per session, before any xdist worker starts: the plugin's bytecode caches.

    Every child pytest runs with ``PYTHONDONTWRITEBYTECODE=1`` (``core_support.child_env``;
    this machine sets it for every process too), so without caches on disk each child process,
    xdist workers included, compiled and assertion-rewrote the plugin's ~70 modules anew:
    0.3 s of CPU of a -n 0 child scoring two criteria (1.7 s), 1 s of a -n 2 one (5.2 s), 0.3 s
    of each ``verial`` command or server start. Children still write
    nothing; they read the caches written here: plain ones (workers of in-process runs, which
    use ``--assert=plain``) and pytest's rewritten ones (``*-pytest-<version>.pyc``), written
    by one pytest session that imports every module. Both are keyed to the source's mtime and
    size as Python's own are, so an edited module is compiled afresh. Only a cache: a failure
    here costs time, never a result. Only for a session with workers (``-n``, as
    ``scripts/test`` runs the suite): a run of one file or ``--co`` does not pay for it."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    compileall.compile_dir(SRC / "pytest_verial", quiet=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest -p no:schemathesis -p no:anyio"
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        Path(tmp, "conftest.py").write_text(IMPORT_EVERYTHING, encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--co"]
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(command, cwd=tmp, env=env, capture_output=True, timeout=120)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``xdist_group`` under pytest 9: pytest-xdist 3.8 names an item's group by setting
    ``item._nodeid``, which pytest 9 no longer reads, so ``--dist loadgroup`` spread the
    tests of one group over both workers (the local model servers beside the kill -9 load).
    Here the group goes into the node id as xdist means it to, where xdist's did not."""
    if not getattr(config.option, "loadgroup", False):  # set by xdist on its workers
        return
    try:
        from _pytest.nodeid import coerce_node_id  # pytest 9; xdist's own works before
    except ImportError:
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        if names and item.nodeid.rfind("@") <= item.nodeid.rfind("]"):
            item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(sorted(names))}")  # type: ignore[attr-defined]
    items.sort(key=_first)


#: The longest tests that belong to no xdist group, longest first (measured: the suite at
#: load 10-18 in wave 7, where each took 40-100 s of wall). ``--dist loadgroup`` hands the
#: groups out first (largest first), then every other test in collection order, so one of
#: these collected late (tests/store, tests/x12 sort last) ran on one worker while the other
#: had nothing left: run first, they are spread while there is other work to balance them.
#: Only the order changes; a test missing from this list runs where it always did.
FIRST = (
    "tests/core/test_core_shard.py::test_three_shards_merge_into_the_unsharded_report",
    "tests/store/test_trend_cli.py::test_trend_without_task_runs_for_plots",
    "tests/bench/test_bench_scale.py::",
    "tests/core/test_core_readme.py::test_readme_session_runs_as_printed",
    "tests/judge/test_judge_secrets.py::test_a_cached_rerun_never_writes_the_echoed_key",
    "tests/judge/test_judge_concurrency.py::",
    "tests/core/test_core_footprint.py::test_a_session_with_every_plugin_on_ends_without_warnings",
    "tests/service/test_service_revocation.py::test_revoking_a_key_ends_its_run_tokens",
    "tests/core/test_core_resume.py::test_resume_after_a_killed_run_gives_the_uninterrupted",
    "tests/core/test_core_compare_runs.py::test_baseline_deltas_follow_the_verial_summary",
    "tests/core/test_core_benchmark_runs.py::test_reports_equal_after_a_crashed_worker",
    "tests/core/test_core_points.py::test_points_under_xdist_and_shards_match",
)


def _first(item: pytest.Item) -> int:
    """The item's rank in ``FIRST`` (``len(FIRST)`` when absent): a stable sort key."""
    for rank, prefix in enumerate(FIRST):
        if item.nodeid.startswith(prefix):
            return rank
    return len(FIRST)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """One real PostgreSQL per test process (``tests/store/pg_server.py``), shared by the
    store's and the service's tests, each of which takes a fresh database of it
    (``new_database``): they started one each before, plus one for the two-servers test,
    an initdb and a start-up (~2.5 s wall, 4 s to stop and remove) apiece per worker."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'pytest-verial[postgres]')")
    sys.path.insert(0, str(Path(__file__).resolve().parent / "store"))
    from pg_server import pg_server

    try:
        server = pg_server()
        running = server.__enter__()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    try:
        yield running
    finally:
        server.__exit__(None, None, None)
