"""The ``verial-judge`` plugin: the LLM judge's pytest wiring, its own ``pytest11`` entry point.

It registers the judge's options (its rows of :mod:`pytest_verial._config.options`), refuses a judge
that would grade its own executor's outputs (a usage error before anything runs), registers
the API key its options name for masking, and extends the report: a ``feedback`` text per
failed or partial task run, the session's ``verification`` summary and its terminal lines
(:class:`JudgeReporting`, which the recorder calls by name).

``pytest -p no:verial-judge`` leaves all of it out, and the judge's options with it; the rest
of the plugin works as before. A judge criterion is then gated or bypassed as usual, and one
that would call the judge is an error naming why (``ctx.options`` carries the reason, see
:data:`pytest_verial._config.options.JUDGE_OFF`), as when no judge model is configured: never
a pass.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._collect import CriterionItem, task_runs_of_items
from ._config.options import JUDGE_PLUGIN, PLUGIN
from ._config.reading import add_options, runs_at_start, session_settings
from ._config.run_folder import RunDir, load_run_config
from ._config.stash import CONCURRENT_JUDGING
from ._secrets import register_setting
from .judge._models import run_self_grading, self_grading
from .judge._settings import DEFAULT_API_KEY_ENV, DEFAULT_BUDGET, concurrency

if TYPE_CHECKING:  # the result models load when a report is written, never under --co
    from ._results import Report

#: the name :class:`JudgeReporting` is registered under (the recorder looks it up)
REPORTING = "verial-judge-reporting"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser, JUDGE_PLUGIN)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Refuse judge == executor, register secrets and the report extension: before the
    ``verial`` plugin registers anything that writes (hence ``tryfirst``)."""
    manager = config.pluginmanager
    if not (manager.has_plugin(PLUGIN) or manager.has_plugin("pytest_verial.plugin")):
        return  # pytest -p no:verial: nothing to judge
    settings = session_settings(config)
    if settings.judge is None:
        return
    options = settings.judge.to_options()
    problem = self_grading(options.get("judge_model"), options.get("executor_model"))
    if problem is not None:
        raise pytest.UsageError(problem)
    register_api_key(options)
    problem = judge_conflict(options, runs_at_start(config))
    if problem:
        raise pytest.UsageError(problem)
    manager.register(JudgeReporting(config, options), REPORTING)
    limit = concurrency(options)
    if limit > 1:  # 1: each judge criterion scores itself at its turn, as it always did
        from ._judge_concurrency import ConcurrentJudging

        judging = config.stash[CONCURRENT_JUDGING] = ConcurrentJudging(limit, CriterionItem)
        manager.register(judging, "verial-judge-concurrency")


def judge_conflict(options: dict[str, Any], runs: Iterable[RunDir]) -> str | None:
    """The usage error message when the judge would be the executor's model, else None."""
    for run in runs:
        problem = run_self_grading(options, run, f" of run {run.label}")
        if problem is not None:
            return problem
    return None


def register_api_key(options: dict[str, Any]) -> None:
    """Register, for masking in every artifact, the judge's API key that the options name
    (:mod:`pytest_verial._secrets`), read from the environment now: before any judge cache
    lookup, and in every process. (The ``verial`` plugin registers the runs' own settings,
    ``sources.judge.api_key_env`` included, and the default variable.)"""
    name = options.get("judge_api_key_env") or DEFAULT_API_KEY_ENV
    register_setting("api_key_env", os.environ.get(str(name)))


class JudgeReporting:
    """Report extension and summary lines; also checks run dirs found during collection."""

    def __init__(self, config: pytest.Config, options: dict[str, Any]) -> None:
        self.config = config
        self.options = options
        self.summary: dict[str, Any] | None = None

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        if hasattr(self.config, "workerinput"):
            return  # an xdist worker cannot stop the session cleanly; the controller checked
        runs = [run for _, run, _ in task_runs_of_items(self.config, items).values()]
        problem = judge_conflict(self.options, runs)
        if problem:
            raise pytest.UsageError(problem)

    def annotate(self, report: Report) -> None:
        """Feedback for each failed or partial task run, and the session's verification
        summary (judge calls, cost and its share of task cost). The recorder calls it on the
        typed report before any ``pytest_verial_report`` hook sees the report: the whole
        report, or a light one that kept typed every criterion run :meth:`keeps` names."""
        from .judge._report import task_feedback, verification_summary

        costs: dict[tuple[str, str], float | None] = {}
        for run in report.benchmark_runs:
            configs = {r.label: _config(r.path) for r in run.runs}
            for task in run.task_runs:
                # a failed or partial task run; or one whose verdict is unknown (a criterion
                # not evaluated) but that failed criteria of its own
                task.feedback = task_feedback(task)
                cfg = configs.get(task.run)
                meta = cfg.tasks.get(task.task_key) or cfg.tasks.get(task.task_id) if cfg else None
                costs[(task.run, task.task_key)] = meta.cost if meta else None
        budget = float(self.options.get("verification_budget") or DEFAULT_BUDGET)
        tasks = (task for run in report.benchmark_runs for task in run.task_runs)
        self.summary = verification_summary(tasks, costs, budget)
        report.session.verification = self.summary

    @staticmethod
    def keeps(run: Any) -> bool:
        """The criterion runs :meth:`annotate` reads (``judge._report.reads``)."""
        from .judge._report import reads

        return reads(run)

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.summary is None:
            return
        configured = bool(self.options.get("judge_model"))
        from .judge._report import verification_lines

        for line in verification_lines(self.summary, configured=configured):
            terminalreporter.write_line(line)

    def pytest_unconfigure(self) -> None:
        client = sys.modules.get("pytest_verial.judge._client")
        if client is not None:  # a session that judged nothing never loaded the client
            client.close_clients()


def _config(path: str | None) -> Any:
    if not path:
        return None
    try:
        return load_run_config(Path(path))
    except Exception:  # the run config was read before; a late failure only loses costs
        return None
