"""No server path in an answer: the server's folders taken out of what it says.

A task run scored by the service names its files relative to the task's sandbox, as a report
written by the plugin names them relative to the run: :func:`relative_to` rewrites the sandbox
folder's absolute path (a run folder under ``--runs-root``, or the temporary folder an archive
or inline files were unpacked to) out of every text of the result before it is stored or
answered. :class:`ServerPaths` is the last guard at the edge: every problem's ``detail`` loses
the server's own folders (``--runs-root``, the working directory, the home folder, the
temporary folders of sandboxes) whatever raised it. The judge's endpoint (a URL of the server's
network) is never named either.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
#: the prefix of every temporary folder the service makes (sandboxes, inline tasks)
TEMP_PREFIX = "verial-"
#: what a text says instead of the judge's endpoint
JUDGE = "the server's judge endpoint"


def _forms(path: Path, real: Path | None = None) -> list[str]:
    """A folder's absolute path as given and as resolved (a link such as /tmp may differ);
    ``real``: its resolved form when the caller has just made it."""
    forms = {str(path.absolute()), str(path.resolve() if real is None else real)}
    return sorted((f.rstrip(os.sep) for f in forms if f not in ("", os.sep)), key=len, reverse=True)


class Rewrite:
    """Replace folders' absolute paths in text: ``<folder>/x`` becomes ``<as>x``, the folder
    alone becomes ``<alone>``."""

    def __init__(
        self,
        folders: Sequence[tuple[Path, str, str]],
        words: Mapping[str, str] | None = None,
        *,
        formed: Sequence[tuple[Sequence[str], str, str]] | None = None,
    ) -> None:
        """``formed``: each folder's :func:`_forms` made already, instead of ``folders``."""
        #: other texts the server keeps to itself (its judge's endpoint), and what they become
        self._words = {k: v for k, v in (words or {}).items() if k}
        found: dict[str, tuple[str, str]] = {}
        if formed is None:
            formed = [(_forms(folder), prefix, alone) for folder, prefix, alone in folders]
        for forms_of, prefix, alone in formed:
            for form in forms_of:
                found.setdefault(form, (prefix, alone))
                # as it reads inside a JSON text (a quote or a backslash escaped)
                found.setdefault(json.dumps(form)[1:-1], (prefix, alone))
        self._to = found
        forms = sorted(found, key=len, reverse=True)
        # a whole path component only: never the middle of another path or word
        self._any = (
            re.compile(
                r"(?<![\w.\-/])(" + "|".join(re.escape(f) for f in forms) + r")(/|(?![\w.\-]))"
            )
            if forms
            else None
        )

    def _one(self, match: re.Match[str]) -> str:
        prefix, alone = self._to[match.group(1)]
        return prefix if match.group(2) else alone

    def text(self, value: str) -> str:
        for word, instead in self._words.items():
            if word in value:
                value = value.replace(word, instead)
        # most texts name no folder: a substring test is far cheaper than the pattern
        if self._any is None or not any(form in value for form in self._to):
            return value
        return self._any.sub(self._one, value)

    def model(self, model: M) -> M:
        """A result with every text rewritten: one pass over its JSON text, read back as the
        same type (validated again); ``model`` itself when no text names a folder or the
        judge (most results: nothing to read back)."""
        text = model.model_dump_json(by_alias=True)
        rewritten = self.text(text)
        return model if rewritten == text else type(model).model_validate_json(rewritten)

    def json(self, value: Any) -> Any:
        """A JSON value with every string (and key) rewritten."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        return value


def relative_to(
    sandbox: Path, run_folder: Path, runs_root: Path, judge_url: str | None = None
) -> Rewrite:
    """Names relative to the task's sandbox: ``<sandbox>/sftp/x.json`` -> ``sftp/x.json``;
    the run folder's files (``run.yaml``) and the rest of ``--runs-root`` relative to
    theirs; the server's judge endpoint is "the server's judge"."""
    words = {judge_url.rstrip("/"): JUDGE} if judge_url else {}
    return Rewrite([(sandbox, "", "."), (run_folder, "", "."), (runs_root, "", ".")], words)


def kept_relative_to(
    sandbox: Path, real: Path, run_folder: Path, runs_root: Path, judge_url: str | None = None
) -> Rewrite:
    """:func:`relative_to` for a run folder under ``--runs-root``: ``run_folder`` and
    ``runs_root`` are resolved already and ``real`` is the sandbox resolved by this request's
    confinement check (:func:`._sandboxes.check_links`), so no path is resolved again; the
    rewrite of the same forms is made once and kept (it holds no state of a request)."""
    forms = (tuple(_forms(sandbox, real)), tuple(_forms(run_folder, run_folder)))
    return _kept(forms + (tuple(_forms(runs_root, runs_root)),), judge_url)


@lru_cache(maxsize=256)
def _kept(forms: tuple[tuple[str, ...], ...], judge_url: str | None) -> Rewrite:
    words = {judge_url.rstrip("/"): JUDGE} if judge_url else {}
    return Rewrite([], words, formed=[(f, "", ".") for f in forms])


class ServerPaths:
    """The server's own folders, hidden from every problem it answers."""

    def __init__(self, folders: Iterable[Path], judge_url: str | None = None) -> None:
        words = {judge_url.rstrip("/"): JUDGE} if judge_url else {}
        self._rewrite = Rewrite([(f, "", ".") for f in folders], words)
        temp = [re.escape(f) for f in _forms(Path(tempfile.gettempdir()))]
        # a temporary folder of the service: its name says nothing to a client
        self._temp = re.compile(
            "(?:"
            + "|".join(temp)
            + ")"
            + re.escape(os.sep)
            + re.escape(TEMP_PREFIX)
            + r"[^"
            + re.escape(os.sep)
            + r"\s'\"]*(?:"
            + re.escape(os.sep)
            + ")?"
        )

    def text(self, value: str) -> str:
        return self._rewrite.text(self._temp.sub("", value))

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        return value


def server_folders(runs_root: Path, benchmark_paths: Iterable[Path]) -> list[Path]:
    """The folders a client must never see named: ``--runs-root``, the benchmarks' folders,
    the working directory and the home folder."""
    found = [runs_root, Path.cwd(), Path.home()]
    for path in benchmark_paths:
        found.append(path if path.is_dir() else path.parent)
    return found


__all__ = [
    "TEMP_PREFIX",
    "Rewrite",
    "ServerPaths",
    "kept_relative_to",
    "relative_to",
    "server_folders",
]
