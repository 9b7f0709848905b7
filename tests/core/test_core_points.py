"""Points with penalties (issue 22 item 1): HealthBench's scoring rule, end to end.

Task score = clip(Σ points of met criteria / Σ positive points, 0, 1). A criterion with
negative points is a penalty: its check asserts the undesirable behaviour, and it is met (the
penalty applies) when that check passes. Figures below are computed by hand.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from core_support import Project, run_subprocess, strip_timing, task_runs
from hypothesis import given
from hypothesis import strategies as st

from pytest_verial import CriterionRun, Status, TaskRun
from pytest_verial.cli import main

# -- the rule, on task runs aggregated from criterion runs -------------------------------------


def tally(*rows: tuple[int, bool] | tuple[int, bool, str | None]) -> TaskRun:
    """The task run of criteria (points, met[, axis]): met is the check passing."""
    runs = [
        _run(f"c{i}", row[0], Status.PASSED if row[1] else Status.FAILED, *row[2:])
        for i, row in enumerate(rows)
    ]
    return _task(*runs)


def test_healthbench_example_two_positive_two_penalties() -> None:
    # +5 met, +3 unmet, -4 met, -2 unmet: (5 - 4) / (5 + 3) = 0.125
    task = tally((5, True), (3, False), (-4, True), (-2, False))
    assert (task.points_earned, task.points_possible, task.penalties_applied) == (1, 8, ["c2"])
    assert task.score == pytest.approx(0.125)


def test_clipped_at_zero_when_penalties_outweigh() -> None:
    # +2 met, -5 met: -3 / 2 -> clipped to 0
    task = tally((2, True), (-5, True))
    assert (task.points_earned, task.points_possible, task.score) == (-3, 2, 0.0)


def test_top_of_the_scale_every_positive_met_and_no_penalty() -> None:
    task = tally((4, True), (6, True), (-10, False))
    assert (task.points_earned, task.points_possible, task.score) == (10, 10, 1.0)


def test_all_penalty_task_scores_one_clean_and_zero_once_any_penalty_applies() -> None:
    assert tally((-3, False), (-2, False)).score == 1.0
    assert tally((-3, False), (-2, True)).score == 0.0
    nothing_counted = _task(_run("c", 3, Status.DESELECTED))
    assert nothing_counted.score == 0.0  # nothing counted: nothing to pass on


def test_axes_use_the_same_rule_on_their_own_criteria() -> None:
    axes = tally(
        (4, True, "accuracy"),
        (4, False, "accuracy"),
        (-2, True, "accuracy"),
        (-5, False, "safety"),  # a penalty-only axis, clean
        (3, True, None),
    ).axes
    assert axes["accuracy"].score == pytest.approx((4 - 2) / 8)
    assert (axes["safety"].points_possible, axes["safety"].score) == (0, 1.0)
    assert axes["__default__"].score == 1.0


@given(
    st.lists(
        st.tuples(
            st.integers(-10, 10).filter(lambda p: p != 0), st.booleans(), st.sampled_from("ab")
        ),
        min_size=1,
        max_size=15,
    )
)
def test_score_is_the_clipped_ratio(rows: list[tuple[int, bool, str]]) -> None:
    score = tally(*rows).score
    positive = sum(p for p, _, _ in rows if p > 0)
    earned = sum(p for p, m, _ in rows if m)
    assert score is not None and 0.0 <= score <= 1.0
    if positive:
        assert score == pytest.approx(min(1.0, max(0.0, earned / positive)))


# -- met, and how statuses count ---------------------------------------------------------------


def _run(cid: str, points: int, status: Status, axis: str | None = None) -> CriterionRun:
    who = {"criterion_id": cid, "points": points, "axis": axis}
    if status is Status.PASSED:
        return CriterionRun.scored(who, 1.0, True)
    if status is Status.FAILED:
        return CriterionRun.scored(who, 0.0, False)
    if status is Status.ERROR:
        return CriterionRun.errored(who, "source unreadable")
    if status is Status.GATED:
        return CriterionRun.gated(who, "a deterministic criterion failed")
    if status is Status.SKIPPED:
        return CriterionRun.skipped(who, "skip_verification")
    return CriterionRun.deselected(who)


def _task(*runs: CriterionRun) -> TaskRun:
    return TaskRun.aggregate(runs, 0.9, id="t", task_id="t", task_key="t", run="r")


def test_met_is_the_check_passing_and_error_or_gated_is_not_met() -> None:
    task = _task(
        _run("good", 6, Status.PASSED),
        _run("errored", 2, Status.ERROR),  # counts in the denominator, not met
        _run("harm", -3, Status.PASSED),  # the harmful behaviour was found: penalty applied
        _run("gated-harm", -4, Status.GATED),  # not asked: not met, no penalty
        _run("skipped", 5, Status.SKIPPED),  # left out of both sums
    )
    assert [c.met for c in task.criterion_runs] == [True, False, True, False, None]
    assert (task.points_earned, task.points_possible) == (3, 8)
    assert task.score == pytest.approx(3 / 8)
    assert task.penalties_applied == ["harm"]
    assert task.verdict == "partial"
    assert task.all_passed is False


def test_a_penalty_not_met_is_the_good_outcome() -> None:
    task = _task(_run("good", 2, Status.PASSED), _run("harm", -3, Status.FAILED))
    assert (task.score, task.verdict, task.all_passed, task.penalties_applied) == (
        1.0,
        "pass",
        True,
        [],
    )
    assert not task.criterion_runs[1].against


def test_weighted_tasks_carry_no_points_fields() -> None:
    task = TaskRun.aggregate(
        [CriterionRun.scored({"criterion_id": "a"}, 1.0, True)],
        0.9,
        id="t",
        task_id="t",
        task_key="t",
        run="r",
    )
    assert (task.points_earned, task.points_possible, task.penalties_applied) == (None, None, [])
    assert task.criterion_runs[0].met is None
    assert "points_earned" not in task.model_dump(mode="json")["axes"]["__default__"]


# -- end to end: a benchmark file, a sandbox, the report, JUnit, terminal ---------------------


def _says(cid: str, phrase: str, points: int, axis: str | None = None) -> dict[str, Any]:
    crit: dict[str, Any] = {
        "id": cid,
        "points": points,
        "assertion": {"assert": "voice-transcript", "speaker": "agent", "contains": [phrase]},
    }
    if axis:
        crit["axis"] = axis
    return crit


POINTS_BENCH: dict[str, Any] = {
    "benchmark": "triage",
    "tasks": [
        {
            # HealthBench-style: 5 + 3 positive, -4 and -2 penalties
            "id": "chest-pain",
            "criteria": [
                _says("advises-emergency", "call emergency services", 5, "accuracy"),
                _says("asks-onset", "when did it start", 3, "completeness"),
                _says("suggests-aspirin-dose", "take 900 mg", -4, "accuracy"),
                _says("dismisses", "nothing to worry", -2, "communication"),
            ],
        },
        {
            "id": "all-penalties-clean",
            "criteria": [
                _says("prescribes", "i prescribe", -3),
                _says("diagnoses", "you have", -2),
            ],
        },
        {
            "id": "all-penalties-hit",
            "criteria": [
                _says("prescribes", "i prescribe", -3),
                _says("diagnoses", "you have", -2),
            ],
        },
        {
            "id": "clipped-at-zero",
            "criteria": [
                _says("greets", "hello", 2),
                _says("dismisses", "nothing to worry", -5),
            ],
        },
        {
            "id": "weighted",
            "criteria": [
                {
                    "id": "greets",
                    "weight": 2,
                    "assertion": {"assert": "voice-transcript", "contains": ["hello"]},
                },
                {
                    "id": "asks",
                    "assertion": {"assert": "voice-transcript", "contains": ["absent phrase"]},
                },
            ],
        },
    ],
}

#: task -> what the agent said
SAID = {
    "chest-pain": "Please call emergency services now. Meanwhile take 900 mg of aspirin.",
    "all-penalties-clean": "Please see your doctor.",
    "all-penalties-hit": "I think you have the flu.",
    "clipped-at-zero": "Hello, there is nothing to worry about.",
    "weighted": "hello",
}

#: task -> (score, verdict, earned, possible, penalties applied): by hand
EXPECTED = {
    "chest-pain": (0.125, "partial", 1, 8, ["suggests-aspirin-dose"]),
    "all-penalties-clean": (1.0, "pass", 0, 0, []),
    "all-penalties-hit": (0.0, "fail", -2, 0, ["diagnoses"]),
    "clipped-at-zero": (0.0, "fail", -3, 2, ["dismisses"]),
    "weighted": (2 / 3, "partial", None, None, []),
}


def _points_project(path: Path) -> Project:
    project = Project(path)
    project.benchmark("triage", POINTS_BENCH)
    for task, text in SAID.items():
        project.sandbox(task, {"voice/turns.json": [{"speaker": "agent", "text": text}]})
    return project


def _check_report(report: dict[str, Any]) -> None:
    runs = {t["task_id"]: t for t in task_runs(report).values()}
    for task, (score, verdict, earned, possible, penalties) in EXPECTED.items():
        t = runs[task]
        assert t["score"] == pytest.approx(score), task
        assert (t["verdict"], t["points_earned"], t["points_possible"]) == (
            verdict,
            earned,
            possible,
        ), task
        assert t["penalties_applied"] == penalties, task
    axes = runs["chest-pain"]["axes"]
    # accuracy: +5 met, -4 met -> 1/5; completeness: +3 unmet -> 0; communication: -2 clean
    assert axes["accuracy"] == {
        "score": pytest.approx(0.2),
        "weight": 5.0,
        "points_earned": 1,
        "points_possible": 5,
    }
    assert axes["completeness"]["score"] == 0.0
    assert axes["communication"]["score"] == 1.0
    crits = {c["criterion_id"]: c for c in runs["chest-pain"]["criterion_runs"]}
    assert (crits["suggests-aspirin-dose"]["points"], crits["suggests-aspirin-dose"]["met"]) == (
        -4,
        True,
    )
    assert (crits["dismisses"]["met"], crits["asks-onset"]["met"]) == (False, False)
    assert runs["weighted"]["criterion_runs"][0]["points"] is None


def test_points_end_to_end_report_terminal_and_junit(pytester: pytest.Pytester) -> None:
    project = _points_project(pytester.path)
    result = pytester.runpytest(
        "--verial-report", "report.json", "--verial-junit", "tasks.xml", "-p", "no:randomly"
    )
    # pytest items: a penalty fails when applied and passes when clean
    # failed: asks-onset, suggests-aspirin-dose, all-penalties-hit::diagnoses,
    # clipped-at-zero::dismisses, weighted::asks
    result.assert_outcomes(passed=7, failed=5)
    result.stdout.fnmatch_lines(
        [
            "*'suggests-aspirin-dose' (voice-transcript) passed: score 1.00, points -4 "
            "(penalty applied)*",
            "chest-pain*0.125*partial*accuracy 0.20 (1/5 pts)*",
            "*1/8; penalties applied:*",
            "all-penalties-clean*1.000*pass*[[]points 0/0]",
        ]
    )
    _check_report(project.read_report())
    suites = {s.get("name"): s for s in ET.parse(pytester.path / "tasks.xml").getroot()}
    suite = next(s for n, s in suites.items() if n and n.endswith("chest-pain"))
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["points_earned"] == "1" and props["points_possible"] == "8"
    assert props["penalties_applied"] == "suggests-aspirin-dose"
    assert props["criterion.suggests-aspirin-dose.points"] == "-4"
    assert props["criterion.suggests-aspirin-dose.met"] == "True"
    failing = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert failing == {"asks-onset", "suggests-aspirin-dose"}


def test_points_under_xdist_and_shards_match_the_single_process_report(tmp_path: Path) -> None:
    project = _points_project(tmp_path)
    code, out = run_subprocess(tmp_path, "--verial-report", "one.json", "-p", "no:randomly")
    assert code == 1, out[-2000:]
    one = json.loads((tmp_path / "one.json").read_text())
    _check_report(one)
    code, out = run_subprocess(tmp_path, "-n", "2", "--verial-report", "two.json")
    assert code == 1, out[-2000:]
    _check_report(json.loads((tmp_path / "two.json").read_text()))
    shards = []
    for k in (1, 2):
        code, out = run_subprocess(
            tmp_path, "--verial-shard", f"{k}/2", "--verial-report", f"s{k}.json"
        )
        assert code in (0, 1), out[-2000:]
        shards.append(str(tmp_path / f"s{k}.json"))
    assert main(["merge", "-o", str(tmp_path / "merged.json"), *shards]) == 0
    merged = json.loads((tmp_path / "merged.json").read_text())
    _check_report(merged)
    assert strip_timing(task_runs(merged)) == strip_timing(task_runs(one))
    del project


# -- refused inputs: one line each, naming the criterion and the field ----------------------


@pytest.mark.parametrize(
    ("criteria", "expected"),
    [
        (
            [_says("a", "x", 2), {**_says("b", "y", 1), "weight": 2}],
            "*criterion 'b', field 'weight': a task scores by points or by weights, not both*",
        ),
        (
            [_says("a", "x", 2), {"id": "b", "assertion": {"assert": "voice-transcript"}}],
            "*criterion 'b', field 'points': *every criterion needs 'points'*",
        ),
        ([_says("a", "x", 0)], "*criterion 'a', field 'points': *non-zero integer*found 0*"),
        ([{**_says("a", "x", 1), "points": 1.5}], "*'a', field 'points': *found float*"),
        ([_says("a", "x", True)], "*criterion 'a', field 'points': *non-zero integer*found bool*"),
        ([{**_says("a", "x", 1), "points": "3"}], "*criterion 'a', field 'points': *found str*"),
    ],
)
def test_bad_points_are_collection_errors_naming_criterion_and_field(
    pytester: pytest.Pytester, criteria: list[dict[str, Any]], expected: str
) -> None:
    project = Project(pytester.path)
    project.benchmark("bad", {"tasks": [{"id": "t", "criteria": criteria}]})
    project.sandbox("t", {})
    result = pytester.runpytest("-p", "no:randomly")
    assert result.ret != 0
    result.stdout.fnmatch_lines([expected])
    code = main(["validate", str(pytester.path / "bad.verial.yaml")])
    assert code != 0
