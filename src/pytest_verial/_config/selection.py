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
so no criterion run is counted twice. The report must be sealed (:mod:`..reporting._seal`) and of
this session: the same benchmark files (SHA-256 of their text), the same run folders (label,
run.yaml id, agent) and the same plugin version; anything else is refused in one line. A kept
criterion run that failed counts in the exit status as if it had been scored again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._nodeids import parse, task_run_of
from .._record import CriterionRecord, Status

if TYPE_CHECKING:  # the result models load when a report is resumed, not for every session
    from .._results import CriterionRun

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


@dataclass(frozen=True)
class Origin:
    """Where a kept task run was scored: its benchmark file (as the report names it, and the
    SHA-256 of its text) and its run folder (label, run.yaml id, agent)."""

    file: str
    sha256: str | None
    run: tuple[str, str | None, str | None]


@dataclass
class Resume:
    """The criterion runs a resumed session keeps, by node id, and where they came from."""

    source: str
    kept: dict[str, CriterionRun]
    #: task-run id -> where it was scored: a session that scores another benchmark file,
    #: another version of it or another run folder is refused (:meth:`mismatch`)
    origins: dict[str, Origin]

    def mismatch(self, current: Mapping[str, tuple[str | None, Mapping[str, Any]]]) -> str | None:
        """Why the kept task runs do not belong to this session, or None. ``current``: each
        benchmark file this session scores -> its SHA-256 and its run folders' identities
        by label."""
        for task_run, origin in self.origins.items():
            if origin.file not in current:
                return (
                    f"task run {task_run} is of {origin.file}, which this session does not "
                    "score: resume with the benchmark files of that report"
                )
            sha256, runs = current[origin.file]
            if origin.sha256 != sha256:
                return (
                    f"{origin.file} has changed since that report was written (SHA-256 "
                    f"{str(origin.sha256)[:12]} there, {str(sha256)[:12]} now)"
                )
            label = origin.run[0]
            if label not in runs:
                return (
                    f"task run {task_run} was scored on the run folder {label}, which this "
                    f"session does not score (it scores {', '.join(runs) or 'none'})"
                )
            if runs[label] != origin.run:
                _, was_id, was_agent = origin.run
                _, now_id, now_agent = runs[label]
                return (
                    f"the run folder {label} was run.yaml id {was_id!r}, agent {was_agent!r} "
                    f"there and is id {now_id!r}, agent {now_agent!r} now: another run"
                )
        return None

    def carried_failures(self, kept: Iterable[CriterionRun | CriterionRecord]) -> bool:
        """True when a kept criterion run failed: it counts in the exit status as if it had
        been scored in this session."""
        return any(
            run.outcome == "failed"
            or (run.outcome is None and run.status in (Status.FAILED, Status.ERROR))
            for run in kept
        )


def load_resume(path: Path) -> Resume:
    """What to keep from a report or a journal; ValueError in one line when unusable."""
    from .._results import TaskStatus
    from .._version import __version__
    from ..reporting._journal import JournalBusy, recover
    from ..reporting._json_report import load_report

    if path.name.endswith(".jsonl"):
        try:
            report, _ = recover(path)
        except JournalBusy as exc:
            raise ValueError(str(exc)) from None
    else:
        report = load_report(path, sealed=True)
        if report.generator.version != __version__:
            raise ValueError(
                f"{path}: written by {report.generator.name} {report.generator.version}, "
                f"this is {__version__}: score it afresh"
            )
    kept: dict[str, CriterionRun] = {}
    origins: dict[str, Origin] = {}
    for run in report.benchmark_runs:
        folders = {r.label: (r.label, r.id, r.agent) for r in run.runs}
        for task in run.task_runs:
            if task.status not in (TaskStatus.COMPLETED, TaskStatus.SKIPPED):
                continue
            if task.verification == "incomplete":  # its judge may answer now: verify it again
                continue
            if any((c.details or "").startswith(CRASHED) for c in task.criterion_runs):
                continue
            if any(c.nodeid is None for c in task.criterion_runs):
                continue
            if task.run not in folders:
                raise ValueError(
                    f"{path}: task run {task.id} names the run folder {task.run}, which its "
                    f"benchmark run {run.id} does not list: not a consistent report"
                )
            origins[task.id] = Origin(run.benchmark.file, run.benchmark.sha256, folders[task.run])
            for c in task.criterion_runs:
                assert c.nodeid is not None
                if parse(c.nodeid).file != run.benchmark.file:
                    raise ValueError(
                        f"{path}: criterion run {c.nodeid} is not of its benchmark run's file "
                        f"{run.benchmark.file}: not a consistent report"
                    )
                kept[c.nodeid] = c
    return Resume(str(path), kept, origins)
