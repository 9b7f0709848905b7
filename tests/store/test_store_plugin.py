"""The plugin writes every session into the store: default SQLite under rootdir, --verial-store
none, PostgreSQL, session metadata, kill -9 mid-session, store failures, import/export."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from store_support import greeting_project, run_pytest, run_verial

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import open_store


def _default(path: Path) -> str:
    return f"sqlite:///{path / '.verial' / 'results.db'}"


def test_every_session_is_stored_by_default_and_exports_its_report(tmp_path: Path) -> None:
    greeting_project(tmp_path, tasks=3)
    done = run_pytest(tmp_path, "-n", "0", "--verial-report", "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert (tmp_path / ".verial" / ".gitignore").read_text().strip().endswith("*")
    with open_store(_default(tmp_path), create=False) as store:
        rows = store.list_runs()
        assert [
            (r.benchmark_ref, r.status, r.criteria_passed, r.criteria_failed) for r in rows
        ] == [("greet@1", "completed", 3, 3)]
        session_id = rows[0].session_id
        assert (
            store.report_of_session(session_id).to_json()
            == load_report(tmp_path / "report.json").to_json()
        )
    db = sqlite3.connect(tmp_path / ".verial" / "results.db")
    host, version, line, exit_status, ci = db.execute(
        "select host, plugin_version, command_line, exit_status, ci_url from sessions"
    ).fetchone()
    assert host and version and "--verial-report report.json" in line and exit_status == 1
    assert ci is None
    # export writes the report back, byte for byte the same content as the session wrote
    out = run_verial(tmp_path, "export", "latest", "-o", "exported.json")
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "exported.json").read_text()) == json.loads(
        (tmp_path / "report.json").read_text()
    )
    # importing the session's own report is a no-op: it is that session
    again = run_verial(tmp_path, "import", "report.json")
    assert again.returncode == 0 and "already stored as " + session_id in again.stdout


def test_stored_without_a_json_report_and_under_xdist(tmp_path: Path) -> None:
    greeting_project(tmp_path, tasks=4)
    done = run_pytest(tmp_path, "-n", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    with open_store(_default(tmp_path), create=False) as store:
        (row,) = store.list_runs()
        report = store.report_of_run(row.id)
        assert report.session.counts.criteria == 8 and row.criteria_passed == 4
        assert [t.task_key for t in report.benchmark_runs[0].task_runs] == [
            "t001",
            "t002",
            "t003",
            "t004",
        ]


def test_none_turns_the_store_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    greeting_project(tmp_path, tasks=1)
    done = run_pytest(tmp_path, "-n", "0", "--verial-store", "none")
    assert done.returncode == 1 and not (tmp_path / ".verial").exists()
    done = run_pytest(tmp_path, "-n", "0", env={"VERIAL_STORE": "none"})
    assert done.returncode == 1 and not (tmp_path / ".verial").exists()
    (tmp_path / "pytest.ini").write_text("[pytest]\nverial_store = none\n")
    done = run_pytest(tmp_path, "-n", "0")
    assert done.returncode == 1 and not (tmp_path / ".verial").exists()


def test_git_and_ci_metadata(tmp_path: Path) -> None:
    import subprocess

    greeting_project(tmp_path, tasks=1)
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.strip()
    env = {
        "GITHUB_RUN_ID": "77",
        "GITHUB_REPOSITORY": "acme/agents",
        "GITHUB_SERVER_URL": "https://github.example",
    }
    run_pytest(tmp_path, "-n", "0", env=env)
    (tmp_path / "greet.verial.yaml").write_text((tmp_path / "greet.verial.yaml").read_text() + "\n")
    run_pytest(tmp_path, "-n", "0", "--verial-store", _default(tmp_path))
    db = sqlite3.connect(tmp_path / ".verial" / "results.db")
    rows = db.execute(
        "select git_commit, git_branch, git_dirty, ci_url from sessions order by id"
    ).fetchall()
    assert rows == [
        (commit, "main", 0, "https://github.example/acme/agents/actions/runs/77"),
        (commit, "main", 1, None),
    ]


def test_a_store_that_cannot_be_opened_stops_the_session_in_one_line(tmp_path: Path) -> None:
    greeting_project(tmp_path, tasks=1)
    bad = tmp_path / "bad.db"
    bad.write_text("definitely not sqlite\n")
    done = run_pytest(
        tmp_path, "-n", "0", "--verial-store", f"sqlite:///{bad}", "--verial-report", "report.json"
    )
    assert done.returncode == 4, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "not a SQLite database" in errors[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert bad.read_text() == "definitely not sqlite\n"
    assert not (tmp_path / "report.json").exists()  # nothing ran


def test_an_unreachable_postgresql_is_one_line_without_its_password(tmp_path: Path) -> None:
    import socket

    greeting_project(tmp_path, tasks=1)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://verial:hunter2-pw@127.0.0.1:{port}/results"
    done = run_pytest(tmp_path, "-n", "0", "--verial-store", url)
    assert done.returncode == 4
    assert "hunter2-pw" not in done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0], done.stderr


def test_a_store_inside_a_run_folder_is_refused(tmp_path: Path) -> None:
    greeting_project(tmp_path, tasks=1)
    done = run_pytest(
        tmp_path,
        "-n",
        "0",
        "--verial-run",
        "sandbox",
        "--verial-store",
        f"sqlite:///{tmp_path / 'sandbox' / 'results.db'}",
    )
    assert done.returncode == 4 and "is an input of this session" in done.stderr
    assert not (tmp_path / "sandbox" / "results.db").exists()


def test_kill_9_mid_session_keeps_completed_tasks_and_recover_marks_it(
    tmp_path: Path, store_url: str
) -> None:
    greeting_project(tmp_path, tasks=5, kill_at=4)
    done = run_pytest(
        tmp_path, "-n", "0", "--verial-report", "report.json", "--verial-store", store_url
    )
    assert done.returncode == -9
    with open_store(store_url, create=False) as store:
        # stored in batches (every 100 task runs or 1 s, after the journal's fsync): whole
        # completed task runs of the batches written, or none yet; never the killed one
        for row in store.list_runs():
            assert row.status == "running"
            stored = store.report_of_run(row.id).benchmark_runs[0]
            keys = [t.task_key for t in stored.task_runs]
            assert keys == ["t001", "t002", "t003"][: len(keys)]
            assert all(len(t.criterion_runs) == 2 for t in stored.task_runs)
    journal = next(tmp_path.glob("*.journal.jsonl"))
    recovered = run_verial(tmp_path, "report", "--recover", str(journal), "--store", store_url)
    assert recovered.returncode == 0, recovered.stderr
    with open_store(store_url, create=False) as store:
        (row,) = store.list_runs()
        assert row.status == "cancelled"
        report = store.report_of_session(row.session_id)
        assert report.session.status == "cancelled"
        assert report.to_json() == load_report(tmp_path / "report.json").to_json()
        # the journal filled the store: the three completed task runs, whole
        completed = [t for t in report.task_runs() if t.status == "completed"]
        assert [t.task_key for t in completed] == ["t001", "t002", "t003"]
        assert all(len(t.criterion_runs) == 2 for t in completed)


def test_a_store_failure_at_the_end_keeps_the_json_report_and_fails_the_session(
    tmp_path: Path,
) -> None:
    greeting_project(tmp_path, tasks=30)
    # the disk fills once collection is over: every connection the store uses from then on
    # may not grow the database (SQLite's max_page_count: a real SQLITE_FULL)
    (tmp_path / "conftest.py").write_text(
        "from sqlalchemy import event\n"
        "from sqlalchemy.pool import Pool\n"
        "FULL = []\n"
        "@event.listens_for(Pool, 'checkout')\n"
        "def _full(dbapi_conn, record, proxy):\n"
        "    if FULL:\n"
        "        cursor = dbapi_conn.cursor()\n"
        "        cursor.execute('PRAGMA page_count')\n"
        "        cursor.execute(f'PRAGMA max_page_count = {cursor.fetchone()[0]}')\n"
        "def pytest_collection_finish(session):\n"
        "    FULL.append(True)\n",
    )
    done = run_pytest(tmp_path, "-n", "0", "--verial-report", "report.json")
    assert (tmp_path / "report.json").exists()
    assert done.returncode != 0
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and "results store" in errors[0], done.stdout
    assert "full" in errors[0] and "Traceback" not in done.stdout + done.stderr
    assert done.returncode == 3
    assert load_report(tmp_path / "report.json").session.counts.criteria == 60


@pytest.mark.invalid_report
def test_import_refuses_an_invalid_report_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"schema": "pytest-verial/report/v2", "benchmark_runs": 1}')
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = run_verial(tmp_path, "import", "bad.json")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "bad.json" in done.stderr


def test_sessions_into_postgresql(tmp_path: Path, postgres: object) -> None:
    url = postgres.new_database()  # type: ignore[attr-defined]
    greeting_project(tmp_path, tasks=3)
    done = run_pytest(tmp_path, "-n", "2", "--verial-store", url, "--verial-report", "r.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert not (tmp_path / ".verial").exists()
    with open_store(url, create=False) as store:
        (row,) = store.list_runs()
        assert (
            store.report_of_session(row.session_id).to_json()
            == load_report(tmp_path / "r.json").to_json()
        )
    out = run_verial(tmp_path, "export", row.id[:12], "-o", "x.json", "--store", url)
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "x.json").read_text()) == json.loads(
        (tmp_path / "r.json").read_text()
    )


def test_a_read_only_store_is_one_line_at_session_start_and_still_readable(
    tmp_path: Path, store_url: str
) -> None:
    import os

    from sqlalchemy import create_engine, text

    greeting_project(tmp_path, tasks=2)
    first = run_pytest(tmp_path, "-n", "0", "--verial-store", store_url)
    assert first.returncode == 1, first.stdout + first.stderr
    if store_url.startswith("sqlite"):
        if os.geteuid() == 0:
            pytest.skip("root writes whatever the file modes say; the PostgreSQL case runs")
        path = Path(store_url.removeprefix("sqlite:///"))
        for p in path.parent.iterdir():
            p.chmod(0o444)
        path.parent.chmod(0o555)
    else:  # a database that refuses every write, as a replica or a revoked grant does
        driver_url = "postgresql+psycopg://" + store_url.split("://", 1)[1]
        engine = create_engine(driver_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            name = conn.execute(text("select current_database()")).scalar()
            conn.execute(text(f'alter database "{name}" set default_transaction_read_only = on'))
        engine.dispose()
    done = run_pytest(tmp_path, "-n", "0", "--verial-store", store_url)
    assert done.returncode == 4, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "results store" in errors[0], done.stderr
    out = run_verial(tmp_path, "export", "latest", "-o", "back.json", "--store", store_url)
    assert out.returncode == 0, out.stderr
    assert load_report(tmp_path / "back.json").session.counts.criteria == 4


def test_export_of_an_unknown_or_ambiguous_id_and_without_a_store(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    missing = run_verial(tmp_path, "export", "latest", "-o", "x.json")
    assert missing.returncode == 2 and "no results store at" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    greeting_project(tmp_path, tasks=1)
    (tmp_path / "more.verial.yaml").write_text(
        (tmp_path / "greet.verial.yaml").read_text().replace("benchmark: greet", "benchmark: more")
    )
    assert run_pytest(tmp_path, "-n", "0").returncode == 1
    unknown = run_verial(tmp_path, "export", "br_ZZZZZZZZZZ", "-o", "x.json")
    assert unknown.returncode == 2 and "no benchmark run" in unknown.stderr
    with open_store(_default(tmp_path), create=False) as store:
        ids = [r.id for r in store.list_runs()]
    assert len(ids) == 2
    common = next(n for n in range(29, 3, -1) if ids[0][:n] == ids[1][:n])
    if common >= 9:  # made in one millisecond: a shared prefix names both
        both = run_verial(tmp_path, "export", ids[0][:common], "-o", "x.json")
        assert both.returncode == 2 and "ambiguous" in both.stderr
        assert ids[0] in both.stderr and ids[1] in both.stderr
        assert len(both.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


def test_a_session_that_scores_nothing_leaves_no_store(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert True\n")
    done = run_pytest(tmp_path, "-n", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (tmp_path / ".verial").exists()
    # an existing store is opened (and checked) but gets no empty session
    greeting_project(tmp_path, tasks=1)
    assert run_pytest(tmp_path, "-n", "0").returncode == 1
    assert run_pytest(tmp_path, "-n", "0", "test_plain.py").returncode == 0
    db = sqlite3.connect(tmp_path / ".verial" / "results.db")
    assert db.execute("select count(*) from sessions").fetchone() == (1,)


def test_a_postgresql_store_that_refuses_writes_mid_session_keeps_the_json_report(
    tmp_path: Path, postgres: object
) -> None:
    url = postgres.new_database()  # type: ignore[attr-defined]
    greeting_project(tmp_path, tasks=3)
    # once collection is over the database turns read-only and every open connection drops
    # (a failover to a replica)
    (tmp_path / "conftest.py").write_text(
        "import os, psycopg\n"
        "def pytest_collection_finish(session):\n"
        "    url = os.environ['STORE_URL']\n"
        "    with psycopg.connect(url, autocommit=True) as conn:\n"
        "        name = conn.execute('select current_database()').fetchone()[0]\n"
        "        conn.execute(\n"
        "            f'alter database \"{name}\" set default_transaction_read_only = on'\n"
        "        )\n"
        "        conn.execute(\n"
        "            'select pg_terminate_backend(pid) from pg_stat_activity'\n"
        "            ' where datname = current_database() and pid <> pg_backend_pid()'\n"
        "        )\n"
    )
    done = run_pytest(
        tmp_path,
        "-n",
        "0",
        "--verial-store",
        url,
        "--verial-report",
        "report.json",
        env={"STORE_URL": url},
    )
    assert done.returncode == 3, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and "read-only" in errors[0], done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert load_report(tmp_path / "report.json").session.counts.criteria == 6


#: a Ctrl-C landing inside the first batch's store transaction, as it did under xdist (the
#: controller goes on receiving its workers' reports): the batch is rolled back and the session
#: goes on, with a batch boundary after every task run
INTERRUPTED_FIRST_BATCH = """
# private: the fault is injected into the recorder's batch and the store's writer
import pytest_verial._recorder as recorder
from pytest_verial._store_session import SessionStore
from pytest_verial.store._core import SessionWriter

recorder.BATCH_TASK_RUNS = 1
completed = SessionWriter.task_runs_completed
flush = SessionStore.flush
hit = []


def interrupted(self, runs, tasks):
    if not hit:
        hit.append(1)
        raise KeyboardInterrupt
    return completed(self, runs, tasks)


def flush_once_interrupted(self):
    try:
        flush(self)
    except KeyboardInterrupt:
        pass


SessionWriter.task_runs_completed = interrupted
SessionStore.flush = flush_once_interrupted
"""


def test_a_batch_interrupted_before_its_commit_is_stored_by_the_next_ones(tmp_path: Path) -> None:
    """A benchmark run whose first batch never committed is written with the next batch, and
    the interrupted batch's task runs by the session's end: every task run is stored once (the
    next batch used to fail on the run it had not stored, and the session ended in a
    traceback)."""
    project = greeting_project(tmp_path, tasks=3)
    project.conftest(INTERRUPTED_FIRST_BATCH)
    done = run_pytest(tmp_path, "-n", "0", "--verial-report", "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    with open_store(_default(tmp_path), create=False) as store:
        newest = store.list_runs()[0]
        stored = store.report_of_session(newest.session_id)
    assert stored.to_json() == load_report(tmp_path / "report.json").to_json()
    tasks = [t.id.rpartition("::")[2] for r in stored.benchmark_runs for t in r.task_runs]
    assert tasks == ["t001", "t002", "t003"]


#: a Ctrl-C landing while the store's side takes a completed task run in (its benchmark run's
#: running aggregates being made), the controller going on as under xdist
INTERRUPTED_TAKING_IN = """
# private: the fault is injected into the store's side of the recorder
import pytest_verial._store_session as store_session

running_run = store_session._running_run
done = store_session.SessionStore.criterion_done
hit = []


def interrupted(*args, **kwargs):
    if not hit:
        hit.append(1)
        raise KeyboardInterrupt
    return running_run(*args, **kwargs)


def criterion_done(self, *args):
    try:
        done(self, *args)
    except KeyboardInterrupt:
        pass


store_session._running_run = interrupted
store_session.SessionStore.criterion_done = criterion_done
"""


def test_a_task_run_interrupted_while_taken_in_is_stored_by_the_end(tmp_path: Path) -> None:
    """The benchmark run's only task run, interrupted while the store's side took it in, is
    stored by the session's end, with no traceback (the last batch used to look up a running
    benchmark run that was never made: a KeyError at session end, seen under SIGTERM)."""
    project = greeting_project(tmp_path, tasks=1)
    project.conftest(INTERRUPTED_TAKING_IN)
    done = run_pytest(tmp_path, "-n", "0", "--verial-report", "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-3000:]
    with open_store(_default(tmp_path), create=False) as store:
        newest = store.list_runs()[0]
        stored = store.report_of_session(newest.session_id)
    assert stored.to_json() == load_report(tmp_path / "report.json").to_json()
    assert [t.id.rpartition("::")[2] for r in stored.benchmark_runs for t in r.task_runs] == [
        "t001"
    ]


def test_a_session_writes_each_stored_row_once(tmp_path: Path) -> None:
    """Issue 33: task and criterion runs are inserted once, in batches, and the session's
    end leaves them alone (it used to delete and re-insert every one of them)."""
    greeting_project(tmp_path, tasks=3)
    first = run_pytest(tmp_path, "-n", "0")  # creates the store
    assert first.returncode == 1, first.stdout + first.stderr
    db = sqlite3.connect(tmp_path / ".verial" / "results.db")
    db.execute("create table audit (tbl text, op text)")
    for table in ("task_runs", "criterion_runs"):
        for op in ("insert", "update", "delete"):
            db.execute(
                f"create trigger audit_{table}_{op} after {op} on {table} "
                f"begin insert into audit values ('{table}', '{op}'); end"
            )
    db.commit()
    db.close()
    done = run_pytest(tmp_path, "-n", "0", "--verial-report", "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    db = sqlite3.connect(tmp_path / ".verial" / "results.db")
    audit = db.execute("select tbl, op, count(*) from audit group by tbl, op").fetchall()
    # each task run fails a criterion: the judge plugin's feedback, written at the end,
    # updates its task row; no criterion run is written twice, no row deleted
    assert sorted(audit) == [
        ("criterion_runs", "insert", 6),
        ("task_runs", "insert", 3),
        ("task_runs", "update", 3),
    ], audit
    with open_store(_default(tmp_path), create=False) as store:
        newest = store.list_runs()[0]
        assert (
            store.report_of_session(newest.session_id).to_json()
            == load_report(tmp_path / "report.json").to_json()
        )
