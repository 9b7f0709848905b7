"""A ``verial`` command whose reader goes away (``verial ... | head``) stops quietly: no
BrokenPipeError traceback, the status a process killed by SIGPIPE reports (141)."""

from __future__ import annotations

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
