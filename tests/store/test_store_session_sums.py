"""A session's running benchmark runs in the store (issue 33): their aggregates come from
running sums of the task runs completed so far, never a list of every typed task run, and are
what an aggregate over those task runs gives, at every task run, trials included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from store_support import greeting_project, run_pytest

# private: the running aggregates are compared inside the session, where nothing public shows
# them (the store's rows are rewritten with the final ones at the end)
from pytest_verial import _store_session
from pytest_verial._results import BenchmarkRun, TaskRun
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import open_store

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
