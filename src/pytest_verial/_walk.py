"""Walking a project as pytest collects it, for ``verial validate`` and ``verial schema``.

pytest never recurses into a folder matching ``norecursedirs`` (its default: ``*.egg``,
``.*``, ``_darcs``, ``build``, ``CVS``, ``dist``, ``node_modules``, ``venv``, ``{arch}``; an
ini file's value replaces it) nor into a virtual environment (a folder holding ``pyvenv.cfg``
or ``conda-meta/history``), and it loads the ``conftest.py`` of the folders from the rootdir
down to each argument, then of each folder it collects. The commands that load benchmark
files and their conftest checks outside pytest walk the same way (issue 31: ``verial validate
.`` walked into ``.venv`` and imported the ``conftest.py`` files of installed packages).

The rootdir and ini file are found as pytest finds them (the first of ``pytest.toml``,
``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, ``pyproject.toml``, ``tox.ini``,
``setup.cfg`` holding pytest's section, from the first argument upwards).
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import shlex
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: pytest's own default of ``norecursedirs``
DEFAULT_NORECURSE = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)


def _ini_section(path: Path, section: str) -> dict[str, Any] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(path, encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError, OSError):
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError):
        return {}


def _pytest_config(path: Path) -> dict[str, Any] | None:
    """pytest's settings in ``path``, None when the file holds none (pytest then looks on)."""
    name = path.name
    if name in ("pytest.toml", ".pytest.toml"):
        return dict(_toml(path).get("pytest") or {})
    if name in ("pytest.ini", ".pytest.ini"):
        return _ini_section(path, "pytest") or {}  # always the configuration, even empty
    if name == "pyproject.toml":
        tool = _toml(path).get("tool", {}).get("pytest")
        if not isinstance(tool, dict):
            return None
        ini = tool.get("ini_options")
        return dict(ini) if isinstance(ini, dict) else {k: v for k, v in tool.items()}
    if name == "tox.ini":
        return _ini_section(path, "pytest")
    if name == "setup.cfg":
        return _ini_section(path, "tool:pytest")
    return None


_CONFIG_NAMES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)


@dataclass(frozen=True)
class Project:
    """Where pytest would put the rootdir for some arguments, and what it would not recurse
    into."""

    rootdir: Path
    norecurse: tuple[str, ...] = DEFAULT_NORECURSE

    @classmethod
    def of(cls, paths: Sequence[Path]) -> Project:
        """The rootdir and ``norecursedirs`` for these existing paths (pytest's search)."""
        absolute = [Path(os.path.abspath(p)) for p in paths] or [Path.cwd()]
        pyproject: Path | None = None
        for path in absolute:
            start = path if path.is_dir() else path.parent
            for base in (start, *start.parents):
                for name in _CONFIG_NAMES:
                    candidate = base / name
                    if not candidate.is_file():
                        continue
                    if name == "pyproject.toml" and pyproject is None:
                        pyproject = candidate
                    found = _pytest_config(candidate)
                    if found is not None:
                        return cls(base, _norecurse(found.get("norecursedirs")))
        if pyproject is not None:
            return cls(pyproject.parent)
        return cls(_common(absolute))

    def skipped(self, folder: Path) -> bool:
        """Whether pytest would not recurse into ``folder``."""
        if folder.name == "__pycache__" or _in_venv(folder):
            return True
        return any(_matches(pattern, folder) for pattern in self.norecurse)

    def walk(self, top: Path) -> Iterator[Path]:
        """Every file under ``top`` in the folders pytest would collect, in name order
        (links to folders are not followed)."""
        if top.is_file():
            yield top
            return
        for root, dirs, files in os.walk(top):
            base = Path(root)
            dirs[:] = sorted(d for d in dirs if not self.skipped(base / d))
            for name in sorted(files):
                yield base / name

    def conftests(self, paths: Sequence[Path]) -> list[Path]:
        """The ``conftest.py`` files pytest loads for these arguments: in each folder from the
        rootdir down to the argument, then in every folder it collects below."""
        found: dict[Path, None] = {}
        root = Path(os.path.abspath(self.rootdir))
        for raw in paths:
            path = Path(os.path.abspath(raw))
            folder = path if path.is_dir() else path.parent
            chain = [folder, *folder.parents]
            for step in reversed(chain):
                inside = step == root or step.is_relative_to(root)
                if inside and (step / "conftest.py").is_file():
                    found.setdefault(step / "conftest.py")
            if path.is_dir():
                for file in self.walk(path):
                    if file.name == "conftest.py":
                        found.setdefault(Path(os.path.abspath(file)))
        return list(found)


def _norecurse(value: Any) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_NORECURSE
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return DEFAULT_NORECURSE


def _matches(pattern: str, folder: Path) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without a separator matches the folder's name, one
    with a separator its whole path."""
    if os.sep not in pattern and "/" not in pattern:
        return fnmatch.fnmatch(folder.name, pattern)
    return fnmatch.fnmatch(
        str(folder), pattern if os.path.isabs(pattern) else f"*{os.sep}{pattern}"
    )


def _in_venv(folder: Path) -> bool:
    """pytest's test of a virtual environment's root (PEP 405, and conda's)."""
    try:
        return (folder / "pyvenv.cfg").is_file() or (folder / "conda-meta" / "history").is_file()
    except OSError:
        return False


def _common(paths: Sequence[Path]) -> Path:
    common = Path(os.path.commonpath([str(p) for p in paths]))
    return common if common.is_dir() else common.parent


__all__ = ["DEFAULT_NORECURSE", "Project"]
