"""``sftp-file-present``: files the agent dropped under the sandbox's SFTP prefix.

::

    assert: sftp-file-present
    pattern: outbound/claims/*.json     # glob relative to the prefix; ** for any depth
    min_count: 1                        # default 1; max_count optional
    parse: json                         # json | ndjson | csv | text | hl7 | x12 (optional)
    fields: [{path: claims.0.claim_id, expected: CLM-1001}]
    contains: [Referral]                # on the file's text; regex / not_contains too
    max_size: 1048576                   # bytes; min_size too
    content_type: application/json      # or a list of allowed types

Rules (our own where Verial is silent):

- The pattern never leaves the prefix: absolute patterns, ``..``/``.`` segments, backslashes
  and percent-encoded separators are refused when the benchmark is loaded.
- Counts gate: fewer than ``min_count`` or more than ``max_count`` matching files scores 0.
- Each matching file is scored on every field, phrase, size and content-type check
  (passed / all, 1.0 with none); the best file counts (the first by path on ties) and the
  evidence names it. Files are read only when content is checked, in path order, and the
  search stops at the first file that passes everything.
- ``fields`` paths starting with ``$`` read the file's metadata: ``$path``, ``$name``,
  ``$size``, ``$content_type``, ``$rows`` (rows of csv/ndjson, items of a JSON list, lines
  of text). Without ``parse``, content paths use the kind the file's extension implies.
- A file that cannot be read or parsed (or whose kind cannot be told) is skipped with its error
  in ``unreadable``; when no matching file can be scored the criterion is an error naming the
  file and line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, JsonValue, field_validator, model_validator

from .._compare import MISSING, FieldSpec, check_regex, field_result, fields_score
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._errors import CheckError, CriterionError
from ..sources._files.base import BaseFilesSource, FileEntry, compile_glob, unsafe_reason
from ._files_parse import BY_EXTENSION, Parsed, decode, parse

_LISTED = 100


class SftpFilePresent(AssertionSpec):
    """The ``sftp-file-present`` assertion."""

    kind: Literal["sftp-file-present"] = Field(alias="assert")
    pattern: str = Field(validation_alias=AliasChoices("pattern", "path", "glob"), min_length=1)
    min_count: int = Field(default=1, ge=0)
    max_count: int | None = Field(default=None, ge=0)
    parse: Literal["json", "ndjson", "csv", "text", "hl7", "x12"] | None = None
    delimiter: str = Field(default=",", min_length=1, max_length=1)
    fields: list[FieldSpec] = Field(default_factory=list)
    contains: list[str] = Field(default_factory=list)
    not_contains: list[str] = Field(default_factory=list)
    regex: str | None = None
    min_size: int | None = Field(default=None, ge=0)
    max_size: int | None = Field(default=None, ge=0)
    content_type: str | list[str] | None = None

    @field_validator("pattern")
    @classmethod
    def _confined(cls, value: str) -> str:
        reason = unsafe_reason(value)
        if reason is not None:
            raise ValueError(f"pattern {value!r} would leave the SFTP prefix: {reason}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> SftpFilePresent:
        if self.max_count is not None and self.max_count < self.min_count:
            raise ValueError("max_count is smaller than min_count")
        if self.regex is not None:
            FieldSpec(path="$text", op="regex", expected=self.regex)  # ValueError when invalid
        if self.min_count == 0 and self.checks():
            raise ValueError("content checks need min_count >= 1 (min_count 0 asserts absence)")
        return self

    def checks(self) -> list[tuple[FieldSpec, bool]]:
        """Every per-file check as ``(FieldSpec, negated)``; ``negated`` marks not_contains."""
        specs = [(f, False) for f in self.fields]
        for phrases, negated in ((self.contains, False), (self.not_contains, True)):
            for phrase in phrases:
                specs.append((FieldSpec(path="$text", op="contains", expected=phrase), negated))
        if self.regex is not None:
            specs.append((FieldSpec(path="$text", op="regex", expected=self.regex), False))
        if self.min_size is not None:
            specs.append((FieldSpec(path="$size", op="gte", expected=self.min_size), False))
        if self.max_size is not None:
            specs.append((FieldSpec(path="$size", op="lte", expected=self.max_size), False))
        if isinstance(self.content_type, list):
            allowed: list[JsonValue] = list(self.content_type)
            specs.append((FieldSpec(path="$content_type", op="in", expected=allowed), False))
        elif self.content_type is not None:
            specs.append((FieldSpec(path="$content_type", expected=self.content_type), False))
        return specs

    def first_read(self, source: BaseFilesSource) -> FileEntry | None:
        """The object this criterion certainly reads, which a live source downloads ahead
        (:class:`~pytest_verial.sources._files.gcs.ReadsAhead`): the first match when it checks
        content and the count is within bounds (the check reads matches in path order)."""
        if not self.checks():
            return None
        try:
            matched = source.match(self.pattern)
        except CriterionError:
            return None
        count, high = len(matched), self.max_count
        if not matched or count < self.min_count or (high is not None and count > high):
            return None
        first = matched[0]
        return first if first.size <= source.max_read_bytes and reads_content(self, first) else None


def _kind(spec: SftpFilePresent, entry: FileEntry) -> str:
    if spec.parse is not None:
        return spec.parse
    name = entry.path.rsplit("/", 1)[-1]
    kind = BY_EXTENSION.get(name.rsplit(".", 1)[-1].lower()) if "." in name else None
    if kind is None:
        raise CheckError(
            f"{entry.path}: cannot tell how to parse it; give 'parse' (json, csv, ...)"
        )
    return kind


class _File:
    """One candidate file: metadata at once, text and parsed content on demand (cached)."""

    def __init__(self, source: Any, entry: FileEntry, spec: SftpFilePresent) -> None:
        self.source, self.entry, self.spec = source, entry, spec
        self.where = f"{source.describe()}{entry.path}"

    def text(self) -> str:
        return self.source.memo(  # type: ignore[no-any-return]
            ("text", self.entry.path), lambda: decode(self.source.read(self.entry), self.where)
        )

    def parsed(self) -> Parsed:
        kind = _kind(self.spec, self.entry)
        key = ("parsed", self.entry.path, kind, self.spec.delimiter)
        return self.source.memo(  # type: ignore[no-any-return]
            key, lambda: parse(kind, self.source.read(self.entry), self.where, self.spec.delimiter)
        )

    def value(self, path: str) -> Any:
        meta = {
            "$path": self.entry.path,
            "$name": self.entry.path.rsplit("/", 1)[-1],
            "$size": self.entry.size,
            "$content_type": (self.entry.content_type or "").split(";")[0].strip().lower() or None,
        }
        if path in meta:
            return meta[path]
        if path == "$text":
            return self.text()
        if path == "$rows":
            rows = self.parsed().rows
            return MISSING if rows is None else rows
        if path.startswith("$"):
            raise CheckError(
                f"unknown metadata path {path!r}; use $path, $name, $size, "
                "$content_type, $rows or $text"
            )
        return self.parsed().get(path)


def _row(spec: FieldSpec, negated: bool, file: _File) -> dict[str, JsonValue]:
    actual = file.value(spec.path)
    row = field_result(spec, actual)
    if negated:  # not_contains: the negation of contains
        row["op"], row["passed"] = "not_contains", not row["passed"]
    if spec.path == "$text":
        row["actual"] = _snippet(actual, spec)
    return row


def _snippet(text: str, spec: FieldSpec) -> str:
    """A short excerpt for evidence: around the match, else the file's start."""
    if spec.op == "regex":
        found = check_regex(str(spec.expected)).search(text, "regex", "the file's text")
        start = found.start() if found else -1
    else:
        start = text.find(str(spec.expected))
    if start < 0:
        return text[:120] + ("..." if len(text) > 120 else "") if text else "(empty file)"
    lo = max(0, start - 40)
    return ("..." if lo else "") + text[lo : start + len(str(spec.expected)) + 40] + "..."


#: paths answered from the listing, without reading the file
_METADATA = frozenset({"$path", "$name", "$size", "$content_type"})


def reads_content(spec: SftpFilePresent, entry: FileEntry) -> bool:
    """Whether scoring ``entry`` reads its content (so a live source may download it ahead):
    the checks in order until the first that needs content, as :func:`_score` meets them."""
    for field, _ in spec.checks():
        if field.path in _METADATA:
            continue
        if field.path == "$text":
            return True
        if field.path.startswith("$") and field.path != "$rows":
            return False  # an unknown metadata path errs before anything is read
        try:
            _kind(spec, entry)
        except CheckError:
            return False  # cannot tell how to parse it: errs before reading
        return True
    return False


def _score(
    file: _File, specs: list[tuple[FieldSpec, bool]]
) -> tuple[float, list[dict[str, JsonValue]]]:
    results = [_row(spec, negated, file) for spec, negated in specs]
    return fields_score(results), results


def check(spec: SftpFilePresent, ctx: CheckContext) -> CheckOutcome:
    """Score the best file matching the pattern."""
    source = ctx.source("files")
    where = source.describe()
    matched: list[FileEntry] = source.match(spec.pattern)
    evidence: dict[str, Any] = {
        "matched_paths": [e.path for e in matched[:_LISTED]],
        "matched_count": len(matched),
        "source": where,
        "file": None,
        "fieldResults": [],
    }
    glob = compile_glob(spec.pattern)
    refused = [name for name in getattr(source, "refused", []) if glob.match(name)]
    if refused:
        evidence["refused_paths"] = refused[:_LISTED]
    count, lo, hi = len(matched), spec.min_count, spec.max_count
    found = f"{count} file{'s' if count != 1 else ''} matching {spec.pattern!r} under {where}"
    if count < lo or (hi is not None and count > hi):
        wanted = f"at least {lo}" if count < lo else f"at most {hi}"
        return CheckOutcome(0.0, f"{found}, expected {wanted}", evidence)
    specs = spec.checks()
    if not specs or not matched:
        if matched:
            evidence["file"] = matched[0].evidence()
        return CheckOutcome(1.0, found, evidence)
    best: tuple[float, FileEntry, list[dict[str, JsonValue]]] | None = None
    unreadable: list[dict[str, str]] = []
    first_error: CriterionError | None = None
    for entry in matched:
        try:
            score, results = _score(_File(source, entry, spec), specs)
        except CriterionError as exc:
            unreadable.append({"path": entry.path, "error": str(exc)})
            first_error = first_error or exc
            continue
        if best is None or score > best[0]:
            best = (score, entry, results)
        if score == 1.0:
            break
    if unreadable:
        evidence["unreadable"] = unreadable[:_LISTED]
    if best is None:
        assert first_error is not None
        more = f" (and {len(unreadable) - 1} more unreadable files)" if len(unreadable) > 1 else ""
        raise type(first_error)(f"{first_error}{more}")
    score, entry, results = best
    evidence["file"] = entry.evidence()
    evidence["fieldResults"] = results
    passed = sum(1 for r in results if r["passed"])
    details = f"{entry.path}: {passed} of {len(results)} checks passed"
    if count > 1:
        details += f" (best of {count} matching files)"
    if unreadable:
        details += f"; {len(unreadable)} unreadable: {unreadable[0]['error']}"
    return CheckOutcome(score, details, evidence)


CHECK = CheckSpec(name="sftp-file-present", model=SftpFilePresent, run=check, sources=("files",))
