"""``verial judge calibrate LABELS``: the judge's agreement, kappa and macro F1 on human labels
(the figures themselves: :mod:`pytest_verial.judge._calibrate`)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._scoring import reaches
from ..judge._calibrate import (
    DEFAULT_THRESHOLD,
    Asked,
    Item,
    _fmt,
    calibrate,
    figures,
    flip_rates,
    read_labels,
    read_report_labels,
    summary,
)

if TYPE_CHECKING:
    from ..judge._settings import JudgeSettings


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``verial judge calibrate``."""
    from .._config.options import JUDGE_PLUGIN, of_plugin

    sub = parser.add_subparsers(dest="judge_command", required=True, metavar="COMMAND")
    p = sub.add_parser("calibrate", help="agreement, kappa and macro F1 of the judge on labels")
    p.add_argument("labels", help="JSONL of labelled criterion runs (README)")
    p.add_argument(
        "--report",
        metavar="REPORT",
        help="LABELS names criterion runs of this JSON report (task_key, criterion_id, label)",
    )
    p.add_argument(
        "--run", metavar="DIR", help="with --report: the run folder the outputs are read from"
    )
    p.add_argument("--json", metavar="OUT", help="also write the figures as JSON to OUT")
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help="judge score from which an item is met (default 0.75: a rating of 4 or 5)",
    )
    p.add_argument("--min-kappa", type=float, help="exit 1 when kappa is below (or undefined)")
    p.add_argument("--min-f1", type=float, help="exit 1 when macro F1 is below (or undefined)")
    p.add_argument(
        "--perturb",
        action="store_true",
        help="re-ask each item with the rubric shuffled, padding added and sections reordered, "
        "and report each perturbation's flip rate",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the rubric shuffle (default 0)")
    for opt in of_plugin(JUDGE_PLUGIN):  # the client's options, as pytest takes them
        if opt.key.startswith("judge_") and opt.key != "judge_concurrency":  # one at a time
            p.add_argument(str(opt.flag), dest=opt.key, metavar=opt.metavar, help=opt.help)
    p.add_argument(
        "--verial-judge-max-tokens",
        dest="judge_max_tokens",
        metavar="N",
        help="cap on each reply's tokens (run.yaml sources.judge.max_tokens; default 200 + 160 "
        "per principle)",
    )


def run(args: argparse.Namespace) -> int:
    """0: figures printed (and the gates met); 1: a gate failed or a line was refused;
    2: unusable input or settings."""
    from .._errors import RunConfigError
    from ..judge._client import JudgeClient, JudgeError
    from ..judge._settings import build_settings
    from ..reporting._json_report import write_atomic

    path = Path(args.labels)
    refused = _refused_arguments(args, path)
    if refused:
        print(f"verial judge calibrate: {refused}", file=sys.stderr)
        return 2
    options = {k: v for k, v in vars(args).items() if k.startswith("judge_") and v is not None}
    options.pop("judge_command", None)
    try:
        settings = build_settings(options)
        client = JudgeClient(settings)
    except (RunConfigError, JudgeError) as exc:
        print(f"verial judge calibrate: {exc}", file=sys.stderr)
        return 2
    if not settings.model:
        print("verial judge calibrate: no judge model: give --verial-judge-model", file=sys.stderr)
        return 2
    if bool(args.report) != bool(args.run):
        print("verial judge calibrate: --report and --run go together", file=sys.stderr)
        return 2
    labelled = _labelled_items(args, path)
    if isinstance(labelled, int):
        return labelled
    items, problems = labelled
    stability: dict[str, Any] | None = None
    try:
        asked = calibrate(items, client, settings.max_target_chars)
        if args.perturb:
            stability, again = flip_rates(asked, client, settings.max_target_chars, args.seed)
    finally:
        client.close()
    totals = figures(asked if stability is None else [*asked, *again])
    result = _result(asked, totals, stability, settings, len(problems))
    for line in summary(result):
        print(line)
    if args.json:
        try:
            write_atomic(Path(args.json), json.dumps(result, indent=2) + "\n")
        except OSError as exc:
            print(
                f"verial judge calibrate: cannot write {args.json}: {exc.strerror or exc}",
                file=sys.stderr,
            )
            return 2
    failed = []
    for name, key, floor in (
        ("kappa", "kappa", args.min_kappa),
        ("macro F1", "macro_f1", args.min_f1),
    ):
        if floor is not None and (result[key] is None or not reaches(result[key], floor)):
            failed.append(f"{name} {_fmt(result[key])} is below {floor:g}")
    for message in failed:
        print(f"verial judge calibrate: gate failed: {message}", file=sys.stderr)
    return 1 if failed or problems else 0


def _refused_arguments(args: argparse.Namespace, path: Path) -> str | None:
    """What makes the command's arguments unusable before any setting is read, or None."""
    if not path.is_file():
        return f"{args.labels}: not a readable file"
    if args.json and Path(args.json).exists() and Path(args.json).resolve() == path.resolve():
        return f"{args.json} is the labels file: refusing to overwrite it"
    if not 0 <= args.threshold <= 1:
        return "--threshold must be from 0 to 1"
    for flag, floor in (("--min-kappa", args.min_kappa), ("--min-f1", args.min_f1)):
        if floor is not None and not math.isfinite(floor):  # -inf would pass every gate
            return f"{flag}: {floor!r} is not a finite number"
    return None


def _labelled_items(args: argparse.Namespace, path: Path) -> tuple[list[Item], list[str]] | int:
    """The labelled items (from the labels alone or with ``--report``/``--run``) and the lines
    refused, each printed; or the exit status when nothing is usable."""
    if args.report:
        from ..reporting._json_report import load_report

        try:
            report = load_report(args.report)
        except ValueError as exc:
            print(f"verial judge calibrate: {exc}", file=sys.stderr)
            return 2
        items, problems = read_report_labels(path, report, Path(args.run), args.threshold)
    else:
        items, problems = read_labels(path, args.threshold)
    for problem in problems:
        print(f"verial judge calibrate: {problem}", file=sys.stderr)
    if not items:
        print(f"verial judge calibrate: no usable item in {args.labels}", file=sys.stderr)
        return 1 if problems else 2
    return items, problems


def _result(
    asked: list[Asked],
    totals: dict[str, Any],
    stability: dict[str, Any] | None,
    settings: JudgeSettings,
    refused: int,
) -> dict[str, Any]:
    """The figures ``--json`` writes and the summary prints."""
    return {
        "judge": {"model": settings.model, "base_url": settings.base_url},
        **figures(asked),
        # every call counts, the perturbed re-asks included
        "calls": totals["calls"],
        "tokens": totals["tokens"],
        "cost": totals["cost"],
        "perturbations": stability,
        "refused_lines": refused,
        "per_item": [
            {
                "id": a.item.id,
                "human_met": a.item.human_met,
                "judge_met": a.judge_met,
                "judge_score": a.score,
                "unparseable": a.unparseable,
                "error": a.error,
            }
            for a in asked
        ],
    }
