"""Judge criteria of one task run scored at once (``--verial-judge-concurrency``, issue 21).

A stub chat-completions server on 127.0.0.1 records how many requests are in flight at once
and answers each from the request (the same reply whatever the order), so a session scored
with N = 3 must give the report of N = 1 apart from timings.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from judge_support import StubJudge, completion, ratings

from pytest_verial import UsageError, verify_task

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from core_support import child_env, interruptible_pytest, strip_timing  # noqa: E402

JUDGED = 10
#: under xdist a task run goes whole to one worker (``_xdist_scheduling``): a project of one task
#: is scored on one worker whatever -n says, so its xdist case runs -n 1 (the controller and a
#: worker, as at -n 2); a second worker would only start, 2 s of CPU, and idle
WORKERS = pytest.mark.parametrize("workers", ["0", "1"])
#: two task runs, one on each worker
TWO_WORKERS = pytest.mark.parametrize("workers", ["0", "2"])
OUTPUT = "# PA letter\nMaria Chen needs a lumbar MRI: 6 weeks of physical therapy failed.\n"


def rubric(index: int) -> dict[str, Any]:
    """Judge criterion ``jNN``: its principle names it, and the stub rates it 1 + NN % 5."""
    return {
        "id": f"j{index:02d}",
        "assertion": {
            "assert": "llm-rubric",
            "pass_threshold": 0.5,
            "principles": [f"Principle marker-{index:02d}: the letter is clear."],
        },
    }


def task(task_id: str, contains: str = "lumbar MRI") -> dict[str, Any]:
    """A task of one deterministic criterion and ``JUDGED`` judge criteria."""
    criteria = [
        {"id": "mentions-mri", "assertion": {"assert": "output-match", "contains": [contains]}}
    ]
    return {"id": task_id, "criteria": criteria + [rubric(i) for i in range(1, JUDGED + 1)]}


def project(root: Path, *tasks: dict[str, Any]) -> Path:
    """A benchmark of ``tasks`` and a run folder where each wrote OUTPUT."""
    root.mkdir(parents=True, exist_ok=True)
    bench = {"benchmark": "judge-at-once", "version": 1, "tasks": list(tasks)}
    (root / "bench.verial.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    for each in tasks:
        (root / "run" / each["id"]).mkdir(parents=True, exist_ok=True)
        (root / "run" / each["id"] / "output.md").write_text(OUTPUT, encoding="utf-8")
    costs = {each["id"]: {"cost": 1.0} for each in tasks}
    run_yaml = {"executor_model": "claude-sonnet-4-5", "tasks": costs}
    (root / "run" / "run.yaml").write_text(yaml.safe_dump(run_yaml), encoding="utf-8")
    return root


def marker(request: dict[str, Any]) -> int:
    """The criterion a judge request is for (its principle's marker)."""
    text = "".join(str(m.get("content")) for m in request["messages"])
    found = re.search(r"marker-(\d+)", text)
    assert found, text
    return int(found.group(1))


def by_marker(failing: int | None = None) -> Any:
    """Replies that depend only on the request: rating 1 + NN % 5; 400 for ``failing``."""

    def respond(request: dict[str, Any]) -> tuple[int, Any]:
        index = marker(request)
        if index == failing:
            return 400, '{"error": {"message": "bad request"}}'
        return 200, completion(ratings(1 + index % 5), prompt_tokens=800 + index)

    return respond


def arguments(stub: StubJudge, workers: str, concurrency: int, *extra: str) -> list[str]:
    return [
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-n",
        workers,
        "--verial-run",
        "run",
        "--verial-report",
        "report.json",
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub.url,
        "--verial-judge-cache-dir",
        "off",
        "--verial-judge-retries",
        "0",
        "--verial-judge-concurrency",
        str(concurrency),
        *extra,
    ]


def score(
    pytester: pytest.Pytester, stub: StubJudge, workers: str, concurrency: int, *extra: str
) -> tuple[dict[str, Any], pytest.RunResult]:
    """Score the project in ``pytester.path``; the JSON report and pytest's result."""
    result = pytester.runpytest(*arguments(stub, workers, concurrency, *extra))
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return report, result


def criterion_runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        c["criterion_id"]: c
        for r in report["benchmark_runs"]
        for t in r["task_runs"]
        for c in t["criterion_runs"]
    }


def comparable(report: dict[str, Any]) -> dict[str, Any]:
    """What two sessions scoring the same replies share: the report without times."""
    return {
        "benchmark_runs": strip_timing(report["benchmark_runs"]),
        "verification": report["session"]["verification"],
    }


@WORKERS
def test_at_most_n_calls_in_flight_and_the_report_of_one_at_a_time(
    pytester: pytest.Pytester, stub_judge: StubJudge, workers: str
) -> None:
    project(pytester.path, task("letter"))
    stub_judge.respond = by_marker()
    stub_judge.gather = 2  # requests wait (up to 10 s) until two were in flight at once
    together, result = score(pytester, stub_judge, workers, 3)
    assert 2 <= stub_judge.max_in_flight <= 3
    assert sorted(marker(r) for r in stub_judge.requests) == list(range(1, JUDGED + 1))
    result.assert_outcomes(passed=1 + 6, failed=4)  # ratings 1-2 fail at 0.5

    stub_judge.reply()
    stub_judge.respond = by_marker()
    stub_judge.gather = 2
    stub_judge.gather_timeout = 0.05  # one at a time: a second request never comes
    alone, again = score(pytester, stub_judge, workers, 1)
    assert stub_judge.max_in_flight == 1
    assert comparable(together) == comparable(alone)
    runs = criterion_runs(together)
    assert runs["j03"]["score"] == pytest.approx(0.75)
    assert runs["j03"]["evidence"]["judge"]["tokens"] == {"prompt": 803, "completion": 120}
    assert together["session"]["verification"]["judge_calls"] == JUDGED
    assert [line for line in result.outlines if "::j" in line] == [
        line for line in again.outlines if "::j" in line
    ]


@WORKERS
def test_a_failed_deterministic_criterion_still_gates_every_judge_call(
    pytester: pytest.Pytester, stub_judge: StubJudge, workers: str
) -> None:
    project(pytester.path, task("letter", contains="CPT 72148"))
    stub_judge.respond = by_marker()
    report, _ = score(pytester, stub_judge, workers, 3)
    assert stub_judge.requests == []
    judged = [c for c in criterion_runs(report).values() if c["judge"]]
    assert len(judged) == JUDGED and {c["status"] for c in judged} == {"gated"}
    assert report["session"]["verification"]["saved_by_gating"] == JUDGED


@TWO_WORKERS
def test_a_failing_call_errors_only_its_criterion(
    pytester: pytest.Pytester, stub_judge: StubJudge, workers: str
) -> None:
    """Two task runs (one after the other at -n 0, on two workers at -n 2)."""
    project(pytester.path, task("letter"), task("summary"))
    stub_judge.respond = by_marker(failing=4)
    together, result = score(pytester, stub_judge, workers, 3)
    stub_judge.reply()
    stub_judge.respond = by_marker(failing=4)
    alone, _ = score(pytester, stub_judge, workers, 1)
    assert comparable(together) == comparable(alone)
    runs = {
        f"{t['task_key']}::{c['criterion_id']}": c
        for t in together["benchmark_runs"][0]["task_runs"]
        for c in t["criterion_runs"]
    }
    errors = [k for k, c in runs.items() if c["status"] == "error"]
    assert errors == ["letter::j04", "summary::j04"]
    assert all("HTTP 400" in runs[k]["details"] for k in errors)
    assert {runs[k]["not_evaluated"] for k in errors} == {"judge refused the request (HTTP 400)"}
    assert {c["status"] for k, c in runs.items() if k not in errors} <= {"passed", "failed"}
    assert together["session"]["verification"]["errors"] == 2
    assert len(stub_judge.requests) == 2 * JUDGED
    result.assert_outcomes(passed=2 * (1 + 5), failed=2 * 4, errors=2)


def test_two_identical_evaluations_call_once(
    pytester: pytest.Pytester, stub_judge: StubJudge
) -> None:
    """Two judge criteria asking the same of the same output: scored at once, the second
    still waits for the first and is served from the cache, as one after another."""
    twins = task("letter")
    twins["criteria"][2]["assertion"] = twins["criteria"][1]["assertion"]  # j02 asks as j01
    project(pytester.path, twins)
    stub_judge.respond = by_marker()
    cache = ("--verial-judge-cache-dir", str(pytester.path / "cache"))
    report, _ = score(pytester, stub_judge, "0", 3, *cache)
    assert sorted(marker(r) for r in stub_judge.requests) == [1, *range(3, JUDGED + 1)]
    runs = criterion_runs(report)
    assert sorted(runs[k]["evidence"]["judge"]["cached"] for k in ("j01", "j02")) == [False, True]
    assert runs["j01"]["score"] == runs["j02"]["score"] == 0.25
    verification = report["session"]["verification"]
    assert (verification["judge_calls"], verification["cached"]) == (JUDGED - 1, 1)


CRASHING_CHECK = """
from typing import Literal

from pydantic import Field

from pytest_verial import CheckSpec
# private: a house check built on the built-in one (internals, issue 32)
from pytest_verial.checks._llm_rubric import LlmRubric
from pytest_verial.checks._registry import builtin_check

rubric = builtin_check("llm-rubric").run


class HouseRubric(LlmRubric):
    kind: Literal["house-rubric"] = Field(alias="assert")


def house(spec, ctx):
    if ctx.criterion_id == "j05":
        raise RuntimeError("house check bug")
    return rubric(spec, ctx)


def pytest_verial_checks():
    return [CheckSpec(name="house-rubric", model=HouseRubric, run=house,
                      sources=("output", "voice", "judge"), judge=True)]
"""


def test_a_check_that_raises_fails_only_its_own_item(
    pytester: pytest.Pytester, stub_judge: StubJudge
) -> None:
    project(pytester.path, task("letter"))
    pytester.makeconftest(CRASHING_CHECK)
    bench = pytester.path / "bench.verial.yaml"
    bench.write_text(bench.read_text().replace("llm-rubric", "house-rubric"))
    stub_judge.respond = by_marker()
    together, result = score(pytester, stub_judge, "0", 3)
    stub_judge.reply()
    stub_judge.respond = by_marker()
    alone, again = score(pytester, stub_judge, "0", 1)
    assert comparable(together) == comparable(alone)
    j05 = criterion_runs(together)["j05"]
    assert j05["status"] == "error" and "RuntimeError" in j05["details"]
    result.assert_outcomes(passed=1 + 6, failed=4)
    result.stdout.fnmatch_lines(["*RuntimeError: house check bug*"])
    assert len(stub_judge.requests) == JUDGED - 1


SKIP_ONE = """
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "j05":
            item.add_marker(pytest.mark.skip(reason="skipped by the conftest"))
"""


@WORKERS
def test_deselected_and_skipped_criteria_are_never_called_nor_counted(
    pytester: pytest.Pytester, stub_judge: StubJudge, workers: str
) -> None:
    project(pytester.path, task("letter"))
    pytester.makeconftest(SKIP_ONE)
    stub_judge.respond = by_marker()
    report, result = score(pytester, stub_judge, workers, 3, "-k", "not j07")
    assert sorted(marker(r) for r in stub_judge.requests) == [1, 2, 3, 4, 6, 8, 9, 10]
    runs = criterion_runs(report)
    assert runs["j05"]["status"] == "not_run" and runs["j07"]["status"] == "deselected"
    assert report["session"]["verification"]["judge_calls"] == 8
    # (under xdist the controller does not hear of deselections)
    result.assert_outcomes(passed=1 + 5, failed=3, skipped=1, deselected=1 if workers == "0" else 0)


HOUSE_JUDGE = """
import pytest
# private: a house judge source built from the plugin's (internals, issue 32)
from pytest_verial.judge._settings import build_settings
from pytest_verial.judge._source import JudgeSource


@pytest.fixture
def verial_judge(verial_sandbox):
    options = {{"judge_model": "house-judge", "judge_base_url": {url!r},
                "judge_cache_dir": "off", "judge_retries": 0}}
    settings = build_settings(options, "claude-sonnet-4-5")
    return JudgeSource(settings, verial_sandbox.meta, verial_sandbox.path)
"""


def test_a_conftest_judge_is_used_by_every_criterion(
    pytester: pytest.Pytester, stub_judge: StubJudge
) -> None:
    """Criteria whose fixtures a conftest overrides are not scored ahead (with the plugin's
    sources): each scores itself at its turn, with the conftest's judge."""
    project(pytester.path, task("letter"))
    pytester.makeconftest(HOUSE_JUDGE.format(url=stub_judge.url))
    stub_judge.respond = by_marker()
    report, _ = score(pytester, stub_judge, "0", 3, "--verial-judge-base-url", "http://127.0.0.1:9")
    assert [r["model"] for r in stub_judge.requests] == ["house-judge"] * JUDGED
    assert stub_judge.max_in_flight == 1
    runs = criterion_runs(report)
    assert {runs[f"j{i:02d}"]["evidence"]["judge"]["model"] for i in range(1, 11)} == {
        "house-judge"
    }


def test_a_stopped_session_never_sends_the_calls_not_started(
    pytester: pytest.Pytester, stub_judge: StubJudge
) -> None:
    """-x after the first judge criterion fails: the calls workers had taken (j02, j03, and
    j04 when a worker took it before the session stopped) are abandoned, the others are
    never sent, and only the first is reported. (A call taken may reach the stub only after
    the session: its thread is a daemon, and on a loaded machine it may not have sent yet.)"""
    project(pytester.path, task("letter"))

    def respond(request: dict[str, Any]) -> tuple[int, Any]:
        return 200, completion(ratings(1))  # every criterion fails

    stub_judge.respond = respond
    stub_judge.hold = lambda request: marker(request) != 1  # j01 answers at once
    try:
        report, result = score(pytester, stub_judge, "0", 3, "-x")
    finally:
        stub_judge.release()
    assert {1} <= {marker(r) for r in stub_judge.requests} <= {1, 2, 3, 4}
    runs = criterion_runs(report)
    assert runs["j01"]["status"] == "failed"
    assert {runs[f"j{i:02d}"]["status"] for i in range(2, JUDGED + 1)} == {"not_run"}
    assert report["session"]["verification"]["judge_calls"] == 1
    result.assert_outcomes(passed=1, failed=1)


@pytest.mark.parametrize(
    ("workers", "sig"),
    [("0", signal.SIGINT), ("2", signal.SIGINT), ("0", signal.SIGTERM)],
    ids=["0-ctrl-c", "2-ctrl-c", "0-sigterm"],
)
def test_an_interrupt_while_calls_are_in_flight(
    tmp_path: Path, stub_judge: StubJudge, workers: str, sig: signal.Signals
) -> None:
    """Ctrl-C (or SIGTERM) while two judge calls hang: the session ends without waiting for
    them, interrupted, with the report of what completed; the eight calls not started are
    never sent."""
    root = project(tmp_path, task("letter"))
    stub_judge.respond = by_marker()
    stub_judge.hold = lambda request: True
    proc = subprocess.Popen(
        interruptible_pytest(*arguments(stub_judge, workers, 2)),
        cwd=root,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90  # guards against a hang, not timings
        while stub_judge.in_flight < 2:
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no judge call was sent"
            time.sleep(0.05)
        os.killpg(proc.pid, sig)
        output, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        stub_judge.release()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    assert sorted(marker(r) for r in stub_judge.requests) == [1, 2], output[-3000:]
    report = json.loads((root / "report.json").read_text(encoding="utf-8"))
    runs = criterion_runs(report)
    assert runs["mentions-mri"]["status"] == "passed"
    assert {runs[f"j{i:02d}"]["status"] for i in range(1, JUDGED + 1)} == {"not_run"}
    assert report["session"]["verification"]["judge_calls"] == 0
    assert "Exception in thread" not in output


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "must be >= 1, got '0'"),
        ("2.5", "expected a whole number, got '2.5'"),
        ("65", "must be <= 64, got '65'"),
    ],
)
def test_a_bad_limit_is_a_usage_error_naming_the_option(
    pytester: pytest.Pytester, stub_judge: StubJudge, value: str, message: str
) -> None:
    project(pytester.path, task("letter"))
    result = pytester.runpytest(*arguments(stub_judge, "0", 3, "--verial-judge-concurrency", value))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in result.stderr.lines if "--verial-judge-concurrency" in line]
    assert len(lines) == 1 and message in lines[0], result.stderr.str()
    pytester.makeini("[pytest]\nverial_judge_concurrency = 0\n")
    from_ini = pytester.runpytest("--verial-run", "run")
    assert from_ini.ret == pytest.ExitCode.USAGE_ERROR
    assert "--verial-judge-concurrency: judge setting 'concurrency': must be >= 1" in (
        from_ini.stderr.str()
    )
    assert stub_judge.requests == []


INLINE_TASK = task("letter")


def inline_config(stub: StubJudge, concurrency: int) -> dict[str, Any]:
    return {
        "judge_model": "gpt-4o-mini",
        "judge_base_url": stub.url,
        "judge_cache_dir": "off",
        "judge_retries": 0,
        "executor_model": "claude-sonnet-4-5",
        "cost": 1.0,
        "judge_concurrency": concurrency,
    }


def test_inline_verify_task_scores_judge_criteria_at_once(
    tmp_path: Path, stub_judge: StubJudge
) -> None:
    box = project(tmp_path, INLINE_TASK) / "run" / "letter"
    stub_judge.respond = by_marker(failing=6)
    stub_judge.gather = 2
    together = verify_task(INLINE_TASK, box, inline_config(stub_judge, 3))
    assert 2 <= stub_judge.max_in_flight <= 3
    stub_judge.reply()
    stub_judge.respond = by_marker(failing=6)
    alone = verify_task(INLINE_TASK, box, inline_config(stub_judge, 1))
    assert stub_judge.max_in_flight == 1
    assert strip_timing(together.to_dict()) == strip_timing(alone.to_dict())
    statuses = {r["criterion_id"]: r["status"] for r in together.criterion_runs}
    assert [k for k, s in statuses.items() if s == "error"] == ["j06"]
    assert together.verification_summary["errors"] == 1


def test_inline_gate_and_bad_limit(tmp_path: Path, stub_judge: StubJudge) -> None:
    gated_task = task("letter", contains="CPT 72148")
    box = project(tmp_path, gated_task) / "run" / "letter"
    stub_judge.respond = by_marker()
    run = verify_task(gated_task, box, inline_config(stub_judge, 3))
    assert stub_judge.requests == []
    assert run.verification_summary["saved_by_gating"] == JUDGED
    with pytest.raises(UsageError, match="judge_concurrency: .*must be >= 1, got 0"):
        verify_task(gated_task, box, inline_config(stub_judge, 0))
