"""What a store ref names, and the sessions ``verial runs --sessions`` lists.

A ref names a **session** (every benchmark run one pytest session, import or service request
stored) or one **benchmark run**:

- ``latest`` is the newest session that holds a benchmark run, ``latest~N`` the Nth session
  before it (by start time);
- ``ses_…`` is a session, ``br_…`` a benchmark run: a full id, or a unique prefix of at least
  :data:`REF_MIN` characters after the ``ses_`` / ``br_``.

Commands that read a report (``show``, ``compare``, ``html``, ``export``) read a session as its
whole report and a benchmark run as a report of that run alone, so ``verial compare latest~1
latest`` compares two whole sessions, benchmark run by benchmark run (README, "The results
store").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import Connection, delete, exists, func, select, update

from ._repo_reports import chunks
from ._rows import as_utc
from ._tables import benchmark_runs, sessions

#: the characters of an id a unique prefix must give after ``ses_`` or ``br_``
REF_MIN = 6
#: a ref's form (an existing file of that name is still read as a file)
REF_FORM = re.compile(r"latest(~\d+)?|(ses|br)_[0-9A-Za-z]+")


class RefError(Exception):
    """A ref that names nothing, or more than one thing (one line)."""


@dataclass(frozen=True)
class StoreRef:
    """What a ref resolved to: a session or a benchmark run, by its store id."""

    kind: Literal["session", "run"]
    id: str


@dataclass(frozen=True)
class SessionRow:
    """One session as ``verial runs --sessions`` lists it."""

    id: str
    started_at: datetime
    source: str
    #: the session's own status (completed, cancelled, running), see :attr:`state`
    status: str
    git_commit: str | None
    benchmark_runs: int
    #: the distinct names of its benchmark runs (:func:`pytest_verial._names.run_name`)
    names: list[str]
    benchmarks: list[str]
    verdicts: dict[str, int]
    criteria_passed: int
    criteria_failed: int
    criteria_error: int
    #: benchmark runs whose status is not ``completed``, and completed ones with incomplete
    #: task runs (``-k``, ``-m``)
    runs_cancelled: int
    runs_incomplete: int

    @property
    def state(self) -> str:
        """``completed``, ``cancelled``, ``running`` (still running, or killed and not
        recovered) or ``incomplete`` (a completed session with a benchmark run that left out
        deselected criteria). A session whose status says completed but holds a benchmark
        run that is not (an imported report) is ``cancelled``."""
        if self.status != "completed":
            return self.status
        if self.runs_cancelled:
            return "cancelled"
        return "incomplete" if self.runs_incomplete else "completed"


def name_of(infos: Any, fallback: str | None = None) -> str:
    """A stored benchmark run's one name from its ``runs`` (the report's run folders):
    :func:`pytest_verial._names.run_name`."""
    from .._names import folder_name

    rows = [r for r in infos if isinstance(r, dict)] if isinstance(infos, list) else []
    names = dict.fromkeys(folder_name(str(r.get("label", "")), r.get("agent")) for r in rows)
    return ", ".join(names) or fallback or "-"


def _has_runs() -> Any:
    return exists().where(benchmark_runs.c.session_id == sessions.c.id)


_NEWEST = (sessions.c.started_at.desc(), sessions.c.id.desc())


def resolve_ref(conn: Connection, ref: str) -> StoreRef:
    """The session or benchmark run ``ref`` names (see the module); RefError in one line."""
    ref = ref.strip()
    latest = re.fullmatch(r"latest(?:~(\d+))?", ref)
    if latest:
        back = int(latest.group(1) or 0)
        found = conn.execute(
            select(sessions.c.id).where(_has_runs()).order_by(*_NEWEST).offset(back).limit(1)
        ).scalar()
        if found is not None:
            return StoreRef("session", str(found))
        count = conn.execute(select(func.count()).select_from(sessions).where(_has_runs()))
        held = count.scalar_one()
        if not held:
            raise RefError(f"{ref}: the results store holds no runs")
        raise RefError(f"{ref}: the store holds {held} session(s), not {back + 1}")
    match = re.fullmatch(r"(ses|br)_([0-9A-Za-z]*)", ref)
    if not match:
        raise RefError(
            f"{ref}: not a store ref: a session (ses_...), a benchmark run (br_...), "
            "'latest' or 'latest~N'"
        )
    prefix, rest = match.groups()
    kind: Literal["session", "run"] = "session" if prefix == "ses" else "run"
    table = sessions if kind == "session" else benchmark_runs
    if len(rest) < REF_MIN:
        raise RefError(
            f"{ref}: give at least {REF_MIN} characters after '{prefix}_' to name a "
            f"{'session' if kind == 'session' else 'run'}"
        )
    wanted = f"{prefix}_{rest.upper()}"
    exact = conn.execute(select(table.c.id).where(table.c.id == wanted)).scalar()
    if exact is not None:
        return StoreRef(kind, str(exact))
    candidates = list(
        conn.execute(
            select(table.c.id)
            .where(table.c.id.startswith(wanted, autoescape=True))
            .order_by(table.c.id)
            .limit(11)
        ).scalars()
    )
    if len(candidates) == 1:
        return StoreRef(kind, str(candidates[0]))
    if not candidates:
        what = "session" if kind == "session" else "benchmark run"
        raise RefError(f"{ref}: no {what} in the store")
    shown = ", ".join(candidates[:10]) + (", ..." if len(candidates) > 10 else "")
    raise RefError(f"{ref}: ambiguous, matches {shown}")


def run_ids(conn: Connection, ref: StoreRef) -> list[str]:
    """The benchmark runs a ref stands for: the run, or every run of the session in order."""
    if ref.kind == "run":
        return [ref.id]
    return [
        str(i)
        for i in conn.execute(
            select(benchmark_runs.c.id)
            .where(benchmark_runs.c.session_id == ref.id)
            .order_by(benchmark_runs.c.position)
        ).scalars()
    ]


def list_sessions(
    conn: Connection,
    *,
    where: list[Any],
    since: datetime | None,
    limit: int | None,
) -> list[SessionRow]:
    """Sessions holding a benchmark run that matches ``where`` (conditions on
    ``benchmark_runs``), newest first, with their runs summed up."""
    runs_match = select(benchmark_runs.c.session_id).where(*where) if where else None
    query = select(
        sessions.c.id,
        sessions.c.started_at,
        sessions.c.source,
        sessions.c.status,
        sessions.c.git_commit,
    ).where(_has_runs())
    if runs_match is not None:
        query = query.where(sessions.c.id.in_(runs_match))
    if since is not None:
        query = query.where(sessions.c.started_at >= since)
    query = query.order_by(*_NEWEST)
    if limit is not None:
        query = query.limit(max(0, limit))
    heads = list(conn.execute(query))
    per: dict[str, list[Any]] = {str(h.id): [] for h in heads}
    ids = list(per)
    for start in range(0, len(ids), 500):
        for r in conn.execute(
            select(
                benchmark_runs.c.session_id,
                benchmark_runs.c.benchmark_ref,
                benchmark_runs.c.status,
                benchmark_runs.c.verdict,
                benchmark_runs.c.criteria_passed,
                benchmark_runs.c.criteria_failed,
                benchmark_runs.c.criteria_error,
                benchmark_runs.c.agent,
                benchmark_runs.c.run_labels,
                benchmark_runs.c.data["runs"].label("runs_info"),
                benchmark_runs.c.data["counts"]["incomplete"].as_integer().label("incomplete"),
            )
            .where(benchmark_runs.c.session_id.in_(ids[start : start + 500]))
            .order_by(benchmark_runs.c.session_id, benchmark_runs.c.position)
        ):
            per[str(r.session_id)].append(r)
    out = []
    for h in heads:
        runs = per[str(h.id)]
        names = dict.fromkeys(name_of(r.runs_info, r.agent or r.run_labels) for r in runs)
        verdicts: dict[str, int] = {}
        for r in runs:
            if r.verdict:
                verdicts[r.verdict] = verdicts.get(r.verdict, 0) + 1
        out.append(
            SessionRow(
                id=str(h.id),
                started_at=as_utc(h.started_at) or h.started_at,
                source=str(h.source),
                status=str(h.status),
                git_commit=h.git_commit,
                benchmark_runs=len(runs),
                names=list(names),
                benchmarks=list(dict.fromkeys(str(r.benchmark_ref) for r in runs)),
                verdicts=verdicts,
                criteria_passed=sum(r.criteria_passed for r in runs),
                criteria_failed=sum(r.criteria_failed for r in runs),
                criteria_error=sum(r.criteria_error for r in runs),
                runs_cancelled=sum(1 for r in runs if r.status != "completed"),
                runs_incomplete=sum(
                    1 for r in runs if r.status == "completed" and (r.incomplete or 0)
                ),
            )
        )
    return out


def delete_runs(conn: Connection, ids: Sequence[str]) -> int:
    count = 0
    touched: set[str] = set()
    for chunk in chunks(ids, 500):
        touched.update(
            conn.execute(
                select(benchmark_runs.c.session_id).where(benchmark_runs.c.id.in_(chunk))
            ).scalars()
        )
        count += conn.execute(delete(benchmark_runs).where(benchmark_runs.c.id.in_(chunk))).rowcount
    for session_id in touched:
        left = conn.execute(
            select(func.count())
            .select_from(benchmark_runs)
            .where(benchmark_runs.c.session_id == session_id)
        ).scalar_one()
        if left:  # a part of a report: importing it again stores it again
            conn.execute(
                update(sessions).where(sessions.c.id == session_id).values(report_digest=None)
            )
        else:
            conn.execute(delete(sessions).where(sessions.c.id == session_id))
    return count


def session_of_run(conn: Connection, run_id: str) -> str | None:
    """The session a benchmark run belongs to (None: no such run)."""
    found = conn.execute(
        select(benchmark_runs.c.session_id).where(benchmark_runs.c.id == run_id)
    ).scalar()
    return None if found is None else str(found)


def insert_session(conn: Connection, row: dict[str, Any]) -> None:
    """A session's row (:func:`pytest_verial.store._rows.session_row`)."""
    conn.execute(sessions.insert(), [row])


def stored_session(conn: Connection, session_id: str) -> Any:
    """A session's row as stored (None: no such session)."""
    return conn.execute(select(sessions).where(sessions.c.id == session_id)).first()


def delete_sessions(conn: Connection, ids: Sequence[str]) -> int:
    """Delete whole sessions (and their runs); how many were deleted."""
    count = 0
    for chunk in chunks(list(ids), 500):
        count += conn.execute(delete(sessions).where(sessions.c.id.in_(chunk))).rowcount
    return count


def prune_runs(
    conn: Connection, *, keep: int | None = None, older_than_days: float | None = None
) -> int:
    """Delete the benchmark runs beyond the ``keep`` newest of each benchmark and/or created
    more than ``older_than_days`` ago (both when both are given); how many were deleted."""
    rows = conn.execute(
        select(
            benchmark_runs.c.id, benchmark_runs.c.benchmark_ref, benchmark_runs.c.created_at
        ).order_by(benchmark_runs.c.created_at.desc(), benchmark_runs.c.id.desc())
    )
    seen: dict[str, int] = {}
    cutoff = (
        datetime.now(UTC) - timedelta(days=older_than_days) if older_than_days is not None else None
    )
    doomed = []
    for r in rows:
        seen[r.benchmark_ref] = seen.get(r.benchmark_ref, 0) + 1
        beyond = keep is None or seen[r.benchmark_ref] > keep
        old = cutoff is None or (as_utc(r.created_at) or cutoff) < cutoff
        if beyond and old:
            doomed.append(r.id)
    return delete_runs(conn, doomed)


def mark_cancelled(conn: Connection, session_id: str) -> bool:
    """A session that died: it and its running benchmark runs become ``cancelled`` (False: no
    such session)."""
    data = conn.execute(select(sessions.c.data).where(sessions.c.id == session_id)).scalar()
    if data is None:
        return False
    block = dict(data.get("session") or {})
    block["status"] = "cancelled"
    conn.execute(
        update(sessions)
        .where(sessions.c.id == session_id)
        .values(status="cancelled", data={**data, "session": block})
    )
    for r in conn.execute(
        select(benchmark_runs.c.id, benchmark_runs.c.data).where(
            benchmark_runs.c.session_id == session_id, benchmark_runs.c.status == "running"
        )
    ).all():
        conn.execute(
            update(benchmark_runs)
            .where(benchmark_runs.c.id == r.id)
            .values(status="cancelled", data={**r.data, "status": "cancelled"})
        )
    return True
