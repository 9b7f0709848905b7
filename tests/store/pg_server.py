"""A real PostgreSQL for the store's tests: initdb + pg_ctl on 127.0.0.1, a free port, in a
temporary folder, stopped by its PID.

PostgreSQL refuses to run as root, and CI runs as root: then initdb and pg_ctl run through
``runuser -u nobody --`` in a folder nobody owns. The binaries come from PATH (``initdb``) or
Debian's ``postgresql`` package (``/usr/lib/postgresql/<version>/bin``);
``scripts/setup.d/60-postgres.sh`` installs the latter where neither exists.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

if str(Path(__file__).resolve().parents[1]) not in sys.path:  # bench/service.py imports us
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lifetime_support import tied  # noqa: E402


def binaries() -> Path | None:
    """The folder holding initdb and pg_ctl, or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """One running PostgreSQL; :meth:`url` of a fresh database per caller."""

    def __init__(self, folder: Path, port: int, pid: int) -> None:
        self.folder = folder
        self.port = port
        self.pid = pid
        self._count = 0

    def base_url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database; its URL."""
        import psycopg

        self._count += 1
        name = f"verial_{os.getpid()}_{self._count}_{int(time.time() * 1000) % 100000}"
        with psycopg.connect(self.base_url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.base_url(name)


@contextlib.contextmanager
def pg_server() -> Iterator[PgServer]:
    """Start PostgreSQL, yield it, stop it by PID (and remove its folder)."""
    bindir = binaries()
    if bindir is None:
        raise FileNotFoundError(
            "PostgreSQL's initdb/pg_ctl are not on PATH nor in /usr/lib/postgresql "
            "(scripts/setup.d/60-postgres.sh installs Debian's postgresql)"
        )
    root = Path(tempfile.mkdtemp(prefix="verial-pg-"))
    root.chmod(0o755)  # nobody must enter it
    data = root / "data"
    data.mkdir()
    prefix: list[str] = []
    if os.geteuid() == 0:
        prefix = ["runuser", "-u", "nobody", "--"]
        shutil.chown(data, "nobody")
        shutil.chown(root, "nobody")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    pid = 0
    try:
        subprocess.run(
            [
                *prefix,
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
            ],
            check=True,
            capture_output=True,
            env=env,
            timeout=120,
        )
        port = _free_port()
        subprocess.run(
            [
                *prefix,
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                f"-p {port} -k {root} -h 127.0.0.1 -c max_connections=200 -c fsync=off",
                "-l",
                str(root / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
            env=env,
            timeout=120,
        )
        pid = int((data / "postmaster.pid").read_text().split()[0])
        # immediate shutdown (SIGQUIT) and the folder removed if this process dies first
        with tied(pid, signal.SIGQUIT, 30, (root,)):
            yield PgServer(root, port, pid)
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                # immediate shutdown: no checkpoint, the cluster is thrown away
                os.kill(pid, signal.SIGQUIT)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
