"""Exceptions raised by pytest-verial.

The tree is small on purpose::

    VerialError                 base of everything below
    ├── BenchmarkFileError      a benchmark file cannot be loaded (carries each BenchmarkProblem)
    ├── RunConfigError          run.yaml or a live-source setting is unusable
    ├── UsageError              a bad combination of options (judge == executor model, ...)
    └── CriterionError          one criterion cannot be scored; score 0, shown as a failure
        ├── SourceError         a data source cannot be read (file corrupt, server down, ...)
        ├── CheckError          the assertion cannot be evaluated (bad path, bad regex, ...)
        └── NotEvaluatedError   the verifier itself could not evaluate it (its judge absent,
                                unreachable, slow, unparseable): no score, not the agent's doing

A ``CriterionError`` is a *result*, not a crash: the item fails with the message, the criterion
run is recorded with status ``error`` and score 0, and every other criterion still runs. A
``NotEvaluatedError`` is recorded with status ``error``, ``not_evaluated`` its reason and no
score: it leaves the task's mean, and the task run says its verification is incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._display import escape


class VerialError(Exception):
    """Base class of all pytest-verial errors."""


@dataclass(frozen=True)
class BenchmarkProblem:
    """One thing wrong with a benchmark file, located as precisely as we can (not an RFC 9457
    problem: the service's is ``service._http.Problem``)."""

    file: str
    message: str
    line: int | None = None
    task: str | None = None
    criterion: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        parts = []
        if self.task is not None:
            parts.append(f"task {self.task!r}")
        if self.criterion is not None:
            parts.append(f"criterion {self.criterion!r}")
        if self.field:
            parts.append(f"field {self.field!r}")
        scope = ", ".join(parts)
        # One line, whatever the file name or a quoted value holds (pytest_verial._display).
        return escape(f"{where}: {scope + ': ' if scope else ''}{self.message}")


class BenchmarkFileError(VerialError):
    """A benchmark file has one or more problems; all of them are listed."""

    def __init__(self, problems: list[BenchmarkProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class RunConfigError(VerialError):
    """The run directory's ``run.yaml`` (or a source setting) is unusable."""


class UsageError(VerialError):
    """Options that cannot work together; reported before anything runs."""


class CriterionError(VerialError):
    """A criterion cannot be scored. Recorded as an error with score 0."""


class SourceError(CriterionError):
    """A data source exists but cannot be read, or a live source is unreachable."""


class CheckError(CriterionError):
    """The assertion itself cannot be evaluated against the data (bad regex, bad path...)."""


class NotEvaluatedError(CriterionError):
    """The verifier could not evaluate the criterion: its judge is not configured, unreachable,
    timed out or answered unparseably (after its retries). ``reason`` is short and names no URL,
    path, key or setting (it reaches the agent's coordinator); the message may say more."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message or reason)
        self.reason = reason
