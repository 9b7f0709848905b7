"""Typed results <-> rows: the one place a Report, BenchmarkRun, TaskRun or CriterionRun
becomes rows of the store, and rows become them again.

The plugin's writer and ``verial import`` both go through :func:`benchmark_run_row`,
:func:`task_run_rows`; every read comes back through :func:`report_from_rows`. Columns hold
the queryable facts; ``data`` holds the object's whole JSON form without its children, so the
report rebuilt from the rows is the report that went in.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from .._results import BenchmarkRun, CriterionRun, Report, Session, TaskRun, TaskStatus
from .._scoring import Verdict
from .._secrets import redact_json
from ._ids import new_id


@dataclass(frozen=True)
class SessionMeta:
    """Facts about a pytest session that its report does not hold."""

    started_at: str
    host: str | None = None
    git_commit: str | None = None
    git_branch: str | None = None
    git_dirty: bool | None = None
    ci_url: str | None = None
    plugin_version: str | None = None
    command_line: str | None = None
    source: str = "pytest"
    origin: str | None = None


@dataclass(frozen=True)
class Rows:
    """The rows of one task run: the task run, its criterion runs and their judge calls."""

    task: dict[str, Any]
    criteria: list[dict[str, Any]] = field(default_factory=list)
    judge: list[dict[str, Any]] = field(default_factory=list)


class CriterionColumns(Protocol):
    """What a criterion run's row reads outside its JSON: a typed :class:`CriterionRun`, or
    the session's plain record (``_record.CriterionRecord``: the same attributes, the same
    values)."""

    @property
    def criterion_id(self) -> str: ...
    @property
    def nodeid(self) -> str | None: ...
    @property
    def assertion(self) -> str | None: ...
    @property
    def axis(self) -> str | None: ...
    @property
    def weight(self) -> float: ...
    @property
    def status(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    @property
    def score(self) -> float | None: ...
    @property
    def judge(self) -> bool: ...


class TaskColumns(Protocol):
    """What a task run's rows read outside its JSON: a typed :class:`TaskRun`, or the store's
    plain one made from the session's records (``_store_session.PlainTaskRun``)."""

    @property
    def id(self) -> str: ...
    @property
    def task_id(self) -> str: ...
    @property
    def task_key(self) -> str: ...
    @property
    def entity(self) -> str | None: ...
    @property
    def run(self) -> str: ...
    @property
    def status(self) -> TaskStatus: ...
    @property
    def verdict(self) -> Verdict | None: ...
    @property
    def score(self) -> float | None: ...
    @property
    def criterion_runs(self) -> Sequence[CriterionColumns]: ...


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 time from a report, as an aware UTC datetime (None when absent or bad)."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def as_utc(value: datetime | None) -> datetime | None:
    """A datetime read back (SQLite returns it naive; it was written as UTC)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def canonical(report: Report) -> dict[str, Any]:
    """The report's JSON form with secrets masked, as the JSON report file holds it."""
    data: dict[str, Any] = redact_json(report.to_json())
    return data


def digest_of(data: Mapping[str, Any]) -> str:
    """The digest that makes imports idempotent: SHA-256 of the canonical JSON text."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _without(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != key}


def session_row(
    session_id: str,
    session: Session,
    meta: SessionMeta,
    extra: Mapping[str, Any],
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``sessions`` row: columns, and ``data`` holding the session block (``data``: its
    canonical JSON when the caller has it) and the report's other top-level keys (``schema``,
    ``generator``, ``extensions``)."""
    if data is None:
        data = redact_json(session.model_dump(mode="json", by_alias=True))
    started = parse_time(session.started_at) or parse_time(meta.started_at) or datetime.now(UTC)
    return {
        "id": session_id,
        "source": meta.source,
        "started_at": started,
        "completed_at": parse_time(session.completed_at),
        "status": str(session.status),
        "exit_status": session.exit_status,
        "host": meta.host,
        "git_commit": meta.git_commit,
        "git_branch": meta.git_branch,
        "git_dirty": meta.git_dirty,
        "ci_url": meta.ci_url,
        "plugin_version": meta.plugin_version,
        "command_line": meta.command_line,
        "scored": session.scored,
        "data": {
            **dict(extra),
            "session": data,
            "origin": meta.origin,
        },
    }


def benchmark_run_row(
    run_id: str,
    session_id: str,
    position: int,
    run: BenchmarkRun,
    created_at: datetime,
    data: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``benchmark_runs`` row of a benchmark run (its task runs are rows of their own)."""
    if data is None:
        data = redact_json(run.model_dump(mode="json", by_alias=True, exclude={"task_runs"}))
    else:
        data = _without(data, "task_runs")
    agents = [r.agent for r in run.runs if r.agent]
    version = run.benchmark.version
    return {
        "id": run_id,
        "session_id": session_id,
        "position": position,
        "report_id": run.id,
        "benchmark_slug": run.benchmark.slug,
        "benchmark_version": None if version is None else str(version),
        "benchmark_ref": run.benchmark.ref,
        "benchmark_file": run.benchmark.file,
        "agent": agents[0] if agents else None,
        "run_labels": ",".join(r.label for r in run.runs),
        "status": str(run.status),
        "scored": run.scored,
        "score": run.score,
        "verdict": run.verdict,
        "pass_threshold": run.pass_threshold,
        "strict_success": run.strict_success,
        "criteria_passed": run.counts.criteria_passed,
        "criteria_failed": run.counts.criteria_failed,
        "criteria_error": run.counts.criteria_error,
        "created_at": created_at,
        "data": data,
    }


def task_run_rows(
    task_run_id: str,
    benchmark_run_id: str,
    session_id: str,
    position: int,
    task: TaskColumns,
    data: Mapping[str, Any] | None = None,
) -> Rows:
    """The rows of one task run: ``task_runs``, its ``criterion_runs`` and ``judge_calls``.
    The columns are read from ``task`` and its criterion runs, as given (secrets unmasked,
    as they always were); ``data``, the JSON columns, is the task run's JSON with secrets
    masked (``task``'s, typed, when not given)."""
    if data is None:
        if not isinstance(task, TaskRun):
            raise TypeError("a plain task run's rows need its JSON")
        data = redact_json(task.model_dump(mode="json", by_alias=True))
    criteria_data: Sequence[Mapping[str, Any]] = data.get("criterion_runs") or []
    criteria = []
    judge = []
    for index, (run, cdata) in enumerate(zip(task.criterion_runs, criteria_data, strict=True)):
        cr_id = new_id("cr")
        evidence = cdata.get("evidence")
        criteria.append(
            {
                "id": cr_id,
                "task_run_id": task_run_id,
                "position": index,
                "criterion_id": run.criterion_id,
                "nodeid": run.nodeid,
                "assertion": run.assertion,
                "axis": run.axis,
                "weight": run.weight,
                "status": str(run.status),
                "passed": run.passed,
                "score": run.score,
                "details": cdata.get("details"),
                "evidence": evidence,
                "data": {k: v for k, v in cdata.items() if k != "evidence"},
            }
        )
        info = (evidence or {}).get("judge") if isinstance(evidence, dict) else None
        if run.judge and isinstance(info, dict) and (info.get("called") or info.get("cached")):
            judge.append(
                {
                    "id": new_id("jc"),
                    "session_id": session_id,
                    "criterion_run_id": cr_id,
                    "model": _text(info.get("model")),
                    "prompt_tokens": _int(info.get("prompt_tokens")),
                    "completion_tokens": _int(info.get("completion_tokens")),
                    "cost": _float(info.get("cost")),
                    "cached": bool(info.get("cached")),
                }
            )
    return Rows(
        task=task_row(task_run_id, benchmark_run_id, position, task, data),
        criteria=criteria,
        judge=judge,
    )


def task_row(
    task_run_id: str,
    benchmark_run_id: str,
    position: int,
    task: TaskColumns,
    data: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``task_runs`` row of a task run (``data``: its JSON, criterion runs and all)."""
    return {
        "id": task_run_id,
        "benchmark_run_id": benchmark_run_id,
        "position": position,
        "report_id": task.id,
        "task_id": task.task_id,
        "task_key": task.task_key,
        "entity": task.entity,
        "run_label": task.run,
        "status": str(task.status),
        "verdict": task.verdict,
        "score": task.score,
        "data": _without(data, "criterion_runs"),
    }


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def report_split(
    report: Report, plain: dict[str, Any] | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A report's canonical JSON (from ``plain``, its ``to_json()``, when the caller made it)
    and the top-level keys the session row keeps beside its session block."""
    data: dict[str, Any] = canonical(report) if plain is None else redact_json(plain)
    extra = {k: v for k, v in data.items() if k not in ("session", "benchmark_runs")}
    return data, extra


def report_from_rows(
    session_data: Mapping[str, Any],
    runs: Sequence[tuple[Mapping[str, Any], Sequence[tuple[Mapping[str, Any], list[Any]]]]],
) -> Report:
    """A report rebuilt from its rows: the session's ``data``, then per benchmark run its
    ``data`` and per task run its ``data`` with its criterion runs' ``data`` + ``evidence``."""
    benchmark_runs = []
    for run_data, tasks in runs:
        task_list = []
        for task_data, criteria in tasks:
            task_list.append({**task_data, "criterion_runs": criteria})
        benchmark_runs.append({**run_data, "task_runs": task_list})
    body = {k: v for k, v in session_data.items() if k not in ("session", "origin")}
    return Report.model_validate(
        {**body, "session": session_data["session"], "benchmark_runs": benchmark_runs}
    )


def criterion_json(data: Mapping[str, Any], evidence: Any) -> dict[str, Any]:
    """A criterion run's JSON form from its row (``evidence`` is kept in its own column)."""
    out = dict(data)
    out["evidence"] = evidence
    return out


__all__ = ["CriterionRun", "Rows", "SessionMeta"]
