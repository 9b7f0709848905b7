"""``voice-transcript``: phrases the agent (or caller) must say, and must not say.

Matching is normalised: case-folded, accents removed, punctuation turned into spaces, runs of
whitespace collapsed, and a phrase must match on word boundaries (``"member id"`` is found in
"Can I have your Member-ID?"). With ``fuzzy: 0.85`` a phrase is also found when some window of
words of the turn has a similarity ratio of at least 0.85 (difflib), which absorbs small
transcription errors. Verial's engine matches with an LLM; this check is the deterministic
counterpart, and an ``llm-rubric`` criterion can judge paraphrase.

Score: (required phrases found + forbidden phrases absent) / all phrases. No turn by the
speaker means no target: score 0.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Literal

from pydantic import Field, JsonValue, model_validator

from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec


class VoiceTranscript(AssertionSpec):
    """The ``voice-transcript`` assertion."""

    kind: Literal["voice-transcript"] = Field(alias="assert")
    speaker: str | None = Field(default=None, description="agent, caller, or any when omitted")
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    fuzzy: float | None = Field(default=None, gt=0, le=1)

    @model_validator(mode="after")
    def _has_phrases(self) -> VoiceTranscript:
        if not self.contains and not self.not_contains:
            raise ValueError("give at least one phrase in 'contains' or 'not_contains'")
        for phrase in (*self.contains, *self.not_contains):
            if not normalise(phrase):
                raise ValueError(f"phrase {phrase!r} is empty after normalisation")
        return self


_PUNCT = re.compile(r"[^\w\s]|_", re.UNICODE)
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """Case-fold, strip accents, punctuation to spaces, collapse whitespace."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACE.sub(" ", _PUNCT.sub(" ", stripped)).strip()


def _similarity(phrase: str, text: str) -> float:
    """Best difflib ratio of ``phrase`` against windows of ``text`` of about its length."""
    words, size = text.split(), len(phrase.split())
    best = 0.0
    for width in {max(1, size - 1), size, size + 1}:
        for start in range(max(1, len(words) - width + 1)):
            window = " ".join(words[start : start + width])
            best = max(best, SequenceMatcher(None, phrase, window).ratio())
    return best


def find(
    phrase: str, turns: list[tuple[int, str]], fuzzy: float | None
) -> tuple[int | None, float]:
    """The index of the first turn containing ``phrase``, and the similarity found."""
    target = normalise(phrase)
    for index, text in turns:
        if f" {target} " in f" {text} ":
            return index, 1.0
    if fuzzy is None:
        return None, 0.0
    best_index, best = None, 0.0
    for index, text in turns:
        ratio = _similarity(target, text)
        if ratio > best:
            best_index, best = index, ratio
    return (best_index, best) if best >= fuzzy else (None, best)


def check(spec: VoiceTranscript, ctx: CheckContext) -> CheckOutcome:
    """Score the transcript of ``spec.speaker``."""
    all_turns = ctx.source("voice").turns()
    wanted = spec.speaker.casefold() if spec.speaker else None
    turns = [
        (i, normalise(t.text))
        for i, t in enumerate(all_turns)
        if wanted in (None, "any") or t.speaker.casefold() == wanted
    ]
    who = spec.speaker or "any speaker"
    if not turns:
        return CheckOutcome(
            0.0,
            f"no transcript turns by {who} ({len(all_turns)} turns in all)",
            {"phraseResults": [], "turns": len(all_turns)},
        )
    results: list[dict[str, JsonValue]] = []
    for phrase in spec.contains:
        turn, similarity = find(phrase, turns, spec.fuzzy)
        row: dict[str, JsonValue] = {
            "phrase": phrase,
            "expected": "present",
            "found": turn is not None,
            "turn": turn,
            "passed": turn is not None,
        }
        if spec.fuzzy is not None:
            row["similarity"] = round(similarity, 3)
        results.append(row)
    for phrase in spec.not_contains:
        turn, similarity = find(phrase, turns, spec.fuzzy)
        row = {
            "phrase": phrase,
            "expected": "absent",
            "found": turn is not None,
            "turn": turn,
            "passed": turn is None,
        }
        if spec.fuzzy is not None:
            row["similarity"] = round(similarity, 3)
        results.append(row)
    ok = sum(1 for r in results if r["passed"])
    missing = [r["phrase"] for r in results if r["expected"] == "present" and not r["passed"]]
    said = [r["phrase"] for r in results if r["expected"] == "absent" and not r["passed"]]
    details = f"{ok} of {len(results)} phrase checks passed for {who}"
    if missing:
        details += f"; not said: {', '.join(map(repr, missing))}"
    if said:
        details += f"; forbidden but said: {', '.join(map(repr, said))}"
    return CheckOutcome(ok / len(results), details, {"phraseResults": results})  # type: ignore[dict-item]


CHECK = CheckSpec(name="voice-transcript", model=VoiceTranscript, run=check, sources=("voice",))
