"""The light report's figures are made from the session's plain records (issue 33, wave 7).

At a session's end the light report (``reporting._build.build_light``: the terminal summary,
``--verial-fail-under`` and the streamed JSON report and JUnit file read it) used to build
every criterion run typed (a validated ``CriterionRun`` per criterion) only to score its task
runs, then dropped all but the ones the summary lists. Its task runs are now scored on the
records themselves (``_results.task_figures``, as the store's rows are) and only the criterion
runs the summary lists are typed. Every figure must stay the typed report's: each status,
deselected and never run, trials, points and penalties, weights, axes, critical failures,
errors and criteria not evaluated, a judge's confidence, a running session, and runs received
typed (a reader's: ``--verial-resume``, ``verial merge``) or as records.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from core_support import Project

from pytest_verial import CriterionRun

# private: the report's builder and the records it reads have no public face
from pytest_verial._config.run_folder import RunDir
from pytest_verial._engine import evidence_json
from pytest_verial._engine import identity as criterion_identity
from pytest_verial._loader import load_benchmark
from pytest_verial._nodeids import NO_CRITERIA, criterion_nodeid, task_name, task_nodeid
from pytest_verial._record import CriterionRecord
from pytest_verial.checks import default_registry
from pytest_verial.reporting._build import LightReport, ReportInput, build_light, build_report
from pytest_verial.reporting._terminal import summary

FILE = "figures.verial.yaml"


def _voice(cid: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        **extra,
        "assertion": {"assert": "voice-transcript", "speaker": "agent", "contains": ["hi"]},
    }


def _judge(cid: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": cid,
        **extra,
        "assertion": {"assert": "llm-rubric", "target": "voice", "principles": ["is polite"]},
    }


BENCH: dict[str, Any] = {
    "benchmark": "figures",
    "pass_threshold": 0.6,
    "tasks": [
        {
            "id": "weighted",
            "criteria": [
                _voice("passes", axis="accuracy", weight=3),
                _voice("fails", critical=True, weight=0.5),
                _voice("errs", axis="safety"),
                _voice("gated"),
                _voice("skipped"),
                _voice("unverified", axis="safety", weight=2),
                _voice("deselected"),
            ],
        },
        {
            "id": "points",
            "criteria": [
                _voice("earned", points=5, axis="accuracy"),
                _voice("missed", points=3, axis="accuracy"),
                _voice("penalty-applied", points=-2),
                _voice("penalty-avoided", points=-1),
                _voice("points-unverified", points=4),
            ],
        },
        {
            "id": "judged",
            "pass_threshold": 0.5,
            "criteria": [
                _voice("greets"),
                _judge("polite", axis="tone"),
                _judge("clear", weight=2),
                _judge("judge-unverified"),
            ],
        },
        {"id": "clean", "criteria": [_voice("only", weight=4)]},
        {"id": "cancelled", "criteria": [_voice("ran"), _voice("not-yet")]},
        {"id": "all-skipped", "criteria": [_voice("s1"), _voice("s2")]},
        {"id": "errors-only", "criteria": [_voice("e1"), _voice("e2", critical=True)]},
        {"id": "none-evaluated", "criteria": [_judge("nobody")]},
        {"id": "empty", "criteria": []},
    ],
}

#: each criterion's outcome (absent: never run; "deselected": not in the session)
OUTCOME = {
    "passes": "passed",
    "fails": "failed",
    "errs": "error",
    "gated": "gated",
    "skipped": "skipped",
    "unverified": "unverified",
    "deselected": "deselected",
    "earned": "passed",
    "missed": "failed",
    "penalty-applied": "passed",
    "penalty-avoided": "failed",
    "points-unverified": "unverified",
    "greets": "passed",
    "polite": "judged-0.9",
    "clear": "judged-0.6",
    "judge-unverified": "unverified",
    "only": "passed",
    "ran": "passed",
    "s1": "skipped",
    "s2": "skipped",
    "e1": "error",
    "e2": "error",
    "nobody": "unverified",
}
SAID = {"phraseResults": [{"phrase": "hi", "found": False, "turn": 0}], "turns": 1}


def _rubric(confidence: float, score: float) -> dict[str, Any]:
    return {
        "rubric_results": [{"principle": "is polite", "rating": 4, "reasoning": "ok"}],
        "judge": {"model": "m", "called": True},
        "confidence": confidence,
        "threshold": 0.5,
        "score": score,
    }


def _record(who: dict[str, Any], outcome: str, n: int, second: bool) -> CriterionRecord:
    """The record the engine returns for ``outcome`` (``second``: the other trial scores some
    criteria differently, so the trials' figures differ)."""
    times = {
        "started_at": f"2026-01-01T00:00:{n % 60:02d}.000Z",
        "completed_at": f"2026-01-01T00:00:{n % 60:02d}.250Z",
        "duration": 0.25,
        "outcome": "failed" if outcome in ("failed", "error") else "passed",
    }
    assertion = who["assert"]
    if outcome.startswith("judged-"):
        confidence = float(outcome.split("-")[1]) - (0.2 if second else 0.0)
        score = 0.75 if second else 0.5
        evidence = evidence_json(assertion, _rubric(confidence, score))
        return CriterionRecord.scored(
            who, score, score >= 0.5, details="rated", evidence=evidence, **times
        )
    if outcome == "passed" or (outcome == "failed" and second and who["points"] is None):
        return CriterionRecord.scored(who, 1.0, True, details="said hi", evidence={}, **times)
    if outcome == "failed":
        evidence = evidence_json(assertion, SAID)
        return CriterionRecord.scored(who, 0.0, False, details="no", evidence=evidence, **times)
    if outcome == "error":
        return CriterionRecord.errored(who, "cannot read turns", **times)
    if outcome == "unverified":
        return CriterionRecord.unverified(who, "judge unreachable", "no answer", **times)
    if outcome == "gated":
        return CriterionRecord.gated(who, "a deterministic criterion failed", **times)
    return CriterionRecord.skipped(who, "skip_verification", **times)


def _input(path: Path, typed: str, running: bool) -> ReportInput:
    """``typed``: the runs received as ``records``, ``typed`` (a reader's) or ``mixed``."""
    path.mkdir(parents=True, exist_ok=True)
    project = Project(path)
    bench = project.benchmark("figures", BENCH)
    for label, run in (("r1", {"agent": "a"}), ("r2", {"agent": "a"}), ("r3", {"agent": "b"})):
        project.run_yaml(run, run=label)
    plan = load_benchmark(bench, default_registry(), FILE)
    runs = [RunDir(path / label) for label in ("r1", "r2", "r3")]
    received: dict[str, CriterionRecord | CriterionRun] = {}
    selected: set[str] = set()
    n = 0
    for run in runs:
        for task in plan.tasks:
            node = task_nodeid(FILE, task_name(task.key, run.label, True))
            if not task.criteria:
                selected.add(criterion_nodeid(node, NO_CRITERIA))
            for criterion in task.criteria:
                nodeid = criterion_nodeid(node, criterion.id)
                outcome = OUTCOME.get(criterion.id)
                if outcome == "deselected":
                    continue
                selected.add(nodeid)
                if outcome is None:
                    continue
                n += 1
                who = {**criterion_identity(criterion, task), "nodeid": nodeid, "task_run": node}
                who |= {"file": FILE, "benchmark": "figures", "run": run.label}
                record = _record(who, outcome, n, second=run.label == "r2")
                as_typed = typed == "typed" or (typed == "mixed" and n % 2 == 0)
                received[nodeid] = CriterionRun.of(record) if as_typed else record
    return ReportInput(
        files=[(FILE, plan)],
        file_runs={FILE: runs},
        runs=runs,
        selected=selected,
        criterion_runs=received,
        pass_threshold=None,
        scored=False,
        started_at="2026-01-01T00:00:00.000Z",
        completed_at=None if running else "2026-01-01T00:01:00.000Z",
        duration=60.25,
        interrupted=False,
        collection_errors=[],
        running=running,
        exit_status=None if running else 1,
    )


def _figures(report: Any, light: LightReport | None = None) -> dict[str, Any]:
    """The report's JSON without the task runs' criterion runs; ``light``: the light report
    ``report`` is, whose task runs leave their snapshot to the plan (each one's JSON as its
    writers have it: ``task_head``)."""
    whole = report.to_json()
    for r, run in enumerate(whole["benchmark_runs"]):
        for i, task in enumerate(run["task_runs"]):
            task.pop("criterion_runs")
            if light is not None:
                assert task["snapshot"] is None  # no second copy of the task per task run
                task["snapshot"] = light.task_head(r, i, report.benchmark_runs[r].task_runs[i])[
                    "snapshot"
                ]
    return dict(whole)


def _listed(run: CriterionRun) -> bool:
    """What the summary lists (and the light report keeps)."""
    return run.against or run.not_evaluated is not None or run.status.value == "failed"


@pytest.mark.parametrize("running", [False, True], ids=["completed", "running"])
@pytest.mark.parametrize("typed", ["records", "typed", "mixed"])
def test_the_light_figures_are_the_typed_reports(tmp_path: Path, typed: str, running: bool) -> None:
    data = _input(tmp_path / "project", typed, running)
    whole = build_report(data)
    streamed = build_light(data)
    light = streamed.report

    assert _figures(light, streamed) == _figures(whole)
    # what the input covers: every status and task status, trials, points, confidence
    statuses = {c.status.value for t in whole.task_runs() for c in t.criterion_runs}
    assert statuses == {"passed", "failed", "error", "gated", "skipped", "deselected", "not_run"}
    task_statuses = {t.status.value for t in whole.task_runs()}
    assert {"completed", "incomplete", "skipped"} < task_statuses
    assert ("running" if running else "cancelled") in task_statuses
    assert [len(r.runs) for r in whole.benchmark_runs] == [2, 1]
    assert whole.benchmark_runs[0].trials is not None
    judged = [t for t in whole.task_runs() if t.task_key == "judged"]
    assert [t.confidence for t in judged] == pytest.approx([0.6 * 0.8, 0.4 * 0.8, 0.6 * 0.8])
    assert any(t.penalties_applied for t in whole.task_runs())
    assert any(t.critical_failed for t in whole.task_runs())

    # each task run keeps what the summary lists, the typed runs themselves, in order
    for kept, every in zip(light.task_runs(), whole.task_runs(), strict=True):
        assert [c.to_json() for c in kept.criterion_runs] == [
            c.to_json() for c in every.criterion_runs if _listed(c)
        ]
    assert sum(len(t.criterion_runs) for t in light.task_runs()) > 0
    for verbosity in (-1, 0, 1):
        how = {"verbosity": verbosity, "width": 100, "failures": True}
        assert summary(light, **how) == summary(whole, **how)


def test_the_light_report_types_only_the_runs_it_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 validated criterion runs made at a session's end only to be dropped were most of
    the end's CPU (BENCHMARKS.md, "issue 33, wave 7"): only the listed ones are typed now."""
    data = _input(tmp_path / "project", "records", running=False)
    typed: list[str] = []
    of = CriterionRun.from_json.__func__  # type: ignore[attr-defined]

    def counted(cls: type[CriterionRun], json: Any) -> CriterionRun:
        typed.append(json["nodeid"])
        return of(cls, json)  # type: ignore[no-any-return]

    monkeypatch.setattr(CriterionRun, "from_json", classmethod(counted))
    light = build_light(data).report
    kept = [c.nodeid for t in light.task_runs() for c in t.criterion_runs]
    assert typed == kept
    assert 0 < len(kept) < len(data.criterion_runs)
