"""The scores of a report, and the one check of a report's consistency that every reader runs.

``verial compare`` reads two reports of up to 60,000 task runs each and needs only their
scores: :class:`ReportScores` is that view (ids, statuses, scores, verdicts; no evidence), read
one task run at a time from the line-per-task-run layout the writer emits
(:func:`._json_report.report_text`), so that its memory stays a fraction of the files' size.

:func:`check_scores` is what a valid report is beyond its types, for every reader (compare,
show, report, html, merge, resume, import, the service): every score and threshold a number in
[0, 1], ``passed`` agreeing with the status and the threshold, no benchmark run, task run or
criterion run twice. Its errors are one line naming the file and the JSON path.

:func:`~._agreement.check_agreement` is what a seal cannot prove (issue 31): that a report's
figures are the ones its criterion runs give. The views carry what it needs: each criterion
run's weight, axis, points and critical flag, each task and benchmark run's stated figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .._heap import no_gc
from .._results import Status
from .._scoring import passed
from ._agreement import Given, Memo, check_agreement, check_task
from ._reading import read_bytes, read_report
from ._score_views import (
    BenchmarkRunScores,
    CriterionScore,
    ReportScores,
    TaskScore,
)
from ._seal import check


# -- the check ----------------------------------------------------------------------------------
def _number(value: float | None, where: str, name: str) -> str | None:
    if value is None or (math.isfinite(value) and 0.0 <= value <= 1.0):
        return None
    return f"{where}: {name} {value!r} is not a number in [0, 1]"


def _plain(crit: CriterionScore, seen: set[str]) -> bool:
    """True when a criterion run has none of the problems :func:`_problems` looks for."""
    score, threshold = crit.score, crit.pass_threshold
    return (
        crit.criterion_id not in seen
        and (score is None or 0.0 <= score <= 1.0)  # NaN fails both comparisons
        and (threshold is None or 0.0 <= threshold <= 1.0)
        and crit.passed == (crit.status is Status.PASSED)
        and not (
            crit.passed
            and score is not None
            and threshold is not None
            and not passed(score, threshold)
        )
    )


def _problems(scores: ReportScores) -> Iterator[str]:
    runs: set[str] = set()
    for r, run in enumerate(scores.benchmark_runs):
        task_ids: set[str] = set()
        at = f"benchmark_runs[{r}]"
        if run.id in runs:
            yield f"{at}: benchmark run {run.id} is in the report twice"
        runs.add(run.id)
        yield from filter(None, (_number(run.score, at, "score"),))
        yield from filter(None, (_number(run.pass_threshold, at, "pass_threshold"),))
        keys: set[tuple[str, str]] = set()
        for t, task in enumerate(run.task_runs):
            where = f"{at}.task_runs[{t}] (task {task.task_key})"
            if task.id in task_ids:
                yield f"{where}: task run {task.id} is in {run.id} twice"
            task_ids.add(task.id)
            if (task.task_key, task.run) in keys:
                yield f"{where}: task {task.task_key} of run {task.run} is in {run.id} twice"
            keys.add((task.task_key, task.run))
            for name, value in (("score", task.score), ("pass_threshold", task.pass_threshold)):
                yield from filter(None, (_number(value, where, name),))
            criteria: set[str] = set()
            for c, crit in enumerate(task.criterion_runs):
                if _plain(crit, criteria):  # the common case, checked without building text
                    criteria.add(crit.criterion_id)
                    continue
                here = f"{at}.task_runs[{t}].criterion_runs[{c}] (criterion {crit.criterion_id})"
                if crit.criterion_id in criteria:
                    yield f"{here}: criterion {crit.criterion_id} is in task run {task.id} twice"
                criteria.add(crit.criterion_id)
                for name, value in (
                    ("score", crit.score),
                    ("pass_threshold", crit.pass_threshold),
                ):
                    yield from filter(None, (_number(value, here, name),))
                if crit.passed != (crit.status is Status.PASSED):
                    yield (
                        f"{here}: passed is {str(crit.passed).lower()} "
                        f"but status is {crit.status.value}"
                    )
                elif (
                    crit.passed
                    and crit.score is not None
                    and crit.pass_threshold is not None
                    and not passed(crit.score, crit.pass_threshold)
                ):
                    yield (
                        f"{here}: passed with score {crit.score:g} under its pass_threshold "
                        f"{crit.pass_threshold:g}"
                    )


def check_scores(scores: ReportScores, path: str | Path) -> None:
    """ValueError, one line naming ``path`` and the JSON path, for the first inconsistency."""
    for problem in _problems(scores):
        raise ValueError(f"{path}: not a valid pytest-verial report: {problem}")


# -- reading ----------------------------------------------------------------------------------
def _validation_line(exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else str(error["msg"])


def _by_lines(
    data: bytes, path: str | Path, memo: Memo, given: list[list[Given]]
) -> ReportScores | None:
    """The scores read one task run per line, or None when ``data`` is not in that layout
    (written by hand, pretty-printed): the caller then reads the file whole. Each task run's
    figures are checked as it is read (:func:`._agreement.check_task`: a ValueError naming
    ``path``), and then dropped, so the views stay small: ``given`` receives what each
    benchmark run's task runs give."""
    skeleton: list[bytes] = []
    blocks: list[list[TaskScore]] = []
    tasks: list[TaskScore] | None = None
    pos = 0
    size = len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        end = size if end < 0 else end
        line = data[pos:end]
        pos = end + 1
        if tasks is not None and line.startswith(b"{"):
            try:
                task = TaskScore.model_validate_json(line.removesuffix(b","))
            except ValidationError:
                return None
            where = f"benchmark_runs[{len(blocks)}].task_runs[{len(tasks)}]"
            if len(given) == len(blocks):
                given.append([])
            given[-1].append(check_task(task, where, memo, path))
            task.checked()
            tasks.append(task)
            continue
        if tasks is not None:
            if not line.startswith(b"]"):
                return None
            skeleton.append(str(len(blocks)).encode())
            blocks.append(tasks)
            tasks = None
        if line.endswith(b"["):  # the writer breaks lines only around task runs
            tasks = []
        skeleton.append(line)
    if tasks is not None or not blocks:
        return None
    try:
        outline: dict[str, Any] = json.loads(b"".join(skeleton))
        runs = outline["benchmark_runs"]
        for run in runs:
            (index,) = run["task_runs"]
            run["task_runs"] = blocks[index]
            blocks[index] = []  # each block once
        return ReportScores.model_validate(outline)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def load_scores(path: str | Path) -> ReportScores:
    """The scores of a report file, checked (:func:`check_scores`); ValueError in one line."""
    data = read_bytes(path)
    problem = check(data, False)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    memo: Memo = {}
    given: list[list[Given]] = []
    with no_gc():  # every task run's view stays alive: collections would walk them again
        scores = _by_lines(data, path, memo, given)
    if scores is None:  # not in the writer's layout: read whole, with read_report's errors
        try:
            scores = ReportScores.model_validate(read_report(path, data))
        except ValidationError as exc:
            raise ValueError(
                f"{path}: not a valid pytest-verial report: {_validation_line(exc)}"
            ) from None
        given = []  # read whole: checked below
    check_scores(scores, path)
    with no_gc():
        check_agreement(scores, path, memo, given)
    return scores


__all__ = [
    "BenchmarkRunScores",
    "CriterionScore",
    "ReportScores",
    "TaskScore",
    "check_scores",
    "load_scores",
]
