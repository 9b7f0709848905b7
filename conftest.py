"""Repository-level pytest configuration for the plugin's own tests."""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _lean_pytester(request: pytest.FixtureRequest) -> None:
    """Inner pytest runs skip hypothesis's plugin (its terminal summary costs ~3 s a run),
    anyio's (it imports trio in each xdist worker: 0.5 s of CPU a process) and
    assertion rewriting: in-process runs re-import the plugin's modules, and CPython 3.11's
    ``ast.parse`` then fails now and then with "AST constructor recursion depth mismatch"
    (seen once in a loaded -n 2 run, importing a module at the start of the inner run loop).
    Benchmark criteria use no ``assert`` statements, so nothing is lost."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester")  # pytester clears PYTEST_ADDOPTS first
        request.getfixturevalue("monkeypatch").setenv(
            "PYTEST_ADDOPTS", "-p no:hypothesispytest -p no:schemathesis -p no:anyio --assert=plain"
        )


_REPORT_MARK = b'"schema": "pytest-verial/report/'


@pytest.fixture(autouse=True)
def _every_report_valid(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every JSON report a test writes under its temporary folder is valid against the
    report's JSON Schema, which is generated from the result types (``verial schema report``):
    the schema cannot drift from what the plugin writes. Checked after the test, also for
    reports written by subprocesses; a test that writes a damaged report on purpose is marked
    ``invalid_report``."""
    if "tmp_path" not in request.fixturenames or request.node.get_closest_marker("invalid_report"):
        yield
        return
    root: Path = request.getfixturevalue("tmp_path")
    yield
    problems = []
    for path in _json_files(root):
        try:
            head = path.read_bytes()[:200]
        except OSError:
            continue
        if _REPORT_MARK not in head:
            continue
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError):
            continue  # not JSON: the test that wrote it says why it is there
        errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path)
            problems.append(
                f"{path}: {len(errors)} schema errors; first at {where}: {errors[0].message[:300]}"
            )
        else:
            problems.extend(_round_trip(path, data))
    if problems:
        pytest.fail("report not valid against its schema:\n" + "\n".join(problems))


def _json_files(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("node_modules", ".venv")]
        for name in filenames:
            if name.endswith(".json"):
                yield Path(dirpath) / name


@functools.cache
def _validator() -> Any:
    import jsonschema

    from pytest_verial._results import report_schema  # private: the report schema has no face

    schema = report_schema()
    return jsonschema.Draft202012Validator(schema)


#: reports larger than this are left to the store's own tests (bench/store.py imports 60,000 tasks)
_ROUND_TRIP_LIMIT = 20_000_000


def _round_trip(path: Path, data: dict[str, Any]) -> list[str]:
    """The results store gives back every report the suite writes: imported into a store
    (one per test process), then exported, it is the same report (issue 19)."""
    from pytest_verial import Report

    try:
        if path.stat().st_size > _ROUND_TRIP_LIMIT:
            return []
        report = Report.from_json(data)
    except (OSError, ValueError):
        return []  # not a report the store takes: verial import refuses it (tested there)
    store = _round_trip_store()
    with _no_secrets():  # the store masks the secrets this process knows: not what is checked
        result = store.import_report(report)
        back = store.report_of_session(result.session_id).to_json()
    given = report.to_json()
    if back != given:
        return [
            f"{path}: the results store did not give this report back as it was imported "
            f"(first difference: {_first_difference(given, back)})"
        ]
    return []


def _first_difference(given: Any, back: Any, where: str = "") -> str:
    """The JSON path of the first value that differs, with both values (shortened)."""
    if isinstance(given, dict) and isinstance(back, dict):
        for key in sorted(given.keys() | back.keys()):
            if given.get(key, "<missing>") != back.get(key, "<missing>"):
                return _first_difference(
                    given.get(key, "<missing>"), back.get(key), f"{where}/{key}"
                )
    elif isinstance(given, list) and isinstance(back, list) and len(given) == len(back):
        for index, (a, b) in enumerate(zip(given, back, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{where}/{index}")
    return f"{where or '/'}: {str(given)[:120]!r} became {str(back)[:120]!r}"


@contextlib.contextmanager
def _no_secrets() -> Iterator[None]:
    """No secret registered in this process for the block (restored after). The registry is
    process-wide: a secret an earlier test of this xdist worker registered stays (a signing
    key "k-31-agreement-5e1c" read by test_core_report_agreement.py), and the store masks
    every 8 characters of it in what it stores ("agreement" in another test's folder name),
    so a report written without it came back masked. The round trip checks that the store
    keeps a report; its masking has tests of its own."""
    from pytest_verial import _secrets

    saved = set(_secrets._SECRETS)
    _secrets.reset()
    try:
        yield
    finally:
        for value in saved:
            _secrets.register(value)


@functools.cache
def _round_trip_store() -> Any:
    import atexit
    import shutil
    import tempfile

    from pytest_verial.store import open_store

    folder = tempfile.mkdtemp(prefix="verial-round-trip-")
    atexit.register(shutil.rmtree, folder, True)
    store = open_store(f"sqlite:///{folder}/results.db")
    atexit.register(store.close)
    return store
