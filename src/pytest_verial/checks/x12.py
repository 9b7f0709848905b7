"""``x12-response``: element values of an X12 EDI response (271, 277, 278, 835, 999; 005010).

::

    assert: x12-response
    transaction: "271"                         # ST01; "270/271" is read as 271
    correlate_by: {trace_number: 93175-012547} # or member_id, control_number, any X12 path
    fields:
      - {path: EB01, expected: "1"}
      - {path: "EB[EB01=B][EB03=98].EB07", expected: 30}
      - {path: "HL[HL03=22]/NM1[NM101=IL].NM109", expected: W123456789}
    match: latest                              # extension: first | latest | any | all
    envelope: report                           # extension: report | strict
    validate: false                            # extension: pyx12 implementation-guide check

Paths are described in :mod:`pytest_verial.x12.paths` and docs/x12.md. ``correlate_by`` keys are
X12 paths or the aliases ``trace_number`` (any TRN02), ``member_id`` (any NM109),
``control_number`` (ST02), ``group_control_number`` (GS06) and ``interchange_control_number``
(ISA13); a path key matches when *any* segment it selects has the value (a list = one of).

Envelope problems (ISA length, SE/GE/IEA counts, control numbers) are always in the evidence as
``envelope_problems``; with ``envelope: strict`` they make the criterion an error instead.
With ``validate: true`` the transaction's interchange is also validated against its
implementation guide by pyx12 (835, 999; :mod:`pytest_verial.x12.validate`): the result is one
more row of ``field_results`` (path ``(implementation guide)``, expected ``valid``) and a
``validation`` entry in the evidence. Selection among several matches and the score follow
``hl7-structural``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, JsonValue, field_validator

from ..compare import (
    MISSING,
    FieldSpec,
    correlation_matches,
    describe_field,
    field_result,
    fields_score,
    quantified,
)
from ..errors import CheckError
from ..x12.envelope import Transaction
from ..x12.paths import X12PathError, get, get_all, parse_path
from ..x12.validate import validate
from .base import AssertionSpec, CheckContext, CheckOutcome, CheckSpec

ALIASES = {
    "trace_number": "TRN02",
    "member_id": "NM109",
    "control_number": "ST02",
    "group_control_number": "GS06",
    "interchange_control_number": "ISA13",
}


def _valid(path: str) -> str:
    try:
        parse_path(path)
    except X12PathError as exc:
        raise ValueError(str(exc)) from None
    return path


class X12Field(FieldSpec):
    """A field assertion on an X12 path, with a quantifier for ``[*]`` paths."""

    quantifier: Literal["any", "all"] = "any"

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return _valid(value)


class X12Response(AssertionSpec):
    """The ``x12-response`` assertion."""

    kind: Literal["x12-response"] = Field(alias="assert")
    transaction: str | None = None
    correlate_by: dict[str, JsonValue] = Field(default_factory=dict)
    fields: list[X12Field] = Field(default_factory=list)
    match: Literal["latest", "first", "any", "all"] = "latest"
    envelope: Literal["report", "strict"] = "report"
    #: ``validate: true`` in the criterion (a field named ``validate`` would shadow pydantic's)
    validate_ig: bool = Field(default=False, alias="validate")

    @field_validator("transaction", mode="before")
    @classmethod
    def _set_id(cls, value: Any) -> Any:
        if isinstance(value, int):
            value = str(value)
        if isinstance(value, str):
            value = value.strip().split("/")[-1]
            if not (value.isdigit() and len(value) == 3):
                raise ValueError(f"transaction {value!r} is not an X12 set id like 271")
        return value

    @field_validator("correlate_by")
    @classmethod
    def _valid_keys(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        for key in value:
            try:
                parse_path(ALIASES.get(key, key))
            except X12PathError as exc:
                raise ValueError(
                    f"correlate_by key {key!r}: not an X12 path nor one of "
                    f"{', '.join(ALIASES)} ({exc})"
                ) from None
        return value


def correlates(tx: Transaction, correlate_by: dict[str, Any]) -> bool:
    """True when every key of ``correlate_by`` has its expected value somewhere in ``tx``."""
    return all(
        correlation_matches(expected, get_all(tx, ALIASES.get(key, key)))
        for key, expected in correlate_by.items()
    )


def field_results(tx: Transaction, fields: list[X12Field]) -> list[dict[str, JsonValue]]:
    """Evidence rows for ``fields`` evaluated on one transaction."""
    results = []
    for spec in fields:
        path = parse_path(spec.path)
        actual = get(tx, path)
        row = field_result(spec, actual)
        if path.multiple:
            values = actual if isinstance(actual, list) else []
            row["passed"] = quantified(spec, values, spec.quantifier)
            row["quantifier"] = spec.quantifier
        elif actual is MISSING:
            row["reason"] = "no segment selected by the path"
        results.append(row)
    return results


def _transaction_evidence(tx: Transaction) -> dict[str, JsonValue]:
    summary: dict[str, JsonValue] = tx.summary()  # type: ignore[assignment]
    summary["created_at"] = tx.created_at
    return summary


def check(spec: X12Response, ctx: CheckContext) -> CheckOutcome:
    """Score the response transaction(s) matching ``transaction`` and ``correlate_by``."""
    everything: list[Transaction] = ctx.source("x12").transactions()
    typed = [t for t in everything if spec.transaction in (None, t.set_id)]
    candidates = [t for t in typed if correlates(t, spec.correlate_by)]
    if not candidates:
        kinds = ", ".join(sorted({t.set_id for t in everything})) or "none"
        what = f"X12 {spec.transaction or 'transaction'}"
        wanted = f" matching {spec.correlate_by}" if spec.correlate_by else ""
        return CheckOutcome(
            0.0,
            f"no {what}{wanted} ({len(everything)} transactions: {kinds})",
            {"field_results": [], "transaction": None, "candidates": 0},
        )
    if spec.match in ("first", "latest"):  # score only the one message that counts
        index = 0 if spec.match == "first" else len(candidates) - 1
        results = field_results(candidates[index], spec.fields)
        scored = [(fields_score(results), index, results)]
    else:
        scored = [
            (fields_score(r), i, r)
            for i, r in ((i, field_results(t, spec.fields)) for i, t in enumerate(candidates))
        ]
    extra: dict[str, JsonValue] = {}
    if spec.match in ("first", "latest"):
        score, index, results = scored[0]
    elif spec.match == "any":
        score, index, results = max(scored, key=lambda s: (s[0], s[1]))
    else:
        worst = min(scored, key=lambda s: (s[0], -s[1]))
        score, index, results = sum(s[0] for s in scored) / len(scored), worst[1], worst[2]
        extra["transactions"] = [
            {"control_number": candidates[i].control_number, "score": round(s, 6)}
            for s, i, _ in scored
        ]
    tx = candidates[index]
    if tx.problems and spec.envelope == "strict":
        raise CheckError(f"{tx.origin}: envelope problems: " + "; ".join(tx.problems))
    validation = None
    if spec.validate_ig:
        validation = validate(tx.source_text, tx.origin)
        first = validation.errors[0] if validation.errors else ""
        actual = "valid" if validation.valid else f"{len(validation.errors)} error(s): {first}"
        results = [
            *results,
            {
                "path": "(implementation guide)",
                "expected": "valid",
                "actual": actual,
                "passed": validation.valid,
            },
        ]
        score = fields_score(results)
    passed = sum(1 for r in results if r["passed"])
    details = f"X12 {tx.set_id} {tx.control_number!r}: {passed} of {len(results)} fields passed"
    if len(candidates) > 1:
        which = {"latest": "latest", "first": "first", "any": "best", "all": "worst"}[spec.match]
        details += f" ({which} of {len(candidates)} matching transactions)"
    failed = [r for r in results if not r["passed"]]
    if failed:
        details += "; " + "; ".join(describe_field(r) for r in failed[:5])
    if tx.problems:
        details += f"; {len(tx.problems)} envelope problem(s): {tx.problems[0]}"
    evidence: dict[str, JsonValue] = {
        "field_results": results,  # type: ignore[dict-item]
        "transaction": _transaction_evidence(tx),
        "envelope_problems": list(tx.problems),
        "candidates": len(candidates),
        **extra,
    }
    if validation is not None:
        evidence["validation"] = validation.evidence()
    return CheckOutcome(score, details, evidence)


CHECK = CheckSpec(name="x12-response", model=X12Response, run=check, sources=("x12",))
