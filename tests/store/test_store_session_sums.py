"""A session's running path in the store (issue 33).

Its running benchmark runs: their aggregates come from running sums of the task runs completed
so far, never a list of every typed task run, and are what an aggregate over those task runs
gives, at every task run, trials included.

Its rows: made from the session's plain records, and the rows the typed task run made, to the
byte. With the store on, each completed task run used to be built typed for its rows
(``reporting._build._task_run``: a ``CriterionRun`` per criterion, a ``TaskRun``, its dump), and
again at the session's end for the report. The store now makes the task run's JSON from the
records' ``to_json()`` and ``task_figures`` (``store/_plain.py``). Every shape a task run can
have while a session runs (each criterion status, points and penalties, critical criteria, a
judge's confidence, criteria the verifier could not evaluate, deselected criteria, criteria not
run yet, a masked secret) is made both ways and its rows compared: columns, JSON columns (as
text, key order and float form included) and the digests the session's end compares.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_support import greeting_project, run_pytest

# private: the running aggregates are compared inside the session, where nothing public shows
# them (the store's rows are rewritten with the final ones at the end); the rows are compared
# where the store makes them, before any database (a stored row's JSON text goes through the
# driver, which would hide a key's order or an int/float)
from pytest_verial import _secrets, _store_session
from pytest_verial._config.run_folder import RunConfig, RunDir
from pytest_verial._engine import evidence_json, identity
from pytest_verial._loader import load_benchmark
from pytest_verial._nodeids import criterion_nodeid, task_name, task_nodeid
from pytest_verial._record import CriterionRecord
from pytest_verial._results import BenchmarkRun, CriterionRun, TaskRun
from pytest_verial._secrets import redact_json
from pytest_verial._store_session import _plain_task_run
from pytest_verial.reporting._build import ReportInput, _task_run
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import open_store
from pytest_verial.store._core import SessionWriter
from pytest_verial.store._repo_batches import rows_digests
from pytest_verial.store._rows import Rows, canonical, digest_of, task_run_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "example_benchmarks"


@pytest.mark.parametrize("trials", [False, True])
def test_a_running_aggregate_from_sums_is_the_aggregate_of_the_task_runs_so_far(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, trials: bool
) -> None:
    monkeypatch.setattr(_store_session, "AGGREGATE_SECONDS", -1.0)  # refreshed at each one
    done: dict[str, list[TaskRun]] = {}
    compared: list[str] = []
    original = _store_session.SessionStore.criterion_done

    def criterion_done(self: Any, nodeid: str, selected: Any, data: Any) -> None:
        before = len(self._pending)
        original(self, nodeid, selected, data)
        if len(self._pending) == before:
            return
        run_id, _columns, _position, data = self._pending[-1]
        task = TaskRun.model_validate(data)  # the task run the store's row holds
        done.setdefault(run_id, []).append(task)
        kept: BenchmarkRun = self._runs[run_id]
        again = kept.rescored(done[run_id], running=True)
        assert kept.model_dump(exclude={"task_runs"}) == again.model_dump(exclude={"task_runs"})
        assert list(kept.axes) == list(again.axes)
        compared.append(task.id)

    monkeypatch.setattr(_store_session.SessionStore, "criterion_done", criterion_done)
    runs = [str(EXAMPLES / "runs" / name) for name in ("good-agent", "flawed-agent")]
    args = [
        str(EXAMPLES / f"{name}.verial.yaml")
        for name in ("verification", "prior-auth", "files", "interop")
    ]
    for run in runs:
        args += ["--verial-run", run]
    if trials:
        args.append("--verial-trials")
    result = pytester.runpytest(
        *args, "-p", "no:cacheprovider", "--verial-store", f"sqlite:///{pytester.path / 's.db'}"
    )
    assert result.ret in (0, 1), result.outlines[-5:]
    assert len(compared) > 10


#: an extension that edits a criterion run in the final report
EDITING_HOOK = """
def pytest_verial_report(report):
    report["benchmark_runs"][0]["task_runs"][1]["criterion_runs"][0]["details"] = "edited"
"""


def test_a_report_hook_that_edits_a_criterion_run_is_stored_as_the_report_says(
    tmp_path: Path,
) -> None:
    """The session's end trusts the criterion rows its batches stored, except where a
    ``pytest_verial_report`` hook may have changed them: the edit reaches the store."""
    project = greeting_project(tmp_path, tasks=3)
    project.conftest(EDITING_HOOK)
    done = run_pytest(tmp_path, "-n", "0", "--verial-report", "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    report = load_report(tmp_path / "report.json")
    assert report.benchmark_runs[0].task_runs[1].criterion_runs[0].details == "edited"
    with open_store(f"sqlite:///{tmp_path / '.verial' / 'results.db'}", create=False) as store:
        newest = store.list_runs()[0]
        assert store.report_of_session(newest.session_id).to_json() == report.to_json()


SECRET = "sk-plain-rows-0123456789"

BENCHMARK = """
benchmark: plain
version: 1
pass_threshold: 0.6
tasks:
  - id: weighted
    criteria:
      - {id: a, axis: format, assertion: {assert: output-length, min_words: 1}}
      - id: b
        axis: safety
        weight: 2
        critical: true
        assertion: {assert: output-length, min_words: 2}
      - {id: c, weight: 0.5, assertion: {assert: output-length, min_words: 3}}
      - {id: d, axis: format, weight: 3, assertion: {assert: output-length, min_words: 4}}
  - id: pointed
    pass_threshold: 0.5
    criteria:
      - {id: p1, axis: care, points: 5, assertion: {assert: output-length, min_words: 1}}
      - {id: p2, axis: care, points: 3, assertion: {assert: output-length, min_words: 2}}
      - {id: p3, points: -4, assertion: {assert: output-length, min_words: 3}}
      - id: p4
        axis: tone
        points: 2
        critical: true
        assertion: {assert: output-length, min_words: 4}
"""

RUBRIC = {
    "rubric_results": [{"principle": "p", "rating": 4, "reasoning": "ok", "score": 1}],
    "judge": {"model": "m", "called": True, "prompt_tokens": 10, "cost": 0.001},
    "confidence": 0.7,
    "threshold": 0.5,
}
ROWS = {"fieldResults": [{"path": "x", "expected": 1, "actual": 2, "passed": False}], "words": 3}

#: one outcome per criterion: (constructor, arguments, result fields)
Outcome = tuple[str, tuple[Any, ...], dict[str, Any]]
PASS: Outcome = ("scored", (1.0, True), {"evidence": {}})
FAIL: Outcome = ("scored", (0.25, False), {"evidence": ROWS, "details": "1 of 2"})
ERROR: Outcome = ("errored", ("source unusable",), {"evidence": {"error": "SourceError"}})
GATED: Outcome = ("gated", ("gated: a failed",), {})
SKIP: Outcome = ("skipped", ("verification skipped",), {"evidence": {}})
JUDGED: Outcome = ("scored", (0.8, True), {"evidence": RUBRIC, "judge": True})
JUDGE_FAIL: Outcome = ("scored", (0.2, False), {"evidence": RUBRIC, "judge": True})
PENDING: Outcome = ("unverified", ("judge unreachable", "not evaluated: unreachable"), {})
SECRET_FAIL: Outcome = ("scored", (0.0, False), {"details": f"saw {SECRET}", "evidence": ROWS})
#: left out of the session (-k): not a record, the criterion is not selected
DESELECTED = None
#: selected, not arrived yet: no record
NOT_RUN = "not run"

#: name -> outcomes of the four criteria of ``weighted`` and of ``pointed``
CASES: dict[str, tuple[list[Any], list[Any]]] = {
    "all passed": ([PASS, PASS, PASS, PASS], [PASS, PASS, FAIL, PASS]),
    "failed, critical failed": ([PASS, FAIL, PASS, FAIL], [FAIL, PASS, PASS, FAIL]),
    "error and gated": ([FAIL, PASS, ERROR, GATED], [ERROR, PASS, PASS, GATED]),
    "a judge's confidence": ([PASS, JUDGED, PASS, JUDGE_FAIL], [JUDGED, PASS, FAIL, PASS]),
    "judge pending (not evaluated)": ([PASS, PASS, PENDING, PASS], [PENDING, PASS, FAIL, PASS]),
    "pending, critical pending": ([PASS, PENDING, FAIL, PENDING], [PASS, PASS, PASS, PENDING]),
    "everything pending": ([PENDING] * 4, [PENDING] * 4),
    "all skipped": ([SKIP] * 4, [SKIP] * 4),
    "some skipped": ([SKIP, PASS, SKIP, FAIL], [PASS, SKIP, PASS, PASS]),
    "deselected": ([PASS, DESELECTED, FAIL, PASS], [DESELECTED, PASS, PASS, FAIL]),
    "not run yet": ([PASS, NOT_RUN, PASS, PASS], [PASS, PASS, NOT_RUN, PASS]),
    "penalty applied": ([PASS, PASS, PASS, PASS], [PASS, FAIL, PASS, PASS]),
    "a masked secret": ([SECRET_FAIL, PASS, PASS, PASS], [PASS, SECRET_FAIL, PASS, PASS]),
}


@pytest.fixture
def secret() -> Iterator[None]:
    _secrets.register(SECRET)
    yield
    _secrets.reset()


def _input(tmp_path: Path, outcomes: tuple[list[Any], list[Any]]) -> ReportInput:
    (tmp_path / "plain.verial.yaml").write_text(BENCHMARK, encoding="utf-8")
    plan = load_benchmark(tmp_path / "plain.verial.yaml", None, display="plain.verial.yaml")
    run = RunDir(tmp_path / "run-1", "run-1", config=RunConfig())
    display = "plain.verial.yaml"
    selected: set[str] = set()
    received: dict[str, CriterionRecord | CriterionRun] = {}
    for task, chosen in zip(plan.tasks, outcomes, strict=True):
        node = task_nodeid(display, task_name(task.key, run.label, False))
        for criterion, outcome in zip(task.criteria, chosen, strict=True):
            nodeid = criterion_nodeid(node, criterion.id)
            if outcome is DESELECTED:
                continue
            selected.add(nodeid)
            if outcome == NOT_RUN:
                continue
            kind, args, result = outcome
            who = {
                **identity(criterion, task),
                "nodeid": nodeid,
                "task_run": node,
                "file": display,
                "benchmark": plan.slug,
                "run": run.label,
                "pass_threshold": 0.6,
                "started_at": "2026-01-01T00:00:00.000Z",
                "duration": 0.01,
                "outcome": "passed",
            }
            result = dict(result)
            if result.get("judge"):
                who["assert"] = "llm-rubric"
                who["judge"] = result.pop("judge")
            if "evidence" in result:
                result["evidence"] = evidence_json(who["assert"], result["evidence"])
            received[nodeid] = getattr(CriterionRecord, kind)(who, *args, **result)
    return ReportInput(
        files=[(display, plan)],
        file_runs={display: [run]},
        runs=[run],
        selected=selected,
        criterion_runs=received,
        pass_threshold=None,
        scored=False,
        started_at="2026-01-01T00:00:00.000Z",
        completed_at=None,
        duration=0.0,
        interrupted=False,
        collection_errors=[],
        running=True,
    )


def _text(rows: Rows) -> str:
    """The rows as text, apart from the ids the store makes: every column and JSON value, in
    order, with its type (an int where a float was is a difference)."""
    strip = ("id", "task_run_id", "criterion_run_id")
    table = {
        "task": {k: v for k, v in rows.task.items() if k not in strip},
        "criteria": [{k: v for k, v in r.items() if k not in strip} for r in rows.criteria],
        "judge": [{k: v for k, v in r.items() if k not in strip} for r in rows.judge],
    }
    return json.dumps(table, default=lambda v: f"{type(v).__name__}:{v}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_task_runs_rows_from_the_records_are_the_rows_of_the_typed_task_run(
    tmp_path: Path, secret: None, case: str
) -> None:
    data = _input(tmp_path, CASES[case])
    display, plan = data.files[0]
    run = data.file_runs[display][0]
    for position, task in enumerate(plan.tasks):
        typed = _task_run(display, plan, task, run, data)
        made = _plain_task_run(display, plan, task, run, data)
        assert typed is not None and made is not None
        plain, raw = made
        typed_data = redact_json(typed.model_dump(mode="json", by_alias=True))
        plain_data = redact_json(raw)
        # the JSON column's text, key order and float form included
        assert json.dumps(plain_data) == json.dumps(typed_data)
        before = task_run_rows("tr_x", "br_x", "ses_x", position, typed, typed_data)
        after = task_run_rows("tr_x", "br_x", "ses_x", position, plain, plain_data)
        assert _text(after) == _text(before)
        assert rows_digests(after) == rows_digests(before)
        assert rows_digests(after, below=False) == rows_digests(before, below=False)


def test_the_cases_cover_every_status_and_figure(tmp_path: Path, secret: None) -> None:
    """The cases above reach every criterion status, every task status a running session
    stores, both verifications, a judge's confidence below 1, a penalty, a critical failure,
    judge calls and a masked secret: a comparison that never met one proves nothing of it."""
    criteria: set[str] = set()
    tasks: set[str] = set()
    seen: set[str] = set()
    for outcomes in CASES.values():
        data = _input(tmp_path, outcomes)
        display, plan = data.files[0]
        for task in plan.tasks:
            made = _plain_task_run(display, plan, task, data.file_runs[display][0], data)
            assert made is not None
            plain, raw = made
            tasks.add(plain.status.value)
            criteria.update(str(c.status) for c in plain.criterion_runs)
            seen.add(f"verification {raw['verification']}")
            seen.add(f"verdict {raw['verdict']}")
            if raw["confidence"] not in (None, 1.0):
                seen.add("confidence")
            if raw["penalties_applied"]:
                seen.add("penalty")
            if raw["critical_failed"]:
                seen.add("critical")
            if task_run_rows("t", "b", "s", 0, plain, redact_json(raw)).judge:
                seen.add("judge calls")
            if SECRET in json.dumps(raw) and SECRET not in json.dumps(redact_json(raw)):
                seen.add("secret")
    assert criteria == {
        "passed", "failed", "error", "gated", "skipped", "deselected", "not_run"
    }  # fmt: skip
    assert tasks == {"completed", "incomplete", "running", "skipped"}
    assert seen >= {
        "verification complete", "verification incomplete", "verdict pass", "verdict fail",
        "verdict partial", "verdict None", "confidence", "penalty", "critical", "judge calls",
        "secret",
    }  # fmt: skip


def test_the_end_given_the_reports_json_reads_no_criterion_run_a_batch_stored(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SessionWriter.finish``'s docstring says that, given ``plain`` (the whole report's
    JSON) and no report hook, it reads no criterion run of a task run a batch stored. Here the
    session's end is handed a report with those criterion runs left out: the store holds the
    whole report all the same (every row read back), with the whole report's digest. (The
    Markdown summary needs the typed report whole: the recorder then hands it whole, not
    light; tests/store/test_store_light_end.py checks the light end.)"""
    seen: dict[str, Any] = {}
    original = SessionWriter.finish

    def finish(
        self: Any, report: Any, hooked: bool = True, plain: Any = None, light: Any = None
    ) -> None:
        assert light is None
        full = report.to_json()
        light = report.model_copy(deep=True)
        left_out = 0
        for run in light.benchmark_runs:
            for task in run.task_runs:
                if task.id in self.written:
                    left_out += len(task.criterion_runs)
                    task.criterion_runs = []
        seen.update(
            session=self.session_id,
            hooked=hooked,
            left_out=left_out,
            canonical=canonical(report),
        )
        original(self, light, hooked, plain=full)

    monkeypatch.setattr(SessionWriter, "finish", finish)
    examples = Path(__file__).resolve().parents[2] / "example_benchmarks"
    db = pytester.path / "s.db"
    args = [str(examples / f"{name}.verial.yaml") for name in ("verification", "prior-auth")]
    for run in ("good-agent", "flawed-agent"):
        args += ["--verial-run", str(examples / "runs" / run)]
    result = pytester.runpytest(
        *args,
        "-p",
        "no:cacheprovider",
        "--verial-store",
        f"sqlite:///{db}",
        "--verial-markdown",
        str(pytester.path / "summary.md"),
    )
    assert result.ret in (0, 1), result.outlines[-5:]
    assert not seen["hooked"] and seen["left_out"] > 10
    with open_store(f"sqlite:///{db}", create=False) as store:
        again = store.report_of_session(seen["session"]).to_json()
    assert json.dumps(again) == json.dumps(seen["canonical"])
    with sqlite3.connect(db) as conn:
        (digest,) = conn.execute(
            "select report_digest from sessions where id = ?", (seen["session"],)
        ).fetchone()
    assert digest == digest_of(seen["canonical"])
