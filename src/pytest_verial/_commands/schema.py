"""``verial schema benchmark|criteria|report``: print a JSON Schema (the report's is generated
from the result types)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial schema``."""
    parser.add_argument("which", choices=["benchmark", "criteria", "report"])
    parser.add_argument(
        "--rootdir", metavar="DIR", help="add the checks registered by conftest.py files under DIR"
    )


def report_schema() -> dict[str, Any]:
    """The JSON report's schema, generated from the result types."""
    from .._results import report_schema as generated

    return generated()


def run(args: argparse.Namespace) -> int:
    """Print a JSON Schema."""
    from .._schema import ConftestError, benchmark_schema, conftest_registry, criteria_schema

    if args.rootdir and not Path(args.rootdir).is_dir():
        print(f"verial schema: --rootdir {args.rootdir}: no such folder", file=sys.stderr)
        return 2
    try:
        registry = conftest_registry(Path(args.rootdir)) if args.rootdir else None
    except ConftestError as exc:
        print(f"verial schema: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    if args.which == "benchmark":
        schema = benchmark_schema(registry)
    elif args.which == "criteria":
        schema = criteria_schema(registry)
    else:
        schema = report_schema()
    print(json.dumps(schema, indent=2))
    return 0
