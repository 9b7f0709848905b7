"""Compare two JSON reports: what changed from BASE to HEAD, run by run, task by task.

The comparison is a typed model (:class:`Comparison`, written by ``verial compare --json``);
:func:`compare_reports` builds it. The rules (README, "Compare and gate"):

- **Pairing.** A benchmark run of BASE pairs with one of HEAD when both scored the same
  benchmark (``benchmark.ref``, ``slug@version``) from the same file (``benchmark.file``); run
  labels are ignored, since the two reports score different run folders. When one side holds
  several benchmark runs of that benchmark (several agents in one session), they pair by equal
  run labels, then by equal ``agent`` (run.yaml), each only when that match is unique; the
  rest are not paired and are named with the reason.
- **Tasks** pair by task key (``task[entity]``). A task's score on one side is the mean over
  its completed task runs (one, or one per trial), its verdict the worst of their verdicts.
- **Interval.** A paired bootstrap of the mean per-task difference (HEAD minus BASE) over the
  tasks scored on both sides: :data:`RESAMPLES` resamples of the tasks with replacement, drawn
  by ``numpy.random.default_rng(SEED)`` (so the same reports always give the same interval);
  the bounds are the 251st smallest and 251st largest resampled means (2.5 % in from each end).
- **Regression** (exit 1): a paired benchmark run whose run score drops by more than the
  tolerance (or that lost its run score), or a task whose verdict gets worse
  (pass > partial > fail), or a HEAD whose verification is incomplete (criteria the verifier
  could not evaluate: what was not checked must not pass the gate). A task scored on one side
  only, and an unpaired benchmark run, are shown but do not fail the comparison.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._names import run_name
from .._results import COUNTED, Report, Status, TaskStatus
from .._scoring import TOLERANCE, VERDICTS, Verdict
from ._scores import BenchmarkRunScores, CriterionScore, ReportScores, TaskScore

COMPARISON_SCHEMA_ID = "pytest-verial/compare/v1"
#: bootstrap resamples and the seed of their generator (fixed: one answer per pair of reports)
RESAMPLES = 10_000
SEED = 20261123
CONFIDENCE = 0.95
#: score differences smaller than this are rounding, not change (the scorer's tolerance)
EPSILON = TOLERANCE
#: verdicts worst first: a verdict's rank is its index
_BY_RANK: tuple[Verdict, ...] = VERDICTS[::-1]
VERDICT_RANK: dict[str, int] = {v: rank for rank, v in enumerate(_BY_RANK)}

#: ``unscored``: the task has task runs on both sides but a score on one only (cancelled,
#: skipped, or incomplete with ``-k``, on the other); ``added`` / ``removed``: one side only
Change = Literal["regression", "improvement", "unchanged", "unscored", "added", "removed"]
Side = Literal["base", "head"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CriterionDelta(_Model):
    """One criterion of a paired task, BASE and HEAD (``status`` ``mixed`` across trials)."""

    criterion_id: str
    change: Change
    base_status: Status | Literal["mixed"] | None = None
    head_status: Status | Literal["mixed"] | None = None
    base_score: float | None = None
    head_score: float | None = None
    delta: float | None = None


class TaskDelta(_Model):
    """One task of a paired benchmark run: its score and verdict on each side."""

    task_key: str
    change: Change
    #: the verdict got worse (pass > partial > fail): fails the comparison
    verdict_worse: bool = False
    base_task_runs: list[str]
    head_task_runs: list[str]
    #: task run status on each side (``mixed`` across trials)
    base_status: TaskStatus | Literal["mixed"] | None = None
    head_status: TaskStatus | Literal["mixed"] | None = None
    base_score: float | None = None
    head_score: float | None = None
    delta: float | None = None
    base_verdict: Verdict | None = None
    head_verdict: Verdict | None = None
    #: the criteria whose score or status changed (or that only one side has)
    criteria: list[CriterionDelta]


class Interval(_Model):
    """The paired bootstrap interval of the mean per-task score difference (HEAD - BASE)."""

    tasks: int
    mean: float
    low: float
    high: float
    confidence: float = CONFIDENCE
    resamples: int = RESAMPLES
    seed: int = SEED


#: ``verial compare``'s exit status when nothing could be compared
EXIT_NOTHING_COMPARED: Literal[5] = 5


class BenchmarkRunDelta(_Model):
    """One benchmark run of BASE paired with one of HEAD."""

    benchmark: str
    file: str
    #: benchmark run ids and the labels of their run folders
    base: str
    head: str
    base_runs: list[str]
    head_runs: list[str]
    #: each side's one name (:func:`pytest_verial._names.run_name`: run.yaml's agent, else
    #: the run folder's label)
    base_name: str = ""
    head_name: str = ""
    base_score: float | None = None
    head_score: float | None = None
    delta: float | None = None
    base_verdict: Verdict | None = None
    head_verdict: Verdict | None = None
    #: None when no task is scored on both sides
    interval: Interval | None = None
    #: the run score dropped by more than the tolerance (or HEAD has none)
    score_dropped: bool
    #: task keys whose verdict got worse
    worse_verdicts: list[str]
    #: HEAD's verification is incomplete (criteria the verifier could not evaluate)
    unverified: bool = False
    regression: bool
    #: run statuses other than completed, and the like
    notes: list[str]
    #: regressions first, then improvements, tasks scored or held on one side only, unchanged
    tasks: list[TaskDelta]


class Unpaired(_Model):
    """A benchmark run of one report that no benchmark run of the other pairs with."""

    side: Side
    id: str
    benchmark: str
    file: str
    reason: str


class Comparison(_Model):
    """What ``verial compare BASE HEAD`` found (``--json``)."""

    schema_: str = Field(default=COMPARISON_SCHEMA_ID, alias="schema")
    base: str
    head: str
    tolerance: float
    regression: bool
    #: 0 no regression, 1 a regression, 5 nothing compared (:data:`EXIT_NOTHING_COMPARED`)
    exit_status: Literal[0, 1, 5]
    #: regressed benchmark runs first
    benchmark_runs: list[BenchmarkRunDelta]
    unpaired: list[Unpaired]

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types, with the key names of ``--json`` (``schema``)."""
        return self.model_dump(mode="json", by_alias=True)


# -- the bootstrap ----------------------------------------------------------------------------
#: numbers drawn per block of resamples (8 bytes each): the bootstrap's memory stays ~64 MB
_BLOCK = 8_000_000


def paired_bootstrap(
    diffs: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED
) -> Interval:
    """The 95 % percentile interval of the mean of ``diffs`` by resampling them.

    Each resample draws ``n`` of the ``n`` differences with replacement. When the differences
    take few distinct values (task scores are fractions of few criteria), a resample is drawn
    as the multinomial counts of those values, which is the same distribution at a cost per
    resample of the number of values instead of ``n``; otherwise as ``n`` random indices. Both
    run in numpy, in blocks, from ``numpy.random.default_rng(seed)``: one answer per input.
    """
    import numpy as np

    if not diffs:
        raise ValueError("no paired differences")
    n = len(diffs)
    mean = math.fsum(diffs) / n
    values, counts = np.unique(np.asarray(diffs, dtype=np.float64), return_counts=True)
    if len(values) == 1:  # every resample is the one value: exact, not n * v / n
        low = high = float(values[0])
    else:
        rng = np.random.default_rng(seed)
        by_value = len(values) * 8 <= n
        block = max(1, _BLOCK // (len(values) if by_value else n))
        every = np.asarray(diffs, dtype=np.float64)
        sums = np.empty(resamples, dtype=np.float64)
        for start in range(0, resamples, block):
            size = min(block, resamples - start)
            if by_value:
                sums[start : start + size] = rng.multinomial(n, counts / n, size=size) @ values
            else:
                sums[start : start + size] = every[rng.integers(0, n, size=(size, n))].sum(axis=1)
        means = np.sort(sums / n)
        cut = round((1 - CONFIDENCE) / 2 * resamples)  # 250 of 10,000 at each end
        low, high = float(means[cut]), float(means[resamples - 1 - cut])
    return Interval(
        tasks=n,
        mean=mean,
        low=low,
        high=high,
        resamples=resamples,
        seed=seed,
    )


# -- pairing ----------------------------------------------------------------------------------
def _labels(run: BenchmarkRunScores) -> tuple[str, ...]:
    return tuple(r.label for r in run.runs)


def _agents(run: BenchmarkRunScores) -> tuple[str | None, ...]:
    return tuple(r.agent for r in run.runs)


def pair_runs(
    base: ReportScores, head: ReportScores
) -> tuple[list[tuple[BenchmarkRunScores, BenchmarkRunScores]], list[Unpaired]]:
    """Pair benchmark runs by benchmark ref and file (see the module's docstring)."""
    groups: dict[tuple[str, str], tuple[list[BenchmarkRunScores], list[BenchmarkRunScores]]] = {}
    for index, report in enumerate((base, head)):
        for run in report.benchmark_runs:
            key = (run.benchmark.ref, run.benchmark.file)
            groups.setdefault(key, ([], []))[index].append(run)
    pairs: list[tuple[BenchmarkRunScores, BenchmarkRunScores]] = []
    unpaired: list[Unpaired] = []
    for (ref, file), (left, right) in groups.items():
        if len(left) == 1 and len(right) == 1:
            pairs.append((left[0], right[0]))
            continue
        for by in (_labels, _agents):
            for a in list(left):
                if None in by(a):  # a run folder without an agent matches no other by agent
                    continue
                match = [b for b in right if by(b) == by(a)]
                if len(match) == 1 and sum(by(x) == by(a) for x in left) == 1:
                    pairs.append((a, match[0]))
                    left.remove(a)
                    right.remove(match[0])
        sides: tuple[tuple[Side, list[BenchmarkRunScores], list[BenchmarkRunScores]], ...] = (
            ("base", left, right),
            ("head", right, left),
        )
        for side, runs, other in sides:
            other_name = "head" if side == "base" else "base"
            for run in runs:
                reason = (
                    f"no benchmark run of {ref} from {file} in {other_name}"
                    if not other
                    else f"{len(runs)} benchmark runs of {ref} from {file} left in {side} "
                    f"and {len(other)} in {other_name}, none with the same run labels or agent"
                )
                unpaired.append(
                    Unpaired(side=side, id=run.id, benchmark=ref, file=file, reason=reason)
                )
    return pairs, unpaired


# -- one paired benchmark run --------------------------------------------------------------------
def _mean(values: Iterable[float | None]) -> float | None:
    numbers = [v for v in values if v is not None]
    return math.fsum(numbers) / len(numbers) if numbers else None


def _worst(verdicts: Iterable[Verdict | None]) -> Verdict | None:
    ranks = [VERDICT_RANK[v] for v in verdicts if v is not None]
    return _BY_RANK[min(ranks)] if ranks else None


def _change(delta: float | None, worse: bool, better: bool, base: object, head: object) -> Change:
    if base is None and head is not None:
        return "added"
    if head is None and base is not None:
        return "removed"
    if worse or (not better and delta is not None and delta < -EPSILON):
        return "regression"
    if better or (delta is not None and delta > EPSILON):
        return "improvement"
    return "unchanged"


def _criterion_side(runs: list[CriterionScore]) -> tuple[Status | Literal["mixed"], float | None]:
    if len(runs) == 1:  # one task run a side (trials give several): no mean to take
        return runs[0].status, runs[0].score if runs[0].counted else None
    statuses = {c.status for c in runs}
    status: Status | Literal["mixed"] = statuses.pop() if len(statuses) == 1 else "mixed"
    return status, _mean(c.score for c in runs if c.counted)


def _same(base: list[TaskScore], head: list[TaskScore]) -> bool:
    """One task run a side with the same criteria, statuses and scores (most tasks)."""
    if len(base) != 1 or len(head) != 1:
        return False
    left, right = base[0].criterion_runs, head[0].criterion_runs
    return len(left) == len(right) and all(
        a.criterion_id == b.criterion_id and a.status is b.status and a.score == b.score
        for a, b in zip(left, right, strict=True)
    )


def _criteria(base: list[TaskScore], head: list[TaskScore]) -> list[CriterionDelta]:
    if _same(base, head):
        return []
    sides: dict[str, tuple[list[CriterionScore], list[CriterionScore]]] = {}
    for index, task_runs in enumerate((base, head)):
        for task_run in task_runs:
            for c in task_run.criterion_runs:
                sides.setdefault(c.criterion_id, ([], []))[index].append(c)
    out = []
    for criterion_id, (left, right) in sides.items():
        b_status, b_score = _criterion_side(left) if left else (None, None)
        h_status, h_score = _criterion_side(right) if right else (None, None)
        delta = h_score - b_score if h_score is not None and b_score is not None else None
        worse = b_status is Status.PASSED and h_status in COUNTED and h_status is not b_status
        better = h_status is Status.PASSED and b_status in COUNTED and h_status is not b_status
        change = _change(delta, worse, better, b_status, h_status)
        if change != "unchanged" or b_status != h_status:
            out.append(
                CriterionDelta(
                    criterion_id=criterion_id,
                    change=change,
                    base_status=b_status,
                    head_status=h_status,
                    base_score=b_score,
                    head_score=h_score,
                    delta=delta,
                )
            )
    return out


def _task_side(runs: list[TaskScore]) -> tuple[float | None, Verdict | None]:
    if len(runs) == 1:
        run = runs[0]
        return (run.score, run.verdict) if run.status is TaskStatus.COMPLETED else (None, None)
    completed = [t for t in runs if t.status is TaskStatus.COMPLETED]
    return _mean(t.score for t in completed), _worst(t.verdict for t in completed)


_ORDER: dict[str, int] = {
    "regression": 0,
    "improvement": 1,
    "unscored": 2,
    "removed": 3,
    "added": 4,
    "unchanged": 5,
}


def _status(runs: list[TaskScore]) -> TaskStatus | Literal["mixed"] | None:
    if len(runs) == 1:
        return runs[0].status
    statuses = {t.status for t in runs}
    return statuses.pop() if len(statuses) == 1 else "mixed" if statuses else None


def _tasks(base: BenchmarkRunScores, head: BenchmarkRunScores) -> list[TaskDelta]:
    sides: dict[str, tuple[list[TaskScore], list[TaskScore]]] = {}
    for index, run in enumerate((base, head)):
        for task_run in run.task_runs:
            sides.setdefault(task_run.task_key, ([], []))[index].append(task_run)
    out = []
    for key, (left, right) in sides.items():
        b_score, b_verdict = _task_side(left)
        h_score, h_verdict = _task_side(right)
        delta = h_score - b_score if h_score is not None and b_score is not None else None
        worse = better = False
        if b_verdict is not None and h_verdict is not None:
            worse = VERDICT_RANK[h_verdict] < VERDICT_RANK[b_verdict]
            better = VERDICT_RANK[h_verdict] > VERDICT_RANK[b_verdict]
        change = _change(delta, worse, better, left or None, right or None)
        if change == "unchanged" and (b_score is None) != (h_score is None):
            change = "unscored"
        out.append(
            TaskDelta(
                task_key=key,
                change=change,
                verdict_worse=worse,
                base_task_runs=[t.id for t in left],
                head_task_runs=[t.id for t in right],
                base_status=_status(left),
                head_status=_status(right),
                base_score=b_score,
                head_score=h_score,
                delta=delta,
                base_verdict=b_verdict,
                head_verdict=h_verdict,
                criteria=_criteria(left, right),
            )
        )
    # stable: regressions (largest drop first), improvements, one side only, unchanged
    # regressions largest drop first, improvements largest gain first
    return sorted(out, key=lambda t: (_ORDER[t.change], -abs(t.delta or 0.0)))


def compare_runs(
    base: BenchmarkRunScores, head: BenchmarkRunScores, tolerance: float
) -> BenchmarkRunDelta:
    """BASE's benchmark run against HEAD's: run score, interval, tasks and criteria."""
    tasks = _tasks(base, head)
    diffs = [t.delta for t in tasks if t.delta is not None]
    delta = head.score - base.score if head.score is not None and base.score is not None else None
    dropped = (delta is not None and delta < -tolerance - EPSILON) or (
        base.score is not None and head.score is None
    )
    worse = [t.task_key for t in tasks if t.verdict_worse]
    notes = [
        f"{side} benchmark run {run.id} is {run.status.value}"
        for side, run in (("base", base), ("head", head))
        if run.status.value != "completed"
    ]
    if base.score is not None and head.score is None:
        notes.append(f"head benchmark run {head.id} has no run score")
    unverified = head.verification == "incomplete"
    if unverified:
        notes.append(
            f"head benchmark run {head.id}: verification incomplete (criteria the verifier "
            "could not evaluate; their task runs are left out of its score)"
        )
    return BenchmarkRunDelta(
        benchmark=base.benchmark.ref,
        file=base.benchmark.file,
        base=base.id,
        head=head.id,
        base_runs=list(_labels(base)),
        head_runs=list(_labels(head)),
        base_name=run_name(base.runs),
        head_name=run_name(head.runs),
        base_score=base.score,
        head_score=head.score,
        delta=delta,
        base_verdict=base.verdict,
        head_verdict=head.verdict,
        interval=paired_bootstrap(diffs) if diffs else None,
        score_dropped=dropped,
        worse_verdicts=worse,
        unverified=unverified,
        regression=dropped or bool(worse) or unverified,
        notes=notes,
        tasks=tasks,
    )


def compare_reports(
    base: Report | ReportScores,
    head: Report | ReportScores,
    tolerance: float = 0.0,
    names: tuple[str, str] = ("", ""),
) -> Comparison:
    """The comparison of two reports (or their scores); ``names`` are their paths, as given."""
    base, head = (r if isinstance(r, ReportScores) else ReportScores.of(r) for r in (base, head))
    pairs, unpaired = pair_runs(base, head)
    deltas = [compare_runs(b, h, tolerance) for b, h in pairs]
    deltas.sort(key=lambda d: (not d.regression, d.delta if d.delta is not None else 0.0))
    regression = any(d.regression for d in deltas)
    # A gate that compared nothing must not pass: no run paired (another benchmark, a renamed
    # folder, an ambiguous pair), or paired runs with no score on both sides.
    compared = any(d.delta is not None or d.interval is not None for d in deltas)
    return Comparison(
        base=names[0],
        head=names[1],
        tolerance=tolerance,
        regression=regression,
        exit_status=1 if regression else 0 if compared else EXIT_NOTHING_COMPARED,
        benchmark_runs=deltas,
        unpaired=unpaired,
    )


__all__ = [
    "COMPARISON_SCHEMA_ID",
    "RESAMPLES",
    "SEED",
    "BenchmarkRunDelta",
    "Comparison",
    "CriterionDelta",
    "Interval",
    "TaskDelta",
    "Unpaired",
    "compare_reports",
    "paired_bootstrap",
    "pair_runs",
]
