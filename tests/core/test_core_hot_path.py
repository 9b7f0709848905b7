"""What a criterion costs on the session's hot path (issue 33, BENCHMARKS.md "issue 33, wave 8:
i33-hot"), without a change in what the session does.

- ``verial_sandbox`` asks pytest for no ``request`` fixture: pytest builds a new fixture
  definition each time a fixture asks for ``request`` (three per criterion item, each reading a
  lambda's signature). A Python test that asks for it still gets the one-line usage error
  naming it.
- A session that compares no value by regex imports no ``regex`` package (~20-30 ms of every
  process's collection).
- The task runs of the selected items and each task run's count of criteria are found once per
  task run, whatever the items' order.
"""

from __future__ import annotations

import json

import pytest
from core_support import Project, modules_of_session, portal_criterion

FIXTURE_ARGS = """
import json

def pytest_fixture_setup(fixturedef, request):
    if fixturedef.argname == "verial_sandbox":
        with open("fixture-args.json", "a") as out:
            out.write(json.dumps(list(fixturedef.argnames)) + "\\n")
"""

PYTHON_TEST = """
def test_asks_for_the_sandbox(verial_sandbox):
    pass
"""


def _two_tasks(project: Project) -> None:
    crit = [{"path": "status", "expected": "x"}]
    tasks = [
        {
            "id": t,
            "criteria": [portal_criterion(f"c{i}", "claims", None, None, crit) for i in (1, 2, 3)],
        }
        for t in ("a", "b")
    ]
    project.benchmark("load", {"tasks": tasks}, fmt="json")
    for t in ("a", "b"):
        project.sandbox(t, {"portal/claims.json": [{"status": "x"}]})


def test_the_sandbox_fixture_asks_for_no_request(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    _two_tasks(project)
    project.conftest(FIXTURE_ARGS)
    (pytester.path / "test_python.py").write_text(PYTHON_TEST, encoding="utf-8")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--verial-run", "sandbox")
    result.assert_outcomes(passed=6, errors=1)
    lines = (pytester.path / "fixture-args.json").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [[]] * 7  # six criteria and the Python test
    result.stdout.fnmatch_lines(
        ["*verial_sandbox is for benchmark criteria; test_python.py::test_asks_for_the_sandbox"
         " is not one*"]
    )  # fmt: skip


def test_a_session_without_a_regex_imports_no_regex(project: Project) -> None:
    _two_tasks(project)
    (project.path / "conftest.py").write_text(
        "import json, sys\n\ndef pytest_sessionfinish(session):\n"
        "    with open('modules.json', 'w') as out:\n        json.dump(sorted(sys.modules), out)\n",
        encoding="utf-8",
    )
    modules = modules_of_session(project.path, "--verial-run", "sandbox")
    assert "pytest_verial._compare" in modules  # the check that compares values ran
    assert not {m for m in modules if m == "regex" or m.startswith("regex.")}


def test_a_regex_criterion_still_compares(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    crit = [{"path": "status", "op": "regex", "expected": "^sub"}]
    failing = [{"path": "status", "op": "regex", "expected": "^den"}]
    criteria = [
        portal_criterion("matches", "claims", None, None, crit),
        portal_criterion("differs", "claims", None, None, failing),
    ]
    project.benchmark("re", {"tasks": [{"id": "a", "criteria": criteria}]}, fmt="json")
    project.sandbox("a", {"portal/claims.json": [{"status": "submitted"}]})
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--verial-run", "sandbox")
    result.assert_outcomes(passed=1, failed=1)


SHUFFLE = """
import random

def pytest_collection_modifyitems(items):
    random.Random(7).shuffle(items)
"""


def test_task_runs_in_any_item_order(pytester: pytest.Pytester) -> None:
    """Items of two task runs mixed (a reordering plugin): each task run is still scored whole,
    and a run folder holding neither task is still refused before anything runs."""
    project = Project(pytester.path)
    _two_tasks(project)
    project.conftest(SHUFFLE)
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", "-v", "--verial-run", "sandbox", "--verial-report", "r.json"
    )
    result.assert_outcomes(passed=6)
    order = [line.split("::")[1] for line in result.outlines if " PASSED" in line]
    assert order != sorted(order)  # the items did run mixed
    report = project.read_report("r.json")
    (run,) = report["benchmark_runs"]
    scored = {t["task_key"]: len(t["criterion_runs"]) for t in run["task_runs"]}
    assert scored == {"a": 3, "b": 3}
    (pytester.path / "empty").mkdir()
    refused = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--verial-run", "empty")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
