"""The judge's part of the pytest plugin: options, the judge != executor usage error, and
the report extension (``feedback`` per task run, ``verification`` summary, terminal lines).

``plugin.py`` calls :func:`add_options` and :func:`configure`; everything else hangs off the
:class:`JudgeReporting` object registered here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ..errors import RunConfigError
from ..results import Report
from ..runinfo import RunDir, load_run_config
from ..secrets import register_setting, register_settings
from ..settings import ini_type
from .models import run_self_grading, self_grading
from .report import summary_lines, task_feedback, verification_summary
from .settings import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_BUDGET,
    DEFAULT_CACHE_DIR,
    DEFAULT_CONCURRENCY,
    MAX_CONCURRENCY,
    SettingError,
    build_settings,
    concurrency,
)

#: (flag, key in ctx.options, help)
OPTIONS: list[tuple[str, str, str]] = [
    (
        "--verial-judge-model",
        "judge_model",
        "model id of the LLM judge (must differ from the executor's)",
    ),
    (
        "--verial-judge-base-url",
        "judge_base_url",
        "OpenAI-compatible base URL of the judge (default https://api.openai.com/v1)",
    ),
    (
        "--verial-judge-api-key-env",
        "judge_api_key_env",
        "name of the environment variable holding the judge's API key (default OPENAI_API_KEY)",
    ),
    (
        "--verial-executor-model",
        "executor_model",
        "model that produced the outputs (default: executor_model of run.yaml)",
    ),
    (
        "--verial-judge-cache-dir",
        "judge_cache_dir",
        f"disk cache of judge replies (default {DEFAULT_CACHE_DIR} under rootdir; 'off' disables)",
    ),
    ("--verial-judge-timeout", "judge_timeout", "seconds per judge request (default 60)"),
    (
        "--verial-judge-samples",
        "judge_samples",
        "ask the judge N times per criterion: the score is the mean, the spread its confidence "
        "(default 1)",
    ),
    (
        "--verial-judge-concurrency",
        "judge_concurrency",
        "judge criteria of one task run scored at once, at most N judge calls in flight "
        f"(default {DEFAULT_CONCURRENCY}, at most {MAX_CONCURRENCY}; 1: one after another)",
    ),
    (
        "--verial-judge-retries",
        "judge_retries",
        "extra attempts after a failed or malformed reply (default 2)",
    ),
    (
        "--verial-judge-response-format",
        "judge_response_format",
        "json_object (default), json_schema (server-enforced reply schema) or none",
    ),
    (
        "--verial-judge-prices",
        "judge_prices",
        "YAML/JSON price table {model: {input, output}} in USD per 1M tokens",
    ),
    (
        "--verial-bypass-cost",
        "bypass_cost",
        "tasks cheaper than this (USD, run.yaml cost) skip the judge (default 0.05)",
    ),
    (
        "--verial-verification-budget",
        "verification_budget",
        "verification cost share of task cost that triggers a warning (default 0.15)",
    ),
]


_INI_TYPES = {
    "judge_timeout": "float",
    "judge_retries": "int",
    "judge_samples": "int",
    "judge_concurrency": "int",
    "bypass_cost": "float",
    "verification_budget": "float",
}


def add_options(group: Any, parser: pytest.Parser) -> None:
    """Register the judge's ``--verial-*`` options and ini keys."""
    for flag, key, help_text in OPTIONS:
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, metavar="VALUE", help=help_text)
        # numbers as numbers, so pytest 9's [tool.pytest] table takes native TOML values
        ini = ini_type(_INI_TYPES.get(key, "string"))
        parser.addini(dest, help=help_text, type=ini, default=None)


def read_options(config: pytest.Config) -> dict[str, Any]:
    """Option values by ``ctx.options`` key (CLI over ini); unset ones are left out."""
    values: dict[str, Any] = {}
    for flag, key, _ in OPTIONS:
        dest = flag.lstrip("-").replace("-", "_")
        value = config.getoption(dest, default=None)
        from_ini = value in (None, "")
        if from_ini:
            value = config.getini(dest)
            value = None if value in (None, "", []) else value  # 0 is a value, to be checked
        if value is None:
            continue
        if key in ("judge_cache_dir", "judge_prices") and str(value).lower() not in ("off", "none"):
            path = Path(str(value))
            value = str(
                path if path.is_absolute() else (config.rootpath if from_ini else Path.cwd()) / path
            )
        values[key] = value
    values.setdefault("judge_cache_dir", str(config.rootpath / DEFAULT_CACHE_DIR))
    return values


def check_options(options: dict[str, Any]) -> None:
    """Every judge option and ini key checked before anything runs (numbers finite and in
    range, the reply format, the price table): one usage error naming the option."""
    try:
        build_settings(options)
        concurrency(options)
    except SettingError as exc:
        flag = next((f for f, key, _ in OPTIONS if key == exc.option), exc.option)
        raise pytest.UsageError(f"{flag}: {exc}") from None


def judge_conflict(options: dict[str, Any], runs: Iterable[RunDir]) -> str | None:
    """The usage error message when the judge would be the executor's model, else None."""
    for run in runs:
        problem = run_self_grading(options, run, f" of run {run.label}")
        if problem is not None:
            return problem
    return None


def register_secrets(options: dict[str, Any], runs: Iterable[RunDir]) -> None:
    """Register, for masking in every artifact, the judge's API key and every secret ``*_env``
    setting of the runs' ``sources`` (:mod:`pytest_verial.secrets`), read from the environment
    now: before any judge cache lookup, and in every process (the controller writes the
    reports; under xdist it never makes a judge request itself)."""
    names = {options.get("judge_api_key_env") or DEFAULT_API_KEY_ENV}
    for run in runs:
        judge_cfg = run.config.sources.get("judge", {}) or {}
        if isinstance(judge_cfg, dict) and isinstance(judge_cfg.get("api_key_env"), str):
            names.add(judge_cfg["api_key_env"])
        register_settings(run.config.sources, os.environ)
    for name in names:
        register_setting("api_key_env", os.environ.get(str(name)))


def configure(config: pytest.Config, settings: Any) -> None:
    """Fill ``ctx.options`` with the judge settings and refuse judge == executor."""
    options = read_options(config)
    settings.check_options.update(options)
    problem = self_grading(options.get("judge_model"), options.get("executor_model"))
    if problem is not None:
        raise pytest.UsageError(problem)
    check_options(options)
    runs = []
    paths = settings.runs
    if not paths and not hasattr(config, "workerinput"):
        paths = _default_sandboxes(config)
    for path in paths:
        try:
            runs.append(RunDir(path))
        except RunConfigError:
            continue  # reported by the criteria that read this run
    register_secrets(options, runs)
    problem = judge_conflict(options, runs)
    if problem:
        raise pytest.UsageError(problem)
    config.pluginmanager.register(JudgeReporting(config, options), "verial-judge")
    limit = concurrency(options)
    if limit > 1:  # 1: each judge criterion scores itself at its turn, as it always did
        from ..state import CONCURRENT_JUDGING
        from .concurrent import ConcurrentJudging

        judging = config.stash[CONCURRENT_JUDGING] = ConcurrentJudging(limit)
        config.pluginmanager.register(judging, "verial-judge-concurrency")


class JudgeReporting:
    """Report extension and summary lines; also checks run dirs found during collection."""

    def __init__(self, config: pytest.Config, options: dict[str, Any]) -> None:
        self.config = config
        self.options = options
        self.summary: dict[str, Any] | None = None

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        runs: dict[str, RunDir] = {}
        for item in items:
            task_node = getattr(item, "task_node", None)
            run = getattr(task_node, "run", None)
            if run is not None:
                runs.setdefault(str(run.path), run)
        register_secrets(self.options, runs.values())
        if hasattr(self.config, "workerinput"):
            return  # an xdist worker cannot stop the session cleanly; the controller checked
        problem = judge_conflict(self.options, runs.values())
        if problem:
            raise pytest.UsageError(problem)

    def annotate(self, report: Report) -> None:
        """Feedback for each failed or partial task run, and the session's verification
        summary (judge calls, cost and its share of task cost). The recorder calls it on the
        typed report before any ``pytest_verial_report`` hook sees the report."""
        costs: dict[tuple[str, str], float | None] = {}
        for run in report.benchmark_runs:
            configs = {r.label: _config(r.path) for r in run.runs}
            for task in run.task_runs:
                if task.verdict in ("fail", "partial"):
                    task.feedback = task_feedback(task)
                cfg = configs.get(task.run)
                meta = cfg.tasks.get(task.task_key) or cfg.tasks.get(task.task_id) if cfg else None
                costs[(task.run, task.task_key)] = meta.cost if meta else None
        budget = float(self.options.get("verification_budget") or DEFAULT_BUDGET)
        tasks = (task for run in report.benchmark_runs for task in run.task_runs)
        self.summary = verification_summary(tasks, costs, budget)
        report.session.verification = self.summary

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        for line in summary_lines(self.summary):
            terminalreporter.write_line(line)

    def pytest_unconfigure(self) -> None:
        client = sys.modules.get(f"{__package__}.client")
        if client is not None:  # a session that judged nothing never loaded the client
            client.close_clients()


_PRUNE = {"node_modules", "__pycache__", "venv", "site-packages"}


def _default_sandboxes(config: pytest.Config) -> list[Path]:
    """``sandbox/`` beside each benchmark file the command line names (no ``--verial-run``).

    Runs on the controller before collection (which under xdist happens only on workers), so
    judge == executor is refused before any worker starts.
    """
    from ..loader import is_benchmark_file

    base = config.invocation_params.dir
    found: dict[Path, None] = {}
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        path = path if path.is_absolute() else base / path
        if path.is_file() and is_benchmark_file(path):
            found.setdefault(path.parent / "sandbox")
        elif path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _PRUNE]
                if any(is_benchmark_file(Path(root) / f) for f in files):
                    found.setdefault(Path(root) / "sandbox")
    return [p for p in found if p.is_dir()]


def _config(path: str | None) -> Any:
    if not path:
        return None
    try:
        return load_run_config(Path(path))
    except Exception:  # the run config was read before; a late failure only loses costs
        return None
