"""A pytest session on an existing SQLite store imports no SQLAlchemy (issue 33: importing it
cost a store-on session ~0.5 s of CPU): its writes go through the standard library's sqlite3,
and the store holds the session as before."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from store_support import child_env, greeting_project

from pytest_verial.store import open_store

#: a pytest session in a child process, then whether it imported SQLAlchemy
SESSION = (
    "import sys, pytest\n"
    "status = pytest.main(['-p', 'no:cacheprovider', '-p', 'no:randomly', '-n', '0', '-q'])\n"
    "print('SQLALCHEMY', 'sqlalchemy' in sys.modules)\n"
    "sys.exit(status)\n"
)


def test_a_session_on_the_default_store_imports_no_sqlalchemy(tmp_path: Path) -> None:
    greeting_project(tmp_path, tasks=2)
    store = tmp_path / ".verial" / "results.db"
    open_store(f"sqlite:///{store}").close()  # the project's store exists (its usual case)
    done = subprocess.run(
        [sys.executable, "-c", SESSION],
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # one criterion in two fails
    db = sqlite3.connect(store)
    assert db.execute("select count(*), min(status) from sessions").fetchone() == (1, "completed")
    assert db.execute("select count(*) from criterion_runs").fetchone() == (4,)
    db.close()
    assert "SQLALCHEMY False" in done.stdout, done.stdout[-2000:]
