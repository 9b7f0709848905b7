"""Write the JSON report atomically (:mod:`._outputs`) and read it back."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._heap import no_gc
from .._safeparse import strict_json_value
from .._secrets import redact_json
from ._outputs import write_chunks_atomic, write_text_atomic
from ._reading import read_bytes, read_report
from ._seal import Digest, check, seal, seal_tail, sealed_digest

_SURROGATE = re.compile("[\ud800-\udfff]")

if TYPE_CHECKING:
    from .._results import Report
    from ._build import LightReport
    from ._canonical import CanonicalDigest


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` so readers never see a half-written file
    (:func:`._outputs.write_text_atomic`: a regular file only)."""
    write_text_atomic(path, text)


def _dumps(value: Any) -> str:
    # compact: json's C encoder serves only ``indent=None``, 5-10x faster on a 10 MB report
    # (``verial show`` and ``python -m json.tool`` print it for people)
    try:
        return json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)
    except ValueError:  # a NaN or an infinity somewhere: strict JSON whatever the data held
        return json.dumps(
            strict_json_value(value), ensure_ascii=False, default=str, allow_nan=False
        )


def report_text(report: dict[str, Any]) -> str:
    """The report's JSON text: compact, with every task run on a line of its own.

    The lines are JSON whitespace, so any JSON reader reads the same report; they let
    :mod:`._scores` read a report of 60,000 task runs one task run at a time. The task runs of
    each benchmark run are put in place of a token no sandbox text can hold (random per write).
    """
    report = {k: v for k, v in report.items() if k != "integrity"}  # sealed anew below
    blocks = [run.get("task_runs", []) for run in report.get("benchmark_runs", [])]
    return seal("".join(_chunks(report, blocks)))


def _chunks(report: dict[str, Any], blocks: Sequence[Iterable[Any]]) -> Iterator[str]:
    """The unsealed text of ``report`` (no ``integrity``) in pieces: each benchmark run's task
    runs are ``blocks[i]`` (JSON values, made as they are read), a line each."""
    token = f"\x00{secrets.token_hex(16)}:"
    runs = [
        {**run, "task_runs": f"{token}{index}"}
        for index, run in enumerate(report.get("benchmark_runs", []))
    ]
    text = _dumps({**report, "benchmark_runs": runs})
    for index, tasks in enumerate(blocks):
        head, _, text = text.partition(_dumps(f"{token}{index}"))
        yield _escaped(head)
        first = True
        for task in tasks:
            yield _escaped(("[\n" if first else ",\n") + _dumps(task))
            first = False
        yield "[]" if first else "\n]"
    yield _escaped(text)


def _escaped(text: str) -> str:
    # A lone surrogate (a file name that is not UTF-8) cannot be written as UTF-8; JSON holds
    # it escaped. Surrogates occur only inside strings, so this keeps the JSON valid.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def write_json_report(path: Path, typed: Report) -> None:
    """Serialise and write the report, with every secret masked (:mod:`.._secrets`).

    ``typed.integrity`` becomes the seal written, so the report kept elsewhere (the results
    store) is the file's, seal included."""
    from .._results import Integrity

    text = report_text(redact_json(typed.to_json()))
    write_atomic(path, text + "\n")
    typed.integrity = Integrity(digest=sealed_digest(text))


def write_json_stream(
    path: Path, light: LightReport, canonical: CanonicalDigest | None = None
) -> None:
    """:func:`write_json_report` of the whole report, byte for byte, made one task run at a
    time from ``light`` (:class:`~pytest_verial.reporting._build.LightReport`): each task
    run's criterion runs in their JSON form from the session's records, masked, written and
    dropped; the seal digested as the text is written. ``light.report.integrity`` becomes the
    seal written. ``canonical``: each task run's masked JSON is fed to it too, as it is
    made (the results store's ``report_digest``, :mod:`._canonical`)."""
    from .._results import Integrity

    report = light.report
    head = redact_json(
        report.model_dump(
            mode="json",
            by_alias=True,
            exclude={"integrity": True, "benchmark_runs": {"__all__": {"task_runs"}}},
        )
    )
    blocks = [_task_runs(light, r, canonical) for r in range(len(report.benchmark_runs))]
    stated = Digest()

    def sealed() -> Iterator[str]:
        held = ""
        for chunk in _chunks(head, blocks):
            stated.update(chunk.encode("utf-8"))
            if held:
                yield held
            held = chunk
        if not held.endswith("}"):
            raise ValueError("only a JSON object is sealed")
        yield held[:-1] + seal_tail(stated.stated()) + "\n"

    write_chunks_atomic(path, sealed())
    report.integrity = Integrity(digest=stated.stated())


def _task_runs(
    light: LightReport, run: int, canonical: CanonicalDigest | None = None
) -> Iterator[dict[str, Any]]:
    """The task runs of benchmark run ``run``, each with its criterion runs, masked, one at a
    time (as the typed report's ``to_json()`` has them); each fed to ``canonical`` too."""
    for index, task in enumerate(light.report.benchmark_runs[run].task_runs):
        data = redact_json(light.task_json(run, index, task))
        if canonical is not None:
            canonical.task(run, data)
        yield data


def load_report(path: str | Path, sealed: bool = False) -> Report:
    """A written JSON report as its type; ValueError with the reason in one line.

    A report whose seal fails is refused; ``sealed``: an unsealed one too (:mod:`.seal`).
    Scores out of range, ``passed`` against the status, duplicate ids: refused
    (:func:`._scores.check_scores`), so every command agrees on what a valid report is."""
    from .._results import Report
    from ._agreement import check_agreement
    from ._scores import ReportScores, check_scores  # pydantic views, only when reading

    data = read_bytes(path)
    problem = check(data, sealed)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    try:
        with no_gc():  # hundreds of thousands of objects that all stay alive
            report = Report.from_json(read_report(path, data))
    except ValueError as exc:
        first = str(exc).splitlines()
        raise ValueError(
            f"{path}: not a valid pytest-verial report: {' '.join(first[:3])}"
        ) from None
    with no_gc():
        scores = ReportScores.of(report)
        check_scores(scores, path)  # the one validation every reader shares
        check_agreement(scores, path)  # its figures are its criterion runs' (issue 31)
    return report
