"""Run one criterion against its sandbox: the same code for pytest items and inline use.

:func:`run_criterion` returns a plain :class:`~pytest_verial._record.CriterionRecord` (its JSON
form is ``CriterionRun``'s; the typed run is built only where a writer needs it). It never raises
for bad input: a :class:`~pytest_verial._errors.CriterionError` becomes a run with status
``error`` and score 0; an ``assert`` with no registered check becomes a failed
run with ``unsupported assertion: <value>`` (Verial's rule). Its details and evidence name
files relative to the task's sandbox folder (:mod:`pytest_verial._sandbox_paths`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ._contracts.check import CheckContext, CheckOutcome
from ._display import escape
from ._errors import CriterionError, NotEvaluatedError, RunConfigError
from ._loader import CriterionPlan, TaskPlan
from ._models import Benchmark
from ._names import UNSUPPORTED
from ._record import CriterionRecord
from ._safeparse import strict_json_value
from ._sandbox_paths import sandbox_paths
from ._scoring import (
    DEFAULT_CRITERION_THRESHOLD,
    DEFAULT_VERDICT_THRESHOLD,
    clamp,
    passed,
    resolve_threshold,
)
from ._secrets import redact, redact_json

if TYPE_CHECKING:
    from ._results import CriterionRun
    from .sources import Sandbox


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds and ``Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def criterion_threshold(
    plan: CriterionPlan, task_threshold: float = DEFAULT_VERDICT_THRESHOLD
) -> float:
    """The criterion's pass threshold.

    Its own ``pass_threshold`` first. A deterministic check then defaults to 1.0 (every field
    must hold); a judge criterion inherits ``task_threshold``, its task's verdict threshold
    (:func:`~pytest_verial._scoring.verdict_threshold`), since a rubric mean rarely reaches
    exactly 1.
    """
    default = task_threshold if plan.judge else DEFAULT_CRITERION_THRESHOLD
    return resolve_threshold(plan.criterion.pass_threshold, default=default)


def identity(plan: CriterionPlan, task: TaskPlan) -> dict[str, Any]:
    """Identity fields of a criterion run (everything but the result)."""
    return {
        "criterion_id": plan.id,
        "label": plan.criterion.label,
        "assert": plan.assert_name,
        "axis": plan.criterion.axis,
        "weight": plan.criterion.weight,
        "points": plan.criterion.points,
        "critical": plan.criterion.critical,
        "judge": plan.judge,
        "line": plan.line,
        "task_key": task.key,
        "task_id": task.task.id,
        "entity": task.entity.id if task.entity else None,
    }


def verification_skipped(task: TaskPlan, sandbox: Sandbox | None) -> bool:
    """``skip_verification: true`` in run.yaml for this task run (else on the task): PRD-103
    §8's opt-out, under which no criterion of the task is checked."""
    meta = getattr(sandbox, "meta", None)
    skip = getattr(meta, "skip_verification", None)
    return bool(task.task.skip_verification if skip is None else skip)


def run_criterion(
    plan: CriterionPlan,
    task: TaskPlan,
    sources: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
    prior: Mapping[str, CriterionRecord] | None = None,
    task_threshold: float = DEFAULT_VERDICT_THRESHOLD,
    benchmark: Benchmark | None = None,
    placement: Mapping[str, Any] | None = None,
    sandbox: Sandbox | None = None,
) -> CriterionRecord:
    """Score one criterion. ``placement`` (node ids, file, run) is added to its identity;
    ``task_threshold`` is the task's verdict threshold, which a judge criterion inherits."""
    started, clock = now_iso(), time.perf_counter()
    threshold = criterion_threshold(plan, task_threshold)
    who = {**identity(plan, task), **(placement or {}), "pass_threshold": threshold}
    try:
        if verification_skipped(task, sandbox):
            outcome = CheckOutcome(
                0.0,
                "verification skipped: skip_verification is true for this task",
                {},
                passed=False,
                status="skipped",
            )
        else:
            outcome = _outcome(
                plan, task, sources, options or {}, prior or {}, threshold, benchmark, sandbox
            )
    except NotEvaluatedError as exc:  # the verifier's own failure, never the agent's
        outcome = CheckOutcome(
            0.0,
            f"not evaluated: {exc.reason}",
            {"error": type(exc).__name__},
            status="error",
            not_evaluated=exc.reason,
        )
    except (CriterionError, RunConfigError) as exc:
        outcome = CheckOutcome(0.0, str(exc), {"error": type(exc).__name__}, status="error")
    details, evidence = outcome.details, strict_json_value(outcome.evidence)  # strict JSON
    paths = sandbox_paths(sandbox)
    if paths is not None:  # files named relative to the task folder, never where it sits
        details, evidence = paths.text(details) if details else details, paths.json(evidence)
    result: dict[str, Any] = {
        # one printable line whatever the data quoted in it holds (ESC, newlines, bidi)
        "details": escape(redact(details)) if details else details,
        # in the JSON form of its check type's evidence model, which checks it
        "evidence": evidence_json(plan.assert_name, redact_json(evidence)),
        "started_at": started,
        "completed_at": now_iso(),
        "duration": round(time.perf_counter() - clock, 6),
    }
    status = outcome.status
    if outcome.not_evaluated is not None:
        reason = escape(
            redact(paths.text(outcome.not_evaluated) if paths else outcome.not_evaluated)
        )
        return CriterionRecord.unverified(who, reason, **result)
    if status == "error":
        return CriterionRecord.errored(who, **result)
    if status == "gated":
        return CriterionRecord.gated(who, **result)
    if status == "skipped":
        return CriterionRecord.skipped(who, **result)
    score = clamp(float(outcome.score))
    ok = outcome.passed if outcome.passed is not None else passed(score, threshold)
    return CriterionRecord.scored(who, score, bool(ok), **result)


def evidence_json(assertion: str | None, evidence: Any) -> dict[str, Any] | None:
    """A check's evidence in the JSON form of its ``assert``'s evidence model: validated by
    that model (a value of the wrong type raises, as the typed run's validation did), keys in
    its order, the keys it leaves unset absent. Empty evidence is empty in every model."""
    if evidence is None:
        return None
    if isinstance(evidence, dict) and not evidence:
        return {}
    from ._evidence import parse_evidence  # the evidence models load when a check wrote some

    parsed = parse_evidence(assertion, evidence)
    return parsed.to_json() if parsed is not None else None


class TypedPrior(Mapping[str, "CriterionRun"]):
    """A task run's criterion records so far, seen by a check as typed runs (``ctx.prior``),
    each built when first read; :attr:`records` for the engine's own gating."""

    def __init__(self, records: Mapping[str, CriterionRecord]) -> None:
        self.records = records
        self._typed: dict[str, CriterionRun] = {}

    def __getitem__(self, key: str) -> CriterionRun:
        typed = self._typed.get(key)
        if typed is None:
            from ._results import CriterionRun

            typed = self._typed[key] = CriterionRun.of(self.records[key])
        return typed

    def __iter__(self) -> Iterator[str]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)


def _outcome(
    plan: CriterionPlan,
    task: TaskPlan,
    sources: Mapping[str, Any],
    options: Mapping[str, Any],
    prior: Mapping[str, CriterionRecord],
    threshold: float,
    benchmark: Benchmark | None,
    sandbox: Sandbox | None,
) -> CheckOutcome:
    spec = plan.spec  # validated now: a plan does not keep it
    if plan.check is None or spec is None:
        return CheckOutcome(0.0, f"{UNSUPPORTED}{plan.assert_name}", {}, passed=False)
    context = CheckContext(
        sources=sources,
        task=task.task,
        task_key=task.key,
        criterion=plan.criterion,
        criterion_id=plan.id,
        entity=task.entity,
        pass_threshold=threshold,
        # ``options["sandbox"]``: how conftest checks reached the sandbox before ``ctx.sandbox``
        options={**options, "sandbox": sandbox} if sandbox is not None else options,
        prior=TypedPrior(prior),
        benchmark=benchmark,
        deterministic=task.deterministic,
        sandbox=sandbox,
    )
    return plan.check.run(spec, context)
