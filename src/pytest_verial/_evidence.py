"""Evidence: what a check saw, one small model per check type, keyed by the criterion's ``assert``.

The keys are exactly those of Verial's documented table (README, "Checks"; Verial's
verification page), quirks included: ``fieldResults`` (fhir-resource-state, sftp-file-present,
x12-response, and our output checks), ``field_results`` (hl7-structural, snake_case as
documented), ``assertionResults`` (portal-state-match) and ``phraseResults: [{phrase, found,
turn}]`` (voice-transcript). The keys we add are snake_case (``matched_paths``, ``row_key``,
``rubric_results``, ...). Each model declares the keys its check writes; a key a check did not
write stays out of the JSON form (``UNSET``), so an error's evidence is only ``{"error": ...}``.

:data:`EVIDENCE_MODELS` maps each built-in ``assert`` to its model; any other ``assert`` (a
check a conftest adds, an unsupported assertion) has the base :class:`Evidence`, which keeps
every key as given. :data:`AnyEvidence` is the union the report's JSON Schema (and the
service's OpenAPI) name for ``evidence``; :func:`evidence_schema_rules` states which member
goes with which ``assert``.

Reports written before these keys (schema ``pytest-verial/report/v2``: ``field_results``,
``assertion_results``, ``phrase_results`` for every check) are converted on read by
:func:`evidence_from_v2` (on read of a report, :mod:`pytest_verial.reporting._reading`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pydantic import MISSING as UNSET
from pydantic import BaseModel, ConfigDict, Field, JsonValue

#: Any JSON value (see ``_results.Json``: values arrive as strict JSON already)
Json = Any


def _absent(value: object) -> bool:
    return value is None


class FieldResult(BaseModel):
    """One expected / actual row of ``fieldResults``, ``field_results`` or
    ``assertionResults``: ``{path, expected, actual, passed}`` (Verial's), plus our ``op``,
    ``message`` and any key a check adds (``quantifier``, ``reason``)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    path: str | None = None
    expected: Json = None
    actual: Json = None
    op: str | None = Field(default=None, exclude_if=_absent)
    passed: bool = False
    message: str | None = Field(default=None, exclude_if=_absent)


class PhraseResult(BaseModel):
    """One row of ``phraseResults``: ``{phrase, found, turn}`` (Verial's; ``turn`` the index of
    the first turn saying it, null when not found), plus ours: ``expected`` (``present`` or
    ``absent``), ``passed`` and, with ``fuzzy``, ``similarity``."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    phrase: str
    found: bool
    turn: int | None = None
    expected: str | UNSET = UNSET
    passed: bool | UNSET = UNSET
    similarity: float | UNSET = UNSET


class RubricResult(BaseModel):
    """One principle the judge rated: ``{principle, rating (1-5), reasoning, score}``."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    principle: str | None = None
    rating: int | None = None
    reasoning: str | None = None
    score: float | UNSET = UNSET


class Evidence(BaseModel):
    """What a check saw: the base of every check type's evidence, and the evidence of a check
    that is not built in (every key kept as the check wrote it)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    #: the key holding this check type's expected / actual rows (None: it has none)
    ROWS: ClassVar[str | None] = None

    #: why the criterion could not be scored (the error's type)
    error: str | UNSET = UNSET

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types: the keys the check wrote, by their documented names."""
        return self.model_dump(mode="json", by_alias=True)

    def rows(self) -> list[FieldResult]:
        """The expected / actual rows, whatever this check type calls them. A check that is
        not built in may use any of the documented keys."""
        if self.ROWS is not None:
            value = getattr(self, self.ROWS, None)
            return list(value) if isinstance(value, list) else []
        extra = self.model_extra or {}
        for key in ROW_KEYS:
            value = extra.get(key)
            if isinstance(value, list):
                return [FieldResult.model_validate(r) for r in value if isinstance(r, Mapping)]
        return []

    def phrases(self) -> list[PhraseResult]:
        """The ``phraseResults`` rows (none for other check types)."""
        return []

    def ratings(self) -> list[RubricResult]:
        """The ``rubric_results`` rows (none for other check types)."""
        return []

    def extra(self, key: str) -> Json:
        """A key the check wrote beyond the declared ones (None when absent)."""
        return (self.model_extra or {}).get(key)


class FhirResourceStateEvidence(Evidence):
    """``fhir-resource-state``: ``fieldResults`` of the target resource, the resource
    (type, id, version), the search sent and how many it found."""

    ROWS: ClassVar[str | None] = "fieldResults"

    fieldResults: list[FieldResult] | UNSET = UNSET
    resource: dict[str, Json] | None | UNSET = UNSET
    query: str | None | UNSET = UNSET
    total: int | None | UNSET = UNSET
    match: str | UNSET = UNSET
    count_result: FieldResult | UNSET = UNSET
    validation_errors: list[str] | UNSET = UNSET


class Hl7StructuralEvidence(Evidence):
    """``hl7-structural``: ``field_results`` (snake_case, as Verial documents it) of the message
    scored, that message (control id, type, trigger event, origin), the candidates."""

    ROWS: ClassVar[str | None] = "field_results"

    field_results: list[FieldResult] | UNSET = UNSET
    message: dict[str, Json] | None | UNSET = UNSET
    candidates: int | UNSET = UNSET
    rejected: int | UNSET = UNSET
    warnings: list[str] | UNSET = UNSET
    #: with ``match: all``: each candidate's control id and score
    messages: list[dict[str, Json]] | UNSET = UNSET


class PortalStateMatchEvidence(Evidence):
    """``portal-state-match``: ``assertionResults`` of the best row, its key and index."""

    ROWS: ClassVar[str | None] = "assertionResults"

    assertionResults: list[FieldResult] | UNSET = UNSET
    row_key: Json | UNSET = UNSET
    row_index: int | UNSET = UNSET
    candidates: int | UNSET = UNSET


class SftpFilePresentEvidence(Evidence):
    """``sftp-file-present``: ``fieldResults`` of the best file plus the matched paths
    (relative to ``source``, the files source: ``sftp/`` in the task folder or a bucket
    prefix)."""

    ROWS: ClassVar[str | None] = "fieldResults"

    fieldResults: list[FieldResult] | UNSET = UNSET
    matched_paths: list[str] | UNSET = UNSET
    matched_count: int | UNSET = UNSET
    source: str | UNSET = UNSET
    file: dict[str, Json] | None | UNSET = UNSET
    refused_paths: list[str] | UNSET = UNSET
    unreadable: list[dict[str, Json]] | UNSET = UNSET


class VoiceTranscriptEvidence(Evidence):
    """``voice-transcript``: ``phraseResults: [{phrase, found, turn}]``."""

    phraseResults: list[PhraseResult] | UNSET = UNSET
    #: turns in the transcript (when the speaker said nothing)
    turns: int | UNSET = UNSET

    def phrases(self) -> list[PhraseResult]:
        value = self.phraseResults
        return list(value) if isinstance(value, list) else []


class X12ResponseEvidence(Evidence):
    """``x12-response``: ``fieldResults`` of the transaction scored, that transaction (set id,
    control number, version, origin), envelope problems and the candidates."""

    ROWS: ClassVar[str | None] = "fieldResults"

    fieldResults: list[FieldResult] | UNSET = UNSET
    transaction: dict[str, Json] | None | UNSET = UNSET
    candidates: int | UNSET = UNSET
    envelope_problems: list[str] | UNSET = UNSET
    validation: dict[str, Json] | UNSET = UNSET
    #: with ``match: all``: each candidate's control number and score
    transactions: list[dict[str, Json]] | UNSET = UNSET


class OutputEvidence(Evidence):
    """``output-format``, ``output-length``, ``output-sections``, ``output-match``,
    ``output-json-schema``: ``fieldResults`` and the output file's name."""

    ROWS: ClassVar[str | None] = "fieldResults"

    fieldResults: list[FieldResult] | UNSET = UNSET
    output: str | None | UNSET = UNSET
    words: int | UNSET = UNSET
    chars: int | UNSET = UNSET
    headings: list[str] | UNSET = UNSET
    violations: int | UNSET = UNSET


class LlmRubricEvidence(Evidence):
    """``llm-rubric`` and ``output-consistency``: ``rubric_results``, the judge (model,
    executor model, tokens, cost, cache) and its confidence."""

    rubric_results: list[RubricResult] | UNSET = UNSET
    principles: list[str] | UNSET = UNSET
    judge: dict[str, Json] | UNSET = UNSET
    confidence: float | None | UNSET = UNSET
    target: str | UNSET = UNSET
    threshold: float | UNSET = UNSET

    def ratings(self) -> list[RubricResult]:
        value = self.rubric_results
        return list(value) if isinstance(value, list) else []


#: the documented row keys, for a check that is not built in
ROW_KEYS = ("fieldResults", "field_results", "assertionResults")

_OUTPUT = ("output-format", "output-length", "output-sections", "output-match")

#: each built-in ``assert`` -> the model of its evidence (any other: :class:`Evidence`)
EVIDENCE_MODELS: dict[str, type[Evidence]] = {
    "fhir-resource-state": FhirResourceStateEvidence,
    "hl7-structural": Hl7StructuralEvidence,
    "portal-state-match": PortalStateMatchEvidence,
    "sftp-file-present": SftpFilePresentEvidence,
    "voice-transcript": VoiceTranscriptEvidence,
    "x12-response": X12ResponseEvidence,
    **dict.fromkeys([*_OUTPUT, "output-json-schema"], OutputEvidence),
    "llm-rubric": LlmRubricEvidence,
    "output-consistency": LlmRubricEvidence,
}

#: what ``evidence`` may be: the model of its criterion's ``assert`` (:data:`EVIDENCE_MODELS`)
AnyEvidence = (
    FhirResourceStateEvidence
    | Hl7StructuralEvidence
    | PortalStateMatchEvidence
    | SftpFilePresentEvidence
    | VoiceTranscriptEvidence
    | X12ResponseEvidence
    | OutputEvidence
    | LlmRubricEvidence
    | Evidence
)


def evidence_model(assertion: str | None) -> type[Evidence]:
    """The evidence model of a criterion's ``assert`` (:class:`Evidence` for any other)."""
    return EVIDENCE_MODELS.get(assertion or "", Evidence)


def parse_evidence(assertion: str | None, value: object) -> Evidence | None:
    """``value`` (a mapping, or already a model) as the evidence of ``assertion``."""
    if value is None:
        return None
    model = evidence_model(assertion)
    if type(value) is model:
        return value
    if isinstance(value, Evidence):
        value = value.to_json()
    return model.model_validate(value)


def evidence_schema_rules(ref: Mapping[type[Evidence], dict[str, Any]]) -> list[dict[str, Any]]:
    """JSON Schema ``if``/``then`` rules tying ``evidence`` to the model of its ``assert``;
    ``ref`` gives each model's ``$ref`` in the document being generated."""
    rules = []
    for name, model in EVIDENCE_MODELS.items():
        rules.append(
            {
                "if": {"properties": {"assert": {"const": name}}, "required": ["assert"]},
                "then": {"properties": {"evidence": {"anyOf": [ref[model], {"type": "null"}]}}},
            }
        )
    return rules


# -- reports written before these keys (report/v2) -----------------------------------------------
#: the row key each built-in check wrote in a v2 report -> the documented one (hl7-structural's
#: ``field_results`` and llm-rubric's ``rubric_results`` did not change)
V2_ROW_KEYS: dict[str, tuple[str, str]] = {
    "fhir-resource-state": ("field_results", "fieldResults"),
    "sftp-file-present": ("field_results", "fieldResults"),
    "x12-response": ("field_results", "fieldResults"),
    **dict.fromkeys([*_OUTPUT, "output-json-schema"], ("field_results", "fieldResults")),
    "portal-state-match": ("assertion_results", "assertionResults"),
    "voice-transcript": ("phrase_results", "phraseResults"),
}


def evidence_from_v2(assertion: str | None, evidence: object) -> object:
    """A v2 report's evidence in the documented keys (a new dict; ``evidence`` untouched).

    Only the row key of the built-in checks that renamed it moves; every other key and every
    row stays as written (voice rows already were ``{phrase, found, turn, ...}``). Evidence
    that holds both keys is not v2 evidence: a ValueError, never a guess."""
    if not isinstance(evidence, Mapping) or assertion not in V2_ROW_KEYS:
        return evidence
    old, new = V2_ROW_KEYS[assertion]
    if new in evidence:
        if old in evidence:
            raise ValueError(f"evidence of {assertion} holds both {old} and {new}")
        return evidence
    if old not in evidence:
        return evidence
    converted: dict[str, JsonValue] = {}
    for key, value in evidence.items():
        converted[new if key == old else key] = value
    return converted


#: the report's schema ids: v3 has these keys; v2 (the previous release) had the snake_case ones
REPORT_V3: Final = "pytest-verial/report/v3"
REPORT_V2: Final = "pytest-verial/report/v2"


def report_from_v2(data: Mapping[str, Any]) -> dict[str, Any]:
    """A v2 report's JSON (``schema: pytest-verial/report/v2``) as v3: every criterion run's
    evidence in the documented keys (:func:`evidence_from_v2`), the schema id moved on. New
    dicts along the way; ``data`` untouched, and anything that is not what a report holds is
    passed on as it is, for the model to refuse. A criterion run whose evidence cannot be read
    as v2 evidence is a ValueError naming it: a report is converted whole or not at all."""

    def each(value: object, convert: Any, where: str) -> object:
        if not isinstance(value, list):
            return value
        return [
            convert(item, f"{where}[{i}]") if isinstance(item, Mapping) else item
            for i, item in enumerate(value)
        ]

    def criterion(crit: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        if "evidence" not in crit:
            return crit
        try:
            evidence = evidence_from_v2(crit.get("assert"), crit["evidence"])
        except ValueError as exc:
            raise ValueError(f"{where} (criterion {crit.get('criterion_id')}): {exc}") from None
        return {**crit, "evidence": evidence}

    def task(value: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        if "criterion_runs" not in value:
            return value
        converted = each(value["criterion_runs"], criterion, f"{where}.criterion_runs")
        return {**value, "criterion_runs": converted}

    def run(value: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        if "task_runs" not in value:
            return value
        return {**value, "task_runs": each(value["task_runs"], task, f"{where}.task_runs")}

    out = {**data, "schema": REPORT_V3}
    if "benchmark_runs" in data:
        out["benchmark_runs"] = each(data["benchmark_runs"], run, "benchmark_runs")
    return out


def evidence_to_v2(assertion: str | None, evidence: object) -> object:
    """The inverse of :func:`evidence_from_v2` (a store migrated back down)."""
    if not isinstance(evidence, Mapping) or assertion not in V2_ROW_KEYS:
        return evidence
    old, new = V2_ROW_KEYS[assertion]
    if new not in evidence:
        return evidence
    return {old if key == new else key: value for key, value in evidence.items()}


__all__ = [
    "EVIDENCE_MODELS",
    "AnyEvidence",
    "Evidence",
    "FhirResourceStateEvidence",
    "FieldResult",
    "Hl7StructuralEvidence",
    "LlmRubricEvidence",
    "OutputEvidence",
    "PhraseResult",
    "PortalStateMatchEvidence",
    "RubricResult",
    "SftpFilePresentEvidence",
    "VoiceTranscriptEvidence",
    "X12ResponseEvidence",
    "evidence_from_v2",
    "evidence_to_v2",
    "evidence_model",
    "parse_evidence",
    "report_from_v2",
]
