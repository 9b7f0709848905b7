"""``verial trend``: a benchmark's score per stored run over time, per axis and per task."""

from __future__ import annotations

import argparse

from ..store._cli import add_store_argument


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("benchmark", metavar="BENCHMARK", help="benchmark ref, slug or file")
    parser.add_argument("--task", metavar="T", help="only this task (its task key)")
    parser.add_argument("--last", metavar="N", type=int, help="only the newest N runs")
    parser.add_argument("--json", action="store_true", help="every point as JSON")
    add_store_argument(parser)


def run(args: argparse.Namespace) -> int:
    from ..store._trend import run

    return run(args)
