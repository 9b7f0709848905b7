"""Which task runs this session scores: ``--verial-shard K/N`` and ``--verial-resume REPORT``.

**Shards.** Task runs (never single criteria: a task run's judge criteria are gated by its
deterministic ones) are given to N shards by criteria count: largest first, each to the shard
with the fewest criteria so far (ties to the lower shard), in an order that depends only on the
task-run ids. Every machine, and every xdist worker, computes the same assignment from the same
benchmark files and run folders. The report's ``session.shard`` records K, N and every task-run
id in collection order, which ``verial merge`` uses to check and order the shards.

**Resume.** A report (or a crashed session's journal) names what was scored. Task runs that
completed (or were skipped on purpose) keep their criterion runs; every other task run (missing,
cancelled, or with a criterion that did not complete because its process died) is scored again.
Kept criteria are deselected from running and their criterion runs put back into the report,
so no criterion run is counted twice. A task whose definition or benchmark version changed
since the report is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .nodeids import task_run_of
from .results import CriterionRun, TaskStatus

_SHARD = re.compile(r"(\d{1,6})/(\d{1,6})")
#: the details a crashed worker's criterion runs carry (recorder._error_record)
CRASHED = "criterion did not complete"


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int


def parse_shard(text: str) -> Shard:
    """``K/N`` with 1 <= K <= N; ValueError with the reason otherwise."""
    match = _SHARD.fullmatch(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not K/N (for example 2/3)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"{text!r}: K must be between 1 and N (N >= 1)")
    return Shard(index, count)


def assign(task_runs: Mapping[str, int], count: int) -> dict[str, int]:
    """Task-run id -> shard (1-based), balanced by criteria count; the same everywhere."""
    load = [0] * count
    out: dict[str, int] = {}
    for task_run in sorted(task_runs, key=lambda t: (-task_runs[t], t)):
        target = min(range(count), key=lambda i: (load[i], i))
        load[target] += max(task_runs[task_run], 1)
        out[task_run] = target + 1
    return out


@dataclass
class ShardInfo:
    """What a shard's report records (``session.shard``)."""

    index: int
    count: int
    #: every task run of every shard, in collection order
    task_runs: list[str] = field(default_factory=list)
    #: this shard's task runs
    mine: list[str] = field(default_factory=list)
    #: what every shard must share: the pass threshold and scored options and each benchmark
    #: file's ``slug@version`` and threshold (``verial merge`` refuses shards that differ)
    setup: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``session.shard`` block."""
        return {
            "index": self.index,
            "count": self.count,
            "task_runs": list(self.mine),
            "all_task_runs": list(self.task_runs),
            "setup": self.setup,
        }


def split(nodeids: Sequence[str], shard: Shard) -> tuple[set[str], ShardInfo]:
    """The node ids of shard K's task runs, and the shard's record."""
    counts: dict[str, int] = {}
    for nodeid in nodeids:
        task = task_run_of(nodeid)
        counts[task] = counts.get(task, 0) + 1
    owner = assign(counts, shard.count)
    mine = [t for t in counts if owner[t] == shard.index]
    keep = {n for n in nodeids if owner[task_run_of(n)] == shard.index}
    return keep, ShardInfo(shard.index, shard.count, list(counts), mine)


# -- resume ----------------------------------------------------------------------------------


@dataclass
class Resume:
    """The criterion runs a resumed session keeps, by node id, and where they came from."""

    source: str
    kept: dict[str, CriterionRun]
    #: task-run id -> its benchmark (``slug@version``) and task snapshot when it was scored:
    #: a task run whose benchmark version or definition changed since is refused
    snapshots: dict[str, Any]


def load_resume(path: Path) -> Resume:
    """What to keep from a report or a journal; ValueError in one line when unusable."""
    from .reporting.journal import JournalBusy, recover
    from .reporting.json_report import load_report

    if path.name.endswith(".jsonl"):
        try:
            report, _ = recover(path)
        except JournalBusy as exc:
            raise ValueError(str(exc)) from None
    else:
        report = load_report(path, sealed=True)
    kept: dict[str, CriterionRun] = {}
    snapshots: dict[str, Any] = {}
    for task, ref in ((t, r.benchmark.ref) for r in report.benchmark_runs for t in r.task_runs):
        if task.status not in (TaskStatus.COMPLETED, TaskStatus.SKIPPED):
            continue
        if any((c.details or "").startswith(CRASHED) for c in task.criterion_runs):
            continue
        if any(c.nodeid is None for c in task.criterion_runs):
            continue
        snapshots[task.id] = fingerprint(ref, task.snapshot)
        for c in task.criterion_runs:
            assert c.nodeid is not None
            kept[c.nodeid] = c
    return Resume(str(path), kept, snapshots)


def fingerprint(benchmark_ref: str, snapshot: Any) -> dict[str, Any]:
    """What must not change between a report and its resume: benchmark version and task."""
    return {"benchmark": benchmark_ref, "task": snapshot}


def changed_tasks(resume: Resume, current: Iterable[tuple[str, Any]]) -> list[str]:
    """Task runs whose definition differs from the one the kept criterion runs scored."""
    return [
        task_run
        for task_run, snapshot in current
        if task_run in resume.snapshots and resume.snapshots[task_run] != snapshot
    ]
