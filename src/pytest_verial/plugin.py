"""pytest11 entry point: options, hooks and fixtures. Wiring only; logic lives elsewhere."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from . import _heap as heap
from . import _hooks as hooks
from ._collect import (
    BenchmarkFile,
    CriterionItem,
    NoCriteriaItem,
    TaskNode,
    benchmark_file_node,
    refuse_empty_runs,
    task_runs_of_ids,
    task_runs_of_items,
)
from ._config.options import PLUGIN, option
from ._config.reading import add_options, runs_at_start, session_settings
from ._config.run_folder import RunDir
from ._config.selection import split
from ._config.stash import FINISHED, SANDBOXES, SELECTED, SETTINGS, SHARD_INFO, TASK_LEFT
from ._errors import CriterionError, RunConfigError, SourceError
from ._interrupts import TermAsInterrupt
from ._loader import is_benchmark_file
from ._masking import SecretMasking
from ._nodeids import SEP, file_of
from ._recorder import Recorder
from ._secrets import register_setting, register_settings
from .hl7._fixtures import verial_hl7_capture  # noqa: F401 - a fixture for benchmark conftests
from .reporting import _baseline as baseline
from .sources import SOURCE_NAMES, Sandbox, SandboxCache


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser, PLUGIN)  # the judge's options: the verial-judge plugin (judge_plugin.py)


def _load_store_driver(config: pytest.Config) -> None:
    """Import SQLAlchemy now when the results store is on (workers too). Its compiled
    modules cannot be imported twice in one process, and pytester's in-process runs drop
    every module first imported inside them: imported here, by the outer session, it stays.
    ``--collect-only`` writes no store: no import (half of the plugin's start-up), nor an
    existing SQLite store, which the session writes through sqlite3 (``store._lite``)."""
    url = config.stash[SETTINGS].store.url
    if url is not None and not config.option.collectonly:
        from .store._lite import needs_sqlalchemy

        if not needs_sqlalchemy(url):
            return
        import sqlalchemy.dialects.postgresql  # noqa: F401
        import sqlalchemy.dialects.sqlite  # noqa: F401


def pytest_configure(config: pytest.Config) -> None:
    heap.release()  # nothing of an earlier session in this process stays frozen
    config.pluginmanager.register(heap.Scope(is_verial_item), "verial-heap")
    config.pluginmanager.register(SecretMasking(), "verial-secret-masking")
    session_settings(config)  # every option, read once (the verial-judge plugin may have)
    mask_run_secrets(runs_at_start(config))
    config.pluginmanager.register(CollectionGuard(config), "verial-collection-guard")
    config.stash[SANDBOXES] = SandboxCache()
    term = TermAsInterrupt()  # controller and workers alike: SIGTERM winds down as Ctrl-C does
    if term.install():
        config.pluginmanager.register(term, "verial-sigterm")
    _load_store_driver(config)
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Recorder(config), "verial-recorder")
        baseline.register(config)  # --verial-baseline: deltas after the verial summary
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(XdistScheduling(), "verial-xdist")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    if SANDBOXES in config.stash:
        config.stash[SANDBOXES].close()


def is_verial_item(item: pytest.Item) -> bool:
    """The plugin's own items: the freeze of :mod:`.heap` is in effect only while they run."""
    return isinstance(item, (CriterionItem, NoCriteriaItem))


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Any:
    try:
        return (yield)
    finally:
        # The sandboxes (a snapshot of a million resources, say) go before the heap's scope
        # hands its frozen objects back (heap.Scope, an outer wrapper), or the collections of
        # the session's end would walk them.
        if SANDBOXES in session.config.stash:
            session.config.stash[SANDBOXES].close()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    settings = parent.config.stash[SETTINGS]
    if is_benchmark_file(file_path, settings.patterns):
        return benchmark_file_node(parent, file_path)
    return None


def mask_run_secrets(runs: Iterable[RunDir]) -> None:
    """Register, for masking in every artifact, every secret ``*_env`` setting of the runs'
    ``sources`` and the judge's default API key variable (:mod:`._secrets`), read from the
    environment now and in every process: the controller writes the reports, and under xdist
    it never builds a source itself. Masked whether or not the judge plugin is loaded."""
    register_setting("api_key_env", os.environ.get(option("verial_judge_api_key_env").default))
    for run in runs:
        register_settings(run.config.sources, os.environ)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    mask_run_secrets(run for _, run, _ in task_runs_of_items(config, items).values())
    _select_by_node_id(config, items)
    settings = config.stash[SETTINGS]
    if settings.shard is not None:  # on the whole collection, before resume drops anything
        scored = [i.nodeid for i in items if isinstance(i, (CriterionItem, NoCriteriaItem))]
        keep, info = split(scored, settings.shard)
        info.setup = shard_setup(settings, items)
        config.stash[SHARD_INFO] = info.to_json()
        if hasattr(config, "workeroutput"):  # the xdist controller reads it from the workers
            config.workeroutput["verial_shard"] = info.to_json()
        others = {i.nodeid for i in items} - set(scored)  # Python tests run in every shard
        _deselect(config, items, lambda i: i.nodeid in keep or i.nodeid in others)
    if settings.resume is not None:
        kept = settings.resume.kept
        _deselect(config, items, lambda i: i.nodeid not in kept)


def shard_setup(settings: Any, items: list[pytest.Item]) -> dict[str, Any]:
    """What the shards of one run share: options and each benchmark file's version."""
    files = {
        f.nodeid: [
            f.plan.slug,
            f.plan.benchmark.version,
            f.plan.benchmark.pass_threshold,
            f.plan.sha256,
            [[r.label, r.config.id, r.config.agent] for r in settings.run_dirs_for(f.plan.path)],
        ]
        for i in items
        for f in [i.getparent(BenchmarkFile)]
        if f is not None and hasattr(f, "plan")
    }
    return {
        "pass_threshold": settings.pass_threshold,
        "scored": settings.scored,
        "benchmarks": dict(sorted(files.items())),
    }


def _deselect(
    config: pytest.Config, items: list[pytest.Item], keep: Callable[[pytest.Item], bool]
) -> None:
    drop = [i for i in items if not keep(i)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [i for i in items if keep(i)]


def _select_by_node_id(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.stash.get(SELECTED, {})
    if not wanted:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    found: set[str] = set()
    for item in items:
        prefixes = wanted.get(file_of(item.nodeid))
        hits = [p for p in prefixes or () if item.nodeid == p or item.nodeid.startswith(p + SEP)]
        found.update(hits)
        (keep if prefixes is None or hits else drop).append(item)
    missing = [p for prefixes in wanted.values() for p in prefixes if p not in found]
    if missing:
        raise pytest.UsageError(f"not found: {', '.join(missing)}")
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    config = session.config
    left = config.stash.setdefault(TASK_LEFT, {})
    last: pytest.Collector | None = None
    task = ""
    for item in session.items:  # a task run's criterion runs are kept until its last one is done
        if isinstance(item, CriterionItem):
            if item.parent is not last:  # the items of a task run come together
                last, task = item.parent, item.task_node.nodeid
            left[task] = left.get(task, 0) + 1
    if not hasattr(config, "workerinput") and not config.option.collectonly:
        # (the xdist controller checks node ids; listing tests needs no sandbox)
        refuse_empty_runs(session.config, task_runs_of_items(session.config, session.items))


class CollectionGuard:
    """A broken benchmark file is one collection error; the other files still run.

    pytest stops the whole session on any collection error. When every collection error
    comes from a benchmark file, they are hidden from that check while the loop runs and
    counted again afterwards, so the session still ends with a failing exit status. A
    collection error in a Python test module stops the session as usual.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.bad_files: set[str] = set()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        patterns = self.config.stash[SETTINGS].patterns
        if report.failed and is_benchmark_file(Path(report.nodeid), patterns):
            self.bad_files.add(report.nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Any:
        hide = len(self.bad_files) if 0 < len(self.bad_files) == session.testsfailed else 0
        session.testsfailed -= hide
        try:
            return (yield)
        finally:
            session.testsfailed += hide


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if isinstance(item, CriterionItem):
        if call.when == "teardown":
            item.done()  # the item lets go of its criterion run
            heap.checkpoint()  # what the worker keeps of its criterion runs
        run = item.verial_criterion_run
        if run is None and call.when == "setup" and report.failed:
            # A source fixture raised (overridden in a conftest, or unusable run settings).
            error = call.excinfo.value if call.excinfo else None
            message = str(error) if error is not None else "setup failed"
            run = item.errored(
                f"source setup failed: {message}", type(error).__name__ if error else "SetupError"
            )
        if run is not None and run.not_evaluated is not None and report.failed:
            # shown as an error, not a failure of the agent (pytest_report_teststatus)
            report.verial_not_evaluated = run.not_evaluated
        if (
            run is not None
            and call.when in ("setup", "call")
            and not (call.when == "setup" and report.passed)
        ):
            if hasattr(item.config, "workerinput"):  # travels to the controller as JSON
                report.verial = run.to_json()
            else:  # the recorder of this process takes the typed run
                item.config.stash.setdefault(FINISHED, {})[item.nodeid] = run
    return report


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    """A criterion the verifier could not evaluate is an error (``E``, ``ERROR``), counted
    apart from the agent's failures; the session still exits non-zero."""
    if report.failed and getattr(report, "verial_not_evaluated", None):
        return "error", "E", ("ERROR", {"red": True})
    return None


class XdistScheduling:
    """Keep each task run on one worker, criteria in order (deterministic before judge)."""

    checked = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        # Before the scheduler hands out any item: refuse a run scored against nothing.
        if not self.checked and not node.config.option.collectonly:
            self.checked = True
            refuse_empty_runs(node.config, task_runs_of_ids(node.config, list(ids)))

    @pytest.hookimpl(trylast=True, optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # load (xdist's default with -n), worksteal and loadgroup may split a task run across
        # workers, which would gate its judge criteria wrongly; loadscope keeps it, but
        # retries a crashing criterion and can hang after a crash (xdist_scheduling.py);
        # loadfile keeps a whole file on one worker and is left to xdist.
        if config.getoption("dist") not in ("load", "worksteal", "loadgroup", "loadscope"):
            return None
        from ._xdist_scheduling import TaskRunScheduling

        return TaskRunScheduling(config, log)


class _Running:
    """The item whose setup, call or teardown is in progress (pytest runs one at a time).

    ``verial_sandbox`` reads its item here rather than from the ``request`` fixture: pytest
    builds a new fixture definition each time a fixture asks for ``request`` (three per item,
    each reading the signature of a lambda), ~5 % of a criterion's run (BENCHMARKS.md,
    "issue 33, wave 8: i33-hot")."""

    item: pytest.Item | None = None


_RUNNING = _Running()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _RUNNING.item = item  # before pytest's own setup, which builds the item's fixtures


def _sandbox(node: pytest.Item | None) -> Sandbox:
    if not isinstance(node, CriterionItem):
        shown = f"; {node.nodeid} is not one" if node is not None else ""
        raise pytest.UsageError(f"verial_sandbox is for benchmark criteria{shown}")
    task_node: TaskNode = node.task_node
    return task_node.sandbox()


@pytest.fixture
def verial_sandbox() -> Sandbox:
    """The sandbox (final state) of the current criterion's task run."""
    return _sandbox(_RUNNING.item)


class UnusableSource:
    """Stands for a source that could not be built; any use raises the reason as SourceError."""

    def __init__(self, name: str, reason: str) -> None:
        self._name, self._reason = name, reason

    def __getattr__(self, attr: str) -> Any:
        raise SourceError(f"{self._name} source unusable: {self._reason}")


def _source_fixture(name: str) -> Any:
    def fixture(verial_sandbox: Sandbox) -> Iterator[Any]:
        try:
            source = verial_sandbox.source(name)
        except (CriterionError, RunConfigError) as exc:  # reported by the criterion, no traceback
            source = UnusableSource(name, str(exc))
        yield source

    fixture.__name__ = f"verial_{name}"
    fixture.__doc__ = f"The task run's {name} source (override in a conftest.py to replace it)."
    return pytest.fixture(name=f"verial_{name}")(fixture)


for _name in SOURCE_NAMES:
    globals()[f"verial_{_name}"] = _source_fixture(_name)
