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

Paths are described in :mod:`pytest_verial.x12._paths` and docs/x12.md. ``correlate_by`` keys are
X12 paths or the aliases ``trace_number`` (any TRN02), ``member_id`` (any NM109),
``control_number`` (ST02), ``group_control_number`` (GS06) and ``interchange_control_number``
(ISA13); a path key matches when *any* segment it selects has the value (a list = one of).

Envelope problems (ISA length, SE/GE/IEA counts, control numbers) are always in the evidence as
``envelope_problems``; with ``envelope: strict`` they make the criterion an error instead.
With ``validate: true`` the transaction's interchange is also validated against its
implementation guide by pyx12 (835, 999; :mod:`pytest_verial.x12._validate`): the result is one
more row of ``fieldResults`` (path ``(implementation guide)``, expected ``valid``) and a
``validation`` entry in the evidence. Selection among several matches and the score follow
``hl7-structural``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import Field, JsonValue, field_validator

from .._compare import fields_score
from .._contracts.check import CheckContext, CheckOutcome, CheckSpec
from .._errors import CheckError
from ..x12._envelope import Transaction
from ..x12._paths import X12PathError, get, get_all, parse_path
from ..x12._validate import validate
from ._messages import Match, MessageAssertion, PathField, PathSyntax, Pick, no_match

ALIASES = {
    "trace_number": "TRN02",
    "member_id": "NM109",
    "control_number": "ST02",
    "group_control_number": "GS06",
    "interchange_control_number": "ISA13",
}


X12: PathSyntax[Transaction] = PathSyntax(
    "X12",
    ALIASES,
    parse_path,
    X12PathError,
    get,
    get_all,
    lambda path: "no segment selected by the path",
    noun="transaction",
    id_key="control_number",
    ident=lambda t: t.control_number,
    rows="fieldResults",
)


class X12Field(PathField):
    """A field assertion on an X12 path, with a quantifier for ``[*]`` paths."""

    syntax = X12


class X12Response(MessageAssertion):
    """The ``x12-response`` assertion."""

    syntax = X12
    kind: Literal["x12-response"] = Field(alias="assert")
    transaction: str | None = None
    correlate_by: dict[str, JsonValue] = Field(default_factory=dict)
    fields: list[X12Field] = Field(default_factory=list)
    match: Match = "latest"
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


def _validated(pick: Pick[Transaction]) -> tuple[Pick[Transaction], dict[str, JsonValue]]:
    """The pick with one more row, the implementation guide's verdict (pyx12), and rescored;
    the validation's evidence."""
    tx = pick.message
    validation = validate(tx.source_text, tx.origin)
    first = validation.errors[0] if validation.errors else ""
    actual = "valid" if validation.valid else f"{len(validation.errors)} error(s): {first}"
    row: dict[str, JsonValue] = {
        "path": "(implementation guide)",
        "expected": "valid",
        "actual": actual,
        "passed": validation.valid,
    }
    results = [*pick.results, row]
    rescored = replace(pick, results=results, score=fields_score(results))
    return rescored, {"validation": validation.evidence()}


def check(spec: X12Response, ctx: CheckContext) -> CheckOutcome:
    """Score the response transaction(s) matching ``transaction`` and ``correlate_by``."""
    everything: list[Transaction] = ctx.source("x12").transactions()
    typed = [t for t in everything if spec.transaction in (None, t.set_id)]
    candidates = X12.correlated(typed, spec.correlate_by)
    if not candidates:
        kinds = ", ".join(sorted({t.set_id for t in everything})) or "none"
        what = no_match(f"X12 {spec.transaction or 'transaction'}", spec.correlate_by)
        return CheckOutcome(
            0.0,
            f"{what} ({len(everything)} transactions: {kinds})",
            {"fieldResults": [], "transaction": None, "candidates": 0},
        )
    pick = X12.pick(candidates, spec.fields, spec.match)
    tx = pick.message
    if tx.problems and spec.envelope == "strict":
        raise CheckError(f"{tx.origin}: envelope problems: " + "; ".join(tx.problems))
    validation: dict[str, JsonValue] = {}
    if spec.validate_ig:
        pick, validation = _validated(pick)
    details = X12.details(f"X12 {tx.set_id} {tx.control_number!r}", pick, spec.match)
    if tx.problems:
        details += f"; {len(tx.problems)} envelope problem(s): {tx.problems[0]}"
    evidence = X12.evidence(
        pick,
        envelope_problems=list(tx.problems),
        candidates=len(candidates),
        **pick.listed,
        **validation,
    )
    return CheckOutcome(pick.score, details, evidence)


CHECK = CheckSpec(name="x12-response", model=X12Response, run=check, sources=("x12",))
