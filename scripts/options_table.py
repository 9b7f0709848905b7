#!/usr/bin/env python3
"""Write or check the README's options table, generated from the options table in
``src/pytest_verial/_config/options.py`` (:func:`pytest_verial._config.options.markdown_table`).

The table sits between the two marker lines below in README.md::

    python scripts/options_table.py --write   # rewrite it
    python scripts/options_table.py --check   # exit 1 when README.md differs (a test runs this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_verial._config.options import markdown_serve_table, markdown_table

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN = "<!-- options table: generated from src/pytest_verial/_config/options.py by "
BEGIN += "scripts/options_table.py --write; do not edit by hand -->"
END = "<!-- end of the options table -->"
SERVE_BEGIN = BEGIN.replace("options table", "serve limits table")
SERVE_END = END.replace("options table", "serve limits table")


def _between(text: str, begin: str, end: str, table: str) -> str:
    head, found, rest = text.partition(begin + "\n")
    _, closed, tail = rest.partition(end)
    if not found or not closed:
        raise ValueError(f"README.md lacks the marker lines {begin!r} and {end!r}")
    return head + found + table + closed + tail


def with_table(text: str) -> str:
    """README text with the generated tables between their markers (ValueError without
    them): the options table, and verial serve's limits."""
    text = _between(text, BEGIN, END, markdown_table())
    return _between(text, SERVE_BEGIN, SERVE_END, markdown_serve_table())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 when README.md differs")
    mode.add_argument("--write", action="store_true", help="rewrite the table in README.md")
    parser.add_argument("--readme", type=Path, default=README, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    try:
        wanted = with_table(text)
    except ValueError as exc:
        print(f"options_table: {exc}", file=sys.stderr)
        return 2
    if args.write:
        if wanted != text:
            args.readme.write_text(wanted, encoding="utf-8")
        return 0
    if wanted != text:
        print(
            f"options_table: the options table in {args.readme} differs from "
            "src/pytest_verial/_config/options.py; run python scripts/options_table.py --write",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
