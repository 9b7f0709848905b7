"""The plugin's freeze of the garbage collector is scoped to its own criterion items (issue 21,
``heap.py``): a user's tests, fixtures and plugins in the same session see the collector as
they configured it, before, between and after benchmark files, in any order and under xdist."""

from __future__ import annotations

import gc
import importlib.util
import json
from typing import Any

import pytest
from core_support import Project, portal_criterion, run_subprocess

# A user's conftest plugin: configures the collector as GC_MODE says, keeps an object made at
# configure in a dict (its referrer), and records what its hooks see, at the session's end.
CONFTEST = """
import atexit, gc, json, os

MODE = os.environ["GC_MODE"]
KEEPER = {}
SEEN = {"items": {}, "user_reports": []}


class Token:
    pass


def expected():
    return {
        "enabled": MODE != "disabled",
        "threshold": [5000, 20, 20] if MODE == "thresholds" else list(ORIGINAL),
    }


def state():
    return {
        "freeze_count": gc.get_freeze_count(),
        "enabled": gc.isenabled(),
        "threshold": list(gc.get_threshold()),
        "referrer_found": any(r is KEEPER for r in gc.get_referrers(KEEPER["token"])),
    }


ORIGINAL = gc.get_threshold()


def at_exit():
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"atexit-{worker}.json", "w") as out:
        json.dump(state(), out)


def pytest_configure(config):
    atexit.register(at_exit)  # what the interpreter's exit sees
    KEEPER["token"] = Token()
    if MODE == "disabled":
        gc.disable()
    elif MODE == "thresholds":
        gc.set_threshold(5000, 20, 20)
    elif MODE == "frozen":
        gc.freeze()


def pytest_runtest_logreport(report):
    if report.when != "call":
        return
    if report.nodeid.endswith(".py") or ".py::" in report.nodeid:
        SEEN["user_reports"].append(state())
    else:  # a criterion item: the plugin's scope
        SEEN["items"][report.nodeid] = gc.get_freeze_count()


def pytest_sessionfinish(session):
    SEEN["sessionfinish"] = state()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"seen-{worker}.json", "w") as out:
        json.dump(SEEN, out)
"""

# The user's tests: each one checks what it sees, and so does a session fixture's teardown.
USER_TEST = """
import atexit, gc, json, os
import pytest
import conftest


@pytest.fixture(scope="module")
def module_state():
    yield
    seen = conftest.state()
    name = os.path.basename(__file__) + "-" + os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"teardown-{name}.json", "w") as out:
        json.dump(seen, out)


@pytest.mark.parametrize("n", range(3))
def test_sees_the_collector_as_configured(n, module_state):
    seen = conftest.state()
    expected = conftest.expected()
    if conftest.MODE == "frozen":
        assert seen["freeze_count"] > 0  # the user's own freeze, untouched
    else:
        assert seen["freeze_count"] == 0
        assert seen["referrer_found"]
    assert seen["enabled"] == expected["enabled"]
    assert seen["threshold"] == expected["threshold"]
"""


def mixed_project(project: Project) -> None:
    """User tests before, between and after two benchmark files (in name order)."""
    for name in ("bench2", "bench4"):
        criteria = [
            portal_criterion(
                f"c{i}", "claims", "claim_id", f"C{i}", [{"path": "ok", "expected": 1}]
            )
            for i in range(4)
        ]
        project.benchmark(f"test_{name}", {"tasks": [{"id": name, "criteria": criteria}]})
        project.sandbox(
            name, {"portal/claims.json": [{"claim_id": f"C{i}", "ok": 1} for i in range(4)]}
        )
    project.conftest(CONFTEST)
    for name in ("test_1_before", "test_3_between", "test_5_after"):
        (project.path / f"{name}.py").write_text(USER_TEST, encoding="utf-8")


#: the files in the order given on the command line (pytest keeps it without pytest-randomly)
ORDER = (
    "test_1_before.py",
    "test_bench2.verial.yaml",
    "test_3_between.py",
    "test_bench4.verial.yaml",
    "test_5_after.py",
)


def seen_files(project: Project, prefix: str) -> list[dict[str, Any]]:
    return [
        json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(project.path.glob(f"{prefix}*.json"))
    ]


@pytest.mark.parametrize(
    ("mode", "args"),
    [
        ("default", ("-p", "no:randomly")),
        ("default", ("-p", "randomly")),
        ("default", ("-n", "2")),
        ("disabled", ("-p", "no:randomly")),
        ("thresholds", ("-p", "no:randomly")),
        ("thresholds", ("-n", "2")),
        ("frozen", ("-p", "no:randomly")),
    ],
)
def test_user_tests_and_plugins_see_the_collector_as_configured(
    project: Project, mode: str, args: tuple[str, ...]
) -> None:
    if "randomly" in args and importlib.util.find_spec("pytest_randomly") is None:
        pytest.skip("pytest-randomly is not installed")
    mixed_project(project)
    code, output = run_subprocess(project.path, *args, "-v", *ORDER, env={"GC_MODE": mode})
    assert code == 0, output[-3000:]
    assert output.count("PASSED") == 9 + 8, output[-3000:]  # 9 user tests, 8 criteria
    if "no:randomly" in args:
        # -p no:randomly: the user's tests ran before, between and after the benchmark files
        order = [line.split("::")[0] for line in output.splitlines() if " PASSED" in line]
        assert list(dict.fromkeys(order)) == list(ORDER), order
    seen = seen_files(project, "seen-")
    assert seen, output[-2000:]
    for record in seen:
        for state in [*record["user_reports"], record["sessionfinish"]]:
            if mode == "frozen":
                assert state["freeze_count"] > 0, state
            else:
                assert state["freeze_count"] == 0 and state["referrer_found"], state
            assert state["enabled"] == (mode != "disabled"), state
            if mode == "thresholds":
                assert state["threshold"] == [5000, 20, 20], state
    teardowns = seen_files(project, "teardown-") + seen_files(project, "atexit-")
    assert len(teardowns) >= 4
    for state in teardowns:
        assert state["enabled"] == (mode != "disabled")
        assert mode == "frozen" or (state["freeze_count"] == 0 and state["referrer_found"])
    # The freeze is in effect inside the plugin's items (on the process that runs them: not
    # the xdist controller) unless the collector is off or someone else froze.
    scored = seen_files(project, "seen-gw") if "-n" in args else seen
    criteria = {k: v for record in scored for k, v in record["items"].items()}
    assert len(criteria) == 8
    if mode == "disabled":
        assert set(criteria.values()) == {0}
    else:
        assert all(count > 0 for count in criteria.values())


IN_PROCESS_TEST = """
import gc


def test_nothing_frozen():
    assert gc.get_freeze_count() == 0 and gc.isenabled()
"""


def test_an_in_process_session_leaves_nothing_frozen(
    pytester: pytest.Pytester, project: Project
) -> None:
    # pytester's in-process runs share the outer session's interpreter: nothing of the inner
    # session's scope may stay frozen for the outer one's next test.
    criterion = portal_criterion("c", "claims", "claim_id", "C", [{"path": "ok", "expected": 1}])
    for name in ("a", "c"):
        project.benchmark(f"test_{name}", {"tasks": [{"id": name, "criteria": [criterion]}]})
        project.sandbox(name, {"portal/claims.json": [{"claim_id": "C", "ok": 1}]})
    (project.path / "test_b.py").write_text(IN_PROCESS_TEST, encoding="utf-8")
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=3)
    assert gc.get_freeze_count() == 0 and gc.isenabled()
