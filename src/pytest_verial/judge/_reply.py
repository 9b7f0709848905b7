"""Parsing the judge's reply strictly: anything malformed or out of range is an error.

A reply is valid when its content is a JSON object (a Markdown code fence around it is
tolerated) with ``ratings``: exactly one entry per principle, each ``{principle: 1..n,
rating: integer 1..5, reasoning: string}``. ``confidence`` (0..1) is optional. There is no
default rating: a missing principle, a rating of 0 or 9, a duplicate, a string where a number
belongs, all raise :class:`MalformedReply`, which the client retries and then reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._safeparse import DataError, load_json

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class MalformedReply(ValueError):
    """The judge's reply cannot be used; the message says why."""


def rating_score(rating: int) -> float:
    """The score of a Likert rating: 1 -> 0, 3 -> 0.5, 5 -> 1."""
    return (rating - 1) / 4


@dataclass(frozen=True)
class Rating:
    """One principle's rating."""

    principle: int  # 1-based
    rating: int
    reasoning: str

    @property
    def score(self) -> float:
        return rating_score(self.rating)


@dataclass(frozen=True)
class Ratings:
    """A parsed, validated reply."""

    ratings: tuple[Rating, ...]
    confidence: float | None

    @property
    def score(self) -> float:
        """The mean score over the principles."""
        return sum(r.score for r in self.ratings) / len(self.ratings)


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def parse_reply(content: Any, count: int) -> Ratings:
    """Validate ``content`` (the assistant message text) for ``count`` principles."""
    if not isinstance(content, str) or not content.strip():
        raise MalformedReply("empty reply")
    fenced = _FENCE.match(content)
    text = fenced.group(1) if fenced else content
    try:
        data = load_json(text, "reply")
    except DataError as exc:
        problem = exc.problem.removeprefix("invalid JSON: ")
        raise MalformedReply(f"reply is not JSON ({problem}): {content[:120]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("ratings"), list):
        raise MalformedReply("reply has no 'ratings' list")
    seen: dict[int, Rating] = {}
    for i, entry in enumerate(data["ratings"]):
        if not isinstance(entry, dict):
            raise MalformedReply(f"ratings[{i}] is not an object")
        index = _integer(entry.get("principle"))
        if index is None or not 1 <= index <= count:
            raise MalformedReply(
                f"ratings[{i}].principle {entry.get('principle')!r} is not "
                f"a principle number 1-{count}"
            )
        rating = _integer(entry.get("rating"))
        if rating is None or not 1 <= rating <= 5:
            raise MalformedReply(
                f"principle {index}: rating {entry.get('rating')!r} is not an integer from 1 to 5"
            )
        reasoning = entry.get("reasoning")
        if not isinstance(reasoning, str):
            raise MalformedReply(f"principle {index}: 'reasoning' is missing or not text")
        if index in seen:
            raise MalformedReply(f"principle {index} is rated twice")
        seen[index] = Rating(index, rating, reasoning.strip()[:1000])
    missing = [str(i) for i in range(1, count + 1) if i not in seen]
    if missing:
        raise MalformedReply(f"principle(s) {', '.join(missing)} not rated")
    confidence = data.get("confidence")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, (int, float))
        or not (0 <= confidence <= 1)
    ):
        confidence = None
    return Ratings(
        tuple(seen[i] for i in range(1, count + 1)),
        None if confidence is None else float(confidence),
    )
