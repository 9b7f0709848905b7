"""Build the report (session -> benchmark runs -> task runs -> criterion runs) from results.

Pure: takes the plans, the selected node ids and the criterion runs received, and returns a
:class:`~pytest_verial._results.Report`. The same function serves ``-n 0`` and ``-n 2``, the
journal's recovery and ``verial merge``, which is why their reports agree.

One benchmark run per benchmark file per run folder: run folders whose run.yaml names the same
``agent`` (or every folder, with ``--verial-trials``) are trials of one benchmark run; folders
of different agents are never averaged together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._config.run_folder import RunDir, shared_folders
from .._config.source_table import unknown_sources
from .._engine import identity
from .._loader import BenchmarkPlan, TaskPlan
from .._nodeids import NO_CRITERIA, benchmark_run_id, criterion_nodeid, task_name, task_nodeid
from .._record import CriterionRecord
from .._results import (
    BenchmarkInfo,
    BenchmarkRun,
    CollectionError,
    CriterionRun,
    Generator,
    Report,
    RunCounts,
    RunInfo,
    RunStatus,
    Session,
    Status,
    TaskRun,
    TaskStatus,
)
from .._scoring import verdict_threshold
from .._version import __version__
from ._terminal import plural


@dataclass
class ReportInput:
    """Everything the report is made of."""

    files: Sequence[tuple[str, BenchmarkPlan]]  # display path, plan; in collection order
    #: run directories scored for each file (by display path); all of them, in order
    file_runs: Mapping[str, Sequence[RunDir]]
    runs: Sequence[RunDir]
    selected: set[str]
    #: node id -> what it scored: the session's plain records (a reader's typed runs); the
    #: store and every writer read each through ``.to_json()``, ``CriterionRun``'s JSON form
    criterion_runs: Mapping[str, CriterionRecord | CriterionRun]
    pass_threshold: float | None
    scored: bool
    started_at: str
    completed_at: str | None
    duration: float
    interrupted: bool
    collection_errors: Sequence[dict[str, str]]
    running: bool = False
    #: every run folder of a file is a trial of one agent (``--verial-trials``)
    trials: bool = False
    exit_status: int | None = None
    extra_warnings: Sequence[str] = field(default_factory=list)
    #: ``session.shard`` and ``session.resumed`` (``--verial-shard``, ``--verial-resume``)
    shard: dict[str, Any] | None = None
    resumed: dict[str, Any] | None = None


def run_yaml_of(run: RunDir) -> str:
    """The run folder's run.yaml as a warning names it."""
    return str(run.path / "run.yaml")


def run_groups(runs: Sequence[RunDir], trials: bool) -> list[list[RunDir]]:
    """Run folders grouped into benchmark runs: one agent's trials together, else one each."""
    if trials:
        return [list(runs)] if runs else []
    groups: list[list[RunDir]] = []
    by_agent: dict[str, list[RunDir]] = {}
    for run in runs:
        agent = run.config.agent
        if agent is None:
            groups.append([run])
        elif agent in by_agent:
            by_agent[agent].append(run)
        else:
            by_agent[agent] = [run]
            groups.append(by_agent[agent])
    return groups


def _criterion_run(nodeid: str, plan: Any, task: TaskPlan, data: ReportInput) -> CriterionRun:
    received = data.criterion_runs.get(nodeid)
    if received is not None:
        return CriterionRun.of(received)
    who = {**identity(plan, task), "nodeid": nodeid}
    if nodeid not in data.selected:
        return CriterionRun.deselected(who)
    return CriterionRun.not_run(who)


def _criteria_of(
    display: str, task: TaskPlan, run: RunDir, data: ReportInput
) -> tuple[str, list[tuple[str, Any]]]:
    """A task run's node id and its criteria (node id, plan) in the report's order."""
    several = len(data.file_runs[display]) > 1
    node = task_nodeid(display, task_name(task.key, run.label, several))
    ordered = sorted(task.criteria, key=lambda c: c.position)
    return node, [(criterion_nodeid(node, c.id), c) for c in ordered]


def criterion_json(
    display: str, task: TaskPlan, run: RunDir, data: ReportInput
) -> list[dict[str, Any]]:
    """A task run's criterion runs in their JSON form, as the typed report writes them: a
    received run's ``to_json()`` (a plain record's is exactly its typed run's), the others
    (deselected, never run) built as :func:`_criterion_run` builds them."""
    out = []
    for nodeid, plan in _criteria_of(display, task, run, data)[1]:
        received = data.criterion_runs.get(nodeid)
        out.append(
            received.to_json()
            if received is not None
            else _criterion_run(nodeid, plan, task, data).to_json()
        )
    return out


def _criterion_record(
    nodeid: str, plan: Any, task: TaskPlan, data: ReportInput
) -> CriterionRecord | CriterionRun:
    """What :func:`_criterion_run` gives, untyped: the run received as it is (a plain record,
    or a reader's typed run), else a plain deselected or never-run record (its JSON form is
    that of the typed one)."""
    received = data.criterion_runs.get(nodeid)
    if received is not None:
        return received
    who = {**identity(plan, task), "nodeid": nodeid}
    if nodeid not in data.selected:
        return CriterionRecord.deselected(who)
    return CriterionRecord.not_run(who)


def _noteworthy(run: CriterionRun | CriterionRecord) -> bool:
    """A criterion run a light report keeps (what the terminal summary lists: against its
    task, not evaluated, or failed: ``reporting._terminal.summary``)."""
    return run.against or run.not_evaluated is not None or run.status is Status.FAILED


#: which criterion runs of a light report a reader of it needs typed, beside the noteworthy
#: ones (the judge's feedback and verification summary: ``judge._report.reads``)
Keep = Callable[[CriterionRun | CriterionRecord], bool]


def _task_run(
    display: str,
    plan: BenchmarkPlan,
    task: TaskPlan,
    run: RunDir,
    data: ReportInput,
    light: bool = False,
    keep: Keep | None = None,
) -> TaskRun | None:
    node, criteria = _criteria_of(display, task, run, data)
    ids = [i for i, _ in criteria]
    if task.criteria and not any(i in data.selected for i in ids):
        return None
    if not task.criteria and criterion_nodeid(node, NO_CRITERIA) not in data.selected:
        return None
    threshold = verdict_threshold(
        task.task.pass_threshold, plan.benchmark.pass_threshold, data.pass_threshold
    )
    runs: list[CriterionRun] | list[CriterionRecord | CriterionRun]
    if light:  # scored on the records; typed only what the summary lists (issue 33)
        runs = [_criterion_record(i, c, task, data) for i, c in criteria]
        kept: list[CriterionRun] | None = [
            CriterionRun.of(c) for c in runs if _noteworthy(c) or (keep is not None and keep(c))
        ]
    else:
        runs, kept = [_criterion_run(i, c, task, data) for i, c in criteria], None
    return TaskRun.aggregate(
        runs,
        threshold,
        running=data.running,
        kept=kept,
        id=node,
        task_id=task.task.id,
        task_key=task.key,
        entity=task.entity.id if task.entity else None,
        name=task.task.name,
        benchmark=plan.slug,
        file=display,
        run=run.label,
        # a light task run leaves its task's definition in the plan: the writers dump it as
        # they write the task run (LightReport.task_json), one at a time (issue 33)
        snapshot=None if light else snapshot_of(task),
    )


def snapshot_of(task: TaskPlan) -> dict[str, Any]:
    """A task run's ``snapshot``: its task's definition as the report shows it."""
    return task.task.model_dump(mode="json", exclude_none=True)


def _run_info(run: RunDir, scored: bool) -> RunInfo:
    return RunInfo(
        label=run.label,
        path=str(run.path),
        id=run.config.id,
        agent=run.config.agent,
        executor_model=run.config.executor_model,
        scored=scored or bool(run.config.scored),
    )


def benchmark_info(display: str, plan: BenchmarkPlan) -> BenchmarkInfo:
    """The benchmark's identity as the report shows it."""
    version = plan.benchmark.version
    return BenchmarkInfo(
        slug=plan.slug,
        version=version,
        name=plan.benchmark.name,
        ref=f"{plan.slug}@{version}" if version is not None else plan.slug,
        file=display,
        pass_threshold=plan.benchmark.pass_threshold,
        sha256=plan.sha256 or None,
    )


#: where each task run of a light report comes from: per benchmark run, per task run
Sources = list[list[tuple[str, TaskPlan, RunDir]]]


def _benchmark_runs(
    data: ReportInput,
    sources: Sources | None = None,
    light: bool = False,
    keep: Keep | None = None,
) -> list[BenchmarkRun]:
    out: list[BenchmarkRun] = []
    for display, plan in data.files:
        for group in run_groups(data.file_runs[display], data.trials):
            task_runs: list[TaskRun] = []
            where: list[tuple[str, TaskPlan, RunDir]] = []
            for run in group:
                for task in plan.tasks:
                    tr = _task_run(display, plan, task, run, data, light, keep)
                    if tr is not None:
                        task_runs.append(tr)
                        where.append((display, task, run))
            if not task_runs:
                continue
            if sources is not None:
                sources.append(where)
            out.append(
                BenchmarkRun.aggregate(
                    task_runs,
                    verdict_threshold(None, plan.benchmark.pass_threshold, data.pass_threshold),
                    running=data.running,
                    interrupted=data.interrupted,
                    light=light,
                    id=benchmark_run_id(display, [r.label for r in group]),
                    benchmark=benchmark_info(display, plan),
                    runs=[_run_info(r, data.scored) for r in group],
                    scored=data.scored or any(bool(r.config.scored) for r in group),
                )
            )
    return out


@dataclass
class LightReport:
    """The report without most of its criterion runs, for the writers that stream it.

    ``report`` is the typed report with every figure (session, benchmark runs, task runs) as
    :func:`build_report` makes it, but each task run keeps only the criterion runs the terminal
    summary lists (:func:`_noteworthy`) and those its ``keep`` names (:func:`build_light`: the
    judge's annotations); its counts are those of all of them, and its ``snapshot`` is None
    (the plan holds the task's definition; :meth:`task_json` dumps it). The JSON report
    and the JUnit file are written one task run at a time, each task run's criterion runs in
    their JSON form from the session's records (:meth:`task_json`): no typed criterion run
    and no whole report's text is kept (issue 33, BENCHMARKS.md "wave 6"). Built ``whole``
    (:func:`build_light`), ``report`` is the typed report with every criterion run."""

    report: Report
    #: where each task run's criterion runs come from (per benchmark run, per task run)
    sources: Sources
    data: ReportInput

    def task_json(self, run: int, index: int, task: TaskRun) -> dict[str, Any]:
        """The JSON form of task run ``task`` (number ``index`` of benchmark run ``run``) with
        all its criterion runs, as the typed report's ``to_json()`` has it."""
        display, task_plan, run_dir = self.sources[run][index]
        data = self.task_head(run, index, task)
        data["criterion_runs"] = criterion_json(display, task_plan, run_dir, self.data)
        return data

    def task_head(self, run: int, index: int, task: TaskRun) -> dict[str, Any]:
        """The JSON form of task run ``task`` without its criterion runs, its ``snapshot``
        included (built light, the task run leaves it to the plan: :func:`_task_run`)."""
        data = task.model_dump(mode="json", by_alias=True, exclude={"criterion_runs"})
        if data["snapshot"] is None:
            data["snapshot"] = snapshot_of(self.sources[run][index][1])
        return data

    def criteria(self, run: int, index: int) -> list[CriterionRecord | CriterionRun]:
        """Every criterion run of task run number ``index`` of benchmark run ``run``, in the
        report's order: the session's records, and a plain record for each one deselected or
        never run (as :meth:`task_json` writes them: ``[c.to_json() for c in criteria]`` is
        its ``criterion_runs``). The results store reads their columns of a task run no batch
        stored (``_store_session.SessionStore.finish``)."""
        display, task_plan, run_dir = self.sources[run][index]
        return [
            _criterion_record(nodeid, plan, task_plan, self.data)
            for nodeid, plan in _criteria_of(display, task_plan, run_dir, self.data)[1]
        ]


def build_light(data: ReportInput, whole: bool = False, keep: Keep | None = None) -> LightReport:
    """The report's figures without its criterion runs (:class:`LightReport`); ``whole``: with
    all of them (``report`` is then the typed report whole, and the files are still
    streamed); ``keep``: the criterion runs kept typed beside the noteworthy ones (the judge's
    feedback reads partial passes, its summary the judged runs). The session's end builds it
    light, the results store on or off: the store's end reads the light report
    (``_store_session.SessionStore.finish``)."""
    sources: Sources = []
    runs = _benchmark_runs(data, sources, light=not whole, keep=keep)
    return LightReport(_report(data, runs, light=not whole), sources, data)


def build_report(data: ReportInput) -> Report:
    """The report (``verial schema report`` prints its JSON Schema)."""
    return _report(data, _benchmark_runs(data))


def _report(data: ReportInput, benchmark_runs: list[BenchmarkRun], light: bool = False) -> Report:
    task_runs = [t for b in benchmark_runs for t in b.task_runs]
    warnings = (
        shared_folders(
            [
                (display, run, task.key)
                for display, plan in data.files
                for run in data.file_runs[display]
                for task in plan.tasks
            ]
        )
        + [
            f"task run {t.id} is incomplete "
            f"({plural(t.counts.deselected, 'criterion', 'criteria')} deselected): "
            "left out of the run score"
            for t in task_runs
            if t.status is TaskStatus.INCOMPLETE
        ]
        + [
            f"{run_yaml_of(run)}: {warning}"
            for run in data.runs
            for warning in unknown_sources(run.config.sources)
        ]
    )
    status = (
        RunStatus.RUNNING
        if data.running
        else RunStatus.CANCELLED
        if data.interrupted or any(t.status is TaskStatus.CANCELLED for t in task_runs)
        else RunStatus.COMPLETED
    )
    session = Session(
        status=status,
        phase="started" if data.running else "completed",
        scored=data.scored,
        started_at=data.started_at,
        completed_at=data.completed_at,
        duration=round(data.duration, 3),
        exit_status=data.exit_status,
        counts=RunCounts.of(task_runs, light),
        collection_errors=[CollectionError(**e) for e in data.collection_errors],
        warnings=[*warnings, *data.extra_warnings],
        shard=data.shard,
        resumed=data.resumed,
    )
    return Report(
        generator=Generator(name="pytest-verial", version=__version__),
        session=session,
        benchmark_runs=benchmark_runs,
    )
