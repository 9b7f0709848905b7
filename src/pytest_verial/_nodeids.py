"""Node ids of criterion runs and task runs: built and parsed here, nowhere else.

A criterion's node id is ``<file>::<task>::<criterion>``. ``<task>`` is the task's key
(``task`` or ``task[entity]`` for a task bound to entities), followed by ``@<run>`` when a
benchmark file is scored on several run folders in one session. A task without criteria has
one item, ``<file>::<task>::no-criteria``. The characters these separators use are refused in
ids (:mod:`pytest_verial._display`), so splitting is unambiguous. A benchmark run's id is
``<file>@<run>``, its run folders' labels joined by ``+`` when it holds several trials.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

SEP = "::"
RUN_SEP = "@"
#: between the run labels of a benchmark run's trials
TRIAL_SEP = "+"
#: the item name of a task without criteria
NO_CRITERIA = "no-criteria"


class NodeId(NamedTuple):
    """The parts of a node id; ``task`` and ``criterion`` are None for a shorter id."""

    file: str
    task: str | None
    criterion: str | None


def task_key_of(task_id: str, entity_id: str | None) -> str:
    """A task run's key: the task's id, with ``[<entity>]`` for a task bound to entities."""
    return f"{task_id}[{entity_id}]" if entity_id else task_id


def task_name(task_key: str, run_label: str, several_runs: bool) -> str:
    """The task node's name: its key, plus ``@<run>`` when several runs are scored."""
    return f"{task_key}{RUN_SEP}{run_label}" if several_runs else task_key


def task_nodeid(file: str, name: str) -> str:
    """``<file>::<task>``."""
    return f"{file}{SEP}{name}"


def criterion_nodeid(task_run: str, criterion_id: str) -> str:
    """``<file>::<task>::<criterion>``."""
    return f"{task_run}{SEP}{criterion_id}"


def benchmark_run_id(file: str, run_labels: Sequence[str]) -> str:
    """``<file>@<run>``, or ``<file>@<run>+<run>...`` for a benchmark run over k trials."""
    return f"{file}{RUN_SEP}{TRIAL_SEP.join(run_labels)}"


def property_name(nodeid: str, name: str) -> str:
    """``<node id>::<name>``: a value named after the item it belongs to (JUnit xunit2's
    suite properties, which cannot sit on the test case)."""
    return f"{nodeid}{SEP}{name}"


def file_of(nodeid: str) -> str:
    """The file part of any pytest node id or command-line argument (``path::name...``), a
    benchmark's or a Python test's: both use pytest's separator."""
    return nodeid.partition(SEP)[0]


def parse(nodeid: str) -> NodeId:
    """Split a node id into file, task name and criterion id."""
    file, _, rest = nodeid.partition(SEP)
    if not rest:
        return NodeId(file, None, None)
    task, _, criterion = rest.rpartition(SEP)
    if not task:  # ``file::task``
        return NodeId(file, criterion, None)
    return NodeId(file, task, criterion)


def task_run_of(nodeid: str) -> str:
    """The task run's node id of a criterion's node id."""
    return nodeid.rpartition(SEP)[0]


def is_no_criteria(nodeid: str) -> bool:
    """Whether the node id is the item of a task without criteria."""
    return nodeid.endswith(SEP + NO_CRITERIA)


def split_task_name(name: str, run_labels: Sequence[str]) -> tuple[str, str | None]:
    """A task node's name as (task key, run label); the label is None with one run.

    With several runs the longest label the name ends with wins (labels may contain ``@``).
    A name that ends with no known label gives ``(name, None)``.
    """
    if len(run_labels) <= 1:
        return name, (run_labels[0] if run_labels else None)
    matches = [label for label in run_labels if name.endswith(f"{RUN_SEP}{label}")]
    if not matches:
        return name, None
    label = max(matches, key=len)
    return name[: -len(label) - 1], label
