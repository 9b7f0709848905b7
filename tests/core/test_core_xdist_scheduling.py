"""The task-run scheduler under xdist when a worker dies while it is given work: the send fails
(the worker's channel closed between its last report and the next unit), which xdist's own
scheduler lets escape as an INTERNALERROR of the whole session (seen once in six runs of
test_reports_equal_after_a_crashed_worker). A real worker cannot be made to die in that
window on demand, so the worker here is a stand-in whose channel is closed."""

from __future__ import annotations

from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

# private: the scheduler and the settings' stash key have no public face
from pytest_verial._config.stash import SETTINGS
from pytest_verial._xdist_scheduling import TaskRunScheduling

IDS = [f"b.verial.yaml::t{t}::c{c}" for t in (1, 2, 3) for c in (1, 2)]


class _Config:
    stash = {SETTINGS: SimpleNamespace(patterns=())}

    def getoption(self, name: str) -> str:
        return "loadgroup"

    def getvalue(self, name: str) -> list[str]:
        return ["2*popen"]


class _ClosedWorker:
    """A worker whose channel closed: every send fails as execnet's does."""

    shutting_down = False

    def __init__(self) -> None:
        self.shut = False

    def send_runtest_some(self, indices: Any) -> None:
        raise OSError("cannot send (already closed?)")

    def shutdown(self) -> None:
        self.shut = True


def _scheduler(worker: _ClosedWorker) -> TaskRunScheduling:
    scheduler = TaskRunScheduling(_Config())
    scheduler.add_node(worker)
    scheduler.registered_collections[worker] = IDS
    scheduler.collection = IDS
    # t1 ran to its last criterion, which is running; t2 and t3 wait in the queue
    scheduler.assigned_work[worker]["b.verial.yaml::t1"] = {IDS[0]: True, IDS[1]: False}
    for task in ("t2", "t3"):
        scheduler.workqueue[f"b.verial.yaml::{task}"] = {
            i: False for i in IDS if i.startswith(f"b.verial.yaml::{task}::")
        }
    return scheduler


def test_a_worker_that_died_while_given_work_keeps_the_work_in_the_queue() -> None:
    worker = _ClosedWorker()
    scheduler = _scheduler(worker)
    scheduler.mark_test_complete(worker, 0)  # its next unit cannot be sent: no error escapes
    assert list(scheduler.workqueue) == ["b.verial.yaml::t2", "b.verial.yaml::t3"]
    assert list(scheduler.assigned_work[worker]) == ["b.verial.yaml::t1"]
    # the crash blames the criterion the worker was running, not one it was never sent
    assert scheduler.remove_node(worker) == IDS[1]
    assert isinstance(scheduler.workqueue, OrderedDict)
    assert list(scheduler.workqueue) == ["b.verial.yaml::t2", "b.verial.yaml::t3"]
