"""A verifier that says when it could not verify (issue 30): a judge that is absent, down,
slow or answers unparseably never produces a failed criterion nor a pass. The criterion is an
error with ``not_evaluated``, its weight leaves the task's mean, the task run's
``verification`` is ``incomplete`` with ``confidence`` lowered, and its verdict is null unless
the criteria evaluated already decide it; the agent's feedback says nothing about it.

The judges are the suite's stub server (tests/judge/judge_support.py) and a closed port;
"absent" is no judge model at all. The answers below are what a coordinator gets."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from judge_support import StubJudge, completion, ratings

from pytest_verial import verify_task

TASK: dict[str, Any] = {
    "id": "pa-letter",
    "name": "PA letter for a lumbar MRI",
    "task_item": {"instruction": "Write the PA letter", "patient": "Maria Chen"},
    "criteria": [
        {
            "id": "sections",
            "weight": 2,
            "assertion": {"assert": "output-sections", "sections": ["Medical necessity"]},
        },
        {
            "id": "argues",
            "assertion": {"assert": "llm-rubric", "principles": ["Argues medical necessity."]},
        },
    ],
}
LETTER = "# PA\n## Medical necessity\nSix weeks of physical therapy failed.\n"


def _sandbox(tmp_path: Any, key: str = "pa-letter", text: str = LETTER) -> Any:
    box = tmp_path / "run" / key
    box.mkdir(parents=True, exist_ok=True)
    (box / "output.md").write_text(text, encoding="utf-8")
    return box


def _closed_port() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _config(base_url: str | None, tmp_path: Any, **extra: Any) -> dict[str, Any]:
    config = {
        "judge_backoff": 0,
        "judge_retries": 1,
        "judge_timeout": 0.5,
        "judge_cache_dir": str(tmp_path / "cache"),
        "executor_model": "claude-sonnet-4-5",
        "cost": 0.5,
        **extra,
    }
    if base_url is not None:
        config.update(judge_model="gpt-4o-mini", judge_base_url=base_url)
    return config


@pytest.fixture(params=["absent", "down", "slow", "unparseable"])
def faulty(request: pytest.FixtureRequest, stub_judge: StubJudge) -> tuple[str | None, str]:
    """A judge that cannot be used, and the reason the criterion is not evaluated."""
    if request.param == "absent":
        return None, "judge not configured"
    if request.param == "down":
        return _closed_port(), "judge unreachable"
    if request.param == "slow":  # answers after the client stopped waiting, every time
        stub_judge.reply(("sleep", 3))
        return stub_judge.url, "judge timed out"
    stub_judge.reply((200, completion("I would rate this letter highly.")))
    return stub_judge.url, "judge answered unparseably"


def test_a_judge_that_cannot_be_used_leaves_the_criterion_not_evaluated(
    faulty: tuple[str | None, str], tmp_path: Any
) -> None:
    url, reason = faulty
    run = verify_task(TASK, _sandbox(tmp_path), _config(url, tmp_path))
    answer = run.to_dict()  # what a coordinator gets
    sections, argues = answer["criterion_runs"]
    assert sections["status"] == "passed" and sections["score"] == 1.0
    # an error of the verifier: no score, not passed, and not failed either
    assert argues["status"] == "error" and argues["score"] is None and not argues["passed"]
    assert argues["not_evaluated"] == reason
    assert argues["details"].startswith(f"not evaluated: {reason}")
    # the task: scored on what was evaluated, its verdict unknown (0.67 to 1.0 either way)
    assert answer["verification"] == "incomplete"
    assert answer["not_evaluated"] == [{"criterion_id": "argues", "reason": reason}]
    assert answer["score"] == 1.0 and answer["verdict"] is None
    assert answer["confidence"] == pytest.approx(2 / 3)  # a third of the weight unchecked
    assert answer["all_passed"] is None
    assert answer["counts"]["error"] == 1 and answer["counts"]["not_evaluated"] == 1
    # nothing for the agent to change, and nothing about the verifier's set-up anywhere
    assert answer["feedback"] is None
    text = json.dumps(answer)
    for leak in ("http://", "127.0.0.1", "--verial", "pip install", str(tmp_path)):
        assert leak not in text, leak


def test_the_verdict_the_evaluated_criteria_force_is_kept(
    stub_judge: StubJudge, tmp_path: Any
) -> None:
    """9 of 10 weight passed: whatever the judge would say, the task passes (0.9 to 1.0)."""
    task = json.loads(json.dumps(TASK))
    task["criteria"][0]["weight"] = 9
    run = verify_task(task, _sandbox(tmp_path), _config(_closed_port(), tmp_path))
    assert run.verification == "incomplete" and run.verdict == "pass"
    assert run.confidence == pytest.approx(0.9)
    # a critical criterion not evaluated could still fail the task: no verdict
    task["criteria"][1]["critical"] = True
    run = verify_task(task, _sandbox(tmp_path / "b"), _config(_closed_port(), tmp_path))
    assert run.verification == "incomplete" and run.verdict is None


def test_feedback_keeps_what_the_agent_failed_and_only_that(
    stub_judge: StubJudge, tmp_path: Any
) -> None:
    """One principle rated 1/5, the other judge criterion unreachable: the feedback names the
    first, nothing of the second."""
    task = json.loads(json.dumps(TASK))
    task["criteria"].append(
        {"id": "tone", "assertion": {"assert": "llm-rubric", "principles": ["Polite tone."]}}
    )
    calls = []

    def answer(request: dict[str, Any]) -> tuple[int, Any]:
        calls.append(request)
        if "Polite tone." in json.dumps(request):
            return 503, "overloaded"
        return 200, completion(ratings(1))

    stub_judge.respond = answer
    run = verify_task(task, _sandbox(tmp_path), _config(stub_judge.url, tmp_path))
    statuses = {c.criterion_id: (c.status, c.not_evaluated) for c in run.criterion_runs}
    assert statuses == {
        "sections": ("passed", None),
        "argues": ("failed", None),
        "tone": ("error", "judge unavailable (HTTP 503)"),
    }
    # evaluated: 2 x 1.0 + 1 x 0.0 -> 0.67; with "tone" 0..1 -> 0.5..0.75: partial either way
    assert run.score == pytest.approx(2 / 3) and run.verdict == "partial"
    assert run.feedback is not None and "Argues medical necessity." in run.feedback
    for unsaid in ("Polite tone", "tone [", "not evaluated", "unavailable", "503"):
        assert unsaid not in run.feedback, unsaid


def test_a_consistency_check_that_cannot_be_judged_is_not_evaluated(tmp_path: Any) -> None:
    """Cross-task consistency with the judge down: no score, no verdict, confidence 0."""
    _sandbox(tmp_path, "pa-summary", "Lumbar MRI requested for Maria Chen.")
    task = {
        "id": "pa-letter",
        "criteria": [
            {
                "id": "agree",
                "assertion": {"assert": "output-consistency", "tasks": ["pa-summary"]},
            }
        ],
    }
    run = verify_task(task, _sandbox(tmp_path), _config(_closed_port(), tmp_path))
    (crit,) = run.criterion_runs
    assert crit.status == "error" and crit.not_evaluated == "judge unreachable"
    assert run.score is None and run.verdict is None and run.confidence == 0.0
    assert run.verification == "incomplete" and run.feedback is None


# -- under pytest ----------------------------------------------------------------------------
BENCH = {
    "benchmark": "letters",
    "version": 1,
    "tasks": [TASK, {**TASK, "id": "pa-letter-2"}],
}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_pytest_shows_it_as_an_error_apart_and_exits_non_zero(
    pytester: pytest.Pytester, workers: str
) -> None:
    pytester.makefile(".verial.json", letters=json.dumps(BENCH))
    for key in ("pa-letter", "pa-letter-2"):
        _sandbox(pytester.path / "sandbox", key)  # run folder: sandbox/run/<task>
    (pytester.path / "sandbox" / "run" / "run.yaml").write_text(
        "executor_model: claude-sonnet-4-5\ntasks: {pa-letter: {cost: 0.5}, "
        "pa-letter-2: {cost: 0.01}}\n",  # the second task's judge is bypassed: verified
        encoding="utf-8",
    )
    result = pytester.runpytest(
        *("-p", "no:cacheprovider", "-n", workers, "--verial-run", "sandbox/run"),
        *("--verial-judge-model", "gpt-4o-mini", "--verial-judge-base-url", _closed_port()),
        *("--verial-judge-retries", "0"),
        *("--verial-report", "report.json", "--verial-junit", "task.xml"),
        *("--verial-fail-under", "0.5"),
    )
    # the agent failed nothing: one error (not a failure), and the run does not gate green
    result.assert_outcomes(passed=2, errors=1, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*ERROR at call of criterion argues*",
            "criterion 'argues' (llm-rubric) not evaluated: judge unreachable*",
            "*1 error (1 not evaluated)*",
            "1 criterion not evaluated (the verifier could not check them*",
            "  pa-letter::argues: judge unreachable",
            "*to fix: check --verial-judge-base-url and that the judge server is up*",
            "fail-under 0.5: run score 1.000 reached, 1 error (1 not evaluated) -> exit 1",
        ]
    )
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    (run,) = report["benchmark_runs"]
    unverified, verified = run["task_runs"]
    assert unverified["verification"] == "incomplete" and unverified["verdict"] is None
    assert verified["verification"] == "complete" and verified["verdict"] == "pass"
    # the benchmark run: the task run not verified is left out; no verdict while it is
    assert run["verification"] == "incomplete" and run["verdict"] is None
    assert run["score"] == 1.0 and run["counts"]["unverified"] == 1
    assert report["session"]["counts"]["criteria_not_evaluated"] == 1
    assert "to fix" not in json.dumps(report) and "--verial" not in json.dumps(report)
    junit = (pytester.path / "task.xml").read_text(encoding="utf-8")
    assert 'type="not_evaluated"' in junit and 'name="verification" value="incomplete"' in junit


def test_resume_verifies_again_what_could_not_be_verified(
    pytester: pytest.Pytester, stub_judge: StubJudge
) -> None:
    """The judge was down; once it is up, ``--verial-resume`` scores the task run whose
    verification was incomplete again and keeps the others."""
    pytester.makefile(".verial.json", letters=json.dumps(BENCH))
    for key in ("pa-letter", "pa-letter-2"):
        _sandbox(pytester.path / "sandbox", key)
    (pytester.path / "sandbox" / "run" / "run.yaml").write_text(
        "tasks: {pa-letter: {cost: 0.5}, pa-letter-2: {cost: 0.01}}\n", encoding="utf-8"
    )
    common = ("-p", "no:cacheprovider", "--verial-run", "sandbox/run", "--verial-judge-model")
    common += ("gpt-4o-mini", "--verial-judge-retries", "0", "--verial-store", "none")
    down = ("--verial-judge-base-url", _closed_port(), "--verial-report", "first.json")
    pytester.runpytest(*common, *down).assert_outcomes(passed=2, errors=1, skipped=1)
    stub_judge.reply((200, completion(ratings(5))))
    resume = ("--verial-resume", "first.json", "--verial-report", "second.json")
    up = pytester.runpytest(*common, "--verial-judge-base-url", stub_judge.url, *resume)
    assert up.ret == pytest.ExitCode.OK, up.stdout.str()[-2000:]
    assert len(stub_judge.requests) == 1  # the one criterion not evaluated, asked again
    report = json.loads((pytester.path / "second.json").read_text(encoding="utf-8"))
    (run,) = report["benchmark_runs"]
    assert run["verification"] == "complete" and run["verdict"] == "pass"
    assert report["session"]["resumed"]["kept_criterion_runs"] == 2  # pa-letter-2's
