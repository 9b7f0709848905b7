"""What a user of the ``verial`` command sees around the commands themselves: a reader that
goes away (``verial ... | head``) stops the command quietly (no BrokenPipeError traceback, the
status a process killed by SIGPIPE reports, 141), and help text without markup."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("args", [["schema", "report"], ["schema", "benchmark"], ["--help"]])
def test_a_closed_pipe_ends_quietly(args: list[str]) -> None:
    # a pipe that is closed before the command writes: the first write (or the final flush)
    # meets EPIPE whatever the size of the output
    read, write = os.pipe()
    os.close(read)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", *args],
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    os.close(write)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
    assert proc.returncode in (0, 141)
    if args[0] != "--help":  # argparse's --help exits inside parse_args, before the command
        assert proc.returncode == 141


def _commands() -> list[list[str]]:
    from pytest_verial.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [[]] + [[name] for name in sub.choices] + [["judge", "calibrate"]]


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c) or "verial")
def test_help_has_no_markup(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_verial.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: verial")
    assert "`" not in out, out
