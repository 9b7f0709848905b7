"""What ``hl7-structural`` and ``x12-response`` share: both select sent messages (HL7 messages,
X12 transactions) by ``correlate_by``, score ``fields`` on the one that counts and choose among
several matches by ``match``. A :class:`PathSyntax` holds the little the two formats differ in:
their paths, aliases and how a row says that a path selected nothing.

Selection among several matching messages (docs/hl7.md, ``match``): ``latest`` (default) and
``first`` score that one message only; ``any`` scores each and keeps the best, ``all`` scores
each, averages them and shows the worst (the latest on ties, both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from pydantic import JsonValue, field_validator

from .._compare import (
    MISSING,
    FieldSpec,
    correlation_matches,
    describe_field,
    field_result,
    fields_score,
    quantified,
)
from .._contracts.check import AssertionSpec

#: one message (an :class:`~pytest_verial.hl7._parse.Hl7Message`) or one X12 transaction
M = TypeVar("M")
Rows = list[dict[str, JsonValue]]
Match = Literal["latest", "first", "any", "all"]
#: how the details name the message scored, by ``match``
WHICH: dict[str, str] = {"latest": "latest", "first": "first", "any": "best", "all": "worst"}


@dataclass(frozen=True)
class PathSyntax(Generic[M]):
    """One message format's paths: how to parse and read them, and what a miss says; and how
    the evidence names a message."""

    #: the format's name in messages (``HL7``, ``X12``)
    name: str
    #: ``correlate_by`` aliases -> paths
    aliases: Mapping[str, str]
    parse: Callable[[str], Any]
    error: type[Exception]
    get: Callable[[M, Any], Any]
    get_all: Callable[[M, str], list[Any]]
    #: the ``reason`` of a row whose single-valued path (parsed) selected nothing
    missing: Callable[[Any], str]
    #: the evidence key of the message scored (``message``, ``transaction``); its plural
    #: names them in the details and keys the ``match: all`` list
    noun: str
    #: the key and the value that name each message of the ``match: all`` list
    id_key: str
    ident: Callable[[M], JsonValue]
    #: the evidence key of the rows, as Verial documents it for the check (``field_results``
    #: for hl7-structural, ``fieldResults`` for x12-response)
    rows: str

    def valid_path(self, value: str) -> str:
        """``value`` when it parses as a path, else a ValueError with the parser's message."""
        try:
            self.parse(value)
        except self.error as exc:
            raise ValueError(str(exc)) from None
        return value

    def valid_keys(self, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        """``correlate_by`` when each key is a path or an alias, else a ValueError naming it."""
        for key in value:
            try:
                self.parse(self.aliases.get(key, key))
            except self.error as exc:
                raise ValueError(
                    f"correlate_by key {key!r}: not an {self.name} path nor one of "
                    f"{', '.join(self.aliases)} ({exc})"
                ) from None
        return value

    def correlated(self, messages: Sequence[M], correlate_by: Mapping[str, Any]) -> list[M]:
        """The messages whose every ``correlate_by`` key has its expected value (for a path
        that yields several values, when any of them has it)."""
        return [
            m
            for m in messages
            if all(
                correlation_matches(expected, self.get_all(m, self.aliases.get(key, key)))
                for key, expected in correlate_by.items()
            )
        ]

    def pick(self, candidates: Sequence[M], fields: Sequence[PathField], match: str) -> Pick[M]:
        """``fields`` scored on the candidates (oldest first, at least one) as ``match`` says."""
        score, index, results, each = choose(
            candidates, match, lambda m: self.field_results(m, fields)
        )
        listed: dict[str, JsonValue] = {}
        if match == "all":
            listed[f"{self.noun}s"] = [
                {self.id_key: self.ident(candidates[i]), "score": round(s, 6)} for i, s in each
            ]
        return Pick(candidates[index], score, results, len(candidates), listed)

    def details(self, head: str, pick: Pick[M], match: str, mean: float | None = None) -> str:
        """:func:`fields_details` of the message picked."""
        return fields_details(head, pick.results, pick.candidates, match, f"{self.noun}s", mean)

    def evidence(self, pick: Pick[M], **extra: JsonValue) -> dict[str, JsonValue]:
        """The evidence of the message picked: its rows, its summary, then ``extra``."""
        return {
            self.rows: pick.results,  # type: ignore[dict-item]
            self.noun: message_evidence(pick.message),
            **extra,
        }

    def field_results(self, message: M, fields: Sequence[PathField]) -> Rows:
        """The evidence rows for ``fields`` evaluated on one message."""
        results = []
        for spec in fields:
            path = self.parse(spec.path)
            actual = self.get(message, path)
            row = field_result(spec, actual)
            if path.multiple:
                values = actual if isinstance(actual, list) else []
                row["passed"] = quantified(spec, values, spec.quantifier)
                row["quantifier"] = spec.quantifier
            elif actual is MISSING:
                row["reason"] = self.missing(path)
            results.append(row)
        return results


class PathField(FieldSpec):
    """A field assertion on a message path, with a quantifier for ``[*]`` paths; a subclass
    names the format whose paths it takes (``syntax``)."""

    syntax: ClassVar[PathSyntax[Any]]
    quantifier: Literal["any", "all"] = "any"

    @field_validator("path")
    @classmethod
    def _valid_path(cls, value: str) -> str:
        return cls.syntax.valid_path(value)


class MessageAssertion(AssertionSpec):
    """Base of ``hl7-structural`` and ``x12-response``: a subclass names its format
    (``syntax``) and declares ``correlate_by``, ``fields`` and ``match``."""

    syntax: ClassVar[PathSyntax[Any]]

    @field_validator("correlate_by", check_fields=False)
    @classmethod
    def _valid_keys(cls, value: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return cls.syntax.valid_keys(value)


def no_match(what: str, correlate_by: Mapping[str, Any]) -> str:
    """``no <what> [matching {correlate_by}]``, the head of a check's no-candidate details."""
    return f"no {what}" + (f" matching {correlate_by}" if correlate_by else "")


@dataclass(frozen=True)
class Pick(Generic[M]):
    """The message ``match`` chose among the candidates, its rows and score, and with
    ``match: all`` the score of each candidate (``{"<noun>s": [...]}``, else empty)."""

    message: M
    score: float
    results: Rows
    candidates: int
    listed: dict[str, JsonValue]


class Choice(NamedTuple):
    """The message chosen by ``match`` (its index among the candidates), its rows, the score."""

    score: float
    chosen: int
    results: Rows
    #: with ``match: all``, each candidate's (index, score); else empty
    each: list[tuple[int, float]]


def choose(candidates: Sequence[M], match: str, evaluate: Callable[[M], Rows]) -> Choice:
    """Score the candidates (oldest first, at least one) as ``match`` says."""
    if match in ("first", "latest"):  # score only the one message that counts
        index = 0 if match == "first" else len(candidates) - 1
        results = evaluate(candidates[index])
        return Choice(fields_score(results), index, results, [])
    scored = [
        (fields_score(r), i, r) for i, r in ((i, evaluate(m)) for i, m in enumerate(candidates))
    ]
    if match == "any":
        score, index, results = max(scored, key=lambda s: (s[0], s[1]))
        return Choice(score, index, results, [])
    worst = min(scored, key=lambda s: (s[0], -s[1]))
    mean = sum(s[0] for s in scored) / len(scored)
    return Choice(mean, worst[1], worst[2], [(i, s) for s, i, _ in scored])


def fields_details(
    head: str, results: Rows, candidates: int, match: str, noun: str, mean: float | None = None
) -> str:
    """``<head>: N of M fields passed``, which of several matches was scored (with ``mean``:
    the mean over them) and the first failed fields."""
    passed = sum(1 for r in results if r["passed"])
    details = f"{head}: {passed} of {len(results)} fields passed"
    if candidates > 1:
        details += f" ({WHICH[match]} of {candidates} matching {noun}"
        details += f"; mean {mean:.2f})" if mean is not None else ")"
    failed = [r for r in results if not r["passed"]]
    if failed:
        details += "; " + "; ".join(describe_field(r) for r in failed[:5])
    return details


def message_evidence(message: Any) -> dict[str, JsonValue]:
    """The message's summary for the evidence, with its ``created_at``."""
    summary: dict[str, JsonValue] = message.summary()
    summary["created_at"] = message.created_at
    return summary
