"""``verial merge -o OUT SHARD.json...``: one report from the shards of a sharded run.

Every aggregate is computed again from the criterion runs, by the same
:meth:`TaskRun.aggregate` and :meth:`BenchmarkRun.aggregate` the session uses, so a merged
report equals the unsharded run's report apart from timings. Refused, with one line each:
a report that is not a shard, shards of different runs (N, or the set of task runs, differ),
a shard missing or given twice, a task run in two shards, and a benchmark run whose benchmark,
threshold or scored flag differs between shards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from .._results import BenchmarkRun, CollectionError, Report, RunCounts, RunStatus, Session


class _Setup(BaseModel):
    """What every shard of one run shares (``session.shard.setup``)."""

    pass_threshold: float | None = None
    scored: bool = False
    #: benchmark file -> [slug, version, pass threshold, SHA-256 of its text, its run folders
    #: as [label, run.yaml id, agent]]
    benchmarks: dict[
        str,
        tuple[str, int | str | None, float | None, str, list[tuple[str, str | None, str | None]]],
    ] = Field(default_factory=dict)


class _ShardBlock(BaseModel):
    """A shard's ``session.shard`` block as ``--verial-shard`` writes it (checked on read)."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)
    task_runs: list[str]
    all_task_runs: list[str]
    setup: _Setup = Field(default_factory=lambda: _Setup())


class MergeError(ValueError):
    """The shards cannot be merged; the message says why in one line."""


def merge(shards: list[tuple[str, Report]]) -> Report:
    """The report of the whole run from its shards' reports (name, report)."""
    if not shards:
        raise MergeError("no shard given")
    infos = []
    for name, report in shards:
        info = report.session.shard
        if not info or "index" not in info or "all_task_runs" not in info:
            raise MergeError(f"{name}: not a shard (written without --verial-shard)")
        try:
            block = _ShardBlock.model_validate(info)
        except ValidationError as exc:
            where = ".".join(str(p) for p in exc.errors()[0]["loc"])
            raise MergeError(f"{name}: session.shard.{where}: {exc.errors()[0]['msg']}") from None
        infos.append((name, block.model_dump()))
    count = infos[0][1]["count"]
    order: list[str] = list(infos[0][1]["all_task_runs"])
    for name, info in infos:
        if info["count"] != count or list(info["all_task_runs"]) != order:
            raise MergeError(
                f"{name}: a shard of another run (shard {info['index']}/{info['count']} of "
                f"{len(info['all_task_runs'])} task runs; {infos[0][0]} is of {count} shards "
                f"and {len(order)} task runs)"
            )
    first_name, first_generator = shards[0][0], shards[0][1].generator
    for name, report in shards[1:]:
        if report.generator != first_generator:
            raise MergeError(
                f"{name}: written by {report.generator.name} {report.generator.version}, "
                f"{first_name} by {first_generator.name} {first_generator.version}: shards of "
                "different plugin versions"
            )
    for name, info in infos[1:]:
        _same_setup(infos[0][0], infos[0][1].get("setup") or {}, name, info.get("setup") or {})
    seen: dict[int, str] = {}
    for name, info in infos:
        if info["index"] in seen:
            raise MergeError(
                f"shard {info['index']}/{count} given twice: {seen[info['index']]} and {name}"
            )
        seen[info["index"]] = name
    missing = [k for k in range(1, count + 1) if k not in seen]
    if missing:
        raise MergeError(
            f"shard {', '.join(f'{k}/{count}' for k in missing)} missing: give all {count} shards"
        )
    known = set(order)
    owner: dict[str, str] = {}
    runs: dict[str, list[tuple[str, BenchmarkRun]]] = {}
    for name, report in shards:
        for run in report.benchmark_runs:
            for task in run.task_runs:
                if task.id in owner:
                    raise MergeError(
                        f"task run {task.id} is in two shards: {owner[task.id]} and {name}"
                    )
                if task.id not in known:
                    raise MergeError(
                        f"{name}: task run {task.id} is not one of the run's task runs "
                        "(session.shard.all_task_runs): an edited shard"
                    )
                owner[task.id] = name
            runs.setdefault(run.id, []).append((name, run))
    position = {task_run: i for i, task_run in enumerate(order)}
    merged = [_merge_run(parts, position, shards) for parts in runs.values()]
    merged.sort(key=lambda r: min((position.get(t.id, 0) for t in r.task_runs), default=0))
    return Report(
        generator=shards[0][1].generator,
        session=_session(shards, merged, count),
        benchmark_runs=merged,
        extensions={k: v for _, r in reversed(shards) for k, v in r.extensions.items()},
    )


_SETUP = {"pass_threshold": "pass threshold", "scored": "scored flag"}


def _same_setup(first: str, a: dict[str, Any], name: str, b: dict[str, Any]) -> None:
    """Refuse shards scored with different options or benchmark versions, in one line."""
    for key, what in _SETUP.items():
        if a.get(key) != b.get(key):
            raise MergeError(
                f"{name}: its {what} ({b.get(key)}) differs from {first}'s ({a.get(key)}): "
                "shards of different runs"
            )
    mine, theirs = a.get("benchmarks") or {}, b.get("benchmarks") or {}
    for file in sorted(set(mine) | set(theirs)):
        if file in mine and file in theirs and mine[file] != theirs[file]:
            raise MergeError(f"{name}: {_differs(file, mine[file], theirs[file], first)}")


def _differs(file: str, mine: Sequence[Any], theirs: Sequence[Any], first: str) -> str:
    """What differs in a benchmark file's setup between two shards, in one clause."""
    (slug, version, threshold), (first_slug, first_version, first_threshold) = (
        theirs[:3],
        mine[:3],
    )
    if (slug, version, threshold) != (first_slug, first_version, first_threshold):
        return (
            f"benchmark file {file} is {slug}@{version} (pass threshold {threshold}) there "
            f"and {first_slug}@{first_version} (pass threshold {first_threshold}) in {first}: "
            "shards of different runs"
        )
    if theirs[3:4] != mine[3:4]:
        return (
            f"benchmark file {file} has other content there than in {first} (SHA-256 "
            f"{str(theirs[3])[:12]} vs {str(mine[3])[:12]}): shards of different benchmark "
            "versions"
        )
    return (
        f"benchmark file {file} was scored on other run folders there "
        f"({_folders(theirs)}) than in {first} ({_folders(mine)}): shards of different runs"
    )


def _folders(setup: Sequence[Any]) -> str:
    return ", ".join(str(run[0]) for run in setup[4]) or "-"


def _identity(run: BenchmarkRun) -> list[tuple[str, str | None, str | None]]:
    """A run's folders as shards must share them: label, run.yaml id and agent (the paths
    differ from machine to machine)."""
    return [(r.label, r.id, r.agent) for r in run.runs]


def _merge_run(
    parts: list[tuple[str, BenchmarkRun]],
    position: dict[str, int],
    shards: list[tuple[str, Report]],
) -> BenchmarkRun:
    first_name, first = parts[0]
    for name, run in parts[1:]:
        for what, a, b in (
            ("benchmark", first.benchmark, run.benchmark),
            ("pass threshold", first.pass_threshold, run.pass_threshold),
            ("scored flag", first.scored, run.scored),
            ("run folders", _identity(first), _identity(run)),
        ):
            if a != b:
                raise MergeError(
                    f"benchmark run {first.id}: its {what} differs between {first_name} and "
                    f"{name}: shards of different runs"
                )
    tasks = sorted((t for _, run in parts for t in run.task_runs), key=lambda t: position[t.id])
    rebuilt = [t.rescored(feedback=t.feedback) for t in tasks]
    interrupted = any(r.session.status is RunStatus.CANCELLED for _, r in shards)
    return first.rescored(rebuilt, interrupted=interrupted)


def _session(shards: list[tuple[str, Report]], runs: list[BenchmarkRun], count: int) -> Session:
    sessions = [r.session for _, r in shards]
    errors: dict[str, CollectionError] = {}
    for s in sessions:
        for e in s.collection_errors:
            errors.setdefault(e.nodeid, e)
    warnings = list(dict.fromkeys(w for s in sessions for w in s.warnings))
    statuses = {s.status for s in sessions}
    status = (
        RunStatus.RUNNING
        if RunStatus.RUNNING in statuses
        else RunStatus.CANCELLED
        if RunStatus.CANCELLED in statuses
        else RunStatus.COMPLETED
    )
    ends = [s.completed_at for s in sessions if s.completed_at]
    exits = [s.exit_status for s in sessions if s.exit_status is not None]
    return Session(
        status=status,
        phase="completed" if status is not RunStatus.RUNNING else "started",
        scored=any(s.scored for s in sessions),
        started_at=min(s.started_at for s in sessions),
        completed_at=max(ends) if ends else None,
        duration=round(max(s.duration for s in sessions), 3),
        exit_status=max(exits) if exits else None,
        counts=RunCounts.of([t for r in runs for t in r.task_runs]),
        collection_errors=list(errors.values()),
        warnings=warnings,
        verification=_verification([s.verification for s in sessions]),
        shard={"merged": [name for name, _ in shards], "count": count},
    )


_SUMMED = (
    "judge_criteria",
    "judge_calls",
    "evaluations",
    "cached",
    "saved_by_gating",
    "saved_by_bypass",
    "judge_everything_calls",
    "errors",
    "not_evaluated",
    "cost",
)


def _verification(parts: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The judge's summary of the whole run: counts and costs added, the share recomputed."""
    present = [p for p in parts if p]
    if not present:
        return None
    out: dict[str, Any] = dict(present[0])
    for key in _SUMMED:
        out[key] = sum(p.get(key) or 0 for p in present)
    out["cost"] = round(out["cost"], 8)
    reasons: dict[str, int] = {}  # criteria not evaluated, by reason, over every shard
    for part in present:
        for reason, count in (part.get("not_evaluated_reasons") or {}).items():
            reasons[reason] = reasons.get(reason, 0) + int(count)
    out["not_evaluated_reasons"] = reasons
    out["judge_models"] = sorted({m for p in present for m in p.get("judge_models") or []})
    out["executor_models"] = sorted({m for p in present for m in p.get("executor_models") or []})
    out["cost_known"] = all(p.get("cost_known", True) for p in present)
    known = [p["task_cost"] for p in present if p.get("task_cost") is not None]
    out["task_cost"] = round(sum(known), 6) if known else None
    share = out["cost"] / out["task_cost"] if out["task_cost"] else None
    out["cost_share"] = round(share, 10) if share is not None else None
    out["over_budget"] = bool(share is not None and share > float(out.get("budget") or 0))
    return out
