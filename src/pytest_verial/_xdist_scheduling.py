"""xdist scheduling: each task run goes whole to one worker, and a crash is not retried.

xdist's ``loadscope`` already groups items by everything before the last ``::``, which for
``path::task::criterion`` is the task run: its criteria stay on one worker, in collection
order (deterministic ones before judge ones, so gating sees their results). One change: when a
worker dies, ``loadscope`` puts the whole unfinished task back in the queue, *including* the
criterion that killed the worker, which then kills the next worker too. Here the crashed
criterion is marked done first (xdist reports it as failed, the recorder as an error with
score 0) and only the rest of its task is rescheduled.

A second change: an xdist worker runs an item only once it knows the next one (or hears
that none will come). After a crash, ``loadscope`` may hand a replacement worker a unit with
one item left and never say more: at ``-n 1`` the session hung. Here a rescheduled worker gets
at least two pending items, and is told to finish once the queue is empty, as the first
distribution does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

from ._config.stash import SETTINGS
from ._loader import is_benchmark_file
from ._nodeids import file_of, task_run_of


class TaskRunScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """``loadscope`` for task runs, that never reschedules the criterion that crashed its
    worker. Python tests in the same session are scheduled as the ``--dist`` the user chose
    would: one by one (``load``, ``worksteal``), by ``xdist_group`` (``loadgroup``) or by
    module and class (``loadscope``); grouped by module, one slow test module kept a
    worker busy long after the other had finished."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._dist = config.getoption("dist")
        self._patterns = config.stash[SETTINGS].patterns

    def _split_scope(self, nodeid: str) -> str:
        if is_benchmark_file(Path(file_of(nodeid)), self._patterns):
            return task_run_of(nodeid)  # a task run goes whole to one worker
        if self._dist == "loadscope":
            return str(super()._split_scope(nodeid))
        if self._dist == "loadgroup" and nodeid.rfind("@") > nodeid.rfind("]"):
            return nodeid.rsplit("@", 1)[-1]  # xdist_group's name, as xdist's loadgroup
        return nodeid

    def remove_node(self, node: Any) -> str | None:
        workload = self.assigned_work.get(node) or {}
        crashed = next(
            (nodeid for unit in workload.values() for nodeid, done in unit.items() if not done),
            None,
        )
        if crashed is not None:
            for unit in workload.values():
                if crashed in unit:
                    unit[crashed] = True
            for scope in [s for s, unit in workload.items() if all(unit.values())]:
                del workload[scope]
        super().remove_node(node)
        return crashed

    def _reschedule(self, node: Any) -> None:
        before = set(self.assigned_work.get(node, ()))
        try:
            self._give_work(node)
        except OSError:
            # The worker died while it was given work (its channel closed between its last
            # report and this send; xdist's own scheduler raises here, an INTERNALERROR): what
            # it was just given goes back to the front of the queue, never sent, so that the
            # crash blames what the worker ran, and xdist's errordown for it comes next.
            given = self.assigned_work.get(node, {})
            for scope in reversed([s for s in given if s not in before]):
                self.workqueue[scope] = given.pop(scope)
                self.workqueue.move_to_end(scope, last=False)

    def _give_work(self, node: Any) -> None:
        super()._reschedule(node)
        if node.shutting_down or node not in self.assigned_work:
            return
        # A worker runs an item once it knows the next one: give it two, or say it is the end.
        while self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
            self._assign_work_unit(node)
        if not self.workqueue:
            node.shutdown()
