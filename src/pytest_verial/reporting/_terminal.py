"""Terminal output: failing criteria as prose with expected/actual rows, and the summary table."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from .._display import escape
from .._evidence import Evidence
from .._names import UNSUPPORTED, axis_name, run_name
from .._nodeids import criterion_nodeid, parse
from .._not_evaluated import advice
from .._results import (
    AxisScore,
    BenchmarkRun,
    CriterionRun,
    Report,
    Status,
    TaskRun,
    TaskStatus,
)
from .._secrets import redact
from ._elide import elide


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = repr(value) if isinstance(value, str) else text
    return text if len(text) <= width else text[: width - 3] + "..."


def _rows(evidence: Evidence | None) -> list[str]:
    """The expected / actual rows (``fieldResults``, ``field_results`` or
    ``assertionResults``, by check type) and the ``phraseResults`` of a criterion's evidence."""
    lines: list[str] = []
    if evidence is None:
        return lines
    results = [r.model_dump(mode="json") for r in evidence.rows()]
    if results:
        width = max(len("path"), *(len(str(r.get("path", ""))) for r in results))
        lines.append(f"    {'path':<{width}}  {'expected':<30}  {'actual':<30}")
        for r in results:
            lines.append(
                f"    {str(r.get('path')):<{width}}  {_expected(r):<30}"
                f"  {_short(r.get('actual'), 30):<30}  {'ok' if r.get('passed') else 'FAIL'}"
            )
    for phrase in evidence.phrases():
        expected = phrase.expected if isinstance(phrase.expected, str) else "present"
        ok = phrase.passed if isinstance(phrase.passed, bool) else phrase.found
        where = f"turn {phrase.turn}" if phrase.turn is not None else "not found"
        lines.append(
            f"    {expected:<8} {_short(phrase.phrase, 40):<42} {where:<10} "
            f"{'ok' if ok else 'FAIL'}"
        )
    return lines


def _expected(row: Mapping[str, Any]) -> str:
    """The expected column: the value with its ``op`` and quantifier (``exists`` has none)."""
    op = row.get("op") or ""
    how = " ".join(word for word in (op, "all" if row.get("quantifier") == "all" else "") if word)
    if op in ("exists", "absent"):
        return f"({how})"
    suffix = f" ({how})" if how else ""
    return _short(row.get("expected"), 30 - len(suffix)) + suffix


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 criterion``, ``2 criteria``; ``0 errors``."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def describe_failure(run: CriterionRun, scored: bool) -> str:
    """A failing criterion as a sentence, plus expected/actual rows unless the run is scored."""
    if run.points is None:
        worth = f"weight {run.weight}"
    else:
        worth = f"points {run.points:+d}" + (" (penalty applied)" if run.penalty_applied else "")
    what = (
        f"criterion {run.criterion_id!r} ({run.assertion}) {run.status}: "
        f"score {run.score or 0.0:.2f}, {worth}" + (f", axis {run.axis}" if run.axis else "")
    )
    if run.not_evaluated is not None:  # no rubric in it: shown in scored runs too
        what = (
            f"criterion {run.criterion_id!r} ({run.assertion}) not evaluated: "
            f"{run.not_evaluated} (the verifier's failure, not the agent's: left out of the "
            f"score, {worth})"
        )
        return escape(redact(what))
    if scored:
        return escape(redact(what)) + "\n  (details withheld: scored run; see the JSON report)"
    lines = [what, f"  {run.details or ''}".rstrip()]
    lines.extend(_rows(run.evidence))
    # Secrets masked in the raw text first, then each line escaped on its own: a value's
    # newline or ESC never reaches the terminal.
    text = redact("\n".join(line.rstrip() for line in lines if line.strip()))
    return "\n".join(escape(line) for line in text.split("\n"))


_KEEP = "\u00a0"  # joins the words of one axis entry: a wrapped line never splits it


def _axis_name(name: str) -> str:
    """An axis as a reader names it (:func:`pytest_verial._names.axis_name`), kept whole
    when a line wraps."""
    return axis_name(name).replace(" ", _KEEP)


def _axes(axes: Mapping[str, AxisScore]) -> str:
    return "  ".join(
        f"{_axis_name(name)}{_KEEP}{v.score:.2f}{_KEEP}"
        + (
            f"(w{v.weight:g})"
            if v.points_possible is None
            else f"({v.points_earned}/{v.points_possible}{_KEEP}pts)"
        )
        for name, v in axes.items()
    )


def _name(task_run: TaskRun) -> str:
    """The task node's name: ``task[entity]``, with ``@run`` when several runs are scored."""
    return parse(task_run.id).task or task_run.id


def _score(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "-"


#: the summary's task table and failing criteria stop at these per benchmark run (``-v``
#: lists every one)
MAX_TASK_ROWS = 50
MAX_FAILING = 20

#: a line of the summary and its colour on a tty (None: the terminal's default)
Line = tuple[str, str | None]
_COLOUR = {"pass": "green", "partial": "yellow", "fail": "red"}


def summary_lines(report: Report, scored: bool = False, **how: Any) -> list[str]:
    """The summary as plain lines (``verial report``); see :func:`summary`."""
    return [text for text, _ in summary(report, scored, **how)]


def summary(
    report: Report,
    scored: bool = False,
    verbosity: int = 0,
    width: int | None = None,
    failures: bool = True,
    cut: bool = True,
) -> list[Line]:
    """A table per benchmark run and its run lines, then the failing criteria, each once.

    ``verbosity`` -1 (``-q``) lists the failing criteria on one line each, -2 (``-qq``) keeps
    only the run lines. ``failures=False`` leaves out the failing criteria's details when
    pytest's FAILURES section already shows them. Lines longer than ``width`` are wrapped; a
    failing criterion's one-line details (``-q``) are cut with ``...`` only when ``cut`` (a
    terminal: a log keeps every word, expected and actual values included); a scored run (or
    ``scored``) shows no details or evidence. Secrets masked.
    """
    report = elide(report, scored)
    rows: list[tuple[str, str | None, int]] = []
    if not report.benchmark_runs:
        rows.append(("no task runs were scored", None, 2))
    for run in report.benchmark_runs:  # a scored run's details are gone: nothing counted
        rows.extend(_run_lines(run, verbosity, _unsupported(run)))
    if verbosity > -2:
        rows.extend((f"warning: {w}", "yellow", 9) for w in report.session.warnings)
    # wrapped first (an axis entry stays whole), then escaped: names, refs, labels, warnings
    lines = [
        (escape(_fit(text, width, indent), keep="\n"), colour) for text, colour, indent in rows
    ]
    failing = [
        (run, t, c)
        for run in report.benchmark_runs
        for t in run.task_runs
        for c in t.criterion_runs
        if c.against
    ]
    if failing and verbosity > -2:
        lines.extend(_failing(failing, scored, verbosity, width, failures, cut))
    unverified = [
        (t, c)
        for run in report.benchmark_runs
        for t in run.task_runs
        for c in t.criterion_runs
        if c.not_evaluated is not None
    ]
    if unverified:  # apart from the failures: the verifier's, not the agent's
        lines.extend(_not_evaluated(unverified, verbosity, width))
    return [(redact(text), colour) for text, colour in lines]


def _not_evaluated(
    unverified: list[tuple[TaskRun, CriterionRun]], verbosity: int, width: int | None
) -> list[Line]:
    """The criteria the verifier could not evaluate, each with its reason."""
    head = (
        f"{plural(len(unverified), 'criterion', 'criteria')} not evaluated (the verifier "
        "could not check them: not the agent's failure; their task runs' verification is "
        "incomplete):"
    )
    lines: list[Line] = [(_fit(head, width, 2), "yellow")]
    if verbosity <= -2:
        return lines
    shown = unverified if verbosity > 0 else unverified[:MAX_FAILING]
    for t, c in shown:
        text = f"  {criterion_nodeid(_name(t), c.criterion_id)}: {c.not_evaluated}"
        lines.append((_cut(escape(text), width), None))
    if len(shown) < len(unverified):
        lines.append((_more(len(unverified) - len(shown), "criterion", "criteria"), None))
    # what whoever runs pytest can do (never in a report, which may reach the agent)
    hints = {advice(c.not_evaluated or "") for _, c in unverified} - {None}
    lines.extend((_fit(f"  to fix: {hint}", width, 4), None) for hint in sorted(map(str, hints)))
    return lines


def _failing(
    failing: list[tuple[BenchmarkRun, TaskRun, CriterionRun]],
    scored: bool,
    verbosity: int,
    width: int | None,
    failures: bool,
    cut: bool = True,
) -> list[Line]:
    lines: list[Line] = []
    if not failures:
        lines.append(
            (
                f"{plural(len(failing), 'failing criterion', 'failing criteria')}: "
                "details in the FAILURES section above",
                None,
            )
        )
        return lines
    lines.append(("failing criteria:", None))
    per_run: dict[str, int] = {}
    shown = []
    for entry in failing:  # at most MAX_FAILING of each benchmark run, unless -v
        seen = per_run[entry[0].id] = per_run.get(entry[0].id, 0) + 1
        if verbosity > 0 or seen <= MAX_FAILING:
            shown.append(entry)
    for run, t, c in shown:
        where = f" ({c.file}:{c.line})" if c.file and c.line else ""
        head = escape(f"  {criterion_nodeid(_name(t), c.criterion_id)}{where}")
        if verbosity < 0:  # the criterion, where it is defined, and its details cut to fit
            lines.append((_fit(head, width, 4), "red"))
            if not (scored or run.scored):
                details = escape(f"    {c.details or c.status}")
                lines.append((_cut(details, width) if cut else _fit(details, width, 6), None))
            continue
        text = describe_failure(c, scored or run.scored)
        lines.append((head + "\n    " + text.replace("\n", "\n    "), None))
    if len(shown) < len(failing):
        lines.append(
            (_more(len(failing) - len(shown), "failing criterion", "failing criteria"), None)
        )
    return lines


def _more(count: int, noun: str, many: str) -> str:
    """The line that stands for what a capped list left out (as pytest's ``-r`` summary)."""
    return (
        f"  ... and {count} more {noun if count == 1 else many}: every one is in the JSON report "
        "(verial show REPORT; pytest -v lists them here)"
    )


def _fit(text: str, width: int | None, indent: int = 2) -> str:
    """A line wrapped to the terminal's width, continued ``indent`` columns in (table rows:
    under their axes column); no trailing spaces."""
    text = text.rstrip()
    if width and len(text) > width and "\n" not in text:
        body = text.lstrip(" ")
        lead = text[: len(text) - len(body)]  # kept, also before a word longer than the line
        pad = " " * (indent if indent <= width - 24 else 4)
        text = "\n".join(
            textwrap.wrap(
                body,
                width,
                initial_indent=lead,
                subsequent_indent=pad,
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return text.replace(_KEEP, " ")


def _cut(text: str, width: int | None) -> str:
    """One line cut to the terminal's width, at a word boundary where there is one."""
    text = text.rstrip()
    if width and len(text) > width:
        room = max(width - 3, 10)
        space = text.rfind(" ", 0, room + 1)
        end = space if space > room // 2 and text[:space].strip() else room
        return text[:end].rstrip() + "..."
    return text


def _unsupported(run: BenchmarkRun) -> int:
    """Failed criterion runs whose ``assert`` no check knows (a typo, most often): counted
    apart from the agent's failures in the run's counts line."""
    return sum(
        1
        for t in run.task_runs
        for c in t.criterion_runs
        if c.status is Status.FAILED and (c.details or "").startswith(UNSUPPORTED)
    )


#: a line of a benchmark run's block: text, colour, indent of its continuation
RunLine = tuple[str, str | None, int]


def _run_lines(run: BenchmarkRun, verbosity: int, unsupported: int = 0) -> list[RunLine]:
    """A benchmark run's lines: its head, its task table (unless -qq), trials, its figures."""
    head = f"benchmark run {run.benchmark.ref} on {run_name(run.runs)} ({run.benchmark.file})"
    lines: list[RunLine] = [(head, None, 2)]
    if verbosity > -2:
        lines.extend(_task_table(run, verbosity))
    if run.trials is not None:
        whole = run.trials
        lines.append(
            (
                f"trials of the run: k={whole.k} mean {whole.mean:.3f} "
                f"pass^k {'yes' if whole.pass_k else 'no'} "
                f"95% CI [{whole.ci95[0]:.3f}, {whole.ci95[1]:.3f}]",
                None,
                2,
            )
        )
    return lines + _figure_lines(run, unsupported)


def _task_table(run: BenchmarkRun, verbosity: int) -> list[RunLine]:
    """One row per task run (at most :data:`MAX_TASK_ROWS` unless -v), then per-task trials."""
    tasks = run.task_runs
    width = max(len("task"), *(len(_name(t)) for t in tasks))
    axes_at = width + 2 + 6 + 2 + 8 + 2
    lines: list[RunLine] = [
        (f"{'task':<{width}}  {'score':>6}  {'verdict':<8}  axes", None, axes_at)
    ]
    for t in tasks if verbosity > 0 else tasks[:MAX_TASK_ROWS]:
        note = f"  [{t.status}]" if t.status is not TaskStatus.COMPLETED else ""
        if t.verification == "incomplete":
            note += f"  [not verified: {plural(len(t.not_evaluated), 'criterion', 'criteria')}]"
        if t.critical_failed:
            note += f"  [critical failed: {', '.join(t.critical_failed)}]"
        if t.points_earned is not None:
            note += f"  [points {t.points_earned}/{t.points_possible}"
            if t.penalties_applied:
                note += f"; penalties applied: {', '.join(t.penalties_applied)}"
            note += "]"
        lines.append(
            (
                f"{_name(t):<{width}}  {_score(t.score):>6}  {t.verdict or '-':<8}  "
                f"{_axes(t.axes)}{note}",
                _COLOUR.get(t.verdict or ""),
                axes_at,
            )
        )
    if verbosity <= 0 and len(tasks) > MAX_TASK_ROWS:
        left = len(tasks) - MAX_TASK_ROWS
        lines.append((_more(left, "task run", "task runs"), None, 2))
    for trial in run.trials.tasks if run.trials is not None else []:
        lines.append(
            (
                f"trials {trial.task_key}: k={trial.k} mean {trial.mean:.3f} "
                f"pass^k {'yes' if trial.pass_k else 'no'} "
                f"95% CI [{trial.ci95[0]:.3f}, {trial.ci95[1]:.3f}]",
                None,
                2,
            )
        )
    return lines


def _figure_lines(run: BenchmarkRun, unsupported: int) -> list[RunLine]:
    """The run's score and verdict, then its task and criterion counts."""
    c = run.counts
    strict = f", strict success {run.strict_success:.0%}" if run.strict_success is not None else ""
    unverified = (
        f" ({plural(c.unverified, 'task run')} not verified, left out)"
        if run.verification == "incomplete"
        else ""
    )
    extra = "".join(
        f", {n} {word}"
        for n, word in ((c.criteria_gated, "gated"), (c.criteria_skipped, "skipped"))
        if n
    )
    if c.criteria_not_evaluated:
        extra = f" ({c.criteria_not_evaluated} not evaluated){extra}"
    return [
        (
            f"run score {_score(run.score)}, verdict {run.verdict or '-'}{unverified}{strict}, "
            f"status {run.status}",
            _COLOUR.get(run.verdict or ""),
            2,
        ),
        (
            f"  {c.completed} of {plural(c.task_runs, 'task run')} scored "
            f"({c.verdicts.pass_} pass, {c.verdicts.partial} partial, {c.verdicts.fail} fail); "
            f"criteria: {c.criteria_passed} passed, {c.criteria_failed} failed"
            + (f" ({plural(unsupported, 'unsupported assertion')})" if unsupported else "")
            + f", {plural(c.criteria_error, 'error')}{extra}",
            None,
            4,
        ),
    ]
