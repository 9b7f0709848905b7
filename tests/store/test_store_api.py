"""The store's Python API on SQLite and on a real PostgreSQL: import/export round trip,
idempotent import, listing, refs, trend, delete, prune, migrations and refusals."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from store_support import EXAMPLE_AGENTS, score_examples, shared_project

from pytest_verial import Report

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import StoreError, open_store, revisions

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.store._core import MIGRATIONS
from pytest_verial.store._repo_sessions import StoreRef

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def example_reports(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The example benchmarks scored on both runs (as ``./scripts/demo`` does): the core
    suite's ``example_runs`` (``core_support.score_examples``, store off), built once per
    suite run for every folder and xdist worker that reads them (two child sessions each time
    this module built its own, on each worker its tests reached)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    runs = shared_project(base / "core-shared", "example-runs", score_examples)
    return [runs / f"{agent}.json" for agent in sorted(EXAMPLE_AGENTS)]


def _shifted(report: Report, days: float, tag: str) -> Report:
    """The same report as if run ``days`` earlier (a distinct report: another digest)."""
    data = report.to_json()
    started = datetime.now(UTC) - timedelta(days=days)
    data["session"]["started_at"] = started.isoformat().replace("+00:00", "Z")
    data["extensions"] = {"tag": tag}
    return Report.from_json(data)


def test_import_then_export_gives_back_every_example_report(
    store_url: str, example_reports: list[Path]
) -> None:
    with open_store(store_url) as store:
        for path in example_reports:
            report = load_report(path)
            result = store.import_report(report, origin=str(path))
            assert result.created and len(result.run_ids) == len(report.benchmark_runs)
            assert store.report_of_session(result.session_id).to_json() == report.to_json()
            for run_id, run in zip(result.run_ids, report.benchmark_runs, strict=True):
                one = store.report_of_run(run_id)
                assert [r.model_dump() for r in one.benchmark_runs] == [run.model_dump()]
                assert one.session == report.session


def test_importing_a_report_twice_stores_it_once(
    store_url: str, example_reports: list[Path]
) -> None:
    report = load_report(example_reports[0])
    with open_store(store_url) as store:
        first = store.import_report(report)
        again = store.import_report(load_report(example_reports[0]))
        assert not again.created and again.session_id == first.session_id
        assert again.run_ids == first.run_ids
        assert len(store.list_runs()) == len(report.benchmark_runs)


def test_list_runs_newest_first_with_filters(store_url: str, example_reports: list[Path]) -> None:
    flawed, good = (load_report(p) for p in example_reports)
    with open_store(store_url) as store:
        store.import_report(_shifted(flawed, 3, "old"))
        store.import_report(_shifted(good, 1, "new"))
        rows = store.list_runs()
        assert len(rows) == len(flawed.benchmark_runs) + len(good.benchmark_runs)
        assert [r.created_at for r in rows] == sorted((r.created_at for r in rows), reverse=True)
        assert {r.run_labels for r in rows[: len(good.benchmark_runs)]} == {"good-agent"}
        one = store.list_runs(benchmark="front-office@3")
        assert [r.run_labels for r in one] == ["good-agent", "flawed-agent"]
        assert [r.verdict for r in one] == ["pass", "partial"]
        assert store.list_runs(benchmark="front-office") == one  # by slug too
        assert {r.agent for r in store.list_runs(agent="front-office-v7")} == {"front-office-v7"}
        recent = store.list_runs(since=datetime.now(UTC) - timedelta(days=2))
        assert {r.run_labels for r in recent} == {"good-agent"}
        assert len(store.list_runs(limit=2)) == 2


def test_refs_latest_prefix_missing_and_ambiguous(
    store_url: str, example_reports: list[Path]
) -> None:
    """``latest`` and ``latest~N`` name sessions (newest first); ``ses_`` and ``br_`` ids or
    unique prefixes name a session or one benchmark run."""
    flawed, good = (load_report(p) for p in example_reports)
    with open_store(store_url) as store:
        with pytest.raises(StoreError, match="holds no runs"):
            store.resolve_ref("latest")
        older = store.import_report(_shifted(flawed, 2, "a"))
        newer = store.import_report(_shifted(good, 1, "b"))
        assert store.resolve_ref("latest") == StoreRef("session", newer.session_id)
        assert store.resolve_ref("latest~1") == StoreRef("session", older.session_id)
        with pytest.raises(StoreError, match="holds 2 session"):
            store.resolve_ref("latest~2")
        assert store.run_ids(store.resolve_ref("latest")) == newer.run_ids
        sessions = store.list_sessions()
        assert [s.id for s in sessions] == [newer.session_id, older.session_id]
        assert sessions[0].names == ["front-office-v7"] and sessions[0].state == "completed"
        assert sessions[0].benchmark_runs == len(good.benchmark_runs)
        assert store.list_sessions(agent="flawed-agent")[0].id == older.session_id
        # the whole session's report and scores; one run's when a br_ ref names it
        whole = store.report_of(store.resolve_ref("latest"))
        assert whole.to_json() == store.report_of_session(newer.session_id).to_json()
        scores = store.scores_of(store.resolve_ref("latest~1"))
        assert [r.benchmark.ref for r in scores.benchmark_runs] == [
            r.benchmark.ref for r in flawed.benchmark_runs
        ]
        latest = store.list_runs()[0].id
        assert store.resolve_ref(latest) == StoreRef("run", latest)
        assert store.resolve(latest) == latest
        with pytest.raises(StoreError, match="names a session"):
            store.resolve("latest")
        ids = [r.id for r in store.list_runs()]
        unique = next(
            latest[:n] for n in range(9, 30) if sum(i.startswith(latest[:n]) for i in ids) == 1
        )
        assert store.resolve(unique) == latest
        assert store.resolve(unique.lower()) == latest
        session = newer.session_id
        assert store.resolve_ref(session.lower()) == StoreRef("session", session)
        assert store.resolve_ref(session[:-2]) == StoreRef("session", session)
        with pytest.raises(StoreError, match="no benchmark run"):
            store.resolve("br_ZZZZZZZZZZZZ")
        with pytest.raises(StoreError, match="no session"):
            store.resolve_ref("ses_ZZZZZZZZZZZZ")
        with pytest.raises(StoreError, match="at least 6"):
            store.resolve("br_01")
        # every run of one import shares its first characters: ambiguous, candidates listed
        prefix = latest[:9]
        shared = [r.id for r in store.list_runs() if r.id.startswith(prefix)]
        if len(shared) > 1:
            with pytest.raises(StoreError, match="ambiguous") as info:
                store.resolve(prefix)
            assert all(i in str(info.value) for i in shared[:10])
            assert "\n" not in str(info.value)


def test_compare_latest_pairs_every_benchmark_of_two_sessions(
    store_url: str,
    example_reports: list[Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """After ``./scripts/demo`` (a session per run folder, five benchmarks each), ``verial
    compare latest~1 latest`` compares the two sessions whole: every benchmark pairs with its
    own; a benchmark run that only one session holds is listed, not paired; a ``br_`` ref
    still compares one benchmark run."""
    from pytest_verial.cli import main

    flawed, good = (load_report(p) for p in example_reports)
    with open_store(store_url) as store:
        store.import_report(_shifted(flawed, 2, "a"))
        store.import_report(_shifted(good, 1, "b"))
    out = tmp_path / "c.json"
    args = ["--store", store_url, "--json", str(out)]
    assert main(["compare", "latest~1", "latest", *args]) == 0
    text = capsys.readouterr().out
    comparison = json.loads(out.read_text())
    benchmarks = sorted(r.benchmark.ref for r in good.benchmark_runs)
    assert len(benchmarks) == 5
    assert sorted(r["benchmark"] for r in comparison["benchmark_runs"]) == benchmarks
    assert comparison["unpaired"] == []
    assert "no regression in 5 benchmark runs" in text
    assert text.startswith("verial compare: latest~1 (ses_")
    # the other way round: five regressions (the gate fails)
    assert main(["compare", "latest", "latest~1", *args]) == 1
    assert "5 of 5 benchmark runs regressed" in capsys.readouterr().out
    # a session missing a benchmark: its run in the other session is listed as not paired
    partial = flawed.to_json()
    partial["benchmark_runs"] = partial["benchmark_runs"][1:]
    with open_store(store_url) as store:
        store.import_report(_shifted(Report.from_json(partial), 0, "c"))
        one = store.list_runs(benchmark="front-office@3")[0].id
        other = store.list_runs(benchmark="front-office@3")[1].id
    assert main(["compare", "latest~1", "latest", *args]) == 1
    comparison = json.loads(out.read_text())
    assert len(comparison["benchmark_runs"]) == 4
    assert [(u["side"], u["benchmark"]) for u in comparison["unpaired"]] == [
        ("base", flawed.benchmark_runs[0].benchmark.ref)
    ]
    assert "not paired: base benchmark run" in capsys.readouterr().out
    # one benchmark run each side: only that benchmark is compared
    assert main(["compare", other, one, *args]) == 1
    comparison = json.loads(out.read_text())
    assert [r["benchmark"] for r in comparison["benchmark_runs"]] == ["front-office@3"]
    assert comparison["unpaired"] == []


def test_a_store_before_the_sessions_index_is_migrated_and_latest_names_its_newest_session(
    tmp_path: Path, example_reports: list[Path]
) -> None:
    """The migration of the sessions' start-time index behind ``latest``
    (``*_sessions_started.py``) on a store that already holds sessions: a store taken back to
    the revision before it keeps its runs through the upgrade, and ``latest~N`` walks its
    sessions newest first."""
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine

    path = tmp_path / "old.db"
    flawed, good = (load_report(p) for p in example_reports)
    with open_store(f"sqlite:///{path}") as store:
        older = store.import_report(_shifted(flawed, 2, "a"))
        newer = store.import_report(_shifted(good, 1, "b"))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    script = next(
        s
        for s in ScriptDirectory.from_config(config).walk_revisions()
        if s.path.endswith("_sessions_started.py")
    )
    before = str(script.down_revision)
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, before)
    engine.dispose()
    db = sqlite3.connect(path)
    assert db.execute("select version_num from alembic_version").fetchall() == [(before,)]
    names = {r[0] for r in db.execute("select name from sqlite_master where type='index'")}
    assert "ix_sessions_started" not in names
    db.close()
    with open_store(f"sqlite:///{path}") as store:
        assert store.resolve_ref("latest") == StoreRef("session", newer.session_id)
        assert store.resolve_ref("latest~1") == StoreRef("session", older.session_id)
        assert store.run_ids(StoreRef("session", older.session_id)) == older.run_ids
    db = sqlite3.connect(path)
    assert db.execute("select version_num from alembic_version").fetchall() == [(revisions()[-1],)]
    names = {r[0] for r in db.execute("select name from sqlite_master where type='index'")}
    assert "ix_sessions_started" in names


def test_trend_per_run_task_and_axis(store_url: str, example_reports: list[Path]) -> None:
    flawed, good = (load_report(p) for p in example_reports)
    with open_store(store_url) as store:
        store.import_report(_shifted(flawed, 2, "a"))
        store.import_report(_shifted(good, 1, "b"))
        points = store.trend("front-office@3")
        assert [p.verdict for p in points] == ["partial", "pass"]  # oldest first
        assert points[1].score == 1.0 and points[0].score is not None and points[0].score < 1
        assert set(points[0].axes) >= {"correctness", "safety"}
        assert points[0].tasks["referral-cardiology"] == 0.0
        only = store.trend("front-office@3", task="referral-cardiology", last=1)
        assert len(only) == 1 and only[0].tasks == {"referral-cardiology": 1.0}


def test_delete_and_prune(store_url: str, example_reports: list[Path]) -> None:
    report = load_report(example_reports[0])
    with open_store(store_url) as store:
        for days in (30, 20, 10, 0.1):
            store.import_report(_shifted(report, days, str(days)))
        per_import = len(report.benchmark_runs)
        assert len(store.list_runs()) == 4 * per_import
        doomed = store.list_runs(benchmark="front-office@3")[0].id
        assert store.delete_runs([doomed, doomed]) == 1
        assert doomed not in {r.id for r in store.list_runs()}
        assert store.prune(older_than_days=25) == per_import
        assert store.prune(keep=1) == 2 * per_import - 1
        assert len(store.list_runs()) == per_import
        # a run deleted from a report: importing the report stores it again
        again = store.import_report(_shifted(report, 0.1, "0.1"))
        assert again.created


def test_task_runs_written_as_they_complete_then_finished(
    store_url: str, example_reports: list[Path]
) -> None:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._results import RunStatus, TaskStatus

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.store._rows import SessionMeta

    report = load_report(example_reports[0])
    run = report.benchmark_runs[0]
    with open_store(store_url) as store:
        writer = store.begin_session(
            SessionMeta(started_at=report.session.started_at, host="ci-1", git_commit="abc123")
        )
        partial = run.model_copy(update={"status": RunStatus.RUNNING})
        writer.task_run_completed(partial, run.task_runs[0])
        writer.task_run_completed(partial, run.task_runs[1])
        # a killed session: what completed is there, the run is running
        rows = store.list_runs()
        assert len(rows) == 1 and rows[0].status == "running" and rows[0].git_commit == "abc123"
        stored = store.report_of_run(rows[0].id).benchmark_runs[0]
        assert [t.model_dump() for t in stored.task_runs] == [
            t.model_dump() for t in run.task_runs[:2]
        ]
        writer.interrupted()
        assert store.list_runs()[0].status == "cancelled"
        writer.finish(report)
        assert store.report_of_session(writer.session_id).to_json() == report.to_json()
        assert store.list_runs(benchmark=run.benchmark.ref)[0].id == rows[0].id  # id kept
        assert all(t.status is not TaskStatus.RUNNING for t in report.task_runs())
        # the JSON report of that session, imported, is the same session
        assert store.import_report(report).session_id == writer.session_id


def test_ids_sort_by_creation(tmp_path: Path, example_reports: list[Path]) -> None:
    """The ids the store writes, in the order it wrote them (many within one millisecond)."""
    path = tmp_path / "results.db"
    with open_store(f"sqlite:///{path}") as store:
        for n in range(20):
            for report in example_reports:
                store.import_report(_shifted(load_report(report), 1, str(n)))
    db = sqlite3.connect(path)
    kinds = {"ses": "sessions", "br": "benchmark_runs", "tr": "task_runs", "cr": "criterion_runs"}
    for prefix, table in kinds.items():
        ids = [r[0] for r in db.execute(f"select id from {table} order by rowid")]  # noqa: S608
        assert ids == sorted(ids) and len(set(ids)) == len(ids) >= 40, table
        assert all(len(i) == len(prefix) + 27 and i.startswith(f"{prefix}_") for i in ids)
    assert len(ids) >= 2000  # the criterion runs'


# -- opening: migrations and refusals ---------------------------------------------------------
def test_an_older_store_is_migrated_on_open(tmp_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
    engine.dispose()
    before = sqlite3.connect(path).execute("select version_num from alembic_version").fetchall()
    assert before == [("0001",)]
    with open_store(f"sqlite:///{path}") as store:
        assert store.list_runs() == []
    db = sqlite3.connect(path)
    head = revisions()[-1]
    assert db.execute("select version_num from alembic_version").fetchall() == [(head,)]
    names = {r[0] for r in db.execute("select name from sqlite_master where type='index'")}
    assert {"ix_task_runs_key", "ix_sessions_started"} <= names


def test_a_new_store_has_the_schema_the_migrations_build(tmp_path: Path) -> None:
    """New stores are created from tables.py and stamped; older ones are migrated by alembic:
    both must give the same tables, columns and indexes, at the same revision."""
    from alembic import command
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from sqlalchemy import create_engine, inspect

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    assert revisions()[-1] == ScriptDirectory.from_config(config).get_current_head()
    migrated = tmp_path / "migrated.db"
    engine = create_engine(f"sqlite:///{migrated}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "head")
    engine.dispose()
    fresh = tmp_path / "fresh.db"
    open_store(f"sqlite:///{fresh}").close()

    def shape(path: Path) -> dict[str, object]:
        engine = create_engine(f"sqlite:///{path}")
        insp = inspect(engine)
        out: dict[str, object] = {}
        for table in sorted(insp.get_table_names()):
            out[table] = (
                [(c["name"], str(c["type"]), c["nullable"]) for c in insp.get_columns(table)],
                sorted((i["name"], tuple(i["column_names"])) for i in insp.get_indexes(table)),
                sorted(
                    (
                        tuple(f["constrained_columns"]),
                        f["referred_table"],
                        f.get("options", {}).get("ondelete"),
                    )
                    for f in insp.get_foreign_keys(table)
                ),
            )
        engine.dispose()
        return out

    assert shape(fresh) == shape(migrated)
    versions = [
        sqlite3.connect(p).execute("select * from alembic_version").fetchall()
        for p in (fresh, migrated)
    ]
    assert versions[0] == versions[1] == [(revisions()[-1],)]


def test_a_newer_store_is_refused_and_untouched(store_url: str) -> None:
    from sqlalchemy import create_engine, text

    open_store(store_url).close()
    driver = store_url.replace("postgresql://", "postgresql+psycopg://", 1)  # the store's driver
    engine = create_engine(driver)
    with engine.begin() as conn:
        conn.execute(text("update alembic_version set version_num = '9999'"))
    engine.dispose()
    with pytest.raises(StoreError) as info:
        open_store(store_url)
    message = str(info.value)
    assert "newer pytest-verial" in message and "9999" in message and "\n" not in message
    engine = create_engine(driver)
    with engine.connect() as conn:
        assert conn.execute(text("select version_num from alembic_version")).scalar() == "9999"
    engine.dispose()


@pytest.mark.parametrize(
    "content",
    [b"not a database at all\n" * 100, b"SQLite format 3\x00" + b"\xff" * 4000],
    ids=["text", "corrupt"],
)
def test_a_file_that_is_not_a_store_is_refused_and_never_overwritten(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "results.db"
    path.write_bytes(content)
    with pytest.raises(StoreError) as info, open_store(f"sqlite:///{path}") as store:
        store.list_runs()
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes() == content


def test_a_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    db = sqlite3.connect(path)
    db.execute("create table sessions (x int)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="not a pytest-verial store"):
        open_store(f"sqlite:///{path}")


def test_the_default_folder_ignores_itself(tmp_path: Path) -> None:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.store._core import default_store_url

    url = default_store_url(tmp_path)
    assert url == f"sqlite:///{tmp_path.resolve()}/.verial/results.db"
    open_store(url).close()
    assert (tmp_path / ".verial" / ".gitignore").read_text().splitlines()[-1] == "*"


def test_store_url_from_option_env_and_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.store._core import store_url_from

    monkeypatch.delenv("VERIAL_STORE", raising=False)
    assert store_url_from(None, tmp_path).endswith("/.verial/results.db")  # type: ignore[union-attr]
    assert store_url_from("none", tmp_path) is None
    assert store_url_from("NONE", tmp_path) is None
    monkeypatch.setenv("VERIAL_STORE", "postgresql://u@h/db")
    assert store_url_from(None, tmp_path) == "postgresql://u@h/db"
    assert store_url_from("sqlite:///x.db", tmp_path) == "sqlite:///x.db"


def test_an_unreachable_postgresql_is_one_line_without_the_password() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(StoreError) as info:
        open_store(f"postgresql://verial:s3cr3t-pw@127.0.0.1:{port}/results")
    message = str(info.value)
    assert "s3cr3t-pw" not in message and "\n" not in message
    assert f"127.0.0.1:{port}" in message


def test_a_write_that_meets_a_lock_is_retried_whole(
    store_url: str, example_reports: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transaction refused with "database is locked" (here at its end, after its inserts)
    is rolled back and run again: the user never sees the lock, the rows are there once."""
    import sqlite3 as sqlite

    from sqlalchemy.exc import OperationalError

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._results import RunStatus

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.store._rows import SessionMeta

    report = load_report(example_reports[0])
    run = report.benchmark_runs[0]
    with open_store(store_url) as store:
        writer = store.begin_session(SessionMeta(started_at=report.session.started_at))
        original = store.write
        refused: list[str] = []

        def locked_once(doing: str, work: object) -> object:
            def attempt(conn: object) -> object:
                result = work(conn)  # type: ignore[operator]
                if len(refused) < 2:
                    refused.append(doing)
                    raise OperationalError(
                        "COMMIT", {}, sqlite.OperationalError("database is locked")
                    )
                return result

            return original(doing, attempt)  # type: ignore[arg-type]

        monkeypatch.setattr(store, "write", locked_once)
        partial = run.model_copy(update={"status": RunStatus.RUNNING})
        writer.task_run_completed(partial, run.task_runs[0])
        writer.task_run_completed(partial, run.task_runs[1])
        assert refused == ["store a task run"] * 2
        (row,) = store.list_runs()
        stored = store.report_of_run(row.id).benchmark_runs[0]
        assert [t.model_dump() for t in stored.task_runs] == [
            t.model_dump() for t in run.task_runs[:2]
        ]
        writer.finish(report)
        assert store.report_of_session(writer.session_id).to_json() == report.to_json()


# -- issue 33: the session's SQLite writes through sqlite3 (store/_lite.py) ------------------
# private: the two paths' statements are compared row for row (no public face)
from pytest_verial.store import _errors, _lite  # noqa: E402
from pytest_verial.store._rows import (  # noqa: E402
    SessionMeta,
    benchmark_run_row,
    report_split,
    session_row,
    task_run_rows,
)
from pytest_verial.store._tables import metadata  # noqa: E402
from pytest_verial.store._writer import SessionWriter  # noqa: E402


def _kinds_of_the_tables() -> dict[str, dict[str, str]]:
    """The conversions SQLAlchemy applies on SQLite, read from the tables' column types."""
    from sqlalchemy import JSON, Boolean, DateTime

    found: dict[str, dict[str, str]] = {}
    for name in _lite.KINDS:
        kinds = {}
        for column in metadata.tables[name].columns:
            for kind, cls in (("json", JSON), ("time", DateTime), ("bool", Boolean)):
                if isinstance(column.type, cls):
                    kinds[column.name] = kind
        found[name] = kinds
    return found


def test_the_sqlite3_writers_conversions_are_the_tables_column_types() -> None:
    assert _kinds_of_the_tables() == _lite.KINDS
    defaults = {
        name: {c.name: c.default.arg for c in metadata.tables[name].columns if c.default}
        for name in _lite.KINDS
    }
    assert {k: v for k, v in defaults.items() if v} == _lite.DEFAULTS


def _session_ops(reports: list[Report]) -> Any:
    """The statements a session's writer runs, on the rows of ``reports`` (made once, so both
    paths get the same ids): returns a function of a ``Db`` giving what its reads returned."""
    meta = SessionMeta(
        started_at="2026-11-28T08:00:00.123456Z",
        host="h\u00e9",
        git_commit="abc",
        git_branch=None,
        git_dirty=True,
        command_line="pytest -q",
        plugin_version="1",
    )
    made = []
    for n, report in enumerate(reports):
        data, extra = report_split(report)
        session = session_row(f"ses_{n}", report.session, meta, extra)
        runs = []
        for p, run in enumerate(report.benchmark_runs):
            brow = benchmark_run_row(
                f"br_{n}_{p}", f"ses_{n}", p, run, session["started_at"], data["benchmark_runs"][p]
            )
            tasks = [
                task_run_rows(f"tr_{n}_{p}_{i}", brow["id"], f"ses_{n}", i, task, tdata)
                for i, (task, tdata) in enumerate(
                    zip(run.task_runs, data["benchmark_runs"][p]["task_runs"], strict=True)
                )
            ]
            runs.append((brow, tasks))
        made.append((session, runs))

    def ops(db: Any) -> list[Any]:
        seen: list[Any] = []
        for session, runs in made:
            # "scored" left out: its default (False) is filled in
            started = {k: v for k, v in session.items() if k != "scored"}
            started.update(completed_at=None, git_dirty=False)
            db.insert("sessions", [started])
            for brow, tasks in runs:
                db.insert("benchmark_runs", [brow])
                db.insert("task_runs", [t.task for t in tasks])
                db.insert("criterion_runs", [c for t in tasks for c in t.criteria])
                first = tasks[0].criteria[0]["id"] if tasks and tasks[0].criteria else None
                judge = {
                    "id": f"jc_{brow['id']}",
                    "session_id": session["id"],
                    "criterion_run_id": first,
                    "model": "m",
                    "prompt_tokens": 3,
                    "completion_tokens": None,
                    "cost": 0.5,
                    "cached": True,
                }
                db.insert("judge_calls", [judge])
                if first is not None:  # a JSON column set to None: JSON null, not SQL NULL
                    db.update("criterion_runs", first, {"evidence": None, "passed": False})
                db.update("benchmark_runs", brow["id"], {"score": 0.25, "scored": False})
                if tasks:
                    db.update("task_runs", tasks[0].task["id"], {"verdict": None, "data": {}})
                    seen.append(db.delete("task_runs", [tasks[-1].task["id"]]))
                seen.append(db.task_ids(brow["id"]))
            ended = {k: session[k] for k in ("completed_at", "status", "scored", "data")}
            db.update("sessions", session["id"], {**ended, "report_digest": session["id"] * 3})
            seen.append(db.session_holding(session["id"] * 3))
        seen.append(db.session_holding("none"))
        return seen

    return ops


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the session's tables as SQLite holds it: each value and its type."""
    db = sqlite3.connect(path)
    found = {}
    for table in _lite.KINDS:
        names = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
        select = ", ".join(f"{n}, typeof({n})" for n in names)
        found[table] = db.execute(f"SELECT {select} FROM {table} ORDER BY id").fetchall()
    db.close()
    return found


def test_the_sqlite3_writer_stores_the_rows_sqlalchemy_stores(
    tmp_path: Path, example_reports: list[Path]
) -> None:
    """The session's statements on the example reports' rows (every column kind: times, booleans
    true, false and null, JSON objects, null and non-ASCII text, a judge call), inserted,
    updated and deleted through SQLAlchemy and through sqlite3: the two files hold the same
    bytes, and the reads return the same."""
    ops = _session_ops([load_report(p) for p in example_reports])
    paths = [tmp_path / "sqlalchemy.db", tmp_path / "sqlite3.db"]
    for path in paths:
        open_store(f"sqlite:///{path}").close()
    with open_store(f"sqlite:///{paths[0]}") as store:
        through_sqlalchemy = store.write_db("test", ops)
    lite = _lite.open_lite(f"sqlite:///{paths[1]}")
    assert lite is not None
    through_sqlite3 = lite.write_db("test", ops)
    lite.close()
    assert through_sqlite3 == through_sqlalchemy
    assert through_sqlalchemy[0] == 1  # a deleted task run (its criterion runs cascade)
    before, after = _dump(paths[0]), _dump(paths[1])
    assert sum(len(rows) for rows in before.values()) > 100
    assert after == before


def test_the_sqlite3_writer_opens_only_a_store_at_the_newest_schema(tmp_path: Path) -> None:
    """Anything but an existing store at this version's schema goes to SQLAlchemy's path,
    which creates, migrates or refuses it (and says why) as before."""
    path = tmp_path / "s.db"
    url = f"sqlite:///{path}"
    assert _lite.open_lite(url) is None  # no file yet: SQLAlchemy creates it
    open_store(url).close()
    lite = _lite.open_lite(url)
    assert lite is not None
    assert lite.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert lite.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert lite.conn.execute("PRAGMA busy_timeout").fetchone() == (5000,)
    assert lite.conn.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    lite.close()
    db = sqlite3.connect(path)
    for rev in (revisions()[-2], "9999"):  # older: migrated; newer: refused, by SQLAlchemy
        db.execute("UPDATE alembic_version SET version_num = ?", [rev])
        db.commit()
        assert _lite.open_lite(url) is None
    db.close()
    with pytest.raises(StoreError) as newer:
        open_store(url)
    assert "newer pytest-verial" in str(newer.value)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE sessions (id TEXT)").connection.close()
    assert _lite.open_lite(f"sqlite:///{other}") is None  # tables, no version: refused there
    (tmp_path / "text.db").write_text("not a database\n")
    for url in (f"sqlite:///{tmp_path / 'text.db'}", f"sqlite:///{tmp_path}/"):
        with pytest.raises(StoreError) as lite_says:
            _lite.open_lite(url.rstrip("/")) or open_store(url.rstrip("/"))
        with pytest.raises(StoreError) as sqlalchemy_says:
            open_store(url.rstrip("/"))
        assert str(lite_says.value) == str(sqlalchemy_says.value)
    assert _lite.open_lite(f"sqlite:///{path}?mode=ro") is None  # SQLAlchemy's URL parser


def test_a_write_refused_is_the_same_line_on_both_paths(tmp_path: Path) -> None:
    """A write the database refuses (here a trigger, as a read-only file or a full disk do)
    is one line naming the store, the same on the sqlite3 path as on SQLAlchemy's."""
    said = []
    for name in ("a.db", "b.db"):
        url = f"sqlite:///{tmp_path / name}"
        open_store(url).close()
        db = sqlite3.connect(tmp_path / name)
        db.execute(
            "CREATE TRIGGER no BEFORE INSERT ON sessions"
            " BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
        db.commit()
        db.close()
        store: Any = _lite.open_lite(url) if name == "b.db" else open_store(url)
        assert isinstance(store, _lite.LiteStore) == (name == "b.db")
        with pytest.raises(StoreError) as refused:
            SessionWriter(store, SessionMeta(started_at="2026-11-28T08:00:00Z"))
        store.close()
        said.append(str(refused.value).replace(name, "X.db"))
    assert said[0] == said[1]
    assert said[1] == (
        f"results store sqlite:///{tmp_path / 'X.db'}: cannot start the session: disk full"
    )


def test_a_lock_held_by_another_process_is_waited_for_then_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection holding the write lock: the sqlite3 writer waits for it (as
    ``Store.write`` does, never "database is locked" while it waits), and past
    ``LOCK_WAIT`` says so in one line."""
    import threading

    url = f"sqlite:///{tmp_path / 's.db'}"
    open_store(url).close()
    holder = sqlite3.connect(tmp_path / "s.db", isolation_level=None, check_same_thread=False)
    holder.execute("PRAGMA busy_timeout = 0")
    holder.execute("BEGIN EXCLUSIVE")
    lite = _lite.open_lite(url)
    assert lite is not None
    lite.conn.execute("PRAGMA busy_timeout = 50")  # the test's wait, not 5 s
    released = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    released.start()
    writer = SessionWriter(lite, SessionMeta(started_at="2026-11-28T08:00:00Z"))
    released.join()
    assert lite.conn.execute("SELECT id FROM sessions").fetchall() == [(writer.session_id,)]
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(_lite, "LOCK_WAIT", 0.2)
    with pytest.raises(StoreError) as locked:
        SessionWriter(lite, SessionMeta(started_at="2026-11-28T08:00:00Z"))
    assert str(locked.value) == f"results store {url}: cannot start the session: database is locked"
    holder.execute("ROLLBACK")
    holder.close()
    lite.close()


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///x.db",
        "sqlite:////abs/p a/x_1+2.db",
        "sqlite:///./rel/x-y.db",
        "sqlite:////tmp/\u00e9.db",
        "sqlite:///C:/x.db",
        "sqlite:///:memory:",
        "sqlite://",
        "sqlite:///file:x.db?mode=ro&uri=true",
        "postgresql://u:secret@h/db",
    ],
)
def test_a_plain_sqlite_url_is_read_as_sqlalchemy_reads_it(url: str) -> None:
    """The sqlite3 path reads a plain ``sqlite:///PATH`` URL itself; what it reads is what
    SQLAlchemy's URL parser reads (its path, the URL as messages show it)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    expected = None
    database = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and database not in ("", ":memory:"):
        expected = None if database.startswith("file:") else Path(database)
    assert _errors.sqlite_path(url) == expected
    assert _errors.mask_url(url) == parsed.render_as_string(hide_password=True)
    plain = _errors.plain_sqlite_path(url)
    assert plain is None or plain == expected
