"""Helpers shared by the ``output-*`` checks: reading the output, parsing it, Markdown headings.

The agent's final output is ``output.md``, ``output.txt`` or ``output.json`` in the sandbox
(the first found, in that order). No output file means no target: every output check scores 0
with details saying so, which is how a criterion on output the agent never wrote should read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .._contracts.check import CheckContext, CheckOutcome
from .._safeparse import DataError, load_json, load_yaml

NO_OUTPUT = "the agent wrote no output (output.md, output.txt or output.json in its sandbox)"


def output_text(ctx: CheckContext) -> tuple[str | None, str]:
    """The output's text (None when absent) and the name to quote in details."""
    source = ctx.source("output")
    text = source.text()
    path = getattr(source, "path", None)
    return text, (path.name if path is not None else "output")


def no_output(evidence_key: str = "fieldResults") -> CheckOutcome:
    """The outcome for a sandbox without an output file: no target, score 0."""
    return CheckOutcome(0.0, NO_OUTPUT, {evidence_key: [], "output": None})


@dataclass(frozen=True)
class Parsed:
    """The result of parsing the output as data: the value, or why it is not valid."""

    value: Any
    error: str | None
    #: the text parsed but was refused (too deep, NaN, huge int, alias bomb: see safeparse)
    refused: bool = False


def parse_json(text: str) -> Parsed:
    """The output as JSON (``safeparse.load_json``), with an error naming line and column."""
    try:
        return Parsed(load_json(text, "output"), None)
    except DataError as exc:
        where = f" at line {exc.line}" if exc.line else ""
        where += f", column {exc.column}" if exc.column else ""
        invalid = exc.problem.startswith("invalid JSON: ")
        problem = exc.problem.removeprefix("invalid JSON: ").split(" (column ")[0]
        if not invalid:  # refused (safeparse): the problem says it all
            return Parsed(None, exc.problem + (f" (line {exc.line})" if exc.line else ""), True)
        return Parsed(None, f"invalid JSON{where}: {problem}")


def parse_yaml(text: str) -> Parsed:
    """The output as YAML (``safeparse.load_yaml``); only a mapping or a list is *structure*."""
    try:
        value = load_yaml(text, "output")
    except DataError as exc:
        where = f" at line {exc.line}" if exc.line else ""
        where += f", column {exc.column}" if exc.column else ""
        invalid = exc.problem.startswith("invalid YAML: ")
        problem = exc.problem.removeprefix("invalid YAML: ")
        if not invalid:  # refused (safeparse): the problem says it all
            return Parsed(None, exc.problem + (f" (line {exc.line})" if exc.line else ""), True)
        return Parsed(None, f"invalid YAML{where}: {problem}")
    if not isinstance(value, (dict, list)):
        return Parsed(value, f"YAML parses to a {type(value).__name__}, not a mapping or a list")
    return Parsed(value, None)


def parse_data(text: str, file_format: str | None) -> Parsed:
    """The output as data: JSON for ``output.json``, else JSON first, then YAML."""
    parsed = parse_json(text)
    if parsed.error is None or parsed.refused or file_format == "json":
        return parsed
    fallback = parse_yaml(text)
    return fallback if fallback.error is None else parsed


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^\s{0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: level 1-6, its text, and its 1-based line."""

    level: int
    text: str
    line: int


def headings(text: str) -> tuple[list[Heading], bool]:
    """ATX (``## Title``) and setext headings outside fenced code; and whether fences balance."""
    found: list[Heading] = []
    fence: str | None = None
    lines = text.splitlines()
    previous = ""
    for number, line in enumerate(lines, start=1):
        opener = _FENCE.match(line)
        if opener:
            mark = opener.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            previous = ""
            continue
        if fence is not None:
            continue
        atx = _ATX.match(line)
        if atx:
            found.append(Heading(len(atx.group(1)), (atx.group(2) or "").strip(), number))
            previous = ""
            continue
        setext = _SETEXT.match(line)
        if setext and previous.strip() and not _ATX.match(previous):
            level = 1 if setext.group(1).startswith("=") else 2
            found.append(Heading(level, previous.strip(), number - 1))
            previous = ""
            continue
        previous = line
    return found, fence is None


_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*", re.UNICODE)


def word_count(text: str) -> int:
    """Words: runs of letters/digits, joined by apostrophes or hyphens (``prior-auth`` is one)."""
    return len(_WORD.findall(text))


def normalise_heading(text: str) -> str:
    """Case-folded, Markdown emphasis, numbering and trailing punctuation removed."""
    text = re.sub(r"[*_`]+", "", text).casefold()
    text = re.sub(r"^\s*(?:\d+(?:\.\d+)*[.)]?|[ivxlc]+[.)])\s+", "", text)
    text = re.sub(r"[\s:.\-–—]+$", "", text)
    return re.sub(r"\s+", " ", text).strip()
