"""Reading the session's options into :class:`~pytest_verial._config.settings.Settings`.

:func:`session_settings` builds the settings on first use in ``pytest_configure`` (the
``verial`` plugin's or the ``verial-judge`` plugin's, whichever pytest calls first) and keeps
them on ``config.stash``; everything else reads them from there. :func:`add_options` registers
a plugin's rows of the options table.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .._display import describe_char, escape, unsafe_char, unsafe_id_char
from .._errors import RunConfigError, UsageError
from .._nodeids import SEP, file_of, task_nodeid
from .._sandbox_io.sizes import ReadLimits
from ..judge._settings import JudgeOptions, SettingError
from ..reporting._outputs import Output, OutputRefused, check_outputs
from ..store._url import project_folder, store_url
from .options import JUDGE_PLUGIN, OPTIONS, Option, of_plugin, option, resolve
from .run_folder import RunDir
from .selection import Resume, Shard, load_resume, parse_shard
from .settings import Outputs, Settings, StoreOptions
from .stash import RUNS_AT_START, SELECTED, SETTINGS

# -- registration ---------------------------------------------------------------------------


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


#: the ``addini`` type of each kind of option
_INI_TYPES = {
    "text": "string",
    "path": "string",
    "paths": "paths",
    "bool": "bool",
    "share": "float",
    "number": "float",
    "whole": "int",
    "size": "string",
    "args": "args",
}


def add_options(parser: pytest.Parser, plugin: str) -> None:
    """Register ``plugin``'s rows of the options table: each flag and its ini key."""
    group = parser.getgroup("verial", "pytest-verial: score agent rollouts")
    for opt in of_plugin(plugin):
        if opt.flag is not None:
            kwargs: dict[str, Any] = {"metavar": opt.metavar}
            if opt.kind == "paths":
                kwargs["action"] = "append"
            elif opt.kind == "bool":
                kwargs = {"action": "store_true", "default": None}
            group.addoption(opt.flag, dest=opt.name, help=opt.help, **kwargs)
        if opt.kind == "args":  # pytest's default for a list: []
            parser.addini(opt.name, type="args", help=opt.help)
        else:
            parser.addini(
                opt.name, help=opt.help, type=ini_type(_INI_TYPES[opt.kind]), default=None
            )


# -- reading --------------------------------------------------------------------------------


def read(config: pytest.Config, opt: Option, rootdir: Path | None = None) -> Any:
    """One option's value for this session (:func:`pytest_verial._config.options.resolve`);
    ``rootdir`` (default pytest's) is what ``<rootdir>`` in its default stands for."""
    try:
        return resolve(
            opt,
            cli=config.getoption(opt.name, default=None) if opt.flag else None,
            environ=os.environ,
            ini=config.getini(opt.name),
            cwd=Path.cwd(),
            rootdir=rootdir or config.rootpath,
        )
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def _judge_on(config: pytest.Config) -> bool:
    """The ``verial-judge`` plugin is registered (by its entry point, or by ``-p`` module)."""
    manager = config.pluginmanager
    return manager.has_plugin(JUDGE_PLUGIN) or manager.has_plugin("pytest_verial.judge_plugin")


def read_judge(config: pytest.Config) -> JudgeOptions:
    """The judge's options, checked before anything runs: one usage error naming the option
    (numbers finite and in range, the reply format, the price table)."""
    values: dict[str, Any] = {}
    for opt in of_plugin(JUDGE_PLUGIN):
        value = read(config, opt)
        if value is not None:
            values[opt.key] = str(value) if isinstance(value, Path) else value
    try:
        return JudgeOptions.checked(values)
    except SettingError as exc:
        flag = next((o.label for o in OPTIONS if o.key == exc.option), exc.option)
        raise pytest.UsageError(f"{flag}: {exc}") from None


def session_settings(config: pytest.Config) -> Settings:
    """The session's settings, built on first use and kept on ``config.stash``."""
    if SETTINGS not in config.stash:
        config.stash[SELECTED] = select_by_node_id(config)
        config.stash[SETTINGS] = build(config)
    return config.stash[SETTINGS]


def runs_at_start(config: pytest.Config) -> list[RunDir]:
    """The run folders known before collection: ``--verial-run``, else (on the controller)
    ``sandbox/`` beside each benchmark file the command line names. Under xdist the controller
    never collects, so what must hold in every process (secrets masked, judge != executor
    refused) starts from these; a folder whose run.yaml cannot be read is left to the criteria
    that read it. Found once per session."""
    if RUNS_AT_START not in config.stash:
        settings = session_settings(config)
        paths: tuple[Path, ...] = settings.runs
        if not paths and not hasattr(config, "workerinput"):
            paths = _default_sandboxes(config, settings.patterns)
        runs = []
        for path in paths:
            try:
                runs.append(settings.run_dir(path))
            except RunConfigError:
                continue
        config.stash[RUNS_AT_START] = runs
    return config.stash[RUNS_AT_START]


_PRUNE = {"node_modules", "__pycache__", "venv", "site-packages"}


def _default_sandboxes(config: pytest.Config, patterns: tuple[str, ...]) -> tuple[Path, ...]:
    """``sandbox/`` beside each benchmark file the command line names (no ``--verial-run``)."""
    from .._loader import is_benchmark_file

    base = config.invocation_params.dir
    found: dict[Path, None] = {}
    for arg in config.args:
        path = Path(file_of(arg))
        path = path if path.is_absolute() else base / path
        if path.is_file() and is_benchmark_file(path, patterns):
            found.setdefault(path.parent / "sandbox")
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _PRUNE]
                if any(is_benchmark_file(Path(root) / f, patterns) for f in files):
                    found.setdefault(Path(root) / "sandbox")
    return tuple(p for p in found if p.is_dir())


def select_by_node_id(config: pytest.Config) -> dict[str, list[str]]:
    """Make ``file::task[entity]::criterion`` arguments work.

    pytest reads everything from the first ``[`` of an argument as a parametrization of its
    last part, so a node id with an entity in the middle would not be found. Such arguments
    are replaced by their file, and the node ids asked for are returned (file node id ->
    prefixes) for ``pytest_collection_modifyitems`` to keep only those.
    """
    from .._loader import is_benchmark_file

    patterns = read(config, option("verial_patterns"))
    wanted: dict[str, list[str]] = {}
    plain: set[str] = set()
    args: list[str] = []
    for arg in config.args:
        path, sep, rest = arg.partition(SEP)
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
        if str(absolute) not in {str(Path(file_of(a)).resolve()) for a in args}:
            args.append(path)
        wanted.setdefault(file_id, []).append(task_nodeid(file_id, rest))
    for file_id in list(wanted):
        if str((config.rootpath / file_id).resolve()) in plain:
            del wanted[file_id]  # the whole file was asked for too
    config.args[:] = args
    return wanted


def session_outputs(config: pytest.Config, paths: dict[str, Path | None]) -> list[Output]:
    """Every file the session writes (:mod:`..reporting._outputs`), in the order refusals name
    them: the ``--verial-*`` outputs (by flag), pytest's ``--junitxml``, the report's journal
    and the report recovered from a journal left beside it, ``$GITHUB_STEP_SUMMARY``."""
    from ..reporting._journal import journal_path, recovered_path

    outputs = [Output(flag, path) for flag, path in paths.items()]
    xml = config.getoption("xmlpath", default=None)
    if xml:
        outputs.append(Output("--junitxml", Path(str(xml)), "foreign"))
    report = paths.get("--verial-report")
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


def session_inputs(
    config: pytest.Config,
    runs: tuple[Path, ...],
    resume: Path | None,
    baseline: Path | None,
    patterns: tuple[str, ...],
) -> list[tuple[str, Path | None]]:
    """What the session reads that is known before collection: run folders, the resumed report,
    the baseline, files named on the command line and the ini file."""
    from .._loader import is_benchmark_file

    inputs: list[tuple[str, Path | None]] = [("the run folder", p) for p in runs]
    inputs.append(("the report resumed by --verial-resume", resume))
    inputs.append(("the baseline", baseline))
    base = config.invocation_params.dir
    for arg in config.args:
        path = base / file_of(arg)
        if path.is_file():
            what = "the benchmark file" if is_benchmark_file(path, patterns) else "the test file"
            inputs.append((what, path))
    inputs.append(("the ini file", config.inipath))
    return inputs


def _runs(config: pytest.Config) -> tuple[Path, ...]:
    """``--verial-run`` folders: each a directory with a name fit for node ids and reports."""
    run_paths = tuple(read(config, option("verial_run")) or ())
    for path in run_paths:
        if not path.is_dir():
            raise pytest.UsageError(f"--verial-run: {path} is not a directory")
    labels = [p.name for p in run_paths]
    for label in labels:  # a label is part of node ids and reports (pytest_verial._display)
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
    return run_paths


def _shard(config: pytest.Config) -> Shard | None:
    value = read(config, option("verial_shard"))
    if value is None:
        return None
    try:
        return parse_shard(str(value))
    except ValueError as exc:
        raise pytest.UsageError(f"--verial-shard: {exc}") from None


def _resume(path: Path | None) -> Resume | None:
    if path is None:
        return None
    try:
        return load_resume(path)
    except ValueError as exc:
        raise pytest.UsageError(f"--verial-resume: {str(exc).splitlines()[0]}") from None


def build(config: pytest.Config) -> Settings:
    """Read every option of the session once, raising pytest.UsageError for unusable values
    (:func:`session_settings` keeps the result)."""
    runs = _runs(config)
    patterns: tuple[str, ...] = read(config, option("verial_patterns"))
    named = {
        opt.label: read(config, opt)
        for opt in map(option, ("verial_report", "verial_junit", "verial_markdown", "verial_html"))
    }
    resume = read(config, option("verial_resume"))
    baseline = read(config, option("verial_baseline"))
    files = session_outputs(config, named)
    inputs = session_inputs(config, runs, resume, baseline, patterns)
    try:  # before anything is read or written (README, "An output that cannot be written")
        check_outputs(files, inputs)
    except OutputRefused as exc:
        raise pytest.UsageError(escape(str(exc))) from None
    outputs = Outputs(
        report=named["--verial-report"],
        junit=named["--verial-junit"],
        markdown=named["--verial-markdown"],
        html=named["--verial-html"],
        files=tuple(files),
        inputs=tuple(inputs),
    )
    return Settings(
        runs=runs,
        scored=read(config, option("verial_scored")),
        pass_threshold=read(config, option("verial_pass_threshold")),
        fail_under=read(config, option("verial_fail_under")),
        trials=read(config, option("verial_trials")),
        strict=read(config, option("verial_strict")),
        shard=_shard(config),
        resume=_resume(resume),
        baseline=baseline,
        patterns=patterns,
        outputs=outputs,
        store=_store(config),
        limits=ReadLimits(
            read(config, option("verial_max_file_size")),
            read(config, option("verial_max_sandbox_size")),
            "--verial-max-file-size",
            "--verial-max-sandbox-size",
        ),
        judge=read_judge(config) if _judge_on(config) else None,
    )


def _store(config: pytest.Config) -> StoreOptions:
    """The results store: by default ``.verial/results.db`` of the project folder, found from
    pytest's rootdir (:func:`pytest_verial.store._url.project_folder`), so that a session
    started in any folder of the project adds to one history."""
    project = project_folder(config.rootpath)
    return StoreOptions(store_url(read(config, option("verial_store"), project), project))
