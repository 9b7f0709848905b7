"""What the service reads and writes in the store: verified task runs (stored as a benchmark run
with one task run, with the key that created it and its idempotency record, in ONE
transaction), and the three levels read back as the typed objects of
:mod:`pytest_verial._results`, then shown as the key may see them.

A key sees what it created; an org key sees everything (runs scored by pytest and imported
included). A scored run's rubric (criterion labels, assertions, details, evidence, the task
snapshot, the retry feedback) is shown only to an org key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, and_, or_, select

from .._results import BenchmarkRun, CriterionRun, Report, TaskRun
from ..store import Store, StoreError
from ..store._core import insert_report
from ..store._rows import as_utc, criterion_json
from ..store._tables import (
    benchmark_runs,
    criterion_runs,
    idempotency,
    run_owners,
    sessions,
    task_runs,
)
from ._http import Problem
from ._keys import ApiKey

#: what a scored run hides from a key that is not an org key (and from verify-task's answer)
_RUBRIC = ("assert", "label", "details", "evidence")


# -- views -------------------------------------------------------------------------------------
def confidence(run: TaskRun) -> float | None:
    """How sure the verdict is (:func:`pytest_verial._results.task_confidence`: the lowest
    confidence a judge criterion reported, 1.0 for checks alone, lowered by the share of the
    weight not evaluated; None when nothing was scored)."""
    return run.confidence


def criterion_view(cr_id: str, run: CriterionRun, *, elide: bool) -> dict[str, Any]:
    data = {"id": cr_id, **run.to_json()}
    if elide:
        for key in _RUBRIC:
            data[key] = None
    return data


def task_view(
    tr_id: str, br_id: str, run: TaskRun, cr_ids: list[str], *, elide: bool
) -> dict[str, Any]:
    data = run.model_dump(mode="json", by_alias=True)
    data.pop("criterion_runs", None)
    data["report_id"] = data.pop("id")
    if elide:
        data["snapshot"] = None
        data["feedback"] = None
    return {
        "id": tr_id,
        "task_run_id": tr_id,
        "benchmark_run_id": br_id,
        **data,
        "confidence": confidence(run),
        "criterion_runs": [
            criterion_view(i, c, elide=elide)
            for i, c in zip(cr_ids, run.criterion_runs, strict=True)
        ],
    }


def elide_report(data: dict[str, Any]) -> dict[str, Any]:
    """A report's JSON with every scored run's rubric removed."""
    for run in data.get("benchmark_runs") or []:
        if not run.get("scored"):
            continue
        for task in run.get("task_runs") or []:
            task["snapshot"] = None
            task["feedback"] = None
            for crit in task.get("criterion_runs") or []:
                for key in _RUBRIC:
                    crit[key] = None
    return data


# -- ownership ---------------------------------------------------------------------------------
def _visible(conn: Connection, key: ApiKey, br_id: str) -> tuple[bool, bool] | None:
    """(exists and the key may see it, scored) of a benchmark run; None when hidden."""
    row = conn.execute(
        select(benchmark_runs.c.scored, run_owners.c.key_id)
        .select_from(benchmark_runs.outerjoin(run_owners))
        .where(benchmark_runs.c.id == br_id)
    ).first()
    if row is None:
        return None
    if key.run_id is not None:  # a run token: its own run only
        if br_id != key.run_id:
            return None
    elif not key.org and row.key_id != key.id:
        return None
    return True, bool(row.scored)


def not_found(what: str, ident: str) -> Problem:
    return Problem(404, f"{ident}: no {what} with this id (or not visible to this key)")


# -- reads -------------------------------------------------------------------------------------
def _task_of(conn: Connection, tr_id: str) -> tuple[str, TaskRun, list[str]] | None:
    row = conn.execute(
        select(task_runs.c.benchmark_run_id, task_runs.c.data).where(task_runs.c.id == tr_id)
    ).first()
    if row is None:
        return None
    crits = list(
        conn.execute(
            select(criterion_runs.c.id, criterion_runs.c.data, criterion_runs.c.evidence)
            .where(criterion_runs.c.task_run_id == tr_id)
            .order_by(criterion_runs.c.position)
        )
    )
    run = TaskRun.model_validate(
        {**row.data, "criterion_runs": [criterion_json(c.data, c.evidence) for c in crits]}
    )
    return str(row.benchmark_run_id), run, [str(c.id) for c in crits]


def read_task_run(store: Store, key: ApiKey, tr_id: str, *, elide: bool | None = None) -> Any:
    def work(conn: Connection) -> dict[str, Any]:
        found = _task_of(conn, tr_id)
        if found is None:
            raise not_found("task run", tr_id)
        br_id, run, cr_ids = found
        seen = _visible(conn, key, br_id)
        if seen is None:
            raise not_found("task run", tr_id)
        hide = elide if elide is not None else (seen[1] and not key.org)
        return task_view(tr_id, br_id, run, cr_ids, elide=hide)

    return store.read("read a task run", work)


def read_criterion_run(store: Store, key: ApiKey, cr_id: str) -> Any:
    def work(conn: Connection) -> dict[str, Any]:
        row = conn.execute(
            select(
                criterion_runs.c.data,
                criterion_runs.c.evidence,
                criterion_runs.c.task_run_id,
                task_runs.c.benchmark_run_id,
            )
            .join(task_runs, task_runs.c.id == criterion_runs.c.task_run_id)
            .where(criterion_runs.c.id == cr_id)
        ).first()
        if row is None:
            raise not_found("criterion run", cr_id)
        seen = _visible(conn, key, row.benchmark_run_id)
        if seen is None:
            raise not_found("criterion run", cr_id)
        run = CriterionRun.from_json(criterion_json(row.data, row.evidence))
        view = criterion_view(cr_id, run, elide=seen[1] and not key.org)
        view["task_run_id"] = row.task_run_id
        view["benchmark_run_id"] = row.benchmark_run_id
        return view

    return store.read("read a criterion run", work)


def _check_run(store: Store, key: ApiKey, br_id: str) -> bool:
    """Whether the run is scored; 404 when the key may not see it."""
    seen = store.read("read a run", lambda conn: _visible(conn, key, br_id))
    if seen is None:
        raise not_found("benchmark run", br_id)
    return seen[1]


def read_benchmark_run(store: Store, key: ApiKey, br_id: str) -> dict[str, Any]:
    scored = _check_run(store, key, br_id)
    report = store.report_of_run(br_id)
    run = report.benchmark_runs[0]

    def ids(conn: Connection) -> list[str]:
        return [
            str(i)
            for i in conn.execute(
                select(task_runs.c.id)
                .where(task_runs.c.benchmark_run_id == br_id)
                .order_by(task_runs.c.position)
            ).scalars()
        ]

    tr_ids = store.read("read a run", ids)
    return benchmark_view(br_id, run, tr_ids, elide=scored and not key.org)


def benchmark_view(
    br_id: str, run: BenchmarkRun, tr_ids: list[str], *, elide: bool
) -> dict[str, Any]:
    data = run.model_dump(mode="json", by_alias=True)
    data.pop("task_runs", None)
    data["report_id"] = data.pop("id")
    counts = run.counts
    done = counts.completed + counts.incomplete + counts.skipped
    return {
        "id": br_id,
        **data,
        "progress": {
            "task_runs": counts.task_runs,
            "done": done,
            "running": counts.running,
            "cancelled": counts.cancelled,
            "fraction": done / counts.task_runs if counts.task_runs else None,
        },
        "task_runs": [
            {
                "id": tr_id,
                "task_id": t.task_id,
                "task_key": t.task_key,
                "name": t.name,
                "status": str(t.status),
                "verdict": t.verdict,
                "score": t.score,
            }
            for tr_id, t in zip(tr_ids, run.task_runs, strict=True)
        ],
    }


def read_report(store: Store, key: ApiKey, br_id: str) -> tuple[Report, bool]:
    """The run's report and whether its rubric must be hidden from this key."""
    scored = _check_run(store, key, br_id)
    return store.report_of_run(br_id), scored and not key.org


# -- listing -----------------------------------------------------------------------------------
def encode_cursor(created_at: datetime, run_id: str) -> str:
    text = json.dumps([as_utc(created_at).isoformat() if created_at else "", run_id])  # type: ignore[union-attr]
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        when, run_id = json.loads(raw)
        parsed = datetime.fromisoformat(when)
        if not isinstance(run_id, str) or parsed.tzinfo is None:
            raise ValueError
    except (ValueError, TypeError, binascii.Error, json.JSONDecodeError, UnicodeDecodeError):
        raise Problem(400, "query cursor: not a cursor this service returned") from None
    return parsed, run_id


def list_benchmark_runs(
    store: Store,
    key: ApiKey,
    *,
    limit: int,
    cursor: str | None,
    benchmark: str | None,
    agent: str | None,
) -> dict[str, Any]:
    after = decode_cursor(cursor) if cursor else None
    query = (
        select(
            benchmark_runs.c.id,
            benchmark_runs.c.created_at,
            benchmark_runs.c.benchmark_ref,
            benchmark_runs.c.benchmark_file,
            benchmark_runs.c.run_labels,
            benchmark_runs.c.agent,
            benchmark_runs.c.status,
            benchmark_runs.c.scored,
            benchmark_runs.c.score,
            benchmark_runs.c.verdict,
            benchmark_runs.c.strict_success,
            benchmark_runs.c.criteria_passed,
            benchmark_runs.c.criteria_failed,
            benchmark_runs.c.criteria_error,
            sessions.c.source,
        )
        .join(sessions, sessions.c.id == benchmark_runs.c.session_id)
        .outerjoin(run_owners, run_owners.c.benchmark_run_id == benchmark_runs.c.id)
    )
    if key.run_id is not None:
        query = query.where(benchmark_runs.c.id == key.run_id)
    elif not key.org:
        query = query.where(run_owners.c.key_id == key.id)
    if benchmark:
        query = query.where(
            or_(
                benchmark_runs.c.benchmark_ref == benchmark,
                benchmark_runs.c.benchmark_slug == benchmark,
            )
        )
    if agent:
        query = query.where(benchmark_runs.c.agent == agent)
    if after is not None:
        when = after[0].astimezone(UTC)
        if store.sqlite:
            when = when.replace(tzinfo=None)
        query = query.where(
            or_(
                benchmark_runs.c.created_at < when,
                and_(benchmark_runs.c.created_at == when, benchmark_runs.c.id < after[1]),
            )
        )
    query = query.order_by(benchmark_runs.c.created_at.desc(), benchmark_runs.c.id.desc()).limit(
        limit + 1
    )
    rows = store.read("list runs", lambda conn: list(conn.execute(query)))
    page = rows[:limit]
    data = []
    for r in page:
        item = r._asdict()
        item["created_at"] = (as_utc(r.created_at) or datetime.now(UTC)).isoformat()
        data.append(item)
    next_cursor = encode_cursor(page[-1].created_at, page[-1].id) if len(rows) > limit else None
    return {"data": data, "next_cursor": next_cursor}


# -- writing a verified task -------------------------------------------------------------------
@dataclass(frozen=True)
class Replay:
    """An idempotency record found: the stored answer."""

    status: int
    body: dict[str, Any]


def request_hash(method: str, path: str, body: Any) -> str:
    text = json.dumps([method, path, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def replay_in(conn: Connection, key: ApiKey, idem: str, digest: str) -> Replay | None:
    """The answer stored for this key's Idempotency-Key, read in the caller's transaction;
    422 when the key was used for a different request."""
    row = conn.execute(
        select(idempotency.c.request_hash, idempotency.c.status, idempotency.c.response).where(
            idempotency.c.owner == key.id, idempotency.c.key == idem
        )
    ).first()
    if row is None:
        return None
    if row.request_hash != digest:
        raise Problem(
            422,
            "Idempotency-Key was already used with a different request "
            "(use a new key for a new request)",
        )
    return Replay(int(row.status), dict(row.response))


def record_answer(
    conn: Connection, key: ApiKey, idem: str | None, digest: str, answer: Replay
) -> Replay:
    """Keep ``answer`` for replays of this Idempotency-Key (none given: nothing kept)."""
    if idem is not None:
        conn.execute(
            idempotency.insert().values(
                key=idem,
                owner=key.id,
                request_hash=digest,
                status=answer.status,
                response=answer.body,
                created_at=datetime.now(UTC),
            )
        )
    return answer


def find_replay(store: Store, key: ApiKey, idem: str, digest: str) -> Replay | None:
    """The stored answer to an earlier request with this Idempotency-Key (422 when the key
    was used for a different request)."""
    return store.read("read an idempotency key", lambda conn: replay_in(conn, key, idem, digest))


def store_verified(
    store: Store,
    key: ApiKey,
    report: Report,
    *,
    idem: str | None,
    digest: str,
    elide: bool,
    then: Callable[[Connection, Replay], None] | None = None,
) -> Replay:
    """Store the report of one verified task, its owner and its idempotency record in one
    transaction; the answer (an earlier one when another request with the same key won).
    ``then(conn, answer)`` runs in that transaction (an async job marked done with it)."""
    run = report.benchmark_runs[0]
    task = run.task_runs[0]

    def work(conn: Connection) -> Replay:
        earlier = replay_in(conn, key, idem, digest) if idem is not None else None
        if earlier is not None:
            return earlier
        result = insert_report(conn, report, source="service", ids=True)
        br_id = result.run_ids[0]
        conn.execute(run_owners.insert().values(benchmark_run_id=br_id, key_id=key.id))
        tr_id, cr_ids = result.task_runs[0][0]
        answer = record_answer(
            conn, key, idem, digest, Replay(201, task_view(tr_id, br_id, task, cr_ids, elide=elide))
        )
        if then is not None:
            then(conn, answer)
        return answer

    try:
        return store.write("store the verified task", work)
    except StoreError:
        if idem is None:
            raise
        # two requests with one key at once: the other one committed first
        found = find_replay(store, key, idem, digest)
        if found is None:
            raise
        return found
