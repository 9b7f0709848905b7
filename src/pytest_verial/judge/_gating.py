"""When the judge is not called: bypass rules (PRD-103 §8) and the deterministic-first gate.

Order of the rules, first match wins:

1. ``skip_verification: true`` for the task (run.yaml or the task) -> ``skipped``.
2. ``task_type: simple`` -> ``skipped`` (deterministic only).
3. task cost (run.yaml ``tasks.<id>.cost``) below ``bypass_cost`` (default $0.05) -> ``skipped``.
4. a deterministic criterion of the task failed or errored -> ``gated`` (score 0, counts).
5. a deterministic criterion of the task did not run in this process (deselected with ``-k``,
   or not on this xdist worker) -> ``gated``: the judge only runs after *all* of them passed.

Bypass comes before the gate: a bypassed task is scored on its deterministic criteria alone,
so a judge criterion there never counts, whether or not those passed. ``skipped`` criteria are
left out of the weighted mean; ``gated`` ones score 0 and count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._record import FAILING

if TYPE_CHECKING:
    from .._record import CriterionRecord
    from .._results import CriterionRun


@dataclass(frozen=True)
class Decision:
    """Why the judge is not called: ``status`` is ``skipped`` or ``gated``."""

    status: str
    reason: str
    rule: str


def decide(
    *,
    task: Any,
    entity: Any,
    meta: Any,
    prior: Mapping[str, CriterionRun] | Mapping[str, CriterionRecord],
    bypass_cost: float,
    deterministic_ids: Iterable[str] = (),
) -> Decision | None:
    """The reason not to call the judge for this criterion, or None to call it.

    ``deterministic_ids`` are the task run's criteria whose check is not a judge (the
    ``judge`` flag on the check, :class:`~pytest_verial.CheckSpec`): all of them must
    have run, and passed, before the judge is asked."""
    skip = getattr(meta, "skip_verification", None)
    if skip is None:
        skip = getattr(task, "skip_verification", None)
    if skip:
        return Decision(
            "skipped",
            "verification skipped: skip_verification is true for this task",
            "skip_verification",
        )
    task_type = getattr(meta, "task_type", None) or getattr(task, "task_type", None)
    if task_type and str(task_type).lower() == "simple":
        return Decision(
            "skipped", "bypassed: task_type is simple (deterministic checks only)", "task_type"
        )
    cost = getattr(meta, "cost", None)
    if cost is not None and cost < bypass_cost:
        return Decision(
            "skipped",
            f"bypassed: task cost ${cost:.4f} is below the "
            f"${bypass_cost:.2f} threshold (deterministic checks only)",
            "cost",
        )
    wanted = set(deterministic_ids)
    # the engine's view of the plain records (no typed run built to read two fields)
    records: Mapping[str, Any] = getattr(prior, "records", prior)
    deterministic = {cid: r for cid, r in records.items() if cid in wanted}
    failed = [
        f"{cid} ({r.status})"
        for cid, r in deterministic.items()
        if r.status in FAILING or not r.passed
    ]
    if failed:
        return Decision(
            "gated",
            "gated: deterministic criteria failed, judge not called: " + ", ".join(failed),
            "gate",
        )
    expected = len(wanted)
    if len(deterministic) < expected:
        return Decision(
            "gated",
            f"gated: {expected - len(deterministic)} of {expected} deterministic criteria of "
            "this task did not run before it (deselected, or on another worker); the judge "
            "runs only after all of them passed",
            "gate-incomplete",
        )
    return None


def gate_open(
    prior: Mapping[str, CriterionRun] | Mapping[str, CriterionRecord],
    deterministic_ids: Iterable[str],
) -> bool:
    """Whether every deterministic criterion of the task run ran in this process and passed:
    rules 4 and 5 let its judge criteria ask the judge (the bypass rules may still apply).
    Judge criteria are scored at once only then (``--verial-judge-concurrency``)."""
    for cid in set(deterministic_ids):
        run = prior.get(cid)
        if run is None or run.status in FAILING or not run.passed:
            return False
    return True
