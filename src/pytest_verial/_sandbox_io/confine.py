"""Reading nothing outside a task folder (docs/limits.md): one helper every file source uses.

Every path a source lists or opens is resolved (``os.path.realpath``) and must stay inside the
task folder's own resolved path. A symbolic link anywhere under the task folder (a source
folder such as ``sftp/`` or ``fhir/`` itself, a nested folder, or a file) that resolves
outside it is refused with a :class:`SourceError` naming the link relative to the task folder
(never where it points, nor any absolute path: the message reaches reports, stores and the
service's answers); the criteria reading that source are errors. Links that stay inside the
task folder are followed.

The task folder itself, and the run directory above it, may be links: a run directory is
often reached through one (``runs/latest -> runs/2026-11-23``). Confinement starts at the
folder the task folder resolves to. A task folder that links into its own run folder (a
sibling task's folder) is refused by ``Sandbox.source`` before any source is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .._errors import SourceError


def task_root(path: Path) -> Path:
    """The resolved task folder that ``path`` (the folder or anything under it) must stay in."""
    return Path(os.path.realpath(path))


def inside(path: Path, root: Path) -> Path:
    """``path`` resolved; a SourceError when it leaves ``root`` (an already resolved folder)."""
    real = Path(os.path.realpath(path))
    if real == root or real.is_relative_to(root):
        return real
    link = _outward_link(path, root)
    if link.is_symlink():
        raise SourceError(
            f"{shown(link, root)}: a symbolic link leading outside the task folder; refused"
        )
    raise SourceError(f"{shown(path, root)}: leads outside the task folder; refused")


def shown(path: Path, root: Path) -> str:
    """``path`` named relative to the task folder ``root`` (its folder resolved, the name
    itself kept, so a link is named and not what it points to); its name alone when its
    folder is not inside ``root``. Never an absolute path of the machine, nor a link's
    target: a message may reach a report, a store and a service's answer."""
    parent = Path(os.path.realpath(path.parent))
    if parent == root or parent.is_relative_to(root):
        return (parent.relative_to(root) / path.name).as_posix()
    return path.name


def _outward_link(path: Path, root: Path) -> Path:
    """The link on the way to ``path`` that crosses from inside the task folder to outside
    (links above the task folder, such as a linked run directory, are not blamed)."""
    parts = path.parts
    for index in range(2, len(parts) + 1):
        step = Path(*parts[:index])
        parent = Path(os.path.realpath(step.parent))
        if not (parent == root or parent.is_relative_to(root)):
            continue
        if step.is_symlink() and not Path(os.path.realpath(step)).is_relative_to(root):
            return step
    return path


def is_file(path: Path, root: Path) -> bool:
    """True for a regular file inside ``root`` (a link out raises), False when absent."""
    if not os.path.lexists(path):
        return False
    return inside(path, root).is_file()


def is_dir(path: Path, root: Path) -> bool:
    """True for a folder inside ``root`` (a link out raises), False when absent."""
    if not os.path.lexists(path):
        return False
    return inside(path, root).is_dir()


def walk(directory: Path, root: Path, keep: Callable[[Path], bool] = lambda _: True) -> list[Path]:
    """Files under ``directory`` (sorted, as named under it) that ``keep`` accepts.

    Links are checked before they are followed; a linked folder inside ``root`` is walked
    once (a loop of links ends there).
    """
    if not is_dir(directory, root):
        return []
    found: list[Path] = []
    seen: set[Path] = set()
    stack = [directory]
    while stack:
        folder = stack.pop()
        real = inside(folder, root)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise SourceError(f"{folder}: cannot list: {exc.strerror or exc}") from None
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                target = inside(path, root)
                if target.is_dir():
                    stack.append(path)
                elif target.is_file() and keep(path):
                    found.append(path)
            elif entry.is_dir(follow_symlinks=False):
                stack.append(path)
            elif entry.is_file(follow_symlinks=False) and keep(path):
                found.append(path)
    return sorted(found)
