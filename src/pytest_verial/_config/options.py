"""Every ``--verial-*`` option and ``verial_*`` ini key, declared once, and the one reader.

:data:`OPTIONS` is the table: flag, ini key, environment variable, run.yaml key, type, default
and help of each option of the plugin (``verial``), the results store and the LLM judge (the
``verial-judge`` plugin). Both plugins register their rows from it (:mod:`.settings`), the
README's options table is rendered from it (:func:`markdown_table`, checked by a test), and
``verial judge calibrate`` takes the judge's client options from it.

**Precedence**, the same for every option: command line > environment > ini > run.yaml >
default. An option without an environment variable or a run.yaml key skips that step.
:func:`resolve` reads the session's layers (command line, environment, ini) once, when the
session is configured. The run.yaml step belongs to a run folder, not to the session: an
option with a run.yaml key is left unset by :func:`resolve` when no session layer gives it,
and the code that scores a run applies run.yaml, then the default
(:func:`pytest_verial.judge._settings.build_settings` for the judge's options).

This module imports nothing of pytest, so the judge library, the store and the ``verial``
commands read options the way the plugin does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .._errors import UsageError

#: the entry-point names of the two plugins that register options (pyproject.toml)
PLUGIN = "verial"
JUDGE_PLUGIN = "verial-judge"
#: the ``ctx.options`` key that says why the judge is off (``pytest -p no:verial-judge``): a
#: judge criterion that would call it is an error with that reason, as with no judge model
JUDGE_OFF_KEY = "judge_off"
#: what a judge criterion says when the judge plugin is left out
JUDGE_OFF = f"not judged: the LLM judge is off (pytest -p no:{JUDGE_PLUGIN})"

#: how a value is read: ``text`` and ``number``/``whole`` are handed on as given (numbers are
#: checked by the part that owns them, which also checks run.yaml's values); ``share`` is a
#: number in [0, 1]; ``size`` a number of bytes (``64MiB``, ``1GiB``, ``1048576``); ``path``
#: is relative to the working directory on the command line and in the environment, to
#: rootdir in the ini file; ``paths`` and ``args`` are lists.
Kind = Literal["text", "path", "paths", "bool", "share", "number", "whole", "size", "args"]

#: what ``off`` options take, in any case, to turn themselves off (not a path)
OFF_WORDS = ("off", "none")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CACHE_DIR = ".verial-cache/judge"
DEFAULT_STORE = "sqlite:///<rootdir>/.verial/results.db"


@dataclass(frozen=True)
class Option:
    """One option: ``name`` is its ini key and the dest of its flag (``verial_run``)."""

    name: str
    kind: Kind
    help: str
    #: the plugin that registers it (``verial`` or ``verial-judge``)
    plugin: str = PLUGIN
    #: shown after the flag in ``--help`` and the README; None: a flag without a value
    metavar: str | None = None
    #: False: an ini key only (``verial_patterns``)
    cli: bool = True
    env: str | None = None
    #: the run.yaml key that gives it for one run folder (``sources.judge.model``)
    run_yaml: str | None = None
    #: the value when nothing gives one; ``<rootdir>`` in a text is the session's rootdir
    default: Any = None
    #: a ``path`` option that ``off`` or ``none`` turns off
    off: bool = False
    #: the README's "meaning" cell when it says more than ``help``
    doc: str | None = None
    #: the same setting of ``verial serve`` (its flag), and its default there
    serve: str | None = None
    serve_default: Any = None

    @property
    def flag(self) -> str | None:
        """``--verial-run``; None for an ini key only."""
        return "--" + self.name.replace("_", "-") if self.cli else None

    @property
    def key(self) -> str:
        """Its key in ``ctx.options`` (the judge's): ``judge_model``, ``bypass_cost``."""
        return self.name.removeprefix("verial_")

    @property
    def label(self) -> str:
        """How messages name it: the flag, else the ini key."""
        return self.flag or self.name


_JUDGE_DOCS = "See [docs/judge.md](docs/judge.md#settings)"

OPTIONS: tuple[Option, ...] = (
    Option(
        "verial_run",
        "paths",
        "run directory to score (repeatable: trials); default: sandbox/ beside each benchmark file",
        metavar="DIR",
        doc="run directory to score; repeatable: each folder is its own benchmark run, unless "
        "the folders' `run.yaml` name the same `agent`: then they are trials of one (mean, "
        "pass^k, 95 % CI). Default: `sandbox/` beside each benchmark file",
    ),
    Option(
        "verial_report",
        "path",
        "write the JSON report to PATH",
        metavar="PATH",
        doc="write the JSON report (atomically, once, at the end; criterion runs journaled "
        "beside it in `PATH.journal.jsonl` until it is written, see [Interrupted and crashed "
        "runs](#interrupted-and-crashed-runs))",
    ),
    Option(
        "verial_junit",
        "path",
        "write task-level JUnit XML to PATH",
        metavar="PATH",
        doc="write task-level JUnit XML: one `<testsuite>` per task run (properties: score, "
        "verdict, status, `axis.<name>.score`, `criterion.<id>.score`...), one `<testcase>` per "
        "criterion; valid against the Jenkins JUnit schema",
    ),
    Option(
        "verial_markdown",
        "path",
        "write a Markdown summary to PATH (also appended to $GITHUB_STEP_SUMMARY when set)",
        metavar="PATH",
        doc="write the Markdown summary (also appended to `$GITHUB_STEP_SUMMARY` when set)",
    ),
    Option(
        "verial_html",
        "path",
        "write a self-contained HTML report to PATH (opens from disk; no network)",
        metavar="PATH",
        doc="write the self-contained HTML report (see [Reports for people]"
        "(#reports-for-people-html-ci-summary-drill-down))",
    ),
    Option(
        "verial_scored",
        "bool",
        "scored run: keep details and evidence out of the terminal and JUnit (JSON keeps them)",
        default=False,
        doc="scored run: terminal and JUnit omit details and evidence (the JSON report keeps "
        "them). Also `scored: true` in `run.yaml` (either makes a run scored). See [Scored "
        "runs](#scored-runs)",
    ),
    Option(
        "verial_pass_threshold",
        "share",
        "score a task needs for verdict pass (default 0.9; a benchmark or task may set its own)",
        metavar="SCORE",
        doc="task score needed for verdict `pass` (default 0.9; a benchmark or task may set its "
        "own, which wins)",
    ),
    Option(
        "verial_fail_under",
        "share",
        "exit 0 iff every benchmark run's score reaches SCORE and no criterion errored",
        metavar="SCORE",
        doc="exit 0 iff every benchmark run's score reaches SCORE and nothing errored",
    ),
    Option(
        "verial_baseline",
        "path",
        "a JSON report to compare this session with: its changes follow the verial summary",
        metavar="PATH",
        doc="a JSON report to compare this session with: the score and verdict changes follow "
        "the verial summary (informative: the exit status is unchanged). A path that is not a "
        "usable report is a usage error. See [Compare and gate](#compare-and-gate)",
    ),
    Option(
        "verial_shard",
        "text",
        "score only shard K of N (task runs balanced by criteria; merge with verial merge)",
        metavar="K/N",
        doc="score only shard K of N (whole task runs, balanced by criteria); merge with "
        "`verial merge`. See [Scale out](#scale-out)",
    ),
    Option(
        "verial_resume",
        "path",
        "keep the completed task runs of REPORT (or a *.journal.jsonl) and score the rest",
        metavar="REPORT",
        doc="keep the completed task runs of REPORT (or its `.journal.jsonl`) and score the rest; "
        "REPORT must be sealed and of the same benchmark files, run folders and plugin version "
        "(see [Sealed reports and journals](#sealed-reports-and-journals))",
    ),
    Option(
        "verial_store",
        "text",
        "results store the session is written into: sqlite:///PATH, postgresql://... or none "
        "(default: the project's .verial/results.db, the project being the nearest folder at "
        "or above rootdir holding one or a pyproject.toml, pytest.ini, tox.ini, setup.cfg, "
        "setup.py or .git, else rootdir; env VERIAL_STORE)",
        metavar="URL",
        env="VERIAL_STORE",
        default=DEFAULT_STORE,
        doc="the results store every session is written into: `sqlite:///PATH`, "
        "`postgresql://user@host/db` (needs `pip install 'pytest-verial[postgres]'`) or `none` "
        "(off). Default `sqlite:///<project>/.verial/results.db`: one store per project, "
        "whatever folder pytest starts in (the rule: [The results store](#the-results-store))",
    ),
    Option(
        "verial_trials",
        "bool",
        "score the --verial-run folders as trials of one agent (default: folders whose "
        "run.yaml names the same agent are trials; others are separate benchmark runs)",
        default=False,
        doc="score every `--verial-run` folder as a trial of one agent, whatever their "
        "`run.yaml` say",
    ),
    Option(
        "verial_strict",
        "bool",
        "an assert no check knows is a collection error (default: a warning at collection, "
        "and the criterion fails with 'unsupported assertion: X' and score 0, as in Verial)",
        default=False,
        doc="an `assert` no check knows is a collection error, with a did-you-mean (default: a "
        "warning at collection, and the criterion fails with `unsupported assertion: X`, score "
        "0, as in Verial). See [The criterion format](#the-criterion-format)",
    ),
    Option(
        "verial_max_file_size",
        "size",
        "largest sandbox file read, checked before reading (default 1GiB; 64MiB, 1048576...)",
        metavar="SIZE",
        default="1GiB",
        serve="--max-file-size",
        serve_default="64MiB",
        doc="the largest file of a sandbox (or run.yaml) read, checked by its size before a "
        "byte is read and while reading: a larger one is an error of the criteria reading it, "
        "naming the file and the limit (default `1GiB`; `64MiB`, `1048576`...). See [Bad input "
        "and limits](#bad-input-and-limits)",
    ),
    Option(
        "verial_max_sandbox_size",
        "size",
        "most bytes read from one task run's sandbox, all files together (default 4GiB)",
        metavar="SIZE",
        default="4GiB",
        serve="--max-sandbox-size",
        serve_default="256MiB",
        doc="the most bytes read from one task run's sandbox, its distinct files together: "
        "the file that would pass it is an error of the criteria reading it (default `4GiB`)",
    ),
    Option(
        "verial_patterns",
        "args",
        "extra glob patterns of benchmark files besides *.verial.yaml|yml|json",
        cli=False,
        default=(),
        doc="extra glob patterns of benchmark files besides `*.verial.yaml|yml|json`",
    ),
    # -- the LLM judge (the verial-judge plugin; docs/judge.md) ----------------------------
    Option(
        "verial_judge_model",
        "text",
        "model id of the LLM judge (must differ from the executor's)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.model",
        doc="the LLM judge's model (must differ from the executor's: a usage error before "
        "anything runs)",
    ),
    Option(
        "verial_judge_base_url",
        "text",
        f"OpenAI-compatible base URL of the judge (default {DEFAULT_BASE_URL})",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.base_url",
        default=DEFAULT_BASE_URL,
        doc=f"the judge's base URL: any OpenAI-compatible endpoint (default `{DEFAULT_BASE_URL}`)",
    ),
    Option(
        "verial_judge_api_key_env",
        "text",
        "name of the environment variable holding the judge's API key (default "
        f"{DEFAULT_API_KEY_ENV})",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.api_key_env",
        default=DEFAULT_API_KEY_ENV,
        doc="the environment variable the judge's API key is read from (default "
        f"`{DEFAULT_API_KEY_ENV}`); the key itself is never an option",
    ),
    Option(
        "verial_executor_model",
        "text",
        "model that produced the outputs (default: executor_model of run.yaml)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="executor_model",
        doc="the model that produced the outputs",
    ),
    Option(
        # No run.yaml step in a pytest session: the plugin's default (under rootdir) is the
        # session's. ``sources.judge.cache_dir`` serves verify_task and the service.
        "verial_judge_cache_dir",
        "path",
        f"disk cache of judge replies (default {DEFAULT_CACHE_DIR} under rootdir; 'off' disables)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        default=DEFAULT_CACHE_DIR,
        off=True,
        doc=f"disk cache of judge replies (default `{DEFAULT_CACHE_DIR}` under rootdir; `off` "
        f"disables). {_JUDGE_DOCS}",
    ),
    Option(
        "verial_judge_timeout",
        "number",
        "seconds per judge request (default 60)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.timeout",
        default=60.0,
        doc=f"seconds per judge request (default 60). {_JUDGE_DOCS}",
    ),
    Option(
        "verial_judge_samples",
        "whole",
        "ask the judge N times per criterion: the score is the mean, the spread its confidence "
        "(default 1)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.samples",
        default=1,
        doc="ask the judge N times per judge criterion (at the configured temperature, the seed "
        "moved by the sample index): the score is the mean, the spread of the sample scores "
        "(population standard deviation) is the criterion's confidence, in "
        "`evidence.judge.samples`; every sample is a call, costed, with its own cache key "
        "(default 1)",
    ),
    Option(
        "verial_judge_concurrency",
        "whole",
        "judge criteria of one task run scored at once, at most N judge calls in flight "
        "(default 4, at most 64; 1: one after another)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        default=4,
        doc="the judge criteria of a task run whose deterministic criteria passed are scored "
        "concurrently, at most N judge calls in flight (default 4, 1-64; 1: one after another; "
        "inline: `config` key `judge_concurrency`). Same items, reports and figures as one "
        "after another; see [docs/judge.md](docs/judge.md#judge-criteria-at-once)",
    ),
    Option(
        "verial_judge_retries",
        "whole",
        "extra attempts after a failed or malformed reply (default 2)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.retries",
        default=2,
        doc=f"extra attempts after a failed or malformed reply (default 2). {_JUDGE_DOCS}",
    ),
    Option(
        "verial_judge_response_format",
        "text",
        "json_object (default), json_schema (server-enforced reply schema) or none",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.response_format",
        default="json_object",
        doc="`json_object` (default), `json_schema` (server-enforced reply schema) or `none`. "
        + _JUDGE_DOCS,
    ),
    Option(
        "verial_judge_prices",
        "path",
        "YAML/JSON price table {model: {input, output}} in USD per 1M tokens",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.prices",
        off=True,
        doc="YAML/JSON price table `{model: {input, output}}` in USD per 1M tokens, added to the "
        f"built-in one. {_JUDGE_DOCS}",
    ),
    Option(
        "verial_bypass_cost",
        "number",
        "tasks cheaper than this (USD, run.yaml cost) skip the judge (default 0.05)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.bypass_cost",
        default=0.05,
        doc="tasks cheaper than this (USD, run.yaml `tasks.<id>.cost`) skip the judge "
        "(default 0.05)",
    ),
    Option(
        "verial_verification_budget",
        "number",
        "verification cost share of task cost that triggers a warning (default 0.15)",
        plugin=JUDGE_PLUGIN,
        metavar="VALUE",
        run_yaml="sources.judge.budget",
        default=0.15,
        doc="warn when verification costs more than this share of task cost (default 0.15)",
    ),
)

BY_NAME: dict[str, Option] = {option.name: option for option in OPTIONS}


@dataclass(frozen=True)
class ServeOption:
    """A setting of ``verial serve`` alone (the ones it shares with the plugin are rows of
    :data:`OPTIONS` with a ``serve`` flag): its flag, how its value reads, default and help."""

    flag: str
    kind: Literal["size", "seconds", "whole"]
    default: str
    help: str


#: ``verial serve``'s own limits (issue 31; :mod:`pytest_verial.service._limits`), by name
SERVE_OPTIONS: dict[str, ServeOption] = {
    "max_inline_criteria": ServeOption(
        "--max-inline-criteria",
        "whole",
        "200",
        "the most criteria a task given in a request (`task`) may hold: more is a 413 before "
        "anything is scored",
    ),
    "max_answer_size": ServeOption(
        "--max-answer-size",
        "size",
        "4MiB",
        "the largest answer (a task run with its evidence, as JSON): a larger one is a 413 and "
        "nothing is stored",
    ),
    "header_timeout": ServeOption(
        "--header-timeout",
        "seconds",
        "10",
        "seconds a connection has to send a request's headers (from its opening, or from the "
        "end of the answer before on a kept-alive connection); then it is answered 408 and "
        "closed. Headers over 64 KiB are a 431",
    ),
    "body_timeout": ServeOption(
        "--body-timeout",
        "seconds",
        "60",
        "seconds a request has to send its whole body once its headers are in; then it is "
        "answered 408 and closed",
    ),
}


def option(name: str) -> Option:
    """The option whose ini key is ``name`` (KeyError naming it otherwise)."""
    return BY_NAME[name]


def of_plugin(plugin: str) -> tuple[Option, ...]:
    """The options one plugin registers, in table order."""
    return tuple(o for o in OPTIONS if o.plugin == plugin)


def _given(value: Any) -> bool:
    return value is not None and value != "" and value != [] and value != ()


def resolve(
    opt: Option,
    *,
    cli: Any = None,
    environ: Mapping[str, str] | None = None,
    ini: Any = None,
    cwd: Path | None = None,
    rootdir: Path | None = None,
) -> Any:
    """The session's value of ``opt``: command line > environment > ini > default.

    An empty value is not given. The default is left for the run.yaml step when ``opt`` has a
    run.yaml key (None here). A bad value is a :class:`UsageError` naming the option.
    """
    env = environ.get(opt.env) if opt.env and environ is not None else None
    if _given(cli):
        value, base = cli, cwd
    elif _given(env):
        value, base = env, cwd
    elif _given(ini):
        value, base = ini, rootdir
    elif opt.run_yaml is not None:
        return None
    else:
        value, base = opt.default, rootdir
        if isinstance(value, str) and rootdir is not None:
            value = value.replace("<rootdir>", str(Path(rootdir).resolve()))
    return _parse(opt, value, base)


def _parse(opt: Option, value: Any, base: Path | None) -> Any:
    if value is None:
        return None
    if opt.kind == "bool":
        return value is True or str(value).lower() in ("1", "true", "yes")
    if opt.kind == "share":
        return _share(opt, value)
    if opt.kind == "path":
        if opt.off and str(value).lower() in OFF_WORDS:
            return str(value)
        return _path(value, base)
    if opt.kind == "paths":
        values = [value] if isinstance(value, (str, Path)) else list(value)
        return [_path(v, base) for v in values]
    if opt.kind == "args":
        return tuple(str(v) for v in value)
    if opt.kind == "size":
        from .._sandbox_io.sizes import parse_size

        try:
            return parse_size(value)
        except ValueError as exc:
            raise UsageError(f"{opt.label}: {exc}") from None
    return value


def _path(value: Any, base: Path | None) -> Path:
    path = Path(str(value))
    return path if path.is_absolute() or base is None else base / path


def _share(opt: Option, value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{opt.label}: {value!r} is not a number") from None
    if not 0.0 <= number <= 1.0:
        raise UsageError(f"{opt.label}: {number} is outside [0, 1]")
    return number


# -- the README's table ---------------------------------------------------------------------

#: how the README names an ini key's type (text and path keys: none)
_INI_TYPE_WORDS = {
    "paths": "paths",
    "bool": "bool",
    "args": "args",
    "share": "float",
    "number": "float",
    "whole": "int",
    "size": "size",
}


def markdown_serve_table() -> str:
    """The README's table of ``verial serve``'s limits (``scripts/options_table.py``)."""
    lines = ["| `verial serve` flag | default | meaning |", "|---|---|---|"]
    for opt in OPTIONS:
        if opt.serve:
            meaning = f"as `{opt.flag}` (above), for every sandbox the service scores"
            lines.append(f"| `{opt.serve} SIZE` | `{opt.serve_default}` | {meaning} |")
    for spec in SERVE_OPTIONS.values():
        metavar = {"size": "SIZE", "seconds": "SECONDS", "whole": "N"}[spec.kind]
        lines.append(f"| `{spec.flag} {metavar}` | `{spec.default}` | {spec.help} |")
    return "\n".join(lines) + "\n"


def markdown_table() -> str:
    """The README's options table (``scripts/options_table.py`` writes and checks it)."""
    lines = ["| option | ini key | meaning |", "|---|---|---|"]
    for opt in OPTIONS:
        flag = f"`{opt.flag}{' ' + opt.metavar if opt.metavar else ''}`" if opt.flag else ""
        kind = _INI_TYPE_WORDS.get(opt.kind)
        ini = f"`{opt.name}`" + (f" ({kind})" if kind else "")
        meaning = opt.doc or opt.help
        if opt.env:
            meaning += f". Also `${opt.env}` (between the option and the ini key)"
        if opt.run_yaml:
            meaning += f". Also run.yaml `{opt.run_yaml}` (after the ini key)"
        if opt.serve:
            meaning += f". Also `verial serve {opt.serve}` (default `{opt.serve_default}`)"
        cells = (flag, ini, meaning)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
