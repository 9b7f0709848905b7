"""Gating, bypass and judge != executor end to end, under -n 0 and -n 2, with a stub judge."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from judge_support import completion, ratings

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import report_schema

BENCHMARK = """
benchmark: verify-e2e
version: 1
tasks:
"""
TASK = """
  - id: {id}
    name: Prior authorization letter for a lumbar MRI
    task_item: {{instruction: Write the PA letter for Maria Chen's lumbar MRI}}
    criteria:
      - id: letter-judged
        label: Letter argues medical necessity
        assertion:
          assert: llm-rubric
          pass_threshold: 0.75
          principles:
            - The letter states why the MRI is medically necessary.
            - The letter cites the failed conservative therapy.
      - id: sections
        assertion: {{assert: output-sections, sections: [Clinical summary, Medical necessity]}}
      - id: cpt
        assertion: {{assert: output-match, contains: [CPT 72148]}}
"""
GOOD = (
    "# PA\n## Clinical summary\nLow back pain.\n## Medical necessity\n"
    "6 weeks PT failed. CPT 72148\n"
)
BAD = "# PA\n## Clinical summary\nLow back pain.\nCPT 72148\n"  # no medical necessity section

TASKS = {  # task id -> (output, run.yaml facts)
    "verify-good": (GOOD, {"cost": 0.80}),
    "verify-bad": (BAD, {"cost": 0.80}),
    "verify-cheap": (GOOD, {"cost": 0.01}),
    "verify-simple": (GOOD, {"cost": 1.20, "task_type": "simple"}),
}


def make_run(pytester: pytest.Pytester, executor: str = "claude-sonnet-4-5") -> Path:
    pytester.makefile(".verial.yaml", bench=BENCHMARK + "".join(TASK.format(id=t) for t in TASKS))
    run = pytester.path / "run-a"
    lines = [f"executor_model: {executor}", "tasks:"]
    for task, (output, facts) in TASKS.items():
        (run / task).mkdir(parents=True)
        (run / task / "output.md").write_text(output)
        lines.append(f"  {task}: {json.dumps(facts)}")
    (run / "run.yaml").write_text("\n".join(lines) + "\n")
    return run


def args(run: Path, stub, tmp: Path, n: str, *extra: str) -> list[str]:
    return [
        "--verial-run",
        str(run),
        "--verial-report",
        str(tmp / "report.json"),
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub.url,
        "--verial-judge-cache-dir",
        "off",
        "-n",
        n,
        "-p",
        "no:cacheprovider",
        *extra,
    ]


@pytest.mark.parametrize("n", ["0", "2"])
def test_gating_and_bypass(pytester, stub_judge, n):
    stub_judge.reply((200, completion(ratings(5, 4), prompt_tokens=1000, completion_tokens=100)))
    run = make_run(pytester)
    result = pytester.runpytest(*args(run, stub_judge, pytester.path, n))
    full = json.loads((pytester.path / "report.json").read_text())
    jsonschema.validate(full, report_schema())
    report = full["benchmark_runs"][0]
    judged = {
        t["task_key"]: next(c for c in t["criterion_runs"] if c["assert"] == "llm-rubric")
        for t in report["task_runs"]
    }
    assert len(stub_judge.requests) == 1  # only the task whose deterministic checks passed
    assert judged["verify-good"]["status"] == "passed"
    assert judged["verify-good"]["score"] == pytest.approx(0.875)
    assert judged["verify-good"]["evidence"]["rubric_results"][1]["rating"] == 4
    assert judged["verify-bad"]["status"] == "gated"
    assert judged["verify-bad"]["score"] == 0.0
    assert "sections (failed)" in judged["verify-bad"]["details"]
    assert judged["verify-cheap"]["status"] == "skipped"
    assert "below the $0.05 threshold" in judged["verify-cheap"]["details"]
    assert judged["verify-simple"]["status"] == "skipped"
    scores = {t["task_key"]: t["score"] for t in report["task_runs"]}
    assert scores["verify-cheap"] == 1.0  # bypassed judge criterion left out of the mean
    assert scores["verify-bad"] == pytest.approx(0.5)  # (gated 0 + sections 0.5 + cpt 1) / 3
    summary = full["session"]["verification"]
    assert summary["judge_calls"] == 1
    assert summary["saved_by_gating"] == 1
    assert summary["saved_by_bypass"] == 2
    assert summary["judge_everything_calls"] == 4
    assert summary["cost"] == pytest.approx((1000 * 0.15 + 100 * 0.60) / 1e6)
    assert summary["cost_share"] == pytest.approx(summary["cost"] / 2.81, rel=1e-3)
    feedback = {t["task_key"]: t["feedback"] for t in report["task_runs"]}
    assert feedback["verify-good"] is None
    assert "sections[Medical necessity]: expected present, got null" in feedback["verify-bad"]
    result.stdout.fnmatch_lines(
        [
            "judge gpt-4o-mini: 1 call(s) made for 4 judge criteria (0 from cache); saved 1 by "
            "gating and 2 by bypass*",
            "verification cost $0.0002 = 0.0% of task cost $2.8100 (budget 15%)",
        ]
    )


@pytest.mark.parametrize("n", ["0", "2"])
def test_judge_equal_to_executor_is_a_usage_error(pytester, stub_judge, n):
    stub_judge.reply((200, completion(ratings(5, 5))))
    run = make_run(pytester, executor="claude-sonnet-4-5")
    same = "Anthropic/claude-sonnet-4-5-20250929"
    result = pytester.runpytest(
        *args(run, stub_judge, pytester.path, n, "--verial-judge-model", same)
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*judge model 'Anthropic/claude-sonnet-4-5-20250929' is the "
            "executor model 'claude-sonnet-4-5'*"
        ]
    )
    assert stub_judge.requests == []


@pytest.mark.parametrize("n", ["0", "2"])
def test_judge_equal_to_executor_in_default_sandbox(pytester, stub_judge, n):
    """No --verial-run: the run is sandbox/ beside the file, found during collection."""
    stub_judge.reply((200, completion(ratings(5, 5))))
    run = make_run(pytester, executor="gpt-4o-mini-2024-07-18")
    run.rename(pytester.path / "sandbox")
    result = pytester.runpytest(
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub_judge.url,
        "-n",
        n,
        "-p",
        "no:cacheprovider",
    )
    assert result.ret != 0
    output = result.stdout.str() + result.stderr.str()
    assert "is the executor model 'gpt-4o-mini-2024-07-18'" in output
    assert stub_judge.requests == []


def test_executor_option_conflict(pytester, stub_judge):
    run = make_run(pytester, executor="x")
    result = pytester.runpytest(
        *args(run, stub_judge, pytester.path, "0", "--verial-executor-model", "openai/gpt-4o-mini")
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert stub_judge.requests == []


def test_judge_fault_is_a_criterion_error_not_a_pass(pytester, stub_judge):
    stub_judge.reply((200, completion('{"ratings": []}')))
    run = make_run(pytester)
    result = pytester.runpytest(
        *args(
            run, stub_judge, pytester.path, "0", "--verial-judge-retries", "1", "-k", "verify-good"
        )
    )
    full = json.loads((pytester.path / "report.json").read_text())
    report = full["benchmark_runs"][0]
    rubric = report["task_runs"][0]["criterion_runs"][0]
    # not evaluated: an error of the verifier, never a failed criterion nor a pass
    assert rubric["status"] == "error" and rubric["score"] is None and not rubric["passed"]
    assert rubric["not_evaluated"] == "judge answered unparseably"
    assert rubric["details"] == "not evaluated: judge answered unparseably (2 attempts)"
    assert rubric["evidence"]["judge"]["calls"] == 2
    assert any("not rated" in p for p in rubric["evidence"]["judge"]["problems"])
    task = report["task_runs"][0]
    assert task["verification"] == "incomplete" and task["verdict"] is None
    assert task["not_evaluated"] == [
        {"criterion_id": rubric["criterion_id"], "reason": "judge answered unparseably"}
    ]
    verification = full["session"]["verification"]
    assert verification["judge_calls"] == 2 and verification["errors"] == 1
    assert verification["not_evaluated"] == 1
    result.assert_outcomes(passed=2, errors=1)


def test_deselected_deterministic_criteria_gate_the_judge(pytester, stub_judge):
    stub_judge.reply((200, completion(ratings(5, 5))))
    run = make_run(pytester)
    pytester.runpytest(
        *args(run, stub_judge, pytester.path, "0", "-k", "verify-good and letter-judged")
    )
    full = json.loads((pytester.path / "report.json").read_text())
    report = full["benchmark_runs"][0]
    rubric = report["task_runs"][0]["criterion_runs"][0]
    assert rubric["status"] == "gated"
    assert "2 of 2 deterministic criteria of this task did not run" in rubric["details"]
    assert stub_judge.requests == []


def test_judge_settings_from_ini_and_cache_on_rerun(pytester, stub_judge):
    """ini keys work like the options; the default cache makes a re-run call nothing."""
    stub_judge.reply((200, completion(ratings(5, 5))))
    run = make_run(pytester)
    pytester.makeini(
        f"[pytest]\nverial_judge_model = gpt-4o-mini\nverial_judge_base_url = {stub_judge.url}\n"
    )
    argv = [
        "--verial-run",
        str(run),
        "-p",
        "no:cacheprovider",
        "-k",
        "verify-good",
        "--verial-report",
        "r.json",
    ]
    pytester.runpytest(*argv).assert_outcomes(passed=3)
    assert len(stub_judge.requests) == 1
    assert list((pytester.path / ".verial-cache" / "judge").rglob("*.json"))
    again = pytester.runpytest(*argv)
    again.assert_outcomes(passed=3)
    assert len(stub_judge.requests) == 1  # served from the cache
    again.stdout.fnmatch_lines(
        ["judge gpt-4o-mini: 0 call(s) made for 1 judge criteria (1 from cache)*"]
    )


HOUSE_CHECKS = """
from typing import Literal

from pydantic import Field

from pytest_verial import CheckSpec
# private: a house check built on the built-in one (internals, issue 32)
from pytest_verial.checks._llm_rubric import LlmRubric
from pytest_verial.checks._registry import builtin_check

rubric = builtin_check("llm-rubric").run


class HouseRubric(LlmRubric):
    kind: Literal["house-rubric"] = Field(alias="assert")


def pytest_verial_checks():
    return [
        # a house judge reusing the rubric code: its judge flag lives on the check
        CheckSpec(name="house-rubric", model=HouseRubric, run=rubric,
                  sources=("output", "voice", "judge"), judge=True),
    ]
"""


@pytest.mark.parametrize("n", ["0", "2"])
def test_a_conftest_judge_check_is_gated_like_llm_rubric(pytester, stub_judge, n):
    """The judge flag lives on the check: a conftest judge reusing the rubric code runs after
    the task's deterministic criteria and is gated by them, never by itself."""
    stub_judge.reply((200, completion(ratings(5, 5))))
    stub_judge.reply((200, completion(ratings(5, 5))))
    run = make_run(pytester)
    pytester.makeconftest(HOUSE_CHECKS)
    bench = pytester.path / "bench.verial.yaml"
    bench.write_text(bench.read_text().replace("assert: llm-rubric", "assert: house-rubric"))
    pytester.runpytest(*args(run, stub_judge, pytester.path, n, "-k", "verify-good or verify-bad"))
    report = json.loads((pytester.path / "report.json").read_text())
    runs = {
        t["task_key"]: next(c for c in t["criterion_runs"] if c["assert"] == "house-rubric")
        for r in report["benchmark_runs"]
        for t in r["task_runs"]
        if t["status"] == "completed"
    }
    assert runs["verify-good"]["judge"] is True
    assert runs["verify-good"]["status"] == "passed", runs["verify-good"]["details"]
    assert runs["verify-bad"]["status"] == "gated"
    assert "sections (failed)" in runs["verify-bad"]["details"]
    assert len(stub_judge.requests) == 1
