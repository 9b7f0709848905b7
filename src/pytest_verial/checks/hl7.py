"""``hl7-structural``: fields of the outbound HL7 v2 message(s) the agent sent.

::

    assert: hl7-structural
    correlate_by: {"MSH.9.1": ORU, "MSH.9.2": R01}      # or {trigger_event: A04}, {PID.3.1: MRN1}
    fields:
      - {path: PID.5.1, expected: CHEN}
      - {path: "OBX[*].5", expected: "POS", op: contains, quantifier: all}
    match: latest                                        # extension: first | latest | any | all

``correlate_by`` keys are HL7 paths (:mod:`pytest_verial.hl7.paths`) or the aliases
``trigger_event`` (MSH.9.2), ``message_type`` (MSH.9.1), ``message_structure`` (MSH.9.3) and
``control_id`` (MSH.10). A message matches when every key matches (for a path that yields several
values, e.g. ``OBX[*].3.1``, when any of them equals the expected value; a list as expected
value means "one of").

Several matching messages: ``latest`` (default; by event time, else file order) is scored;
``first`` takes the oldest; ``any`` scores the best one (the latest on ties); ``all`` scores
every one and averages, and its evidence shows the worst. A field whose path has ``[*]``
passes when ``any`` (default) or ``all`` (``quantifier: all``; an empty list fails) of its values
pass. Score = passed fields / fields; no matching message = score 0.
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
from ..hl7.parse import Hl7Message
from ..hl7.paths import Hl7PathError, get, get_all, parse_path
from .base import AssertionSpec, CheckContext, CheckOutcome, CheckSpec

ALIASES = {
    "trigger_event": "MSH.9.2",
    "message_type": "MSH.9.1",
    "message_structure": "MSH.9.3",
    "control_id": "MSH.10",
}


class Hl7Field(FieldSpec):
    """A field assertion on an HL7 path, with a quantifier for ``[*]`` paths."""

    quantifier: Literal["any", "all"] = "any"

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        try:
            parse_path(value)
        except Hl7PathError as exc:
            raise ValueError(str(exc)) from None
        return value


class Hl7Structural(AssertionSpec):
    """The ``hl7-structural`` assertion."""

    kind: Literal["hl7-structural"] = Field(alias="assert")
    correlate_by: dict[str, JsonValue] = Field(default_factory=dict)
    fields: list[Hl7Field] = Field(default_factory=list)
    match: Literal["latest", "first", "any", "all"] = "latest"

    @field_validator("correlate_by")
    @classmethod
    def _valid_keys(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        for key in value:
            try:
                parse_path(ALIASES.get(key, key))
            except Hl7PathError as exc:
                raise ValueError(
                    f"correlate_by key {key!r}: not an HL7 path nor one of "
                    f"{', '.join(ALIASES)} ({exc})"
                ) from None
        return value


def correlates(message: Hl7Message, correlate_by: dict[str, Any]) -> bool:
    """True when every ``correlate_by`` key of ``message`` has its expected value."""
    return all(
        correlation_matches(expected, get_all(message, ALIASES.get(key, key)))
        for key, expected in correlate_by.items()
    )


def field_results(message: Hl7Message, fields: list[Hl7Field]) -> list[dict[str, JsonValue]]:
    """The evidence rows for ``fields`` evaluated on one message."""
    results = []
    for spec in fields:
        path = parse_path(spec.path)
        actual = get(message, path)
        row = field_result(spec, actual)
        if path.multiple:
            values = actual if isinstance(actual, list) else []
            row["passed"] = quantified(spec, values, spec.quantifier)
            row["quantifier"] = spec.quantifier
        elif actual is MISSING:
            row["reason"] = f"no {path.segment} segment #{path.segment_index or 1} in the message"
        results.append(row)
    return results


def _describe(messages: list[Hl7Message]) -> str:
    kinds: dict[str, int] = {}
    for m in messages:
        kinds[m.message_type] = kinds.get(m.message_type, 0) + 1
    return ", ".join(f"{n}x {t}" for t, n in kinds.items()) or "none"


def _message_evidence(message: Hl7Message) -> dict[str, JsonValue]:
    summary: dict[str, JsonValue] = message.summary()
    summary["created_at"] = message.created_at
    return summary


def check(spec: Hl7Structural, ctx: CheckContext) -> CheckOutcome:
    """Score the outbound message(s) matching ``correlate_by``."""
    source = ctx.source("hl7")
    messages: list[Hl7Message] = source.messages()
    rejected = source.rejected()
    candidates = [m for m in messages if correlates(m, spec.correlate_by)]
    warnings: list[str] = list(getattr(source, "warnings", list)())
    base: dict[str, JsonValue] = {"candidates": len(candidates), "rejected": len(rejected)}
    if warnings:  # empty files, bytes outside MLLP frames: ignored, never silently
        base["warnings"] = warnings  # type: ignore[assignment]
    if not candidates:
        wanted = f" matching {spec.correlate_by}" if spec.correlate_by else ""
        details = f"no outbound HL7 message{wanted} ({len(messages)} sent: {_describe(messages)})"
        if rejected:
            details += f"; {len(rejected)} rejected as unparseable: {rejected[-1]['error']}"
        if warnings:
            details += f"; {len(warnings)} warning(s), first: {warnings[0]}"
        return CheckOutcome(0.0, details, {"field_results": [], "message": None, **base})
    if spec.match in ("first", "latest"):  # score only the one message that counts
        index = 0 if spec.match == "first" else len(candidates) - 1
        results = field_results(candidates[index], spec.fields)
        scored = [(fields_score(results), index, results)]
    else:
        scored = [
            (fields_score(r), i, r)
            for i, r in ((i, field_results(m, spec.fields)) for i, m in enumerate(candidates))
        ]
    if spec.match in ("first", "latest"):
        score, index, results = scored[0]
    elif spec.match == "any":
        score, index, results = max(scored, key=lambda s: (s[0], s[1]))
    else:
        worst = min(scored, key=lambda s: (s[0], -s[1]))
        score = sum(s[0] for s in scored) / len(scored)
        index, results = worst[1], worst[2]
        base["messages"] = [
            {"control_id": candidates[i].control_id, "score": round(s, 6)} for s, i, _ in scored
        ]
    message = candidates[index]
    passed = sum(1 for r in results if r["passed"])
    which = {"latest": "latest", "first": "first", "any": "best", "all": "worst"}[spec.match]
    details = (
        f"{message.message_type} {message.control_id!r}: {passed} of {len(results)} fields passed"
    )
    if len(candidates) > 1:
        details += f" ({which} of {len(candidates)} matching messages"
        details += f"; mean {score:.2f})" if spec.match == "all" else ")"
    failed = [r for r in results if not r["passed"]]
    if failed:
        details += "; " + "; ".join(describe_field(r) for r in failed[:5])
    evidence: dict[str, JsonValue] = {
        "field_results": results,  # type: ignore[dict-item]
        "message": _message_evidence(message),
        **base,
    }
    return CheckOutcome(score, details, evidence)


CHECK = CheckSpec(name="hl7-structural", model=Hl7Structural, run=check, sources=("hl7",))
