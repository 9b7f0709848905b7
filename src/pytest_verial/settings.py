"""Plugin settings from the command line and ini file, resolved once per session."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .display import describe_char, escape, unsafe_char, unsafe_id_char
from .reporting.outputs import Output, OutputRefused, check_outputs
from .runinfo import RunDir
from .selection import Resume, Shard, load_resume, parse_shard


@dataclass
class Settings:
    """Resolved ``--verial-*`` options (CLI wins over ini)."""

    runs: list[Path] = field(default_factory=list)
    report: Path | None = None
    junit: Path | None = None
    #: a Markdown summary (``--verial-markdown``)
    markdown: Path | None = None
    #: a self-contained HTML report (``--verial-html``)
    html: Path | None = None
    scored: bool = False
    pass_threshold: float | None = None
    fail_under: float | None = None
    #: every run folder is a trial of one agent (``--verial-trials``)
    trials: bool = False
    #: score only this shard's task runs (``--verial-shard K/N``)
    shard: Shard | None = None
    #: the criterion runs kept from an earlier report or journal (``--verial-resume``)
    resume: Resume | None = None
    patterns: tuple[str, ...] = ()
    #: extra options handed to checks as ``ctx.options`` (judge settings and the like)
    check_options: dict[str, Any] = field(default_factory=dict)
    #: every file the session writes, and what it reads (checked again after collection)
    outputs: list[Output] = field(default_factory=list)
    inputs: list[tuple[str, Path | None]] = field(default_factory=list)
    _run_dirs: dict[Path, RunDir] = field(default_factory=dict)

    def run_dirs_for(self, benchmark_file: Path) -> list[RunDir]:
        """The run directories scored for one benchmark file (default ``sandbox/`` beside it)."""
        paths = self.runs or [benchmark_file.parent / "sandbox"]
        dirs = []
        for path in paths:
            key = path.resolve()
            if key not in self._run_dirs:
                self._run_dirs[key] = RunDir(path)
            dirs.append(self._run_dirs[key])
        return dirs

    def scored_for(self, run: RunDir) -> bool:
        """Scored mode: the option, or ``scored: true`` in the run's run.yaml."""
        return self.scored or bool(run.config.scored)


def _ini_or_option(config: pytest.Config, name: str) -> Any:
    value = config.getoption(name, default=None)
    if value in (None, [], ""):
        value = config.getini(name)
    return value if value not in ("", []) else None


def option_path(config: pytest.Config, name: str) -> Path | None:
    """A path option: relative to the working directory on the CLI, to rootdir in the ini."""
    value = config.getoption(name, default=None)
    base = Path.cwd()
    if not value:
        value, base = config.getini(name), config.rootpath
    if not value:
        return None
    path = Path(str(value))
    return path if path.is_absolute() else base / path


def _float(config: pytest.Config, name: str) -> float | None:
    value = _ini_or_option(config, name)
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"--{name.replace('_', '-')}: {value!r} is not a number") from None
    if not 0.0 <= number <= 1.0:
        raise pytest.UsageError(f"--{name.replace('_', '-')}: {number} is outside [0, 1]")
    return number


def select_by_node_id(config: pytest.Config) -> dict[str, list[str]]:
    """Make ``file::task[entity]::criterion`` arguments work.

    pytest reads everything from the first ``[`` of an argument as a parametrization of its
    last part, so a node id with an entity in the middle would not be found. Such arguments
    are replaced by their file, and the node ids asked for are returned (file node id ->
    prefixes) for ``pytest_collection_modifyitems`` to keep only those.
    """
    from .loader import is_benchmark_file

    patterns = tuple(str(p) for p in (config.getini("verial_patterns") or []))
    wanted: dict[str, list[str]] = {}
    plain: set[str] = set()
    args: list[str] = []
    for arg in config.args:
        path, sep, rest = arg.partition("::")
        if not (sep and "[" in rest):
            args.append(arg)
            if not sep:
                plain.add(str(Path(arg).resolve()))
            continue
        if not is_benchmark_file(Path(path), patterns):
            args.append(arg)
            continue
        absolute = Path(path).resolve()
        try:
            file_id = absolute.relative_to(config.rootpath).as_posix()
        except ValueError:
            file_id = absolute.as_posix()
        if str(absolute) not in {str(Path(a.partition("::")[0]).resolve()) for a in args}:
            args.append(path)
        wanted.setdefault(file_id, []).append(f"{file_id}::{rest}")
    for file_id in list(wanted):
        if str((config.rootpath / file_id).resolve()) in plain:
            del wanted[file_id]  # the whole file was asked for too
    config.args[:] = args
    return wanted


def session_outputs(config: pytest.Config, paths: dict[str, Path | None]) -> list[Output]:
    """Every file the session writes (:mod:`.reporting.outputs`), in the order refusals name
    them: the ``--verial-*`` outputs, pytest's ``--junitxml``, the report's journal and the
    report recovered from a journal left beside it, ``$GITHUB_STEP_SUMMARY``."""
    from .reporting.journal import journal_path, recovered_path

    outputs = [Output(f"--{option}", path) for option, path in paths.items()]
    xml = config.getoption("xmlpath", default=None)
    if xml:
        outputs.append(Output("--junitxml", Path(str(xml)), "foreign"))
    report = paths.get("verial-report")
    if report is not None:
        outputs.append(Output("the journal of --verial-report", journal_path(report), "journal"))
        if journal_path(report).exists():
            outputs.append(
                Output("the recovered report of --verial-report", recovered_path(report))
            )
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        outputs.append(Output("$GITHUB_STEP_SUMMARY", Path(summary), "append"))
    return outputs


def session_inputs(config: pytest.Config, runs: list[Path]) -> list[tuple[str, Path | None]]:
    """What the session reads that is known before collection: run folders, the resumed report,
    the baseline, files named on the command line and the ini file."""
    from .loader import is_benchmark_file

    patterns = tuple(str(p) for p in (config.getini("verial_patterns") or []))
    inputs: list[tuple[str, Path | None]] = [("the run folder", p) for p in runs]
    inputs.append(("the report resumed by --verial-resume", option_path(config, "verial_resume")))
    inputs.append(("the baseline", option_path(config, "verial_baseline")))
    base = config.invocation_params.dir
    for arg in config.args:
        path = base / arg.partition("::")[0]
        if path.is_file():
            what = "the benchmark file" if is_benchmark_file(path, patterns) else "the test file"
            inputs.append((what, path))
    inputs.append(("the ini file", config.inipath))
    return inputs


def ini_type(kind: str) -> Any:
    """The ``addini`` type of a number key: ``float | str`` (or ``int | str``) where pytest
    takes type expressions (9.2+), so ``[tool.pytest]`` may hold a native TOML number and an
    INI file's text that is not one still reaches our check, which names the key; plain
    ``string`` on older pytest."""
    if kind not in ("float", "int"):
        return kind
    version = tuple(int(p) for p in pytest.__version__.split(".")[:2] if p.isdigit())
    if version >= (9, 2):
        return (float if kind == "float" else int) | str
    return "string"


def _shard(config: pytest.Config) -> Shard | None:
    value = _ini_or_option(config, "verial_shard")
    if value is None:
        return None
    try:
        return parse_shard(str(value))
    except ValueError as exc:
        raise pytest.UsageError(f"--verial-shard: {exc}") from None


def _resume(config: pytest.Config) -> Resume | None:
    path = option_path(config, "verial_resume")
    if path is None:
        return None
    try:
        return load_resume(path)
    except ValueError as exc:
        raise pytest.UsageError(f"--verial-resume: {str(exc).splitlines()[0]}") from None


def resolve(config: pytest.Config) -> Settings:
    """Build the session's Settings, raising pytest.UsageError for unusable values."""
    runs = config.getoption("verial_run") or []
    base = Path.cwd()
    if not runs:
        runs, base = [str(v) for v in (config.getini("verial_run") or [])], config.rootpath
    run_paths = [Path(r) if Path(r).is_absolute() else (base / r) for r in runs]
    for path in run_paths:
        if not path.is_dir():
            raise pytest.UsageError(f"--verial-run: {path} is not a directory")
    labels = [p.name for p in run_paths]
    for label in labels:  # a label is part of node ids and reports (pytest_verial.display)
        char = unsafe_char(label)
        why = (
            f"contains {describe_char(char)}"
            if char is not None
            else (unsafe_id_char(label) if len(labels) > 1 else None)
        )
        if why is not None:
            raise pytest.UsageError(
                f"--verial-run: the run directory name '{escape(label)}' {why}; runs are "
                "labelled by name: rename it"
            )
    if len(set(labels)) != len(labels):
        raise pytest.UsageError(
            "--verial-run: two run directories share the name "
            f"{next(n for n in labels if labels.count(n) > 1)!r}; runs are labelled by name"
        )
    scored = bool(config.getoption("verial_scored")) or str(
        config.getini("verial_scored")
    ).lower() in (
        "1",
        "true",
        "yes",
    )
    patterns = tuple(str(p) for p in (config.getini("verial_patterns") or []))
    report = option_path(config, "verial_report")
    junit = option_path(config, "verial_junit")
    markdown = option_path(config, "verial_markdown")
    html = option_path(config, "verial_html")
    named = {
        "verial-report": report,
        "verial-junit": junit,
        "verial-markdown": markdown,
        "verial-html": html,
    }
    outputs = session_outputs(config, named)
    inputs = session_inputs(config, run_paths)
    try:  # before anything is read or written (README, "An output that cannot be written")
        check_outputs(outputs, inputs)
    except OutputRefused as exc:
        raise pytest.UsageError(escape(str(exc))) from None
    return Settings(
        runs=run_paths,
        report=report,
        junit=junit,
        markdown=markdown,
        html=html,
        outputs=outputs,
        inputs=inputs,
        scored=scored,
        pass_threshold=_float(config, "verial_pass_threshold"),
        fail_under=_float(config, "verial_fail_under"),
        shard=_shard(config),
        resume=_resume(config),
        trials=bool(config.getoption("verial_trials"))
        or str(config.getini("verial_trials")).lower() in ("1", "true", "yes"),
        patterns=patterns,
    )
