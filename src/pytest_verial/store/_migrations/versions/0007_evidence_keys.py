"""Evidence in the keys Verial documents (issue 30; report schema ``pytest-verial/report/v3``).

Stored criterion runs of the previous release hold their rows under ``field_results``,
``assertion_results`` or ``phrase_results`` whatever their check type. This revision moves
them to each check type's documented key (``fieldResults``, ``assertionResults``,
``phraseResults``; hl7-structural keeps ``field_results``), marks each stored session's report
``pytest-verial/report/v3``, and converts the answers the service keeps for replays
(``idempotency``, finished ``jobs``) the same way, so that nothing read from the store is in
the old keys. It runs in the one transaction that migrates the store: a store is converted
whole or not at all. The conversion is :func:`pytest_verial._evidence.evidence_from_v2`, which
describes the v2 shape and so never changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from alembic import op
from sqlalchemy import JSON, Connection, String, Text, column, select, table, tuple_, update

from pytest_verial._evidence import (
    REPORT_V2,
    REPORT_V3,
    V2_ROW_KEYS,
    evidence_from_v2,
    evidence_to_v2,
)

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

#: rows read and written per batch (the evidence of a criterion run is a few KB)
_BATCH = 500

_criterion_runs = table(
    "criterion_runs", column("id", String), column("assertion", Text), column("evidence", JSON)
)
_sessions = table("sessions", column("id", String), column("data", JSON))
_idempotency = table(
    "idempotency", column("key", String), column("owner", String), column("response", JSON)
)
_jobs = table("jobs", column("id", String), column("response", JSON))

Convert = Callable[[str | None, object], object]


def _batches(conn: Connection, query: Any, *keys: Any) -> Iterator[Sequence[Any]]:
    """The rows of ``query`` in batches, in the order of ``keys`` (the table's primary key),
    each batch read after the last one was written: memory stays one batch."""
    after: tuple[Any, ...] | None = None
    while True:
        page = query.order_by(*keys).limit(_BATCH)
        if after is not None:
            page = page.where(tuple_(*keys) > tuple_(*after))
        rows = conn.execute(page).fetchall()
        if not rows:
            return
        yield rows
        after = tuple(getattr(rows[-1], k.name) for k in keys)


def _evidence(conn: Connection, convert: Convert) -> None:
    from pytest_verial.store._engine import StoreError

    c = _criterion_runs.c
    query = select(c.id, c.assertion, c.evidence).where(c.assertion.in_(sorted(V2_ROW_KEYS)))
    for rows in _batches(conn, query, c.id):
        for row in rows:
            try:
                changed = convert(row.assertion, row.evidence)
            except ValueError as exc:
                raise StoreError(
                    f"cannot migrate the store (left as it was): criterion run {row.id}: {exc}"
                ) from None
            if changed is not row.evidence:
                conn.execute(update(_criterion_runs).where(c.id == row.id).values(evidence=changed))


def _schema_ids(conn: Connection, before: str, after: str) -> None:
    c = _sessions.c
    for rows in _batches(conn, select(c.id, c.data), c.id):
        for row in rows:
            if isinstance(row.data, dict) and row.data.get("schema") == before:
                data = {**row.data, "schema": after}
                conn.execute(update(_sessions).where(c.id == row.id).values(data=data))


def _answer(value: Any, convert: Convert) -> Any:
    """A stored answer with every criterion run's evidence converted (any nesting: a task
    run's ``criterion_runs``, one criterion run, a report)."""
    if isinstance(value, list):
        return [_answer(v, convert) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _answer(v, convert) for k, v in value.items()}
    if "assert" in out and "evidence" in out:
        out["evidence"] = convert(out.get("assert"), out["evidence"])
    return out


def _answers(conn: Connection, convert: Convert) -> None:
    i = _idempotency.c
    for rows in _batches(conn, select(i.key, i.owner, i.response), i.key, i.owner):
        for row in rows:
            changed = _answer(row.response, convert)
            if changed != row.response:
                where = (i.key == row.key) & (i.owner == row.owner)
                conn.execute(update(_idempotency).where(where).values(response=changed))
    j = _jobs.c
    for rows in _batches(conn, select(j.id, j.response), j.id):
        for row in rows:
            changed = _answer(row.response, convert)
            if changed != row.response:
                conn.execute(update(_jobs).where(j.id == row.id).values(response=changed))


def upgrade() -> None:
    conn = op.get_bind()
    _evidence(conn, evidence_from_v2)
    _schema_ids(conn, REPORT_V2, REPORT_V3)
    _answers(conn, evidence_from_v2)


def downgrade() -> None:
    """The evidence keys and schema ids back as the previous release wrote them (criterion
    and task runs written since keep the fields this release added)."""
    conn = op.get_bind()
    _evidence(conn, evidence_to_v2)
    _schema_ids(conn, REPORT_V3, REPORT_V2)
    _answers(conn, evidence_to_v2)
