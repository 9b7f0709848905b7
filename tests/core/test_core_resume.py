"""Resume (issue 10): ``--verial-resume REPORT`` or a crashed session's journal."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import Project, run_inprocess, run_subprocess, voice_criterion
from test_core_shard import _normalised

# -- a run that crashes once ------------------------------------------------------------

CRASH_ONCE = """
import os
from pathlib import Path
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec


class CrashOnce(AssertionSpec):
    kind: Literal["crash-once"] = Field(alias="assert")


def crash_once(spec, ctx):
    flag = Path(__file__).with_name("crash.flag")
    if flag.exists():
        flag.unlink()
        os._exit(1)
    return CheckOutcome(1.0, "steady", {})


def pytest_verial_checks():
    return [CheckSpec(name="crash-once", model=CrashOnce, run=crash_once)]
"""


def _resume_project(path: Path) -> Project:
    project = Project(path)
    project.conftest(CRASH_ONCE)
    greets = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}]}
    tasks = []
    for name in ("first", "second", "third"):
        criteria = [
            voice_criterion("greets", contains=["good morning"]),
            voice_criterion("asks-dob", contains=["date of birth"]),
        ]
        if name == "second":
            criteria.insert(1, {"id": "boom", "assertion": {"assert": "crash-once"}})
        tasks.append({"id": name, "criteria": criteria})
        project.sandbox(name, greets)
    project.benchmark("resumable", {"benchmark": "resumable", "tasks": tasks})
    return project


def _run(pytester: pytest.Pytester, workers: str, *args: str) -> tuple[int, str]:
    """A session that crashes no check (no ``crash.flag``): at ``-n 0`` in this process (see
    ``run_inprocess``), at ``-n 2`` a child session with its workers."""
    if workers == "0":
        assert not (pytester.path / "crash.flag").exists()  # crash_once would end this process
        return run_inprocess(pytester, "-n", "0", *args)
    return run_subprocess(pytester.path, "-n", workers, *args)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resume_after_a_killed_run_gives_the_uninterrupted_report(
    pytester: pytest.Pytester, workers: str
) -> None:
    project = _resume_project(pytester.path)
    # the uninterrupted report at -n 0 whatever the workers: a report at -n 2 equals it apart
    # from timing (test_core_reports.py::test_json_reports_of_n0_and_n2_are_equal_apart_from_
    # timing), and an -n 2 child session costs three processes' start-up
    code, output = _run(pytester, "0", "--verial-report", "whole.json")
    assert code == 1, output[-3000:]
    (pytester.path / "crash.flag").write_text("")  # the next session's check crashes: a child
    code, output = run_subprocess(pytester.path, "-n", workers, "--verial-report", "first.json")
    if workers == "0":  # the process died: its journal holds what completed
        # the report is written once, at the end (no checkpoint): only the journal is there
        assert not (pytester.path / "first.json").exists()
        source = "first.json.journal.jsonl"
    else:  # a worker died: the report names the crashed criterion
        source = "first.json"
        crashed = project.read_report("first.json")
        assert any(
            "did not complete" in (c["details"] or "")
            for r in crashed["benchmark_runs"]
            for t in r["task_runs"]
            for c in t["criterion_runs"]
        )
    code, output = _run(
        pytester, workers, "--verial-resume", source, "--verial-report", "resumed.json"
    )
    assert code == 1, output[-3000:]
    resumed = project.read_report("resumed.json")
    assert _normalised(resumed) == _normalised(project.read_report("whole.json"))
    kept = resumed["session"]["resumed"]["kept_criterion_runs"]
    assert kept >= 2  # the first task was not scored again


def test_resume_refuses_a_changed_task(pytester: pytest.Pytester) -> None:
    _resume_project(pytester.path)
    _run(pytester, "0", "--verial-report", "r.json")
    bench = (pytester.path / "resumable.verial.yaml").read_text()
    (pytester.path / "resumable.verial.yaml").write_text(bench.replace("date of birth", "DOB"))
    code, output = _run(pytester, "0", "--verial-resume", "r.json")
    assert code == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    assert "--verial-resume: " in output
    assert "r.json: resumable.verial.yaml has changed since that report was written" in output
    assert "Traceback" not in output
    code, output = _run(pytester, "0", "--verial-resume", "missing.json")
    assert code == pytest.ExitCode.USAGE_ERROR and "--verial-resume: " in output


def test_resume_refuses_a_new_benchmark_version(pytester: pytest.Pytester) -> None:
    _resume_project(pytester.path)
    code, output = _run(pytester, "0", "--verial-report", "r.json")
    assert code == 1, output[-2000:]
    bench = pytester.path / "resumable.verial.yaml"
    text = bench.read_text()
    assert "version" not in text
    bench.write_text(text.replace("benchmark: resumable", "benchmark: resumable\nversion: 2"))
    code, output = _run(pytester, "0", "--verial-resume", "r.json")
    assert code == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    assert "resumable.verial.yaml has changed since that report was written (SHA-256" in output
    assert "Traceback" not in output


@pytest.mark.parametrize("workers", ["0", "2"])
def test_resuming_a_whole_report_in_a_shard_keeps_only_that_shard(
    pytester: pytest.Pytester, workers: str
) -> None:
    project = _resume_project(pytester.path)
    _run(pytester, "0", "--verial-report", "whole.json")
    args = ("--verial-shard", "1/2")
    _run(pytester, workers, *args, "--verial-report", "shard.json")
    _run(pytester, workers, *args, "--verial-resume", "whole.json", "--verial-report", "r.json")
    resumed, shard = project.read_report("r.json"), project.read_report("shard.json")
    assert _normalised(resumed) == _normalised(shard)
    mine = shard["session"]["shard"]["task_runs"]
    assert 0 < len(mine) < 3
    assert resumed["session"]["resumed"]["kept_criterion_runs"] == sum(
        len(t["criterion_runs"]) for r in shard["benchmark_runs"] for t in r["task_runs"]
    )
