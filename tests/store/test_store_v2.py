"""A results store written by the previous release (schema revision 0006, evidence in the v2
keys) is migrated on open, on SQLite and on PostgreSQL: every stored criterion run's evidence in
the keys Verial documents, each session's report marked v3, in one transaction; and back down.

The store is the dump of ``verial import`` of the v2 fixture report by pytest-verial at 0cf5ec2
(tests/fixtures/report-v2)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import MetaData, Table, create_engine, insert, select, text

from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report
from pytest_verial.store import StoreError, open_store, revisions

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.store._core import MIGRATIONS

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "report-v2"
DUMP = FIXTURES / "store-0006.sql"
REPORT = FIXTURES / "flawed-agent.json"

DOCUMENTED = {
    "fhir-resource-state": "fieldResults",
    "hl7-structural": "field_results",
    "portal-state-match": "assertionResults",
    "sftp-file-present": "fieldResults",
    "voice-transcript": "phraseResults",
    "x12-response": "fieldResults",
    **dict.fromkeys(
        ["output-format", "output-length", "output-sections", "output-match"], "fieldResults"
    ),
    "output-json-schema": "fieldResults",
    "llm-rubric": "rubric_results",
    "output-consistency": "rubric_results",
}
ROW_KEYS = {*DOCUMENTED.values(), "assertion_results", "phrase_results"}
#: the tables the dump holds rows of, parents first
TABLES = ("sessions", "benchmark_runs", "task_runs", "criterion_runs", "judge_calls")


def _sqlite_0006(path: Path) -> str:
    db = sqlite3.connect(path)
    db.executescript(DUMP.read_text(encoding="utf-8"))
    db.close()
    return f"sqlite:///{path}"


def _alembic(url: str, target: str, down: bool = False) -> None:
    from alembic import command
    from alembic.config import Config

    engine = create_engine(url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        (command.downgrade if down else command.upgrade)(config, target)
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a store at revision 0006 holding the rows the previous release wrote."""
    source = _sqlite_0006(tmp_path / "old.db")
    if request.param == "sqlite":
        return source
    url = str(request.getfixturevalue("postgres").new_database())
    _alembic(url, "0006")
    reader, writer = create_engine(source), create_engine(url)
    schema = MetaData()
    schema.reflect(writer, only=TABLES)  # the tables as revision 0006 made them
    with reader.connect() as old, writer.begin() as new:
        for name in TABLES:  # the same rows, as PostgreSQL types them
            table: Table = schema.tables[name]
            rows = [dict(r) for r in old.execute(select(table)).mappings()]
            if rows:
                new.execute(insert(table), rows)
    reader.dispose()
    writer.dispose()
    return url


def _json(value: Any) -> Any:
    """A JSON column as read without SQLAlchemy's types: text on SQLite, parsed by psycopg."""
    return json.loads(value) if isinstance(value, str) else value


def _stored(url: str) -> tuple[str, dict[str, dict[str, Any]], list[str]]:
    """The store's revision, each criterion run's (assertion, evidence) by id, and the
    sessions' schema ids."""
    engine = create_engine(url)
    with engine.connect() as conn:
        rev = conn.execute(text("select version_num from alembic_version")).scalar_one()
        rows = conn.execute(text("select id, assertion, evidence from criterion_runs"))
        evidence = {r.id: {"assert": r.assertion, "evidence": _json(r.evidence)} for r in rows}
        schemas = [_json(d)["schema"] for (d,) in conn.execute(text("select data from sessions"))]
    engine.dispose()
    return rev, evidence, schemas


def test_an_old_store_is_migrated_whole_on_open(old_store: str) -> None:
    rev, before, schemas = _stored(old_store)
    assert rev == "0006" and schemas == ["pytest-verial/report/v2"]
    assert any("assertion_results" in (r["evidence"] or {}) for r in before.values())
    with open_store(old_store) as store:
        (run,) = store.list_runs(limit=1)  # the store opens, migrated
        report = store.report_of_session(store.session_of_run(run.id))
    rev, after, schemas = _stored(old_store)
    assert rev == revisions()[-1] and schemas == ["pytest-verial/report/v3"]
    assert after.keys() == before.keys()
    for cr_id, row in after.items():
        old, new = before[cr_id]["evidence"] or {}, row["evidence"] or {}
        key = DOCUMENTED[row["assert"]]
        assert ROW_KEYS & set(new) <= {key}, (row["assert"], sorted(new))
        # the rows and every other key as they were stored
        assert sorted(map(json.dumps, new.values())) == sorted(map(json.dumps, old.values()))
    # what the store gives back is the report file, converted as a reader converts it
    from_file = {
        (t.id, c.criterion_id): c.evidence.to_json() if c.evidence else None
        for t in load_report(REPORT).task_runs()
        for c in t.criterion_runs
    }
    from_store = {
        (t.id, c.criterion_id): c.evidence.to_json() if c.evidence else None
        for t in report.task_runs()
        for c in t.criterion_runs
    }
    assert from_store == from_file


def test_a_migrated_store_is_read_by_show_and_compare(
    old_store: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", "latest", "--store", old_store]) == 0
    assert "verify-pa-letter" in capsys.readouterr().out
    assert main(["compare", str(REPORT), "latest", "--store", old_store]) == 0
    capsys.readouterr()


def test_the_migration_goes_back_down(tmp_path: Path) -> None:
    url = _sqlite_0006(tmp_path / "old.db")
    _, original, _ = _stored(url)
    open_store(url).close()
    _alembic(url, "0006", down=True)
    rev, back, schemas = _stored(url)
    assert rev == "0006" and back == original and schemas == ["pytest-verial/report/v2"]


def test_a_store_that_cannot_be_converted_is_left_as_it_was(tmp_path: Path) -> None:
    """Evidence holding both keys is no v2 evidence: the migration stops, naming the criterion
    run, and nothing of the store has changed (one transaction)."""
    path = tmp_path / "old.db"
    url = _sqlite_0006(path)
    db = sqlite3.connect(path)
    (cr_id, evidence), *_ = db.execute(
        "select id, evidence from criterion_runs where assertion = 'fhir-resource-state'"
    ).fetchall()
    both = json.loads(evidence)
    both["fieldResults"] = both["field_results"]
    db.execute("update criterion_runs set evidence = ? where id = ?", (json.dumps(both), cr_id))
    db.commit()
    db.close()
    _, before, _ = _stored(url)
    with pytest.raises(StoreError, match=f"criterion run {cr_id}: .*holds both") as caught:
        open_store(url)
    assert len(str(caught.value).splitlines()) == 1
    rev, after, schemas = _stored(url)
    assert rev == "0006" and after == before and schemas == ["pytest-verial/report/v2"]
