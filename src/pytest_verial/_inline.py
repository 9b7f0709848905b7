"""Inline verification without pytest (PRD-103 §8.1): :func:`verify_task` and its async twin.

A coordinator that verifies each task as soon as the agent finishes it calls::

    from pytest_verial import verify_task

    run = verify_task(task, "runs/2026-05-01/lumbar-mri-pa",
                      {"judge_model": "gpt-4o-mini", "executor_model": "claude-sonnet-4-5",
                       "cost": 0.42})
    if run.verdict != "pass":
        next_prompt += "\\n\\n" + (run.feedback or "")

The same checks, gating, bypass rules and scoring as the pytest plugin run, in the same order
(deterministic criteria first, judge criteria last). ``config`` holds the ``ctx.options`` keys
(``judge_model``, ``judge_base_url``, ``judge_api_key_env``, ``executor_model``,
``judge_cache_dir``, ``bypass_cost``, ``verification_budget``, ``judge_concurrency``, ...),
plus this task run's facts that run.yaml would otherwise give (``cost``, ``task_type``,
``skip_verification``) and ``pass_threshold`` (the verdict threshold), and the limits every
read of the sandbox is held to, ``max_file_size`` and ``max_sandbox_size`` (bytes, or text
such as ``"64MiB"``; default 1 GiB and 4 GiB: :mod:`pytest_verial._sandbox_io.limits`).

``judge_concurrency`` (default 4, 1-64; 1: one after another): once the task's deterministic
criteria all passed, its judge criteria are scored at once, at most that many judge calls in
flight, with the same results as one after another (:mod:`pytest_verial._judge_concurrency`).
"""

from __future__ import annotations

import asyncio
import json
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ._config.run_folder import RunDir, TaskRunMeta
from ._contracts.sandbox import Sandbox
from ._engine import run_criterion
from ._errors import CriterionError, RunConfigError, SourceError, UsageError
from ._loader import CriterionPlan, TaskPlan, load_benchmark
from ._models import Task
from ._record import CriterionRecord
from ._results import CriterionRun, InlineTaskRun, TaskRun
from ._sandbox_io.sizes import ReadLimits
from ._scoring import verdict_threshold
from .checks import default_registry
from .judge._gating import gate_open
from .judge._models import run_self_grading
from .judge._pool import JudgePool
from .judge._report import task_feedback, verification_summary
from .judge._settings import DEFAULT_BUDGET, SettingError, concurrency

_META_KEYS = ("cost", "task_type", "skip_verification")


class _InlineSandbox(Sandbox):
    """A sandbox whose run facts (cost, task_type, ...) come from the caller's config."""

    def __init__(self, *args: Any, meta: TaskRunMeta | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._meta = meta

    @property
    def meta(self) -> TaskRunMeta:
        return self._meta if self._meta is not None else super().meta


def _plan(task: TaskPlan | Task | Mapping[str, Any], entity: str | None) -> TaskPlan:
    if isinstance(task, TaskPlan):
        return task
    data = (
        task.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(task, Task)
        else dict(task)
    )
    with tempfile.TemporaryDirectory(prefix="verial-inline-") as tmp:
        path = Path(tmp) / "inline.verial.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        plan = load_benchmark(path, default_registry(), display=f"task {data.get('id')!r}")
    candidates = [t for t in plan.tasks if entity is None or (t.entity and t.entity.id == entity)]
    if len(candidates) != 1:
        keys = ", ".join(t.key for t in plan.tasks)
        raise UsageError(
            f"pass entity= to choose one task run of {keys}"
            if candidates
            else f"no task run for entity {entity!r} (task runs: {keys})"
        )
    return candidates[0]


def verify_task(
    task: TaskPlan | Task | Mapping[str, Any],
    sandbox: str | Path | Sandbox,
    config: Mapping[str, Any] | None = None,
    *,
    entity: str | None = None,
    run_dir: RunDir | None = None,
) -> InlineTaskRun:
    """Score one task against its sandbox directory (or a ready :class:`Sandbox`).
    ``run_dir``: the sandbox's run folder, already read (the service reads it once).

    Raises :class:`~pytest_verial._errors.BenchmarkFileError` for an invalid task and
    :class:`~pytest_verial._errors.UsageError` when the judge is the executor's model; a
    criterion that cannot be scored is an ``error`` criterion run, as under pytest.
    """
    options = _checked(dict(config or {}))
    plan = _plan(task, entity)
    # task > caller's config > 0.9: the chain pytest resolves, with no benchmark around the task
    threshold = float(
        verdict_threshold(plan.task.pass_threshold, None, options.get("pass_threshold"))
    )
    if isinstance(sandbox, Sandbox):
        box = sandbox
    else:
        path = Path(sandbox)
        meta = {k: options[k] for k in _META_KEYS if options.get(k) is not None}
        try:
            facts = TaskRunMeta(**meta) if meta else None
        except ValidationError as exc:
            error = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in error["loc"])
            raise UsageError(f"config {where}: {error['msg']}") from None
        if run_dir is None:
            try:
                limits = ReadLimits.from_config(options)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            run_dir = RunDir(path.parent, limits=limits)
        box = _InlineSandbox(
            run_dir,
            plan.task,
            plan.key,
            plan.entity,
            options,
            meta=facts,
        )
        box.path = path
    problem = run_self_grading(options, box.run)
    if problem is not None:
        raise UsageError(problem)
    try:
        limit = concurrency(options)
    except SettingError as exc:
        raise UsageError(f"judge_concurrency: {exc}") from None
    try:
        records = _score_criteria(plan, box, options, limit, threshold)
    finally:
        box.close()
    position = {c.id: c.position for c in plan.criteria}
    records.sort(key=lambda r: position[r.criterion_id])
    runs = [CriterionRun.of(r) for r in records]  # the answer is typed: built once, here
    task_run = TaskRun.aggregate(
        runs,
        threshold,
        id=plan.key,
        task_id=plan.task.id,
        task_key=plan.key,
        entity=plan.entity.id if plan.entity else None,
        name=plan.task.name,
        run="inline",
    )
    result = InlineTaskRun.model_validate(dict(task_run))
    result.feedback = task_feedback(result)
    result.verification_summary = verification_summary(
        [result],
        {("inline", plan.key): box.meta.cost},
        float(options.get("verification_budget") or DEFAULT_BUDGET),
    )
    return result


def _checked(options: dict[str, Any]) -> dict[str, Any]:
    """``config`` with every number finite and ``pass_threshold`` in [0, 1]; a UsageError naming
    the key otherwise (a NaN threshold would fail every task, an infinite cost skip the judge
    for none, in silence)."""
    for key, value in options.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"config {key}: {value!r} is not a finite number")
    threshold = options.get("pass_threshold")
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0.0 <= threshold <= 1.0
    ):
        raise UsageError(f"config pass_threshold: {threshold!r} is not a number in [0, 1]")
    return options


def _score_criteria(
    plan: TaskPlan, box: Sandbox, options: dict[str, Any], limit: int, threshold: float
) -> list[CriterionRecord]:
    """The task run's criterion runs, in the loader's order (deterministic first, judge
    last). Once the deterministic ones all passed, with ``limit`` > 1, the judge criteria are
    scored at once, at most ``limit`` at a time (as under pytest: :mod:`._judge_concurrency`)."""
    prior: dict[str, CriterionRecord] = {}
    runs: list[CriterionRecord] = []
    deterministic = [c.id for c in plan.criteria if not c.judge]
    for index, crit in enumerate(plan.criteria):
        rest = plan.criteria[index:]
        at_once = limit > 1 and len(rest) > 1 and all(c.judge for c in rest)
        if at_once and gate_open(prior, deterministic):
            at = _judge_at_once(rest, plan, box, options, dict(prior), limit, threshold)
            return runs + at
        run = _scoring(crit, plan, box, options, prior, threshold)()
        prior[crit.id] = run
        runs.append(run)
    return runs


def _scoring(
    crit: CriterionPlan,
    plan: TaskPlan,
    box: Sandbox,
    options: dict[str, Any],
    prior: dict[str, CriterionRecord],
    threshold: float,
) -> Callable[[], CriterionRecord]:
    """One criterion's scoring, its sources built now (in the caller's thread)."""
    sources: dict[str, Any] = {}
    for name in crit.check.sources if crit.check else ():
        try:
            sources[name] = box.source(name)
        except (CriterionError, RunConfigError) as exc:
            sources[name] = _Unusable(name, str(exc))
    return partial(
        run_criterion,
        crit,
        plan,
        sources,
        options=options,
        prior=prior,
        task_threshold=threshold,
        sandbox=box,
    )


def _judge_at_once(
    criteria: Sequence[CriterionPlan],
    plan: TaskPlan,
    box: Sandbox,
    options: dict[str, Any],
    prior: dict[str, CriterionRecord],
    limit: int,
    threshold: float,
) -> list[CriterionRecord]:
    """Judge criteria scored in a pool of ``limit``; their runs in order. An exception a
    check raises is raised here, as when scored one by one; the rest are then cancelled."""
    pool = JudgePool(limit)
    try:
        futures = [pool.submit(_scoring(c, plan, box, options, prior, threshold)) for c in criteria]
        return [future.result() for future in futures]
    finally:
        pool.cancel()


async def verify_task_async(
    task: TaskPlan | Task | Mapping[str, Any],
    sandbox: str | Path | Sandbox,
    config: Mapping[str, Any] | None = None,
    *,
    entity: str | None = None,
) -> InlineTaskRun:
    """:func:`verify_task` in a worker thread, for asyncio coordinators."""
    return await asyncio.to_thread(verify_task, task, sandbox, config, entity=entity)


class _Unusable:
    """A source that could not be built; any use raises the reason as a SourceError."""

    def __init__(self, name: str, reason: str) -> None:
        self._name, self._reason = name, reason

    def __getattr__(self, attr: str) -> Any:
        raise SourceError(f"{self._name} source unusable: {self._reason}")
