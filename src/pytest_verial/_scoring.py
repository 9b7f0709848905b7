"""Scoring as pure functions (README, "Scoring"): criteria -> task -> axes -> verdict -> run.

All comparisons with a threshold use a tolerance of 1e-9, so 0.8999999999 passes a 0.9
threshold and a sum of float weights does not flip a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

#: A task run's or a benchmark run's verdict (README, "Scoring"), the one definition.
Verdict = Literal["pass", "partial", "fail"]
#: every verdict, best first
VERDICTS: tuple[Verdict, ...] = get_args(Verdict)

TOLERANCE = 1e-9
DEFAULT_VERDICT_THRESHOLD = 0.9
DEFAULT_CRITERION_THRESHOLD = 1.0
DEFAULT_AXIS = "__default__"


@dataclass(frozen=True)
class Scored:
    """One criterion's contribution: score in [0, 1], weight > 0, axis or None."""

    score: float
    weight: float
    axis: str | None = None


def weighted_mean(items: Sequence[Scored]) -> float:
    """Σ(score·weight) / Σ(weight); 0.0 for no items."""
    total = math.fsum(i.weight for i in items)
    if total <= 0:
        return 0.0
    return clamp(math.fsum(i.score * i.weight for i in items) / total)


def clamp(score: float) -> float:
    """Bound a score to [0, 1] (guards float drift; NaN counts as 0)."""
    if math.isnan(score):
        return 0.0
    return min(1.0, max(0.0, score))


def task_score(items: Sequence[Scored]) -> float:
    """The weighted mean of the task's criterion scores; a task with none scores 0."""
    return weighted_mean(items)


def axes(items: Sequence[Scored]) -> dict[str, dict[str, float]]:
    """Per-axis ``{score, weight}``; criteria without an axis go to ``__default__``."""
    groups: dict[str, list[Scored]] = {}
    for item in items:
        groups.setdefault(item.axis or DEFAULT_AXIS, []).append(item)
    return {
        name: {"score": weighted_mean(group), "weight": math.fsum(i.weight for i in group)}
        for name, group in groups.items()
    }


@dataclass(frozen=True)
class Pointed:
    """One counted criterion of a task scored by points: its points (non-zero, negative for a
    penalty), whether it was met (its check passed) and its axis."""

    points: int
    met: bool
    axis: str | None = None


@dataclass(frozen=True)
class PointsTally:
    """Σ points of the met criteria, Σ positive points, the score and the penalties applied."""

    earned: int
    possible: int
    score: float
    penalties: int


def points_score(items: Sequence[Pointed]) -> PointsTally:
    """HealthBench's rule: clip(Σ points of met criteria / Σ positive points, 0, 1).

    With no positive points (only penalties, or nothing counted) there is nothing to earn:
    the score is 1.0 when no penalty was met and 0.0 when any was (and 0.0 for no items).
    """
    earned = sum(i.points for i in items if i.met)
    possible = sum(i.points for i in items if i.points > 0)
    penalties = sum(1 for i in items if i.met and i.points < 0)
    nothing_to_earn = 0.0 if penalties or not items else 1.0
    score = clamp(earned / possible) if possible > 0 else nothing_to_earn
    return PointsTally(earned, possible, score, penalties)


def points_axes(items: Sequence[Pointed]) -> dict[str, PointsTally]:
    """Per-axis tallies by the same rule; criteria without an axis go to ``__default__``."""
    groups: dict[str, list[Pointed]] = {}
    for item in items:
        groups.setdefault(item.axis or DEFAULT_AXIS, []).append(item)
    return {name: points_score(group) for name, group in groups.items()}


def verdict(
    score: float, threshold: float = DEFAULT_VERDICT_THRESHOLD, has_criteria: bool = True
) -> Verdict:
    """``pass`` at or above the threshold, ``fail`` at 0 or with no criteria, else ``partial``."""
    if not has_criteria or score <= TOLERANCE:
        return "fail"
    if score >= threshold - TOLERANCE:
        return "pass"
    return "partial"


def passed(score: float, threshold: float = DEFAULT_CRITERION_THRESHOLD) -> bool:
    """A criterion passes when its score reaches its threshold (within the tolerance)."""
    return score >= threshold - TOLERANCE


def run_score(task_scores: Iterable[float]) -> float:
    """The benchmark run's score: the unweighted mean of its task scores (0 for none)."""
    scores = list(task_scores)
    return clamp(math.fsum(scores) / len(scores)) if scores else 0.0


def resolve_threshold(*levels: float | None, default: float) -> float:
    """The first threshold given, most specific first (criterion > task > benchmark > CLI)."""
    for level in levels:
        if level is not None:
            return level
    return default


def verdict_threshold(
    task: float | None = None, benchmark: float | None = None, configured: float | None = None
) -> float:
    """The pass threshold of a verdict, the one chain every caller resolves (README, "Scoring"):
    the task's own, else its benchmark's, else the configured one (``--verial-pass-threshold``
    or ``verial_pass_threshold`` under pytest; ``pass_threshold`` in the config of
    :func:`~pytest_verial.verify_task` or of the service), else 0.9. A benchmark run's
    threshold is the same chain without a task; a judge criterion inherits its task's."""
    return resolve_threshold(task, benchmark, configured, default=DEFAULT_VERDICT_THRESHOLD)


def reaches(score: float, threshold: float) -> bool:
    """``score >= threshold`` with the scoring tolerance (for ``--verial-fail-under``)."""
    return score >= threshold - TOLERANCE


@dataclass(frozen=True)
class TrialStats:
    """k trials of one task: mean score, pass^k and a 95 % interval of the mean."""

    k: int
    mean: float
    pass_all: bool
    pass_rate: float
    ci_low: float
    ci_high: float


def trial_stats(scores: Sequence[float], verdicts: Sequence[str]) -> TrialStats:
    """Mean, pass^k (every trial passed), pass rate and a normal 95 % CI clipped to [0, 1]."""
    k = len(scores)
    if k == 0:
        return TrialStats(0, 0.0, False, 0.0, 0.0, 0.0)
    mean = math.fsum(scores) / k
    if k > 1:
        var = math.fsum((s - mean) ** 2 for s in scores) / (k - 1)
        half = 1.96 * math.sqrt(var / k)
    else:
        half = 0.0
    passes = sum(1 for v in verdicts if v == "pass")
    return TrialStats(
        k, clamp(mean), passes == k, passes / k, clamp(mean - half), clamp(mean + half)
    )
