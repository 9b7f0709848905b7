"""The plain criterion record: what one criterion scored, as the session's hot path keeps it.

A pytest session scores thousands of criteria; each used to become a validated 28-field pydantic
:class:`~pytest_verial._results.CriterionRun`, dumped again for its journal line and kept typed
to the end (issue 33: 5.8 KB and a third of the CPU per criterion). A :class:`CriterionRecord`
is a slotted object holding the same fields as plain JSON values (evidence already in the JSON
form of its check's model: the engine normalizes it, :func:`pytest_verial._engine.run_criterion`).
Its :meth:`~CriterionRecord.to_json` is exactly ``CriterionRun.to_json()`` of the same run
(same keys in the same order, same values); the typed run is built only where a writer or a
reader needs it (``CriterionRun.from_json(record.to_json())``: the report at session end,
``verify_task``, a failing item's expected / actual rows).

The statuses live here (re-exported by :mod:`pytest_verial._results`) so that scoring a
criterion imports no pydantic model: ``pytest --co`` loads none of them.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Protocol


class JsonForm(Protocol):
    """Anything with the criterion run's JSON form: a record, or a typed ``CriterionRun``."""

    def to_json(self) -> dict[str, Any]: ...


class Status(StrEnum):
    """What happened to one criterion run."""

    PASSED = "passed"
    FAILED = "failed"
    #: the criterion could not be scored (bad data, an unusable source, a crashed worker)
    ERROR = "error"
    #: a judge criterion not asked because a deterministic criterion of its task failed
    GATED = "gated"
    #: not verified on purpose (``skip_verification``, a cheap task's bypass)
    SKIPPED = "skipped"
    #: left out of this session by ``-k``, ``-m`` or node ids
    DESELECTED = "deselected"
    #: selected but never run (the session was interrupted, or is still running)
    NOT_RUN = "not_run"


#: statuses whose score counts in the task's weighted mean
COUNTED = frozenset({Status.PASSED, Status.FAILED, Status.ERROR, Status.GATED})
#: statuses whose score does not count: not verified, left out, never run (JUnit's skipped)
UNCOUNTED = frozenset(Status) - COUNTED
#: counted statuses that did not pass: listed as failing, and they close the judge's gate
FAILING = COUNTED - {Status.PASSED}


def counts_against(
    status: str, points: int | None, met: bool | None, not_evaluated: str | None = None
) -> bool:
    """Whether a criterion run counts against its task (listed as failing): failed, error or
    gated, or a penalty applied. A penalty whose behaviour was absent (its check failed) is the
    good outcome and is not listed, and neither is a criterion the verifier could not evaluate
    (``not_evaluated``: not the agent's doing). Takes the JSON form's fields, so JUnit reads it
    too."""
    if not_evaluated is not None:
        return False
    penalty = points is not None and points < 0
    if penalty and status == Status.FAILED:
        return False
    return status in FAILING or bool(penalty and met)


#: the JSON form's keys in ``CriterionRun``'s field order (``assertion`` is written ``assert``)
FIELDS = (
    "criterion_id",
    "label",
    "assertion",
    "axis",
    "weight",
    "points",
    "met",
    "critical",
    "judge",
    "task_key",
    "task_id",
    "entity",
    "pass_threshold",
    "passed",
    "score",
    "status",
    "not_evaluated",
    "details",
    "evidence",
    "started_at",
    "completed_at",
    "duration",
    "line",
    "nodeid",
    "task_run",
    "file",
    "benchmark",
    "run",
    "outcome",
)
KEYS = tuple("assert" if name == "assertion" else name for name in FIELDS)
_FLOATS = frozenset({"weight", "pass_threshold", "score", "duration"})
_INTS = frozenset({"points", "line"})
_TEXTS = frozenset(
    {
        "label", "assertion", "axis", "task_key", "task_id", "entity", "not_evaluated",
        "details", "started_at", "completed_at", "nodeid", "task_run", "file", "benchmark",
        "run", "outcome",
    }
)  # fmt: skip
#: strings many records share: one copy each (a 100,000-criterion session keeps them all)
_SHARED = frozenset(
    {
        "label", "assertion", "axis", "task_key", "task_id", "entity", "task_run", "file",
        "benchmark", "run", "outcome",
    }
)  # fmt: skip
_STATUSES = {s.value: s for s in Status}
#: how :class:`CriterionRecord` checks a field's value (compared by identity)
_PLAIN, _TEXT, _SHARED_TEXT, _FLOAT, _INT = "plain", "text", "shared text", "float", "int"


def _number(name: str, value: Any) -> float:
    """A float field as the typed run held it: an int becomes a float, anything else that is
    not a number is refused (a non-finite value is kept, as the typed run kept it; the
    journal and the report refuse it when they write)."""
    if type(value) is float:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"criterion run field {name}: {value!r} is not a number")
    return float(value)


def _text(name: str, value: Any) -> str:
    """A string field's value (a str subclass as its plain str); anything else refused."""
    if not isinstance(value, str):
        raise ValueError(f"criterion run field {name}: {value!r} is not a string")
    return str(value)


class CriterionRecord:
    """One criterion run as plain JSON values (see the module's docstring)."""

    __slots__ = FIELDS

    criterion_id: str
    label: str | None
    assertion: str | None
    axis: str | None
    weight: float
    points: int | None
    met: bool | None
    critical: bool
    judge: bool
    task_key: str | None
    task_id: str | None
    entity: str | None
    pass_threshold: float | None
    passed: bool
    score: float | None
    status: Status
    not_evaluated: str | None
    details: str | None
    evidence: dict[str, Any] | None
    started_at: str | None
    completed_at: str | None
    duration: float | None
    line: int | None
    nodeid: str | None
    task_run: str | None
    file: str | None
    benchmark: str | None
    run: str | None
    outcome: str | None

    def __init__(self, fields: Mapping[str, Any]) -> None:
        """From a mapping by field name or report key (``assert``); checked as it is set:
        a value of the wrong type raises ``ValueError`` naming the field."""
        get = fields.get
        for name, kind, put in _SETTERS:  # one branch per field: the engine makes one per item
            value = get(name)
            if value is None:
                if name == "assertion":
                    value = get("assert")
            elif kind is _PLAIN:
                pass
            elif kind is _SHARED_TEXT:
                value = sys.intern(value if type(value) is str else _text(name, value))
            elif kind is _TEXT:
                if type(value) is not str:
                    value = _text(name, value)
            elif kind is _FLOAT:
                if type(value) is not float:
                    value = _number(name, value)
            elif type(value) is not int and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"criterion run field {name}: {value!r} is not an integer")
            put(self, value)
        if not isinstance(self.criterion_id, str):
            raise ValueError(f"criterion run field criterion_id: {self.criterion_id!r}")
        status = _STATUSES.get(get("status"))  # type: ignore[arg-type]
        if status is None:
            raise ValueError(f"criterion run field status: {get('status')!r} is not a status")
        self.status = status
        if self.weight is None:
            self.weight = 1.0
        self.critical, self.judge, self.passed = (
            bool(self.critical),
            bool(self.judge),
            bool(self.passed),
        )
        evidence = self.evidence
        if evidence is not None and not isinstance(evidence, dict):
            raise ValueError(f"criterion run field evidence: {evidence!r} is not an object")
        # ``met`` follows from the status, as CriterionRun's validator sets it
        self.met = self.passed if self.points is not None and self.counted else None

    # -- constructors, one per case (CriterionRun's) -------------------------------------------
    @classmethod
    def scored(
        cls, identity: Mapping[str, Any], score: float, passed: bool, **result: Any
    ) -> CriterionRecord:
        """A check ran: its score in [0, 1] and whether it reached its threshold."""
        status = Status.PASSED if passed else Status.FAILED
        value = 0.0 if math.isnan(score) else min(1.0, max(0.0, score))
        return cls({**identity, "score": value, "passed": passed, "status": status, **result})

    @classmethod
    def errored(cls, identity: Mapping[str, Any], details: str, **result: Any) -> CriterionRecord:
        """The criterion could not be scored: score 0, counted in the task's mean."""
        result.setdefault("evidence", {})
        fields = {**identity, "score": 0.0, "passed": False, "status": Status.ERROR}
        return cls({**fields, "details": details, **result})

    @classmethod
    def unverified(
        cls, identity: Mapping[str, Any], reason: str, details: str, **result: Any
    ) -> CriterionRecord:
        """The verifier could not evaluate the criterion: an error left out of the mean."""
        result.setdefault("evidence", {})
        fields = {**identity, "score": None, "passed": False, "status": Status.ERROR}
        return cls({**fields, "not_evaluated": reason, "details": details, **result})

    @classmethod
    def gated(cls, identity: Mapping[str, Any], details: str, **result: Any) -> CriterionRecord:
        """A judge criterion not asked: a deterministic criterion of its task failed."""
        fields = {**identity, "score": 0.0, "passed": False, "status": Status.GATED}
        return cls({**fields, "details": details, **result})

    @classmethod
    def skipped(cls, identity: Mapping[str, Any], details: str, **result: Any) -> CriterionRecord:
        """Not verified on purpose; left out of the task's mean."""
        fields = {**identity, "score": 0.0, "passed": False, "status": Status.SKIPPED}
        return cls({**fields, "details": details, **result})

    @classmethod
    def deselected(cls, identity: Mapping[str, Any]) -> CriterionRecord:
        """Left out of the session (``-k``, ``-m``, node ids)."""
        return cls({**identity, "status": Status.DESELECTED})

    @classmethod
    def not_run(cls, identity: Mapping[str, Any]) -> CriterionRecord:
        """Selected and never run (interrupted, crashed or still running)."""
        return cls({**identity, "status": Status.NOT_RUN})

    # -- the one JSON form ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Exactly ``CriterionRun.to_json()`` of this run (a new dict; evidence shared)."""
        data = {key: getattr(self, name) for key, name in zip(KEYS, FIELDS, strict=True)}
        data["status"] = self.status.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CriterionRecord:
        """Back from :meth:`to_json` (an xdist worker's report)."""
        return cls(data)

    @classmethod
    def of(cls, run: JsonForm) -> CriterionRecord:
        """A record of ``run`` (a typed run read from a report: ``--verial-resume``)."""
        return run if isinstance(run, CriterionRecord) else cls(run.to_json())

    def __getitem__(self, key: str) -> Any:
        """A field by its report key (``run["assert"]``), as in the JSON form."""
        return self.to_json()[key]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CriterionRecord):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CriterionRecord({self.nodeid or self.criterion_id!r}, {self.status.value})"

    @property
    def counted(self) -> bool:
        """Whether the score counts in the task's weighted mean."""
        return self.status in COUNTED and self.not_evaluated is None

    @property
    def against(self) -> bool:
        """Whether this run counts against its task (:func:`counts_against`)."""
        return counts_against(self.status, self.points, self.met, self.not_evaluated)

    @property
    def penalty_applied(self) -> bool:
        """A penalty criterion (negative points) that was met."""
        return bool(self.met) and (self.points or 0) < 0

    @property
    def critical_failure(self) -> bool:
        """A critical criterion that ran (or should have) and did not pass."""
        return self.critical and self.counted and not self.passed


def _kind(name: str) -> str:
    if name in _SHARED:
        return _SHARED_TEXT
    if name in _TEXTS:
        return _TEXT
    if name in _FLOATS:
        return _FLOAT
    if name in _INTS:
        return _INT
    return _PLAIN


#: each field's name, how its value is checked, and its slot's setter
_SETTERS = tuple((name, _kind(name), getattr(CriterionRecord, name).__set__) for name in FIELDS)
