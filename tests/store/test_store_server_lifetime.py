"""The suite's servers never outlive it (issue 33): a test process killed by SIGTERM (Python
exits at once, its fixtures' teardown never runs) still takes its PostgreSQL, which
``pg_ctl`` daemonized, down with it (``tests/lifetime_support.py``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lifetime_support import tie
from pg_server import binaries

STORE = Path(__file__).resolve().parent
TESTS = STORE.parent

#: a test process holding a PostgreSQL as the ``postgres`` fixture does, until it is killed
HOLDER = f"""
import sys, time
sys.path.insert(0, {str(STORE)!r})
from pg_server import pg_server
with pg_server() as pg:
    print(pg.pid, pg.folder, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone(pid: int, folder: Path | None = None) -> bool:
    """Waits (a hang guard, not a timing) until ``pid`` has ended and ``folder`` is removed."""
    deadline = time.monotonic() + 120
    while _alive(pid) or (folder is not None and folder.exists()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_postgresql_dies_with_the_test_process_killed_by_sigterm() -> None:
    if binaries() is None:
        pytest.skip("PostgreSQL's initdb/pg_ctl are missing (scripts/setup.d/60-postgres.sh)")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, text=True, cwd=STORE
    )
    assert holder.stdout is not None
    line = holder.stdout.readline()
    assert line, "the holder did not start its PostgreSQL"
    pid, folder = int(line.split()[0]), Path(line.split()[1])
    try:
        assert _alive(pid)
        holder.send_signal(signal.SIGTERM)
        assert holder.wait(timeout=60) == -signal.SIGTERM  # no teardown ran
        assert _gone(pid, folder), f"PostgreSQL {pid} outlived its test process"
    finally:
        holder.kill()
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_watchdog_stops_its_server_only_when_its_owner_dies() -> None:
    """A normal teardown dismisses the watchdog first (it has exited when ``dismiss``
    returns: it never signals the server's PID); an owner that dies undismissed, here by
    ``os._exit``, has its server stopped."""
    server = subprocess.Popen(["sleep", "600"])
    try:
        tie(server.pid)()
        assert server.poll() is None
        owner = (
            "import os, sys; from lifetime_support import tie; tie(int(sys.argv[1])); os._exit(0)"
        )
        subprocess.run([sys.executable, "-c", owner, str(server.pid)], cwd=TESTS, check=True)
        assert server.wait(timeout=60) == -signal.SIGTERM
    finally:
        server.kill()
        server.wait()
