"""The pytest side of the store: the controller's recorder writes each session into it.

:class:`SessionStore` is opened at session start (a store that cannot be opened is one line and
exit 4, before any criterion runs), keeps each task run whose last criterion run arrived and
stores them in one transaction at each batch boundary of the recorder
(:meth:`~SessionStore.flush`, right after the journal's batch: a killed session keeps what its
journal keeps), and the session's end at session end (``store/_repo_batches.py``: each row
written once; a failure there is one ``ERROR`` line and a non-zero exit status; the JSON report
is written first and never lost). Only the controller writes: xdist workers have no recorder.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ._nodeids import (
    NO_CRITERIA,
    benchmark_run_id,
    criterion_nodeid,
    task_name,
    task_nodeid,
    task_run_of,
)
from ._results import BenchmarkRun, CriterionRun, Report, RunStatus, TaskRun, TaskStatus, _trials
from ._secrets import redact, redact_json
from ._version import __version__
from .store import _run_sums
from .store._errors import StoreError, mask_url, sqlite_path
from .store._lite import open_lite
from .store._plain import PlainTaskRun, task_run_json
from .store._rows import SessionMeta
from .store._url import store_url_from as _store_url_from
from .store._writer import SessionWriter, WritableStore

if TYPE_CHECKING:
    import pytest

    from ._config.run_folder import RunDir
    from ._loader import BenchmarkPlan, TaskPlan
    from ._scoring import Verdict
    from .reporting._build import LightReport, ReportInput
    from .reporting._canonical import CanonicalDigest

#: how often a running benchmark run's aggregates are refreshed in the store (seconds)
AGGREGATE_SECONDS = 1.0


def store_url_of(config: pytest.Config) -> str | None:
    """The session's store URL (``--verial-store`` > ``$VERIAL_STORE`` > ini > default, read
    once with every option: :mod:`pytest_verial._config.reading`); None when turned off."""
    from ._config.stash import SETTINGS

    return config.stash[SETTINGS].store.url


def _git(rootdir: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(rootdir), *args],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_info(rootdir: Path) -> tuple[str | None, str | None, bool | None]:
    """Commit, branch and dirty flag of the repository holding ``rootdir`` (None outside one)."""
    commit = _git(rootdir, "rev-parse", "--verify", "-q", "HEAD")
    if commit is None:
        return None, None, None
    branch = _git(rootdir, "rev-parse", "--abbrev-ref", "HEAD")
    status = _git(rootdir, "status", "--porcelain", "--untracked-files=no")
    return (
        commit,
        (None if branch in (None, "HEAD") else branch),
        (None if status is None else bool(status)),
    )


def ci_url(environ: Mapping[str, str]) -> str | None:
    """The CI run's URL from the environment of GitHub Actions, GitLab, CircleCI, Jenkins,
    Buildkite or Azure Pipelines."""
    if environ.get("GITHUB_RUN_ID") and environ.get("GITHUB_REPOSITORY"):
        server = environ.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{environ['GITHUB_REPOSITORY']}/actions/runs/{environ['GITHUB_RUN_ID']}"
    for key in ("CI_JOB_URL", "CIRCLE_BUILD_URL", "BUILDKITE_BUILD_URL", "BUILD_URL"):
        if environ.get(key):
            return environ[key]
    if environ.get("SYSTEM_COLLECTIONURI") and environ.get("BUILD_BUILDID"):
        project = environ.get("SYSTEM_TEAMPROJECT", "")
        return (
            f"{environ['SYSTEM_COLLECTIONURI'].rstrip('/')}/{project}/_build/results"
            f"?buildId={environ['BUILD_BUILDID']}"
        )
    return None


def masked_command_line(argv: Sequence[str]) -> str:
    """The command line with secrets masked (registered secrets, URL passwords)."""
    words = [mask_url(a) if "://" in a and "@" in a else a for a in argv]
    return redact(shlex.join(words))


def session_meta(config: pytest.Config, started_at: str) -> SessionMeta:
    commit, branch, dirty = git_info(config.rootpath)
    program = Path(sys.argv[0]).name if sys.argv else "pytest"
    argv = ["pytest" if program == "__main__.py" else program, *config.invocation_params.args]
    return SessionMeta(
        started_at=started_at,
        host=socket.gethostname(),
        git_commit=commit,
        git_branch=branch,
        git_dirty=dirty,
        ci_url=ci_url(os.environ),
        plugin_version=__version__,
        command_line=masked_command_line([str(a) for a in argv]),
    )


def refuse_inputs(url: str, folders: Sequence[Path], files: Sequence[Path]) -> None:
    """A SQLite store must not be an input file of the session nor lie in a run folder."""
    path = sqlite_path(url)
    if path is None:
        return
    target = path.resolve()
    for source in [*folders, *files]:
        source = source.resolve()
        if target == source or (source in folders and source in target.parents):
            raise StoreError(
                f"results store {mask_url(url)}: {path} is an input of this session "
                f"({source}); choose another --verial-store"
            )


class SessionStore:
    """The recorder's link to the store (see the module's docstring)."""

    def __init__(self, url: str, meta: SessionMeta, store: WritableStore | None = None) -> None:
        self.url = url
        self.meta = meta
        self.store = store
        self.writer: SessionWriter | None = None
        self.failed: str | None = None
        #: the SQLite file this session created (the project's first stored session), if any
        self.created: Path | None = None
        self._left: dict[str, int] | None = None
        self._index: dict[str, tuple[str, BenchmarkPlan, TaskPlan, RunDir, list[RunDir], int]] = {}
        #: each benchmark run's running sums (:mod:`.store._run_sums`): its aggregates so far
        #: without keeping its task runs; a run of several run folders (trials) keeps its task
        #: runs' scores instead, which its trial statistics need
        self._sums: dict[str, dict[str, Any]] = {}
        self._trials: dict[str, list[Trial]] = {}
        #: the batch: completed task runs not stored yet (benchmark run id, the task run's
        #: columns, its position, its row's JSON), made from the records (:mod:`.store._plain`)
        self._pending: list[tuple[str, PlainTaskRun, int, dict[str, Any]]] = []
        self._fresh: dict[str, BenchmarkRun] = {}  # benchmark runs whose aggregates are new
        self._runs: dict[str, BenchmarkRun] = {}
        self._refreshed: dict[str, float] = {}
        #: whether a ``pytest_verial_report`` hook is registered now (one may change the
        #: final report's criterion runs: the end then compares every row it stored)
        self.hooked: Callable[[], bool] = lambda: True

    @classmethod
    def open(
        cls, config: pytest.Config, started_at: str, folders: Sequence[Path], files: Sequence[Path]
    ) -> SessionStore | None:
        """The store of this session, or None when turned off; StoreError when it cannot be
        opened. An existing store (and any PostgreSQL one) is opened and the session's row
        written now; a SQLite store that does not exist yet is only checked now and created
        with the session's first task run, so a session that scores nothing (a plain test
        suite) leaves no ``.verial/`` behind."""
        url = store_url_of(config)
        if url is None:
            return None
        refuse_inputs(url, [f.resolve() for f in folders], files)
        meta = session_meta(config, started_at)
        path = sqlite_path(url)
        if path is not None and not path.exists():
            _creatable(url, path)
            made = cls(url, meta)
            made.hooked = lambda: bool(config.hook.pytest_verial_report.get_hookimpls())
            return made
        opened = cls(url, meta, open_for_session(url))
        opened.hooked = lambda: bool(config.hook.pytest_verial_report.get_hookimpls())
        try:  # the session's row now: a store that refuses writes stops the session here
            opened._writer()
        except BaseException:
            opened.close()
            raise
        return opened

    def _writer(self) -> SessionWriter:
        if self.writer is None:
            if self.store is None:
                path = sqlite_path(self.url)
                fresh = path is not None and not path.exists()
                self.store = open_for_session(self.url)
                self.created = path if fresh else None
            self.writer = SessionWriter(self.store, self.meta)
        return self.writer

    @property
    def session_id(self) -> str | None:
        """The session's store id (the session row is written now if it was not yet)."""
        if self.failed is not None:
            return None
        try:
            return self._writer().session_id
        except StoreError as exc:
            self.failed = str(exc)
            return None

    def criterion_done(self, nodeid: str, selected: Sequence[str], data: ReportInput) -> None:
        """A criterion run arrived: its task run joins the batch when it was the last one."""
        if self.failed is not None:
            return
        if self._left is None:
            self._left = {}
            for one in selected:
                task = task_run_of(one)
                self._left[task] = self._left.get(task, 0) + 1
            self._build_index(data)
        task = task_run_of(nodeid)
        left = self._left.get(task)
        if left is None:
            return
        self._left[task] = left = left - 1
        if left > 0:
            return
        found = self._index.get(task)
        if found is None:
            return
        display, plan, task_plan, run, group, position = found
        made = _plain_task_run(display, plan, task_plan, run, data)
        if made is None:
            return
        task_run, raw = made
        run_id = benchmark_run_id(display, [r.label for r in group])
        task_data = redact_json(raw)
        if len(group) > 1:
            self._trials.setdefault(run_id, []).append(_trial_of(task_run, task_data))
        sums = self._sums.setdefault(run_id, _run_sums.empty())
        # summed in the order they complete: the axes' order of an aggregate over them
        _run_sums.add(sums, task_data, sums["counts"]["task_runs"])
        now = time.monotonic()
        if run_id not in self._runs or now - self._refreshed.get(run_id, 0) > AGGREGATE_SECONDS:
            self._runs[run_id] = self._fresh[run_id] = _running_run(
                run_id, display, plan, group, data, sums, self._trials.get(run_id)
            )
            self._refreshed[run_id] = now
        # joins the batch last: a Ctrl-C before here leaves it to the session's end, which
        # stores every task run of the final report not stored yet
        self._pending.append((run_id, task_run, position, task_data))

    def flush(self) -> None:
        """A batch boundary: the task runs of the batch stored in one transaction."""
        if self.failed is not None or not self._pending:
            return
        pending, self._pending = self._pending, []
        fresh, self._fresh = self._fresh, {}
        try:
            writer = self._writer()
            # a benchmark run whose first batch never committed (a Ctrl-C inside it: that
            # batch's task runs are stored by the session's end) is written with this one
            for run_id, *_ in pending:
                if run_id not in writer.runs and run_id not in fresh and run_id in self._runs:
                    fresh[run_id] = self._runs[run_id]
            # a task run whose benchmark run was never made (a Ctrl-C while it was) is stored
            # by the session's end, as an interrupted batch's are
            pending = [p for p in pending if p[0] in writer.runs or p[0] in fresh]
            writer.compare_rows = self.hooked()
            writer.task_runs_completed(fresh, pending)
        except StoreError as exc:
            self.failed = str(exc)

    def _build_index(self, data: ReportInput) -> None:
        from .reporting._build import run_groups

        for display, plan in data.files:
            runs = data.file_runs[display]
            several = len(runs) > 1
            for group in run_groups(runs, data.trials):
                position = 0  # the task run's index in its benchmark run of the final report
                for run in group:
                    for task in plan.tasks:
                        node = task_nodeid(display, task_name(task.key, run.label, several))
                        ids = [criterion_nodeid(node, c.id) for c in task.criteria] or [
                            criterion_nodeid(node, NO_CRITERIA)
                        ]
                        if any(i in data.selected for i in ids):
                            self._index[node] = (display, plan, task, run, group, position)
                            position += 1

    def finish(
        self,
        report: Report,
        plain: Mapping[str, Any] | None = None,
        light: LightReport | None = None,
        canonical: CanonicalDigest | None = None,
    ) -> str | None:
        """Store the session's end; the one-line problem when the store failed at any point.

        Reads of ``report`` what ``store._repo_batches.finish`` says: the session, each
        benchmark run's aggregates, each task run's columns, and the criterion runs only of
        the task runs no batch stored (all of them when a ``pytest_verial_report`` hook is
        registered); the whole report's JSON for the session's digest: ``plain``
        (``report.to_json()``, secrets not masked) when the caller has it, else made here.
        With ``plain`` and no hook, ``report`` may leave out the criterion runs of the task
        runs already stored.

        ``light``: the report the recorder streamed (``report`` is ``light.report``: its
        figures and a few criterion runs). The digest is ``canonical``'s, fed as the JSON
        report was written (:mod:`.reporting._canonical`), or made here in one pass over the
        task runs when there was no JSON report or it was not written whole; a task run no
        batch stored is read whole from ``light`` (:class:`_LightEnd`)."""
        self.flush()
        try:
            end = None if light is None else _LightEnd(light, canonical)
            self._writer().finish(report, hooked=self.hooked(), plain=plain, light=end)
        except StoreError as exc:
            self.failed = self.failed or str(exc)
        finally:
            self.close()
        return self.failed

    def discard(self) -> None:
        """Nothing was collected: the session's row goes (a session with no runs is noise)."""
        try:
            if self.store is not None and self.writer is not None:
                self.store.delete_sessions([self.writer.session_id])
        except StoreError:
            pass
        finally:
            self.close()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()


class _LightEnd:
    """What the store's end reads of a streamed report (``store._repo_batches.LightEnd``)."""

    def __init__(self, light: LightReport, canonical: CanonicalDigest | None) -> None:
        from .reporting._canonical import digest_report, head_of

        self.light = light
        report = light.report
        head = head_of(report)  # as it is now: the JSON report's seal is in it
        sizes = [len(run.task_runs) for run in report.benchmark_runs]
        made = None if canonical is None else canonical.hexdigest(head, sizes)
        #: no JSON report, or one not written whole: the task runs made again, one at a time
        self.digest = made or digest_report(
            head,
            (
                (redact_json(light.task_json(r, i, t)) for i, t in enumerate(run.task_runs))
                for r, run in enumerate(report.benchmark_runs)
            ),
        )

    def head(self, run: int, index: int, task: TaskRun) -> dict[str, Any]:
        """A task run's JSON without its criterion runs, masked (its task row's ``data``)."""
        head: dict[str, Any] = redact_json(self.light.task_head(run, index, task))
        return head

    def whole(self, run: int, index: int, task: TaskRun) -> tuple[PlainTaskRun, dict[str, Any]]:
        """A task run no batch stored: its columns from the session's records (every
        criterion run's), and its whole JSON, masked."""
        columns = PlainTaskRun(
            id=task.id,
            task_id=task.task_id,
            task_key=task.task_key,
            entity=task.entity,
            run=task.run,
            status=task.status,
            verdict=task.verdict,
            score=task.score,
            criterion_runs=self.light.criteria(run, index),
        )
        data: dict[str, Any] = redact_json(self.light.task_json(run, index, task))
        return columns, data


def open_for_session(url: str) -> WritableStore:
    """The session's store: an existing SQLite store at the newest schema through ``sqlite3``
    (no SQLAlchemy imported: :mod:`.store._lite`), any other through SQLAlchemy (created,
    migrated or refused as it says)."""
    lite = open_lite(url)
    if lite is not None:
        return lite
    from .store._core import open_store

    return open_store(url)


def _creatable(url: str, path: Path) -> None:
    """The SQLite store can be created at ``path`` (its nearest existing folder is writable)."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise StoreError(f"results store {mask_url(url)}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(
            f"results store {mask_url(url)}: cannot create {path.parent}: permission denied"
        )


class Trial(NamedTuple):
    """A task run of a benchmark run of several run folders as its trial statistics read it
    (``_results._trials``): its scores, not its criterion runs nor a typed model."""

    task_key: str
    run: str
    score: float | None
    verdict: Verdict | None
    #: completed, scored and verified: it counts in the trials (``BenchmarkRun.aggregate``)
    counted: bool


def _trial_of(task: PlainTaskRun, data: Mapping[str, Any]) -> Trial:
    counted = (
        task.status is TaskStatus.COMPLETED
        and task.score is not None
        and data.get("verification") == "complete"
    )
    return Trial(task.task_key, task.run, task.score, task.verdict, counted)


def _plain_task_run(
    display: str, plan: BenchmarkPlan, task: TaskPlan, run: RunDir, data: ReportInput
) -> tuple[PlainTaskRun, dict[str, Any]] | None:
    """The task run ``reporting._build._task_run`` builds, as its JSON (secrets not masked)
    and its plain columns, from the session's records: no typed criterion run nor task run
    (:mod:`.store._plain`)."""
    from ._engine import identity
    from ._record import CriterionRecord
    from ._scoring import verdict_threshold

    several = len(data.file_runs[display]) > 1
    node = task_nodeid(display, task_name(task.key, run.label, several))
    ordered = sorted(task.criteria, key=lambda c: c.position)
    ids = [criterion_nodeid(node, c.id) for c in ordered]
    if task.criteria and not any(i in data.selected for i in ids):
        return None
    if not task.criteria and criterion_nodeid(node, NO_CRITERIA) not in data.selected:
        return None
    criteria: list[CriterionRecord | CriterionRun] = []
    for nodeid, criterion in zip(ids, ordered, strict=True):
        received = data.criterion_runs.get(nodeid)
        if received is None:
            who = {**identity(criterion, task), "nodeid": nodeid}
            received = (
                CriterionRecord.deselected(who)
                if nodeid not in data.selected
                else CriterionRecord.not_run(who)
            )
        criteria.append(received)
    threshold = verdict_threshold(
        task.task.pass_threshold, plan.benchmark.pass_threshold, data.pass_threshold
    )
    names = {
        "id": node,
        "task_id": task.task.id,
        "task_key": task.key,
        "entity": task.entity.id if task.entity else None,
        "name": task.task.name,
        "benchmark": plan.slug,
        "file": display,
        "run": run.label,
    }
    snapshot = task.task.model_dump(mode="json", exclude_none=True)
    return task_run_json(criteria, threshold, data.running, names, snapshot)


def _running_run(
    run_id: str,
    display: str,
    plan: BenchmarkPlan,
    group: list[RunDir],
    data: ReportInput,
    sums: dict[str, Any],
    trials: list[Trial] | None,
) -> BenchmarkRun:
    """The benchmark run so far: the aggregates of its completed task runs (from their sums),
    status running."""
    from ._scoring import verdict_threshold
    from .reporting._build import _run_info, benchmark_info

    identity = BenchmarkRun(
        id=run_id,
        benchmark=benchmark_info(display, plan),
        runs=[_run_info(r, data.scored) for r in group],
        scored=data.scored or any(bool(r.config.scored) for r in group),
        status=RunStatus.RUNNING,
        pass_threshold=verdict_threshold(None, plan.benchmark.pass_threshold, data.pass_threshold),
    )
    run = _run_sums.run_from(identity, sums, interrupted=False, running=True)
    if trials:  # several run folders: their trial statistics, from the task runs' scores
        counted = cast(Any, [t for t in trials if t.counted])
        labels = [r.label for r in identity.runs]
        run = run.model_copy(update={"trials": _trials(counted, labels, identity.pass_threshold)})
    return run


def recovered_into_store(
    store_value: str | None, rootdir: Path, session_id: str | None, report: Report
) -> str | None:
    """``verial report --recover``: the session in the store gets the recovered report and is
    marked interrupted. Returns a one-line problem, or None (also when there is no store)."""
    if not session_id:
        return None
    url = _store_url_from(store_value, rootdir)
    if url is None:
        return None
    path = sqlite_path(url)
    if path is not None and not path.exists():
        return None
    from .store._core import open_store

    try:
        with open_store(url, create=False) as store:
            store.recover_session(session_id, report)
    except StoreError as exc:
        return str(exc)
    return None
