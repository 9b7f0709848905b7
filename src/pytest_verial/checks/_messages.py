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
from typing import Any, Generic, Literal, NamedTuple, TypeVar

from pydantic import JsonValue

from .._compare import (
    MISSING,
    FieldSpec,
    correlation_matches,
    describe_field,
    field_result,
    fields_score,
    quantified,
)

#: one message (an :class:`~pytest_verial.hl7._parse.Hl7Message`) or one X12 transaction
M = TypeVar("M")
Rows = list[dict[str, JsonValue]]
Match = Literal["latest", "first", "any", "all"]
#: how the details name the message scored, by ``match``
WHICH: dict[str, str] = {"latest": "latest", "first": "first", "any": "best", "all": "worst"}


class PathField(FieldSpec):
    """A field assertion on a message path, with a quantifier for ``[*]`` paths."""

    quantifier: Literal["any", "all"] = "any"


@dataclass(frozen=True)
class PathSyntax(Generic[M]):
    """One message format's paths: how to parse and read them, and what a miss says."""

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

    def correlates(self, message: M, correlate_by: Mapping[str, Any]) -> bool:
        """True when every ``correlate_by`` key of ``message`` has its expected value (for a
        path that yields several values, when any of them has it)."""
        return all(
            correlation_matches(expected, self.get_all(message, self.aliases.get(key, key)))
            for key, expected in correlate_by.items()
        )

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
