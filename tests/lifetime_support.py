"""The suite's servers die with the test process that started them, however it ends.

A session-scoped server is stopped by its fixture's teardown, which never runs when the test
process is killed: a SIGTERM (Python's default is to exit at once, no ``finally``), a SIGKILL,
an xdist worker lost with its controller. PostgreSQL's ``pg_ctl`` daemonizes and ``verial
serve`` runs in a session of its own, so they outlived the suite (issue 33). :func:`tied`
starts, beside each server, a watchdog process that holds the read end of a pipe whose write
end only the test process holds: when the test process ends, whatever ended it, the kernel
closes that end, the watchdog reads end-of-file and stops the server by its PID (the signal
the fixture would send, then SIGKILL after a grace period) and removes its folders. The
fixture's own stop first dismisses the watchdog, so a normal teardown is unchanged and the
watchdog never signals a PID the server no longer holds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

#: the watchdog (``python -S -c``, no site import: ~15 ms): a byte on stdin dismisses it,
#: end-of-file without one means its owner is gone
_WATCH = r"""
import os, shutil, signal, sys, time
pid, sig, grace, folders = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4:]
if sys.stdin.buffer.read(1):
    sys.exit(0)
def alive():
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie of the dead owner's is reaped by init; one of ours cannot be (not our child)
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
try:
    os.kill(pid, sig)
    deadline = time.monotonic() + grace
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive():
        os.kill(pid, signal.SIGKILL)
except ProcessLookupError:
    pass
for folder in folders:
    shutil.rmtree(folder, ignore_errors=True)
"""


def tie(
    pid: int, sig: int = signal.SIGTERM, grace: float = 10.0, folders: tuple[Path, ...] = ()
) -> Callable[[], None]:
    """Until the returned ``dismiss`` is called, the process ``pid`` (then ``folders``) is
    stopped by a watchdog if this process ends. Call ``dismiss`` before stopping the server."""
    read, write = os.pipe()  # both non-inheritable: no other child keeps the write end open
    try:
        watchdog = subprocess.Popen(
            [sys.executable, "-S", "-c", _WATCH, str(pid), str(int(sig)), str(grace)]
            + [str(f) for f in folders],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C or a group's SIGTERM does not reach it
        )
    finally:
        os.close(read)
    done = False

    def dismiss() -> None:
        nonlocal done
        if not done:
            done = True
            with contextlib.suppress(OSError):
                os.write(write, b"x")
            os.close(write)
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(timeout=10)

    return dismiss


@contextlib.contextmanager
def tied(
    pid: int, sig: int = signal.SIGTERM, grace: float = 10.0, folders: tuple[Path, ...] = ()
) -> Iterator[None]:
    """:func:`tie` for the length of a block."""
    dismiss = tie(pid, sig, grace, folders)
    try:
        yield
    finally:
        dismiss()
