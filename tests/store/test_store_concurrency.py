"""Four pytest sessions (one of them -n 2) writing into one store at once, on SQLite and on
PostgreSQL: every run complete and consistent, and "database is locked" never shown."""

from __future__ import annotations

import subprocess
from pathlib import Path

from store_support import child_env, greeting_project, pytest_command

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import open_store


def test_four_sessions_write_into_one_store_at_once(tmp_path: Path, store_url: str) -> None:
    projects = []
    for n in range(4):
        path = tmp_path / f"p{n}"
        path.mkdir()
        greeting_project(path, tasks=25, criteria=3)
        projects.append(path)
    procs = [
        subprocess.Popen(
            pytest_command(
                "-p",
                "no:randomly",
                "-q",
                "-n",
                "2" if n == 0 else "0",
                "--verial-store",
                store_url,
                "--verial-report",
                "report.json",
            ),
            cwd=path,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for n, path in enumerate(projects)
    ]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    for proc, out in zip(procs, outputs, strict=True):
        assert proc.returncode == 1, out
        assert "locked" not in out.lower() and "ERROR" not in out, out
    with open_store(store_url, create=False) as store:
        rows = store.list_runs()
        assert len(rows) == 4 and {r.status for r in rows} == {"completed"}
        assert {(r.criteria_passed, r.criteria_failed) for r in rows} == {(50, 25)}
        by_session = {r.session_id: r for r in rows}
        assert len(by_session) == 4
        # each project's report, found by its run folder (two sessions may start in the same
        # millisecond, so the start time does not tell them apart)
        found = set()
        for session_id in by_session:
            stored = store.report_of_session(session_id)
            project = Path(stored.benchmark_runs[0].runs[0].path).parent
            assert project in projects, project
            assert stored.to_json() == load_report(project / "report.json").to_json()
            found.add(project)
        assert found == set(projects)
