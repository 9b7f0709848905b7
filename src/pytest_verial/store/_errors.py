"""What the store's two paths share without SQLAlchemy (issue 33): :class:`StoreError`, the
one-line message of a database error, a SQLite file's checks, and a plain ``sqlite:///`` URL read
without SQLAlchemy's URL parser.

A session on a SQLite store writes through the standard library's ``sqlite3``
(:mod:`._lite`), so it must be able to check its store and say what went wrong without
importing SQLAlchemy; ``_engine.py`` imports these for every other path.
"""

from __future__ import annotations

import re
from pathlib import Path

SQLITE_MAGIC = b"SQLite format 3\x00"

#: how long a writer waits for another process's lock before it gives up (seconds)
LOCK_WAIT = 120.0

#: a ``sqlite:///`` URL whose path SQLAlchemy's URL parser reads and renders back as it is
#: (ASCII letters, digits and ``_ . / - +`` and spaces: no ``:``, ``@``, ``?``, ``#``, ``%``);
#: any other URL goes through SQLAlchemy (tests/store/test_store_lite.py checks the two agree)
_PLAIN = re.compile(r"sqlite:///([A-Za-z0-9_./ +-]+)")


class StoreError(Exception):
    """A store that cannot be opened, read or written: a one-line message, no password."""


def plain_sqlite_path(url: str) -> Path | None:
    """The file of a plain ``sqlite:///PATH`` URL (see :data:`_PLAIN`), else None (not a
    SQLite URL, or one only SQLAlchemy's parser should read)."""
    found = _PLAIN.fullmatch(url)
    return None if found is None else Path(found.group(1))


def mask_url(url: str) -> str:
    """The URL with its password masked (for every message)."""
    if plain_sqlite_path(url) is not None:
        return url  # no password, and SQLAlchemy renders it unchanged
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return re.sub(r"://([^:/@]*):[^@]*@", r"://\1:***@", url)


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL (None for memory or other databases)."""
    plain = plain_sqlite_path(url)
    if plain is not None:
        return plain
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    if parsed.database == ":memory:" or parsed.database.startswith("file:"):
        return None
    return Path(parsed.database)


def clean_message(exc: BaseException, url: str, password: str | None) -> str:
    """One line of an exception's message, without the password or a SQL statement."""
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    line = re.sub(r"\s*\(Background on this error.*$", "", line)
    if password:
        line = line.replace(password, "***")
    return line.replace(url, mask_url(url))


def is_locked(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    return "database is locked" in text or "database is busy" in text or "sqlite_busy" in text


def check_sqlite_file(path: Path, masked: str, create: bool) -> None:
    """A SQLite store's file: not a folder, a SQLite database if it exists (else created when
    ``create``, its ``.verial`` folder with a ``.gitignore``); StoreError otherwise."""
    if path.is_dir():
        raise StoreError(f"results store {masked}: {path} is a folder, not a SQLite database")
    if path.exists():
        try:
            with path.open("rb") as handle:
                head = handle.read(16)
        except OSError as exc:
            raise StoreError(
                f"results store {masked}: cannot read {path}: {exc.strerror or exc}"
            ) from None
        if head and head != SQLITE_MAGIC:
            raise StoreError(
                f"results store {masked}: {path} is not a SQLite database (left untouched)"
            )
        return
    if not create:
        raise StoreError(f"results store {masked}: {path} does not exist")
    folder = path.parent
    try:
        fresh = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        if fresh and folder.name == ".verial":
            (folder / ".gitignore").write_text(
                "# created by pytest-verial: its results store\n*\n", "utf-8"
            )
    except OSError as exc:
        raise StoreError(
            f"results store {masked}: cannot create {folder}: {exc.strerror or exc}"
        ) from None
