"""Session state on ``config.stash`` (never private attributes on config)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from .._contracts.sandbox import SandboxCache
from .._record import CriterionRecord
from ..checks import CheckRegistry
from .run_folder import RunDir
from .settings import Settings

if TYPE_CHECKING:
    from .._judge_concurrency import ConcurrentJudging

SETTINGS = pytest.StashKey[Settings]()
SANDBOXES = pytest.StashKey[SandboxCache]()
#: the run folders known before collection (:func:`pytest_verial._config.reading.runs_at_start`)
RUNS_AT_START = pytest.StashKey[list[RunDir]]()
#: task-run nodeid -> criterion id -> criterion run, for gating within this process
PRIOR = pytest.StashKey[dict[str, dict[str, CriterionRecord]]]()
#: task-run nodeid -> plans of its criteria this session runs, in order (live prefetch)
PLANNED = pytest.StashKey[dict[str, list[Any]]]()
#: file node id -> node-id prefixes asked for on the command line (see select_by_node_id)
SELECTED = pytest.StashKey[dict[str, list[str]]]()
#: conftest-extended registries, by the tuple of contributed checks
REGISTRIES = pytest.StashKey[dict[tuple[int, ...], CheckRegistry]]()
#: this process's ``session.shard`` block (``--verial-shard``), set at collection
SHARD_INFO = pytest.StashKey[dict[str, Any]]()
#: criteria of each task run (node id) this process has yet to finish; its PRIOR entry is
#: dropped when the count reaches 0
TASK_LEFT = pytest.StashKey[dict[str, int]]()
#: item node id -> its criterion record, handed from ``pytest_runtest_makereport`` to the
#: recorder in the same process (a report attribute would reach plugins that serialize
#: reports, such as pytest-reportlog; an xdist worker sends the JSON form on the report)
FINISHED = pytest.StashKey[dict[str, CriterionRecord]]()
#: the judge criteria of a task run scored at once, when ``--verial-judge-concurrency`` > 1
CONCURRENT_JUDGING: pytest.StashKey[ConcurrentJudging] = pytest.StashKey()
