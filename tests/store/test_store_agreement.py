"""Issue 31: ``verial import`` refuses a report whose figures its criterion runs do not give,
sealed anew with a plain digest (as anyone can), on SQLite and PostgreSQL; nothing is stored.
The other readers: tests/core/test_core_report_agreement.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_support import greeting_project, run_pytest, run_verial

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import report_text


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of 2 tasks (one of their 2 criteria fails each), written once."""
    path = tmp_path_factory.mktemp("agreement")
    greeting_project(path, tasks=2)
    done = run_pytest(path, "--verial-report", "report.json", "--verial-store", "none")
    assert done.returncode == 1, done.stdout[-2000:]
    return path / "report.json"


def test_import_refuses_figures_its_criterion_runs_do_not_give(
    written: Path, store_url: str, tmp_path: Path
) -> None:
    report = json.loads(written.read_text())
    run = report["benchmark_runs"][0]
    for task in run["task_runs"]:
        task.update(score=1.0, verdict="pass")  # each still holds its failed criterion run
    run.update(score=1.0, verdict="pass")
    forged = tmp_path / "forged.json"
    forged.write_text(report_text(report) + "\n")  # sealed anew: a plain digest needs no key
    done = run_verial(tmp_path, "import", "--store", store_url, str(forged))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "benchmark_runs[0].task_runs[0].score (task t001) is 1; its criterion runs give 0.5" in (
        done.stderr
    )
    listed = run_verial(tmp_path, "runs", "--store", store_url, "--json")
    assert listed.returncode in (0, 2) and "greet" not in listed.stdout  # nothing stored
    assert run_verial(tmp_path, "import", "--store", store_url, str(written)).returncode == 0
