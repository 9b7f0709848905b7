"""Judge criteria of one task run scored at once under pytest (``--verial-judge-concurrency``).

Each criterion stays one pytest item, run in its order and reported as before. When a task run's
first judge criterion runs and the deterministic-first gate is open
(:func:`.judge._gating.gate_open`: every deterministic criterion of the task ran in this process
and passed), its scoring and that of every later judge criterion of the task run are handed to a
:class:`.judge._pool.JudgePool`, at most N at a time; each item then takes its own criterion run
from its future instead of scoring itself. With the gate closed nothing is handed over: the
judge criteria are gated one by one, without a call, as with N = 1.

What is scored ahead is exactly what the item would score at its turn: the same check and
options, the sources the plugin's fixtures give (the task run's sandbox's), and the task run's
criterion runs so far (all its deterministic ones; judge criteria do not read each other). Its
``started_at``, ``completed_at`` and ``duration`` are those of its own scoring, from when a
worker took it. An exception a check raises is raised again by its own item only.

Scored ahead are only the later judge criteria this session runs (``-k``, ``--lf``, shards and
resume deselect before), that no ``skip``, ``skipif`` or ``xfail(run=False)`` marker keeps from
running, and whose fixtures are the plugin's own (none overridden in a conftest, no
function-scoped autouse fixture: either may change what the criterion sees). Any other scores
itself at its turn, also through the pool, so never more than N are in flight.

The jobs not started are cancelled when the session stops (``-x``, ``--maxfail``, Ctrl-C,
SIGTERM: their items never run and report nothing, the task run is ``cancelled``, as without
the pool) and when the task run's last criterion is done. A call already in flight is then
abandoned on its daemon thread; its reply, if any, only fills the cache. Under pytest-xdist the
pool is the worker's: a task run stays on one worker (:mod:`pytest_verial._xdist_scheduling`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ._errors import CriterionError, RunConfigError
from .judge._gating import gate_open
from .judge._pool import JudgePool

if TYPE_CHECKING:
    from _pytest.fixtures import FuncFixtureInfo

    from ._contracts.sandbox import Sandbox
    from ._loader import CriterionPlan, TaskPlan
    from ._record import CriterionRecord


class TaskRunNode(Protocol):
    """What the scheduler reads of a task run's node (the plugin's ``TaskNode``)."""

    @property
    def nodeid(self) -> str: ...
    @property
    def task(self) -> TaskPlan: ...
    def sandbox(self) -> Sandbox: ...


class JudgedItem(Protocol):
    """What the scheduler reads of a criterion's pytest item (the plugin's ``CriterionItem``,
    which the judge plugin hands to :class:`ConcurrentJudging`): the scheduler knows items
    through this, not through the collection module that defines them."""

    @property
    def nodeid(self) -> str: ...
    @property
    def session(self) -> pytest.Session: ...
    @property
    def plan(self) -> CriterionPlan: ...
    @property
    def task_node(self) -> TaskRunNode: ...
    @property
    def _fixtureinfo(self) -> FuncFixtureInfo: ...
    def sandbox_arg(self) -> Sandbox: ...
    def scoring(
        self, sources: dict[str, Any], sandbox: Sandbox, prior: dict[str, CriterionRecord]
    ) -> Callable[[], CriterionRecord]: ...
    def get_closest_marker(self, name: str) -> pytest.Mark | None: ...
    def iter_markers(self, name: str | None = None) -> Iterator[pytest.Mark]: ...


#: where the plugin's own fixtures (``verial_sandbox``, ``verial_<source>``) are defined
_OWN_MODULES = "pytest_verial."


class ConcurrentJudging:
    """The process's judge pool and the futures of the criteria it scores ahead, by task run;
    a plugin object on ``config.stash[CONCURRENT_JUDGING]``."""

    def __init__(self, limit: int, item_type: type[Any]) -> None:
        self.limit = limit
        #: the class of the criterion items the session collects (judge criteria among them)
        self._item_type = item_type
        self._pool: JudgePool | None = None
        #: task-run node id -> item node id -> its criterion run to come
        self._ahead: dict[str, dict[str, Future[CriterionRecord]]] = {}
        self._judge_items: dict[str, list[JudgedItem]] | None = None
        self._session: pytest.Session | None = None

    def criterion_run(
        self, item: JudgedItem, sources: dict[str, Any], prior: dict[str, CriterionRecord]
    ) -> CriterionRecord:
        """The criterion run of judge criterion ``item``, whose fixtures gave ``sources``."""
        task = item.task_node
        future = self._ahead.get(task.nodeid, {}).pop(item.nodeid, None)
        if future is None or future.cancelled():
            job = item.scoring(sources, item.sandbox_arg(), dict(prior))
            if not gate_open(prior, (c.id for c in task.task.criteria if not c.judge)):
                return job()  # gated: no judge call, nothing to overlap
            future = self._start(item, job, dict(prior))
        return future.result()

    def _start(
        self,
        item: JudgedItem,
        job: Callable[[], CriterionRecord],
        prior: dict[str, CriterionRecord],
    ) -> Future[CriterionRecord]:
        """Submit ``item``'s scoring, then that of its task run's later judge criteria."""
        if self._pool is None:
            self._pool = JudgePool(self.limit)
        pool = self._pool
        own = pool.submit(job)
        ahead = self._ahead.setdefault(item.task_node.nodeid, {})
        for later in self._later(item):
            if later.nodeid not in ahead:
                scoring = _scoring_ahead(later, prior)
                if scoring is not None:
                    ahead[later.nodeid] = pool.submit(scoring)
        return own

    def _later(self, item: JudgedItem) -> list[JudgedItem]:
        """The judge criteria of ``item``'s task run that this session runs after it."""
        if self._judge_items is None:
            index: dict[str, list[JudgedItem]] = {}
            for each in item.session.items:
                if isinstance(each, self._item_type) and each.plan.judge:
                    index.setdefault(each.task_node.nodeid, []).append(each)
            self._judge_items = index
        items = self._judge_items.get(item.task_node.nodeid, [])
        return items[items.index(item) + 1 :] if item in items else []

    def task_done(self, task: str) -> None:
        """The task run's last criterion in this process is done: cancel what is left of it
        (a criterion a hook skipped at setup, say)."""
        for future in self._ahead.pop(task, {}).values():
            future.cancel()

    def cancel(self) -> None:
        """Cancel every criterion not started (the session stops)."""
        if self._pool is not None:
            self._pool.cancel()
        for task in list(self._ahead):
            self.task_done(task)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    @pytest.hookimpl(trylast=True)  # after the session's own, which counts the failure
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        session = self._session
        if session is not None and (session.shouldfail or session.shouldstop):
            self.cancel()  # -x, --maxfail: the items left will not run

    def pytest_sessionfinish(self) -> None:
        self.cancel()  # also after Ctrl-C and SIGTERM


def _scoring_ahead(
    item: JudgedItem, prior: dict[str, CriterionRecord]
) -> Callable[[], CriterionRecord] | None:
    """``item``'s scoring with the sources its fixtures would give, or None when it must
    score itself at its turn (see the module docstring)."""
    if item.get_closest_marker("skip") or item.get_closest_marker("skipif"):
        return None
    if any(mark.kwargs.get("run") is False for mark in item.iter_markers("xfail")):
        return None
    info = item._fixtureinfo
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if not defs:
            continue  # ``request``
        own = str(getattr(defs[-1].func, "__module__", "")).startswith(_OWN_MODULES)
        if not own and (name.startswith("verial_") or defs[-1].scope == "function"):
            return None
    sandbox = item.task_node.sandbox()
    check = item.plan.check
    try:
        sources = {name: sandbox.source(name) for name in (check.sources if check else ())}
    except (CriterionError, RunConfigError):
        return None  # its fixture gives an unusable source: it scores itself
    return item.scoring(sources, sandbox, prior)


__all__ = ["ConcurrentJudging"]
