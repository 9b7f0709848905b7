"""The session's ``report_digest`` made one task run at a time (issue 33).

The results store finds a session by the SHA-256 of its report's canonical JSON text
(``store._rows.digest_of``: sorted keys, no spaces, non-ASCII as it is, UTF-8 with lone
surrogates passed through), over the report's ``to_json()`` with secrets masked; ``verial
import`` of the session's own JSON report finds the session by it. Made that way, the digest
needs the whole report's JSON at once: every criterion run of the session held as a dict.

:class:`CanonicalDigest` makes the same bytes in pieces. The report's JSON without its task
runs (the *head*: the session, each benchmark run's figures) is dumped once with each
benchmark run's ``task_runs`` replaced by a token no report can hold; the text between the
tokens is digested as it comes, and each task run's JSON (criterion runs and all) is dumped
and digested as the JSON report's writer makes it (``_json_report.write_json_stream``), then
dropped. The top-level keys after ``benchmark_runs`` in sorted order (``extensions``,
``generator``, ``integrity``, ``schema``, ``session``) are digested last, from the head as it
is at the store's end: the JSON report's seal (``integrity``) is known only once the file is
written. The digest is byte for byte ``digest_of``'s (tests/store/test_store_light_end.py).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _canonical(value: Any) -> str:
    """``store._rows.digest_of``'s text of ``value``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _pieces(head: Mapping[str, Any]) -> list[str]:
    """The canonical text of ``head`` cut where each benchmark run's task runs go: one piece
    more than there are benchmark runs."""
    token = f"\x00{secrets.token_hex(16)}:"
    runs = [
        {**run, "task_runs": f"{token}{index}"}
        for index, run in enumerate(head.get("benchmark_runs", []))
    ]
    text = _canonical({**head, "benchmark_runs": runs})
    pieces = []
    for index in range(len(runs)):
        piece, found, text = text.partition(_canonical(f"{token}{index}"))
        if not found:  # cannot happen: each token is written once, in order
            raise ValueError("the report's head lost a benchmark run's place")
        pieces.append(piece)
    pieces.append(text)
    return pieces


def head_of(report: Any) -> dict[str, Any]:
    """The masked JSON of a typed report without its task runs (its canonical head)."""
    from .._secrets import redact_json

    head: dict[str, Any] = redact_json(
        report.model_dump(
            mode="json", by_alias=True, exclude={"benchmark_runs": {"__all__": {"task_runs"}}}
        )
    )
    return head


class CanonicalDigest:
    """``digest_of`` of a report fed one task run at a time (see the module's docstring).

    ``head``: the masked report JSON without task runs (:func:`head_of`), as it is when the
    task runs are fed; :meth:`task` each task run's masked JSON, benchmark run by benchmark
    run, in order; :meth:`hexdigest` with the head as it is at the end."""

    def __init__(self, head: Mapping[str, Any]) -> None:
        self._pieces = _pieces(head)
        self._sha = hashlib.sha256()
        self._block = -1  # the benchmark run whose task runs are being fed
        self._fed: list[int] = []  # task runs fed of each benchmark run opened
        self._broken = False

    def _update(self, text: str) -> None:
        self._sha.update(text.encode("utf-8", "surrogatepass"))

    def _open(self, block: int) -> None:
        while self._block < block:
            if self._block >= 0:
                self._update("]")
            self._block += 1
            self._update(self._pieces[self._block] + "[")
            self._fed.append(0)

    def task(self, block: int, data: Mapping[str, Any]) -> None:
        """The next task run (masked JSON) of benchmark run number ``block``."""
        if self._broken or block < self._block or block >= len(self._pieces) - 1:
            self._broken = True  # fed out of order: :meth:`hexdigest` says so
            return
        self._open(block)
        text = _canonical(data)
        self._update(text if self._fed[block] == 0 else "," + text)
        self._fed[block] += 1

    def hexdigest(self, head: Mapping[str, Any], sizes: Sequence[int]) -> str | None:
        """The digest, the report's last keys taken from ``head`` (the report at the end);
        ``sizes``: each benchmark run's number of task runs. None when what was fed is not
        that report (a write that failed half way, a head changed before its last keys):
        the caller digests the report afresh (:func:`digest_report`)."""
        pieces = _pieces(head)
        if self._broken or pieces[:-1] != self._pieces[:-1]:
            return None
        self._open(len(pieces) - 2)
        if self._fed != list(sizes):
            return None
        if self._block >= 0:
            self._update("]")
        self._update(pieces[-1])
        self._broken = True  # finished: a second call would digest the tail twice
        return self._sha.hexdigest()


def digest_report(head: Mapping[str, Any], blocks: Iterable[Iterable[Mapping[str, Any]]]) -> str:
    """The digest of a report made in one pass: ``head`` (:func:`head_of`) and each
    benchmark run's task runs (masked JSON, made as they are read)."""
    digest = CanonicalDigest(head)
    sizes = []
    for block, tasks in enumerate(blocks):
        n = 0
        for task in tasks:
            digest.task(block, task)
            n += 1
        sizes.append(n)
    done = digest.hexdigest(head, sizes)
    assert done is not None  # fed in order, from the same head
    return done
