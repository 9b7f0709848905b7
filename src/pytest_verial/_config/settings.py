"""The session's settings: every option read once (:mod:`.options`) into one frozen object
with typed parts.

Only the types live here, low in the import graph, so anything may take a :class:`Settings`;
:mod:`.reading` reads the options into one (on first use in ``pytest_configure``) and keeps
it on ``config.stash``; everything else reads it from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._sandbox_io.sizes import ReadLimits
from .options import JUDGE_OFF, JUDGE_OFF_KEY
from .run_folder import RunDir

if TYPE_CHECKING:
    from ..judge._settings import JudgeOptions
    from ..reporting._outputs import Output
    from .selection import Resume, Shard


@dataclass(frozen=True)
class Outputs:
    """What the session writes, and what it reads (README, "An output that cannot be
    written"; checked again after collection)."""

    report: Path | None = None
    junit: Path | None = None
    #: a Markdown summary (``--verial-markdown``)
    markdown: Path | None = None
    #: a self-contained HTML report (``--verial-html``)
    html: Path | None = None
    #: every file the session writes, the ones above included
    files: tuple[Output, ...] = ()
    inputs: tuple[tuple[str, Path | None], ...] = ()


@dataclass(frozen=True)
class StoreOptions:
    """The results store (``--verial-store``): its URL, None when turned off."""

    url: str | None = None


@dataclass(frozen=True)
class Settings:
    """The session's ``--verial-*`` options and ini keys (:mod:`.options` for precedence)."""

    runs: tuple[Path, ...] = ()
    scored: bool = False
    pass_threshold: float | None = None
    fail_under: float | None = None
    #: every run folder is a trial of one agent (``--verial-trials``)
    trials: bool = False
    #: an ``assert`` no check knows is a collection error (``--verial-strict``)
    strict: bool = False
    #: score only this shard's task runs (``--verial-shard K/N``)
    shard: Shard | None = None
    #: the criterion runs kept from an earlier report or journal (``--verial-resume``)
    resume: Resume | None = None
    #: a report to show this session's changes from (``--verial-baseline``)
    baseline: Path | None = None
    patterns: tuple[str, ...] = ()
    outputs: Outputs = field(default_factory=Outputs)
    store: StoreOptions = field(default_factory=StoreOptions)
    #: the judge's options; None when the ``verial-judge`` plugin is left out
    judge: JudgeOptions | None = None
    #: what any read of a sandbox is held to (``--verial-max-file-size``, ...)
    limits: ReadLimits = field(default_factory=ReadLimits)
    _run_dirs: dict[Path, RunDir] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def check_options(self) -> dict[str, Any]:
        """What checks receive as ``ctx.options``: the judge's options, or why it is off."""
        return self.judge.to_options() if self.judge is not None else {JUDGE_OFF_KEY: JUDGE_OFF}

    def run_dirs_for(self, benchmark_file: Path) -> list[RunDir]:
        """The run directories scored for one benchmark file (default ``sandbox/`` beside it)."""
        return [self.run_dir(p) for p in self.runs or (benchmark_file.parent / "sandbox",)]

    def run_dir(self, path: Path) -> RunDir:
        """The run directory at ``path``, its run.yaml read once (RunConfigError if bad)."""
        key = path.resolve()
        if key not in self._run_dirs:
            self._run_dirs[key] = RunDir(path, limits=self.limits)
        return self._run_dirs[key]

    def scored_for(self, run: RunDir) -> bool:
        """Scored mode: the option, or ``scored: true`` in the run's run.yaml."""
        return self.scored or bool(run.config.scored)
