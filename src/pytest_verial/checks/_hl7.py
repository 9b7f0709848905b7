"""``hl7-structural``: fields of the outbound HL7 v2 message(s) the agent sent.

::

    assert: hl7-structural
    correlate_by: {"MSH.9.1": ORU, "MSH.9.2": R01}      # or {trigger_event: A04}, {PID.3.1: MRN1}
    fields:
      - {path: PID.5.1, expected: CHEN}
      - {path: "OBX[*].5", expected: "POS", op: contains, quantifier: all}
    match: latest                                        # extension: first | latest | any | all

``correlate_by`` keys are HL7 paths (:mod:`pytest_verial.hl7._paths`) or the aliases
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

from typing import Literal

from pydantic import Field, JsonValue

from .._contracts.check import CheckContext, CheckOutcome, CheckSpec
from ..hl7._parse import Hl7Message
from ..hl7._paths import Hl7Path, Hl7PathError, get, get_all, parse_path
from ._messages import Match, MessageAssertion, PathField, PathSyntax, no_match

ALIASES = {
    "trigger_event": "MSH.9.2",
    "message_type": "MSH.9.1",
    "message_structure": "MSH.9.3",
    "control_id": "MSH.10",
}


def _missing(path: Hl7Path) -> str:
    return f"no {path.segment} segment #{path.segment_index or 1} in the message"


HL7: PathSyntax[Hl7Message] = PathSyntax(
    "HL7",
    ALIASES,
    parse_path,
    Hl7PathError,
    get,
    get_all,
    _missing,
    noun="message",
    id_key="control_id",
    ident=lambda m: m.control_id,
    rows="field_results",
)


class Hl7Field(PathField):
    """A field assertion on an HL7 path, with a quantifier for ``[*]`` paths."""

    syntax = HL7


class Hl7Structural(MessageAssertion):
    """The ``hl7-structural`` assertion."""

    syntax = HL7
    kind: Literal["hl7-structural"] = Field(alias="assert")
    correlate_by: dict[str, JsonValue] = Field(default_factory=dict)
    fields: list[Hl7Field] = Field(default_factory=list)
    match: Match = "latest"


def _describe(messages: list[Hl7Message]) -> str:
    kinds: dict[str, int] = {}
    for m in messages:
        kinds[m.message_type] = kinds.get(m.message_type, 0) + 1
    return ", ".join(f"{n}x {t}" for t, n in kinds.items()) or "none"


def check(spec: Hl7Structural, ctx: CheckContext) -> CheckOutcome:
    """Score the outbound message(s) matching ``correlate_by``."""
    source = ctx.source("hl7")
    messages: list[Hl7Message] = source.messages()
    rejected = source.rejected()
    candidates = HL7.correlated(messages, spec.correlate_by)
    warnings: list[str] = list(getattr(source, "warnings", list)())
    base: dict[str, JsonValue] = {"candidates": len(candidates), "rejected": len(rejected)}
    if warnings:  # empty files, bytes outside MLLP frames: ignored, never silently
        base["warnings"] = warnings  # type: ignore[assignment]
    if not candidates:
        details = no_match("outbound HL7 message", spec.correlate_by)
        details += f" ({len(messages)} sent: {_describe(messages)})"
        if rejected:
            details += f"; {len(rejected)} rejected as unparseable: {rejected[-1]['error']}"
        if warnings:
            details += f"; {len(warnings)} warning(s), first: {warnings[0]}"
        return CheckOutcome(0.0, details, {HL7.rows: [], "message": None, **base})
    pick = HL7.pick(candidates, spec.fields, spec.match)
    message = pick.message
    details = HL7.details(
        f"{message.message_type} {message.control_id!r}",
        pick,
        spec.match,
        mean=pick.score if spec.match == "all" else None,
    )
    return CheckOutcome(pick.score, details, HL7.evidence(pick, **base, **pick.listed))


CHECK = CheckSpec(name="hl7-structural", model=Hl7Structural, run=check, sources=("hl7",))
