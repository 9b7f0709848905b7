"""``verial hl7-capture``: listen for HL7 v2 over MLLP, ACK and record each message
(``events.jsonl``). The server is :mod:`pytest_verial.hl7._capture`, which the
``verial_hl7_capture`` fixture also starts; it is imported when the command runs."""

from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``verial hl7-capture`` (the capture server's own)."""
    from ..hl7._capture import configure_parser

    configure_parser(parser)


def run(args: argparse.Namespace) -> int:
    """Run the capture server until it is stopped."""
    from ..hl7._capture import run_from_args

    return run_from_args(args)
