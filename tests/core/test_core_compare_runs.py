"""``verial compare`` and ``--verial-baseline`` (issue 10): two reports, their changes, a gate.

(``test_core_compare.py`` holds the field-comparison operators of ``pytest_verial._compare``.)
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from core_support import REPO, Project, run_inprocess, run_subprocess, voice_criterion

from pytest_verial import BenchmarkRun, CriterionRun, Report, TaskRun

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import BenchmarkInfo, Generator, RunInfo, RunStatus, Session
from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._diff import Comparison, compare_reports, paired_bootstrap

EXAMPLES = REPO / "example_benchmarks"
WORKERS = pytest.mark.parametrize("workers", ["0", "2"], ids=["n0", "n2"])

# -- reports built from the result types -------------------------------------------------------

#: a task: its criterion scores (a criterion passes at 1.0)
Tasks = dict[str, list[float]]


def benchmark_run(
    tasks: Tasks,
    label: str = "run-a",
    ref: str = "calls@1",
    file: str = "calls.verial.yaml",
    agent: str | None = None,
) -> BenchmarkRun:
    """One benchmark run of the given task scores, built as the plugin builds it."""
    task_runs = []
    for key, scores in tasks.items():
        criteria = [
            CriterionRun.scored({"criterion_id": f"c{n}", "task_key": key}, s, s >= 1.0)
            for n, s in enumerate(scores)
        ]
        task_runs.append(
            TaskRun.aggregate(
                criteria, 0.9, id=f"{file}::{key}", task_id=key, task_key=key, run=label
            )
        )
    slug = ref.split("@")[0]
    return BenchmarkRun.aggregate(
        task_runs,
        0.9,
        running=False,
        interrupted=False,
        id=f"{file}@{label}",
        benchmark=BenchmarkInfo(slug=slug, ref=ref, file=file),
        runs=[RunInfo(label=label, path=f"/runs/{label}", agent=agent)],
    )


def report(*runs: BenchmarkRun) -> Report:
    """A report holding these benchmark runs (its session's counts theirs: readers check)."""
    counts: dict[str, Any] = {}
    for run in runs:
        for name, value in run.counts.model_dump(by_alias=True).items():
            if isinstance(value, dict):
                inner = counts.setdefault(name, {})
                for verdict, number in value.items():
                    inner[verdict] = inner.get(verdict, 0) + number
            else:
                counts[name] = counts.get(name, 0) + value
    return Report(
        generator=Generator(name="pytest-verial", version="test"),
        session=Session(
            status=RunStatus.COMPLETED,
            phase="completed",
            started_at="2026-01-01",
            duration=0,
            counts=counts,
        ),
        benchmark_runs=list(runs),
    )


def write(path: Path, value: Report) -> str:
    path.write_text(json.dumps(value.to_json()), encoding="utf-8")
    return str(path)


# -- the paired bootstrap against hand computations ------------------------------------------


def test_two_shared_tasks_interval_is_the_two_differences() -> None:
    """Two tasks: resampled means are d1, (d1+d2)/2 or d2 with chances 1/4, 1/2, 1/4, so the
    2.5 % and 97.5 % points are d1 and d2 exactly."""
    base = report(benchmark_run({"a": [1.0], "b": [1.0]}))
    head = report(benchmark_run({"a": [0.5], "b": [0.0]}, label="run-b"))
    run = compare_reports(base, head).benchmark_runs[0]
    assert run.delta == pytest.approx(-0.75)
    assert run.interval is not None
    assert (run.interval.low, run.interval.high) == (-1.0, -0.5)
    assert run.interval.mean == pytest.approx(-0.75)
    assert (run.interval.tasks, run.interval.resamples, run.interval.seed) == (
        2,
        10_000,
        20261123,
    )  # README, "verial compare"


def test_interval_of_one_in_five_tasks_changed() -> None:
    """d = (0, 0, 0, 0, 1): the resampled mean is X/5, X ~ Binomial(5, 1/5).
    P(X = 0) = 0.328, so the 2.5 % point is 0; P(X <= 2) = 0.942 and P(X <= 3) = 0.993, so the
    97.5 % point is 3/5. Each boundary is over 8 standard deviations of 10,000 draws away."""
    interval = paired_bootstrap([0.0, 0.0, 0.0, 0.0, 1.0])
    assert (interval.low, interval.high) == (0.0, 0.6)
    assert interval.mean == pytest.approx(0.2)


def test_bootstrap_is_deterministic_and_degenerate_cases_are_exact() -> None:
    diffs = [0.1, -0.4, 0.25, 0.0, -0.05, 0.3, -0.2]
    assert paired_bootstrap(diffs) == paired_bootstrap(list(diffs))
    assert (paired_bootstrap([-0.3]).low, paired_bootstrap([-0.3]).high) == (-0.3, -0.3)
    same = paired_bootstrap([0.25] * 4)
    assert (same.low, same.high) == (0.25, 0.25)
    interval = paired_bootstrap(diffs)
    assert min(diffs) < interval.low < interval.mean < interval.high < max(diffs)


# -- the CLI on the two example runs ----------------------------------------------------------


@pytest.fixture(scope="module")
def examples(example_runs: Path) -> Path:
    """Reports of the example benchmarks on good-agent and flawed-agent (built once)."""
    return example_runs


def _compare(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_examples_regress_one_way_and_not_the_other(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, flawed = str(examples / "good-agent.json"), str(examples / "flawed-agent.json")
    code, out, err = _compare(capsys, good, flawed)
    assert code == 1, out + err
    assert out.count(": REGRESSION") == 5, out
    assert "task referral-cardiology: verdict worse, score 1.000 -> 0.000 (-1.000)" in out
    assert "criterion referral-sent: regression, passed -> failed" in out
    assert "5 of 5 benchmark runs regressed" in out
    assert "not paired" not in out
    code, out, err = _compare(capsys, flawed, good)
    assert code == 0, out + err
    assert "REGRESSION" not in out and out.count(": ok") == 5
    assert "task referral-cardiology: improvement" in out
    for same in (good, flawed):
        code, out, err = _compare(capsys, same, same)
        assert code == 0, out + err
        assert "no regression in 5 benchmark runs" in out
        assert "interval [+0.000, +0.000]" in out


def test_json_output_is_the_documented_model(
    examples: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = tmp_path / "out" / "comparison.json"
    good, flawed = str(examples / "good-agent.json"), str(examples / "flawed-agent.json")
    code, _, _ = _compare(capsys, good, flawed, "--json", str(out_path))
    assert code == 1
    data = json.loads(out_path.read_text(encoding="utf-8"))
    jsonschema.validate(data, Comparison.model_json_schema(by_alias=True, mode="serialization"))
    comparison = Comparison.model_validate(data)
    assert data["schema"] == "pytest-verial/compare/v1"
    assert comparison.exit_status == 1 and comparison.regression
    assert (comparison.base, comparison.head) == (good, flawed)
    runs = comparison.benchmark_runs
    assert len(runs) == 5 and all(r.regression and r.score_dropped for r in runs)
    front = next(r for r in runs if r.benchmark == "front-office@3")
    assert front.base_runs == ["good-agent"] and front.head_runs == ["flawed-agent"]
    assert front.tasks[0].task_key == "referral-cardiology"  # the largest drop first
    assert "referral-cardiology" in front.worse_verdicts

    # the run score delta is the difference of the two reports' run scores
    def score(path: str) -> float:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        runs = data["benchmark_runs"]
        return float(next(r["score"] for r in runs if r["benchmark"]["ref"] == "front-office@3"))

    assert front.delta == pytest.approx(score(flawed) - score(good))


def test_json_of_the_two_task_case_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.json", report(benchmark_run({"a": [1.0], "b": [1.0]})))
    head = write(
        tmp_path / "head.json", report(benchmark_run({"a": [0.5], "b": [0.0]}, label="run-b"))
    )
    code, out, _ = _compare(capsys, base, head, "--json", str(tmp_path / "c.json"))
    assert code == 1
    assert (
        "paired difference over 2 shared tasks: mean -0.750, 95% interval [-1.000, -0.500]" in out
    )
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    interval = data["benchmark_runs"][0]["interval"]
    assert (interval["low"], interval["high"], interval["resamples"]) == (-1.0, -0.5, 10_000)


# -- the gate: tolerance and verdicts ---------------------------------------------------------


def test_tolerance_allows_a_small_drop_but_not_a_worse_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write(tmp_path / "base.json", report(benchmark_run({"a": [1.0, 1.0], "b": [1.0]})))
    # task a drops 0.1 but stays below pass: 1.0 -> 0.9 keeps verdict pass (threshold 0.9)
    small = report(benchmark_run({"a": [1.0, 0.8], "b": [1.0]}, label="run-b"))
    head = write(tmp_path / "head.json", small)
    code, out, _ = _compare(capsys, base, head)
    assert code == 1 and "run score down by more than 0 in 1" in out  # default tolerance 0.0
    code, out, _ = _compare(capsys, base, head, "--tolerance", "0.1")
    assert code == 0, out
    # a drop within the tolerance that makes a verdict worse still fails
    worse = report(benchmark_run({"a": [1.0, 0.6], "b": [1.0]}, label="run-b"))
    code, out, _ = _compare(
        capsys, base, write(tmp_path / "worse.json", worse), "--tolerance", "0.5"
    )
    assert code == 1, out
    assert "task a: verdict worse" in out and "1 task verdict worse" in out


def test_regressions_first_then_improvements(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = report(
        benchmark_run({"up": [0.0], "same": [1.0], "down": [1.0], "gone": [1.0]}),
        benchmark_run({"x": [1.0]}, ref="other@1", file="other.verial.yaml"),
    )
    head = report(
        benchmark_run({"up": [1.0], "same": [1.0], "down": [0.0], "new": [1.0]}, label="b"),
        benchmark_run({"x": [0.0]}, ref="other@1", file="other.verial.yaml", label="b"),
    )
    comparison = compare_reports(base, head)
    first = comparison.benchmark_runs[0]
    assert first.benchmark == "other@1"  # the larger drop first
    calls = comparison.benchmark_runs[1]
    assert [t.task_key for t in calls.tasks] == ["down", "up", "gone", "new", "same"]
    assert [t.change for t in calls.tasks] == [
        "regression",
        "improvement",
        "removed",
        "added",
        "unchanged",
    ]
    code, out, _ = _compare(
        capsys, write(tmp_path / "b.json", base), write(tmp_path / "h.json", head)
    )
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("  task ")]
    assert lines[0].startswith("  task x: verdict worse")
    assert lines[1].startswith("  task down: verdict worse")
    assert lines[2].startswith("  task up: improvement")
    assert "1 task unchanged" in out


def test_a_task_scored_on_one_side_only_is_unscored_not_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = report(benchmark_run({"a": [1.0], "b": [1.0]}))
    head = report(benchmark_run({"a": [1.0], "b": [1.0]}, label="run-b"))
    task_run = head.benchmark_runs[0].task_runs[1]
    kept = task_run.criterion_runs[0]
    deselected = CriterionRun.deselected({"criterion_id": "c1", "task_key": "b"})
    head.benchmark_runs[0].task_runs[1] = TaskRun.aggregate(
        [kept, deselected], 0.9, id=task_run.id, task_id="b", task_key="b", run="run-b"
    )
    head = report(head.benchmark_runs[0].rescored())  # its figures, as a reader checks them
    run = compare_reports(base, head).benchmark_runs[0]
    task = next(t for t in run.tasks if t.task_key == "b")
    assert (task.change, task.head_status, task.head_score) == ("unscored", "incomplete", None)
    assert not run.regression
    code, out, _ = _compare(
        capsys, write(tmp_path / "b.json", base), write(tmp_path / "h.json", head)
    )
    assert code == 0
    assert (
        "task b: unscored, score 1.000 -> - (-), verdict pass -> -, status completed -> incomplete"
    ) in out


def test_improvements_largest_gain_first() -> None:
    base = report(benchmark_run({"small": [0.5], "large": [0.0]}))
    head = report(benchmark_run({"small": [0.75], "large": [1.0]}, label="b"))
    tasks = compare_reports(base, head).benchmark_runs[0].tasks
    assert [t.task_key for t in tasks] == ["large", "small"]


def test_trials_task_score_is_the_mean_and_verdict_the_worst() -> None:
    def trials(scores: dict[str, list[list[float]]], labels: list[str]) -> BenchmarkRun:
        runs = [
            benchmark_run({k: v[i] for k, v in scores.items()}, label=lb)
            for i, lb in enumerate(labels)
        ]
        task_runs = [t for r in runs for t in r.task_runs]
        return BenchmarkRun.aggregate(
            task_runs,
            0.9,
            running=False,
            interrupted=False,
            id="calls.verial.yaml@" + ",".join(labels),
            benchmark=runs[0].benchmark,
            runs=[r.runs[0] for r in runs],
        )

    base = report(trials({"a": [[1.0], [1.0]]}, ["t1", "t2"]))
    head = report(trials({"a": [[1.0], [0.5]]}, ["t3", "t4"]))
    task = compare_reports(base, head).benchmark_runs[0].tasks[0]
    assert (task.base_score, task.head_score) == (1.0, 0.75)
    assert (task.base_verdict, task.head_verdict) == ("pass", "partial")
    assert task.verdict_worse and len(task.head_task_runs) == 2
    assert task.criteria[0].head_status == "mixed"


# -- pairing ----------------------------------------------------------------------------------


def test_pairs_by_benchmark_and_file_and_names_the_unpaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = report(
        benchmark_run({"a": [1.0]}, label="x"),
        benchmark_run({"a": [1.0]}, label="x2", ref="calls@2"),  # another version
        benchmark_run({"a": [1.0]}, label="x", file="elsewhere/calls.verial.yaml"),
    )
    head = report(benchmark_run({"a": [1.0]}, label="y"), benchmark_run({"b": [1.0]}, ref="new@1"))
    comparison = compare_reports(base, head)
    assert [(r.base, r.head) for r in comparison.benchmark_runs] == [
        ("calls.verial.yaml@x", "calls.verial.yaml@y")
    ]
    unpaired = {(u.side, u.id, u.benchmark) for u in comparison.unpaired}
    assert unpaired == {
        ("base", "calls.verial.yaml@x2", "calls@2"),
        ("base", "elsewhere/calls.verial.yaml@x", "calls@1"),
        ("head", "calls.verial.yaml@run-a", "new@1"),
    }
    code, out, _ = _compare(
        capsys, write(tmp_path / "b.json", base), write(tmp_path / "h.json", head)
    )
    assert code == 0
    assert (
        "not paired: base benchmark run elsewhere/calls.verial.yaml@x: no benchmark run of "
        "calls@1 from elsewhere/calls.verial.yaml in head"
    ) in out
    assert (
        "not paired: head benchmark run calls.verial.yaml@run-a: no benchmark run of new@1" in out
    )


def test_several_runs_of_one_benchmark_pair_by_label_then_agent() -> None:
    base = report(
        benchmark_run({"a": [1.0]}, label="bot-a", agent="A"),
        benchmark_run({"a": [1.0]}, label="old-b", agent="B"),
        benchmark_run({"a": [1.0]}, label="old-c"),
        benchmark_run({"a": [1.0]}, label="old-d"),
    )
    head = report(
        benchmark_run({"a": [0.0]}, label="new-b", agent="B"),
        benchmark_run({"a": [1.0]}, label="bot-a", agent="other"),
        benchmark_run({"a": [1.0]}, label="new-c"),
    )
    comparison = compare_reports(base, head)
    pairs = {(r.base_runs[0], r.head_runs[0]) for r in comparison.benchmark_runs}
    assert pairs == {("bot-a", "bot-a"), ("old-b", "new-b")}
    left = {(u.side, u.id) for u in comparison.unpaired}
    assert left == {
        ("base", "calls.verial.yaml@old-c"),
        ("base", "calls.verial.yaml@old-d"),
        ("head", "calls.verial.yaml@new-c"),
    }
    assert all("none with the same run labels or agent" in u.reason for u in comparison.unpaired)
    # run folders without an agent never match each other by agent
    base = report(
        benchmark_run({"a": [1.0]}, label="p"),
        benchmark_run({"a": [1.0]}, label="q", agent="A"),
    )
    head = report(
        benchmark_run({"a": [1.0]}, label="r"),
        benchmark_run({"a": [1.0]}, label="s", agent="A"),
    )
    comparison = compare_reports(base, head)
    assert [(r.base_runs, r.head_runs) for r in comparison.benchmark_runs] == [(["q"], ["s"])]
    assert {u.id for u in comparison.unpaired} == {"calls.verial.yaml@p", "calls.verial.yaml@r"}


def test_nothing_paired_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = write(tmp_path / "b.json", report(benchmark_run({"a": [1.0]})))
    head = write(tmp_path / "h.json", report(benchmark_run({"a": [1.0]}, ref="other@1")))
    code, out, err = _compare(capsys, base, head)
    assert code == 5  # a gate that compared nothing fails
    assert "no benchmark run paired: nothing compared" in out
    assert out.count("not paired:") == 2
    assert "nothing compared" in err and len(err.strip().splitlines()) == 1


# -- bad input: one line, exit 2 --------------------------------------------------------------


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = report(benchmark_run({"a": [1.0]}))
    cases: dict[str, tuple[Path, str]] = {}
    missing = tmp_path / "missing.json"
    cases["missing"] = (missing, "cannot read")
    cases["directory"] = (tmp_path, "cannot read")
    not_json = tmp_path / "not.json"
    not_json.write_text("{", encoding="utf-8")
    cases["not JSON"] = (not_json, "not JSON")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00junk")
    cases["binary"] = (binary, "not UTF-8")
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    cases["nested"] = (nested, "nested too deeply")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tests": []}), encoding="utf-8")
    cases["not a report"] = (other, "not a pytest-verial JSON report")
    old = tmp_path / "v1.json"
    old.write_text(json.dumps({**good.to_json(), "schema": "pytest-verial/report/v1"}))
    cases["other schema"] = (old, "schema 'pytest-verial/report/v1' is not one this version reads")
    broken = good.to_json()
    broken["benchmark_runs"][0]["score"] = "high"
    invalid = tmp_path / "invalid.json"
    invalid.write_text(json.dumps(broken), encoding="utf-8")
    cases["invalid"] = (invalid, "not a valid pytest-verial report")
    nan = good.to_json()
    nan["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][0]["score"] = float("nan")
    not_a_score = tmp_path / "nan.json"
    not_a_score.write_text(json.dumps(nan), encoding="utf-8")
    cases["NaN score"] = (not_a_score, "(criterion c0): score nan is not a number in [0, 1]")
    return cases


@pytest.mark.invalid_report
def test_bad_reports_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path / "good.json", report(benchmark_run({"a": [1.0]})))
    for name, (path, reason) in _bad_inputs(tmp_path).items():
        for args in ((str(path), good), (good, str(path))):
            code, out, err = _compare(capsys, *args)
            assert code == 2, name
            assert out == "", name
            lines = err.strip().splitlines()
            assert len(lines) == 1 and reason in lines[0] and str(path) in lines[0], (name, err)
            assert lines[0].startswith("verial compare: "), err


@pytest.mark.invalid_report
def test_every_reader_refuses_what_compare_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """show, report, html and feedback read a report with the one check compare uses (issue
    18 class 5): the same one line, exit 2, for a score out of range, a duplicated task run,
    ``passed`` against the status, and every damaged file."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    cases = _bad_inputs(inputs)
    good = report(benchmark_run({"a": [1.0], "b": [0.0]})).to_json()
    for name, edit, reason in (
        ("score 5", lambda r: r["task_runs"][0]["criterion_runs"][0].update(score=5.0),
         "score 5.0 is not a number in [0, 1]"),
        ("twice", lambda r: r["task_runs"].append(r["task_runs"][0]), "is in"),
        ("passed", lambda r: r["task_runs"][1]["criterion_runs"][0].update(passed=True),
         "passed is true but status is failed"),
    ):  # fmt: skip
        data = json.loads(json.dumps(good))
        edit(data["benchmark_runs"][0])
        path = inputs / f"{name}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        cases[name] = (path, reason)
    for name, (path, reason) in cases.items():
        for argv in (
            ["show", str(path)],
            ["report", str(path)],
            ["html", str(path), "-o", str(tmp_path / "page.html")],
            ["feedback", str(path), "a"],
        ):
            code = main(argv)
            out, err = capsys.readouterr()
            lines = err.strip().splitlines()
            assert code == 2, (name, argv, out, err)
            assert len(lines) == 1 and reason in lines[0], (name, argv, err)
            assert "Traceback" not in out + err
        assert not (tmp_path / "page.html").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tolerance", "lots"], "--tolerance: 'lots' is not a number"),
        (["--tolerance", "-0.1"], "--tolerance: -0.1 is outside [0, 1]"),
        (["--tolerance", "nan"], "--tolerance: nan is outside [0, 1]"),
    ],
)
def test_bad_tolerance_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    good = write(tmp_path / "good.json", report(benchmark_run({"a": [1.0]})))
    code, out, err = _compare(capsys, good, good, *args)
    assert (code, out, err.strip()) == (2, "", f"verial compare: {message}")


def test_unwritable_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.json", report(benchmark_run({"a": [1.0]})))
    (tmp_path / "taken").mkdir()
    code, _, err = _compare(capsys, good, good, "--json", str(tmp_path / "taken"))
    assert code == 4  # a refused output (README, "Bad input and limits")
    assert len(err.strip().splitlines()) == 1 and "--json" in err and "taken" in err


def test_the_console_script_prints_no_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", "compare", str(tmp_path / "no.json"), "x"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr


# -- pytest: --verial-baseline ----------------------------------------------------------------

BENCH = {
    "benchmark": "calls",
    "version": 1,
    "tasks": [
        {"id": "hello", "criteria": [voice_criterion("greets", contains=["good morning"])]},
        {"id": "dob", "criteria": [voice_criterion("asks-dob", contains=["date of birth"])]},
    ],
}
GOOD = [{"speaker": "agent", "text": "Good morning! Your date of birth, please?"}]
HALF = [{"speaker": "agent", "text": "Good morning!"}]


def _baseline_project(pytester: pytest.Pytester) -> Project:
    project = Project(pytester.path)
    project.benchmark("calls", BENCH)
    for task in ("hello", "dob"):
        project.sandbox(task, {"voice/turns.json": GOOD}, run="good")
        project.sandbox(task, {"voice/turns.json": HALF}, run="half")
    return project


def _run(pytester: pytest.Pytester, workers: str, *args: str) -> tuple[int, str]:
    """At -n 0 in this process (``run_inprocess``: nothing here crashes or registers a
    secret), at -n 2 a child session with its workers."""
    if workers == "0":
        return run_inprocess(pytester, "-n", "0", "-p", "no:randomly", *args)
    return run_subprocess(pytester.path, "-n", workers, "-p", "no:randomly", *args)


@WORKERS
def test_baseline_deltas_follow_the_verial_summary(pytester: pytest.Pytester, workers: str) -> None:
    _baseline_project(pytester)
    code, output = _run(pytester, workers, "--verial-run", "good", "--verial-report", "base.json")
    assert code == 0, output[-2000:]
    code, output = _run(pytester, workers, "--verial-run", "half", "--verial-baseline", "base.json")
    assert code == 1, output[-2000:]  # the session's own outcome: the baseline only informs
    summary = output.index("verial summary")
    section = output.index("verial changes from baseline")
    assert summary < section, output[-3000:]
    deltas = output[section:]
    assert re.search(
        r"benchmark run calls@1 \(calls\.verial\.yaml\), good -> half: REGRESSION", deltas
    )
    assert "run score 1.000 -> 0.500 (-0.500), verdict pass -> partial" in deltas
    assert (
        "paired difference over 2 shared tasks: mean -0.500, 95% interval [-1.000, +0.000]"
        in deltas
    )
    assert "task dob: verdict worse, score 1.000 -> 0.000 (-1.000), verdict pass -> fail" in deltas
    assert "1 task unchanged" in deltas
    assert "criterion asks-dob" not in deltas  # criteria with -v only
    if workers == "2":
        # Below, the verbosity and a run against itself: the lines come from the controller's
        # report alone (BaselineDeltas runs there), and that report at -n 2 equals the one
        # at -n 0 (test_core_reports.py::test_json_reports_of_n0_and_n2_are_equal_apart_from_
        # timing, test_core_benchmark_runs.py::test_reports_equal_for_trials): the -n 0
        # variant checks them. The -n 2 sessions above prove the deltas are printed there.
        return
    code, output = _run(
        pytester, workers, "-v", "--verial-run", "half", "--verial-baseline", "base.json"
    )
    deltas = output[output.index("verial changes from baseline") :]
    assert "criterion asks-dob: regression, passed -> failed, score 1.000 -> 0.000" in deltas
    # the same run as its own baseline: no change
    code, output = _run(pytester, workers, "--verial-run", "good", "--verial-baseline", "base.json")
    assert code == 0, output[-2000:]
    assert "good -> good: ok" in output and "2 tasks unchanged" in output


@pytest.mark.invalid_report
@pytest.mark.parametrize(
    ("workers", "bad"),
    # -n 2 once: the baseline is read in the controller's pytest_configure, before xdist
    # starts a worker, by the same reader as at -n 0 whatever is wrong with the file
    [("0", bad) for bad in ("missing.json", "calls.verial.yaml", "good", "nan.json")]
    + [("2", "missing.json")],
    ids=lambda value: {"0": "n0", "2": "n2"}.get(value, value),
)
def test_a_bad_baseline_is_a_usage_error(pytester: pytest.Pytester, workers: str, bad: str) -> None:
    _baseline_project(pytester)
    nan = report(benchmark_run({"a": [1.0]})).to_json()
    nan["benchmark_runs"][0]["score"] = float("nan")
    (pytester.path / "nan.json").write_text(json.dumps(nan), encoding="utf-8")
    # in this process: the session stops in its configure, before any check or worker runs,
    # so a child's start-up (a second of CPU) buys nothing
    result = pytester.runpytest_inprocess(
        "-n", workers, "-p", "no:randomly", "--verial-run", "good", "--verial-baseline", bad
    )
    code, output = result.ret, "\n".join(result.outlines + result.errlines)
    assert code == 4, output[-2000:]
    errors = [line for line in output.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1, output
    assert re.match(rf"ERROR: --verial-baseline: \S*/{re.escape(bad)}:", errors[0]), output
    assert "Traceback" not in output


def test_baseline_from_the_ini_file_is_relative_to_rootdir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _baseline_project(pytester)
    code, output = _run(pytester, "0", "--verial-run", "good", "--verial-report", "base.json")
    assert code == 0, output[-2000:]
    (pytester.path / "pytest.ini").write_text(
        "[pytest]\nverial_baseline = base.json\n", encoding="utf-8"
    )
    (pytester.path / "elsewhere").mkdir()
    monkeypatch.chdir(pytester.path / "elsewhere")  # the session's working directory
    code, output = run_inprocess(
        pytester,
        "-p",
        "no:randomly",
        "--rootdir",
        str(pytester.path),
        "-c",
        str(pytester.path / "pytest.ini"),
        str(pytester.path),
        "--verial-run",
        str(pytester.path / "half"),
    )
    assert code == 1, output[-2000:]
    assert "verial changes from baseline" in output and "good -> half: REGRESSION" in output


def test_bootstrap_by_value_and_by_index_give_the_same_interval() -> None:
    """Few distinct differences are resampled as multinomial counts, many as indices: the
    two draw the same distribution, so on 4,000 tasks both land within Monte Carlo noise of
    each other and of the normal interval mean +- 1.96 sd / sqrt(n) (half width ~0.016)."""
    rng = random.Random(3)
    few = [rng.choice((-0.5, 0.0, 0.0, 0.5, 1.0)) for _ in range(4000)]
    # the same differences with a tiny distinct offset each: every value distinct
    many = [d + i * 1e-12 for i, d in enumerate(few)]
    n = len(few)
    half = 1.959964 * statistics.stdev(few) / math.sqrt(n)
    mean = math.fsum(few) / n
    for diffs in (few, many):
        interval = paired_bootstrap(diffs)
        assert interval.low == pytest.approx(mean - half, abs=0.002)
        assert interval.high == pytest.approx(mean + half, abs=0.002)
