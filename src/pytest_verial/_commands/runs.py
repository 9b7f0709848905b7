"""``verial runs`` and ``verial runs delete``: the stored benchmark runs and sessions."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from .._config.store_option import add_store_argument, open_cli_store
from .._display import escape

if TYPE_CHECKING:
    from ..store._repo_sessions import SessionRow
    from ..store._repo_trend import RunRow


# -- verial runs ------------------------------------------------------------------------------
def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        nargs="*",
        metavar="delete REF",
        help="`delete REF...` deletes stored runs: a benchmark run (br_...), or every run of a "
        "session (ses_..., latest, latest~N)",
    )
    parser.add_argument(
        "--sessions",
        action="store_true",
        help="list sessions (what latest and latest~N name) instead of benchmark runs",
    )
    parser.add_argument(
        "--benchmark", metavar="B", help="only this benchmark (slug, slug@version or file)"
    )
    parser.add_argument(
        "--agent",
        metavar="A",
        help="only runs named A (run.yaml's agent) or scored on a run folder labelled A",
    )
    parser.add_argument("--since", metavar="DATE", help="only runs since DATE (ISO 8601, UTC)")
    parser.add_argument("--limit", metavar="N", help="at most N runs or sessions (default 50)")
    parser.add_argument("--json", action="store_true", help="a JSON list instead of the table")
    add_store_argument(parser)


def _since(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--since: {text!r} is not a date (YYYY-MM-DD or an ISO 8601 time)"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _limit(text: str | None) -> int:
    if text is None:
        return 50
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"--limit: {text!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"--limit: {value} is below 1")
    return value


def _row_json(row: RunRow) -> dict[str, object]:
    return {
        "id": row.id,
        "created_at": row.created_at.isoformat(),
        "benchmark": row.benchmark_ref,
        "benchmark_file": row.benchmark_file,
        "runs": row.run_labels,
        "name": row.name,
        "agent": row.agent,
        "scored": row.scored,
        "status": row.state,
        "score": row.score,
        "verdict": row.verdict,
        "strict_success": row.strict_success,
        "criteria_passed": row.criteria_passed,
        "criteria_failed": row.criteria_failed,
        "criteria_error": row.criteria_error,
        "git_commit": row.git_commit,
        "session_id": row.session_id,
    }


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _session_json(row: SessionRow) -> dict[str, object]:
    return {
        "id": row.id,
        "started_at": row.started_at.isoformat(),
        "source": row.source,
        "status": row.state,
        "benchmark_runs": row.benchmark_runs,
        "names": row.names,
        "benchmarks": row.benchmarks,
        "verdicts": row.verdicts,
        "criteria_passed": row.criteria_passed,
        "criteria_failed": row.criteria_failed,
        "criteria_error": row.criteria_error,
        "git_commit": row.git_commit,
    }


def _when(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _table(rows: list[RunRow]) -> list[str]:
    head = (
        "id",
        "when (UTC)",
        "benchmark",
        "agent",
        "score",
        "verdict",
        "status",
        "strict",
        "passed",
        "failed",
        "commit",
    )
    body = [
        (
            row.id,
            _when(row.created_at),
            row.benchmark_ref,
            row.name,
            _number(row.score) + (" (scored)" if row.scored else ""),
            row.verdict or "-",
            row.state,
            _number(row.strict_success),
            str(row.criteria_passed),
            str(row.criteria_failed + row.criteria_error),
            (row.git_commit or "-")[:10],
        )
        for row in rows
    ]
    return _columns(head, body)


def _verdicts(counts: dict[str, int]) -> str:
    order = ("pass", "partial", "fail")
    shown = [f"{counts[v]} {v}" for v in order if counts.get(v)]
    return ", ".join(shown) or "-"


def _session_table(rows: list[SessionRow]) -> list[str]:
    head = (
        "session",
        "when (UTC)",
        "runs",
        "agent",
        "status",
        "verdicts",
        "passed",
        "failed",
        "commit",
    )
    body = [
        (
            row.id,
            _when(row.started_at),
            str(row.benchmark_runs),
            ", ".join(row.names) or "-",
            row.state,
            _verdicts(row.verdicts),
            str(row.criteria_passed),
            str(row.criteria_failed + row.criteria_error),
            (row.git_commit or "-")[:10],
        )
        for row in rows
    ]
    return _columns(head, body)


def _columns(head: tuple[str, ...], body: Sequence[tuple[str, ...]]) -> list[str]:
    cells = [tuple(escape(c) for c in line) for line in [head, *body]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(head))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in cells
    ]


def run(args: argparse.Namespace) -> int:
    """List the stored runs newest first, or delete some (``runs delete REF...``)."""
    if args.action:
        if args.action[0] != "delete":
            print(
                f"verial runs: unknown action {escape(args.action[0])!r} (did you mean "
                "`verial runs delete REF...`?)",
                file=sys.stderr,
            )
            return 2
        return _delete(args.action[1:], args.store)
    from ..store import StoreError

    try:
        since, limit = _since(args.since), _limit(args.limit)
        with open_cli_store(args.store) as store:
            lister = store.list_sessions if args.sessions else store.list_runs
            rows = lister(benchmark=args.benchmark, agent=args.agent, since=since, limit=limit)
    except (ValueError, StoreError) as exc:
        print(f"verial runs: {escape(str(exc))}", file=sys.stderr)
        return 2
    if args.json:
        shown = [
            _session_json(cast("SessionRow", r)) if args.sessions else _row_json(cast("RunRow", r))
            for r in rows
        ]
        print(json.dumps(shown, indent=2, ensure_ascii=False))
        return 0
    if not rows:
        what = "sessions" if args.sessions else "runs"
        print(f"no stored {what}" + (" match" if args.benchmark or args.agent or since else ""))
        return 0
    table = (
        _session_table(cast("list[SessionRow]", rows))
        if args.sessions
        else _table(cast("list[RunRow]", rows))
    )
    for line in table:
        print(line)
    return 0


def _delete(refs: list[str], store_value: str | None) -> int:
    if not refs:
        print("verial runs delete: give the runs to delete (REF...)", file=sys.stderr)
        return 2
    from ..store import StoreError

    try:
        with open_cli_store(store_value) as store:
            # every ref first: all or nothing
            ids = [i for ref in refs for i in store.run_ids(store.resolve_ref(ref))]
            deleted = store.delete_runs(ids)
    except StoreError as exc:
        print(f"verial runs delete: {escape(str(exc))}", file=sys.stderr)
        return 2
    print(f"deleted {deleted} benchmark run{'' if deleted == 1 else 's'}: {', '.join(ids)}")
    return 0
