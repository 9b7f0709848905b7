"""What a newcomer reads, without noise (issue 34): no judge or budget lines when no judge is
configured and none was asked, counts in the singular when there is one, a failing
criterion's details kept whole in a log, and ``verial --help`` naming every command."""

from __future__ import annotations

import pytest
from core_support import Project, voice_criterion

from pytest_verial.cli import EPILOG, build_parser, main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.judge._report import verification_lines, verification_summary


def _judge_project(project: Project) -> None:
    """One deterministic and one judge criterion; run.yaml's cost bypasses the judge."""
    project.benchmark(
        "letter",
        {
            "benchmark": "letter",
            "tasks": [
                {
                    "id": "t1",
                    "criteria": [
                        {
                            "id": "has-code",
                            "assertion": {"assert": "output-match", "contains": ["72148"]},
                        },
                        {
                            "id": "explains",
                            "assertion": {"assert": "llm-rubric", "principles": ["It explains."]},
                        },
                    ],
                }
            ],
        },
    )
    project.sandbox("t1", {"output.md": "CPT 72148 requested."})
    project.run_yaml({"tasks": {"t1": {"cost": 0.01}}})


def test_no_judge_lines_when_no_judge_is_configured_and_none_was_asked(
    pytester: pytest.Pytester, project: Project
) -> None:
    _judge_project(project)
    result = pytester.runpytest("--verial-store", "none", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=1)
    out = result.stdout.str()
    assert "judge (no model configured)" not in out
    assert "verification cost" not in out
    # configured, the same bypass is worth its line (calls saved)
    result = pytester.runpytest(
        "--verial-store", "none", "-p", "no:cacheprovider", "--verial-judge-model", "m"
    )
    assert "judge m: 0 call(s) made for 1 judge criteria" in result.stdout.str()


def test_verification_lines_of_a_bypassed_judge() -> None:
    from pytest_verial import CriterionRun, Status, TaskRun

    bypassed = CriterionRun.scored(
        {"criterion_id": "j", "task_key": "t", "judge": True}, 0.0, False
    ).model_copy(update={"status": Status.SKIPPED})
    task = TaskRun.aggregate([bypassed], 0.9, id="b::t", task_id="t", task_key="t", run="r")
    summary = verification_summary([task], {("r", "t"): 0.01})
    assert summary["saved_by_bypass"] == 1
    assert verification_lines(summary, configured=False) == []
    assert verification_lines(summary, configured=True)[0].startswith("judge ")


def test_counts_read_in_the_singular(pytester: pytest.Pytester, project: Project) -> None:
    project.benchmark(
        "one",
        {
            "benchmark": "one",
            "tasks": [{"id": "t1", "criteria": [voice_criterion("hi", contains=["hello"])]}],
        },
    )
    project.sandbox("t1", {"voice/turns.json": [{"speaker": "agent", "text": "bye"}]})
    pytester.runpytest(
        "--verial-store", "none", "--verial-markdown", "summary.md", "--verial-fail-under", "0.5"
    )
    markdown = (project.path / "summary.md").read_text()
    assert "1 task run in 1 benchmark run; criteria: 0 passed, 1 failed, 0 errors." in markdown


def test_a_log_keeps_a_failing_criterion_s_details_whole(
    pytester: pytest.Pytester, project: Project
) -> None:
    """pytester's output is not a terminal, like a CI log: ``-q``'s one line of details per
    failing criterion is wrapped, never cut before the expected and actual values."""
    phrase = "please confirm the referral number for the cardiology consult on tuesday"
    project.benchmark(
        "long",
        {
            "benchmark": "long",
            "tasks": [{"id": "t1", "criteria": [voice_criterion("says", contains=[phrase])]}],
        },
    )
    project.sandbox("t1", {"voice/turns.json": [{"speaker": "agent", "text": "hello"}]})
    result = pytester.runpytest("-q", "--tb=no", "--verial-store", "none")
    summary = result.stdout.str().split("failing criteria:")[1].split("short test summary")[0]
    assert "..." not in summary
    assert f"not said: '{phrase}'" in " ".join(summary.split()), summary


def test_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "history of every session" in " ".join(text.split())
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    listed = EPILOG.split("commands by use:")[1]
    missing = [name for name in commands if name not in listed]
    assert missing == [], f"verial --help's table leaves out {missing}"
