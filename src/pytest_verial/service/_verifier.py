"""The verification engine as the service uses it: the benchmarks it was started with, a task
scored on the sandbox a request brings, and the reports it stores.

:class:`Verifier` holds what every scoring request needs (the benchmarks, ``--runs-root``, the
server's judge, the run folders' parsed ``run.yaml``); the routes reach it through the
``VerifierDep`` dependency (:mod:`._deps`). A request that keeps its schema but names what the
server cannot score (an unknown benchmark or task, a run folder that is not there, an archive
that does not unpack, a judge that is the agent's own model) is a 422 naming the field.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._config.run_folder import RunDir
from .._engine import identity
from .._errors import BenchmarkFileError, RunConfigError, UsageError, VerialError
from .._inline import verify_task
from .._loader import BenchmarkPlan, TaskPlan, is_benchmark_file, load_benchmark
from .._nodeids import benchmark_run_id, task_nodeid
from .._results import (
    BenchmarkRun,
    CriterionRun,
    Generator,
    Report,
    RunCounts,
    RunInfo,
    RunStatus,
    Session,
    TaskRun,
)
from .._scoring import verdict_threshold
from .._version import __version__
from ..checks import default_registry
from ..judge._models import run_self_grading
from ..reporting._build import benchmark_info
from ..store._ids import new_id
from ._hide import TEMP_PREFIX, kept_relative_to, relative_to
from ._http import Problem
from ._limits import ServiceLimits
from ._requests import ConsistencyIn, CreateRunIn, TaskConfig, VerifyTaskIn
from ._sandboxes import RunConfigs, SandboxIn, TaskFolder, task_folder

#: what a request names that the server does not have or cannot use
UNPROCESSABLE = 422


# -- the benchmarks the server was started with ---------------------------------------------------
@dataclass
class Benchmarks:
    """``slug@version`` (and ``slug`` when only one version is loaded) -> its loaded plans."""

    plans: dict[str, tuple[str, BenchmarkPlan, BenchmarkPlan]] = field(default_factory=dict)

    def get(self, ref: str) -> tuple[str, BenchmarkPlan, BenchmarkPlan]:
        found = self.plans.get(ref)
        if found is None:
            known = ", ".join(sorted(self.plans)) or "none"
            raise Problem(
                UNPROCESSABLE,
                f"body benchmark: unknown benchmark {ref!r} (this server has: {known})",
            )
        return found


def _benchmark_files(paths: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """Every benchmark file under ``paths`` with the name it is shown by: relative to the
    folder holding the path given, never the server's absolute path."""
    files: list[tuple[Path, str]] = []
    for raw in paths:
        path = Path(raw)
        base = path.resolve().parent
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and is_benchmark_file(p))
            files.extend((p, p.resolve().relative_to(base).as_posix()) for p in found)
        elif path.is_file():
            files.append((path, path.name))
        else:
            raise ValueError(f"{raw}: no such benchmark file or folder")
    return files


def load_benchmarks(paths: Sequence[str | Path]) -> Benchmarks:
    """Load every benchmark file (ValueError with one line naming the file when one is bad)."""
    registry = default_registry()
    found = Benchmarks()
    by_slug: dict[str, list[str]] = {}
    for path, display in _benchmark_files(paths):
        try:
            plan = load_benchmark(path, registry, display=display)
            scored = load_benchmark(path, registry, display=display, scored=True)
        except BenchmarkFileError as exc:
            raise ValueError(str(exc).splitlines()[0]) from None
        info = benchmark_info(display, plan)
        if info.ref in found.plans:
            raise ValueError(f"{display}: benchmark {info.ref} is also {found.plans[info.ref][0]}")
        found.plans[info.ref] = (display, plan, scored)
        by_slug.setdefault(info.slug, []).append(info.ref)
    for slug, refs in by_slug.items():
        if len(refs) == 1 and slug not in found.plans:
            found.plans[slug] = found.plans[refs[0]]
    return found


def inline_plan(task: dict[str, Any], scored: bool) -> BenchmarkPlan:
    """A task given in the request, loaded (and checked) as a benchmark file of its own."""
    with tempfile.TemporaryDirectory(prefix=TEMP_PREFIX + "task-") as tmp:
        path = Path(tmp) / "inline.verial.json"
        path.write_text(json.dumps(task), encoding="utf-8")
        try:
            return load_benchmark(path, default_registry(), display="body task", scored=scored)
        except BenchmarkFileError as exc:
            raise Problem(UNPROCESSABLE, str(exc).splitlines()[0]) from None


def find_task(plan: BenchmarkPlan, task_id: str, ref: str) -> TaskPlan:
    """The task of ``plan`` with this key, or the one task with this id."""
    for task in plan.tasks:
        if task.key == task_id:
            return task
    matches = [t for t in plan.tasks if t.task.id == task_id]
    if len(matches) == 1:
        return matches[0]
    if matches:
        keys = ", ".join(t.key for t in matches)
        raise Problem(
            UNPROCESSABLE, f"body task_id: {task_id!r} has several task runs in {ref}: {keys}"
        )
    raise Problem(UNPROCESSABLE, f"body task_id: no task {task_id!r} in benchmark {ref}")


@dataclass(frozen=True)
class Scored:
    """A task scored on a sandbox: its task run, the run folder's facts, the judge's summary."""

    task_run: TaskRun
    run: RunInfo
    verification: dict[str, Any]


@contextmanager
def usable(
    sandbox: SandboxIn, root: Path, task_key: str, task_id: str, limits: ServiceLimits
) -> Iterator[TaskFolder]:
    """The sandbox's folder; a sandbox that cannot be used (no such run folder, a link out of
    ``--runs-root`` or into a sibling task's folder, an archive that does not unpack) is a 422,
    whatever its form; one past ``limits`` stays a 413."""
    try:
        with task_folder(sandbox, root, task_key, task_id, limits) as where:
            yield where
    except Problem as exc:
        if exc.status != 400:
            raise
        raise Problem(UNPROCESSABLE, exc.detail) from None


class Verifier:
    """Scores tasks for the service: see the module's docstring."""

    def __init__(
        self,
        benchmarks: Benchmarks,
        runs_root: Path,
        judge: Mapping[str, str] | None = None,
        limits: ServiceLimits | None = None,
    ) -> None:
        self.benchmarks = benchmarks
        self.root = runs_root
        self.judge = dict(judge or {})
        self.limits = limits or ServiceLimits()
        self.run_configs = RunConfigs(self.limits, runs_root)

    # -- what a request names --------------------------------------------------------------
    def resolve(self, body: VerifyTaskIn) -> tuple[str, BenchmarkPlan, TaskPlan]:
        """The benchmark (file shown, plan) and task a verify-task body names."""
        if body.task is not None:
            self.limits.check_inline_task(body.task)  # a 413 before it is loaded
            plan = inline_plan(body.task, body.scored)
            if body.task_id is not None:
                return "inline", plan, find_task(plan, body.task_id, "the inline task")
            if len(plan.tasks) == 1:
                return "inline", plan, plan.tasks[0]
            keys = ", ".join(t.key for t in plan.tasks)
            raise Problem(
                UNPROCESSABLE, f"body task_id: the inline task has several task runs: {keys}"
            )
        assert body.benchmark is not None and body.task_id is not None  # the body's oneOf
        display, plain, scored_plan = self.benchmarks.get(body.benchmark)
        plan = scored_plan if body.scored else plain
        return display, plan, find_task(plan, body.task_id, body.benchmark)

    # -- scoring -----------------------------------------------------------------------------
    def score(
        self,
        display: str,
        plan: BenchmarkPlan,
        task: TaskPlan,
        sandbox: SandboxIn,
        config: TaskConfig,
        *,
        label: str | None = None,
    ) -> Scored:
        """Score ``task`` on the sandbox a request brought."""
        with usable(sandbox, self.root, task.key, task.task.id, self.limits) as where:
            return self.score_in(
                display, plan, task, where, config, f"sandbox.{sandbox.form}", label
            )

    def score_in(
        self,
        display: str,
        plan: BenchmarkPlan,
        task: TaskPlan,
        where: TaskFolder,
        config: TaskConfig,
        field: str,
        label: str | None = None,
    ) -> Scored:
        """Score ``task`` on its folder in ``where`` with the inline engine; every path of the
        result relative to the task's sandbox."""
        sandbox = where.run_folder / task.key
        try:
            run = (
                self.run_configs.run_dir(where.run_folder, where.label)
                if where.kept
                else RunDir(where.run_folder, label=where.label, limits=self.limits.read_limits())
            )
            # the server's judge (model, endpoint, key variable); the caller's facts
            options = {**self.judge, **config.options(plan.benchmark.pass_threshold)}
            if run_self_grading(options, run) is not None:
                # said for a caller, who cannot choose the server's judge (no set-up advice)
                raise Problem(
                    UNPROCESSABLE,
                    "body config.executor_model: the agent's model is this server's judge; "
                    "an LLM must not grade its own output",
                )
            inline = verify_task(task, sandbox, options, run_dir=run)
        except (RunConfigError, UsageError) as exc:
            hide = relative_to(
                sandbox, where.run_folder, self.root, self.judge.get("judge_base_url")
            )
            detail = hide.text(str(exc).splitlines()[0])
            raise Problem(UNPROCESSABLE, f"body {field}: {detail}") from None
        except VerialError as exc:
            hide = relative_to(
                sandbox, where.run_folder, self.root, self.judge.get("judge_base_url")
            )
            raise Problem(UNPROCESSABLE, hide.text(str(exc).splitlines()[0])) from None
        judge_url = self.judge.get("judge_base_url")
        if where.resolved is not None and where.resolved[0] == task.key:
            hide = kept_relative_to(
                sandbox, where.resolved[1], where.run_folder, self.root, judge_url
            )
        else:
            hide = relative_to(sandbox, where.run_folder, self.root, judge_url)
        fields = {name: getattr(inline, name) for name in TaskRun.model_fields}
        fields.update(
            id=task_nodeid(display, task.key),
            run=label or run.label,
            benchmark=plan.slug,
            file=display,
            snapshot=task.task.model_dump(mode="json", exclude_none=True),
        )
        # validated already (an InlineTaskRun is a TaskRun); its texts rewritten, not rescored
        task_run = hide.model(TaskRun.model_construct(**fields))
        info = RunInfo(
            label=run.label,
            path=where.shown,
            id=run.config.id,
            agent=run.config.agent,
            executor_model=run.config.executor_model,
            scored=bool(run.config.scored),
        )
        return Scored(task_run, info, hide.json(dict(inline.verification_summary)))

    def verify(self, body: VerifyTaskIn) -> Report:
        """``POST /verify-task``: the report of the one task it scores."""
        display, plan, task = self.resolve(body)
        started = datetime.now(UTC)
        scored = self.score(display, plan, task, body.sandbox, body.config)
        self.limits.check_answer(scored.task_run)  # a 413 before anything is stored
        return one_task_report(display, plan, scored, body.config, body.scored, started)

    def consistency(self, body: ConsistencyIn) -> Report:
        """``POST /v1/consistency-checks``: each related task's sandbox under its name in one
        run folder, scored by one ``output-consistency`` criterion of the last task."""
        names = [t.name for t in body.tasks]
        if len(set(names)) != len(names):
            raise Problem(UNPROCESSABLE, "body tasks: each related task run needs its own name")
        *others, anchor = names
        assertion: dict[str, Any] = {"assert": "output-consistency", "tasks": others}
        if body.principles:
            assertion["principles"] = body.principles
        criterion: dict[str, Any] = {"id": "consistency", "assertion": assertion}
        if body.label:
            criterion["label"] = body.label
        plan = inline_plan({"id": anchor, "criteria": [criterion]}, body.scored)
        started = datetime.now(UTC)
        with ExitStack() as stack:
            run_folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=TEMP_PREFIX)))
            for related in body.tasks:
                where = stack.enter_context(
                    usable(related.sandbox, self.root, related.name, related.name, self.limits)
                )
                source = where.run_folder / related.name
                if source.is_dir():
                    shutil.copytree(source, run_folder / related.name, symlinks=False)
                else:
                    (run_folder / related.name).mkdir()
            together = TaskFolder(run_folder, "consistency", "related task runs")
            scored = self.score_in(
                "consistency", plan, plan.tasks[0], together, body.config, "tasks"
            )
        return one_task_report("consistency", plan, scored, body.config, body.scored, started)

    def new_run(self, body: CreateRunIn) -> Report:
        """``POST /v1/benchmark-runs``: the report of a run whose every task run is open
        (phase ``created``), each with its criteria not run yet."""
        display, plain, scored_plan = self.benchmarks.get(body.benchmark)
        plan = scored_plan if body.scored else plain
        label = body.agent or "service"
        tasks = []
        for task in plan.tasks:
            open_criteria = [CriterionRun.not_run(identity(c, task)) for c in task.criteria]
            threshold = verdict_threshold(task.task.pass_threshold, plan.benchmark.pass_threshold)
            tasks.append(
                TaskRun.aggregate(
                    open_criteria,
                    float(threshold),
                    running=True,
                    id=task_nodeid(display, task.key),
                    task_id=task.task.id,
                    task_key=task.key,
                    entity=task.entity.id if task.entity else None,
                    name=task.task.name,
                    benchmark=plan.slug,
                    file=display,
                    run=label,
                    snapshot=task.task.model_dump(mode="json", exclude_none=True),
                )
            )
        bench = BenchmarkRun.aggregate(
            tasks,
            float(verdict_threshold(None, plan.benchmark.pass_threshold)),
            running=True,
            interrupted=False,
            id=benchmark_run_id(display, [label]),
            benchmark=benchmark_info(display, plan),
            runs=[
                RunInfo(
                    label=label, path="", id=new_id("run"), agent=body.agent, scored=body.scored
                )
            ],
            scored=body.scored,
        )
        return Report(
            generator=Generator(name="pytest-verial", version=__version__),
            session=Session(
                status=RunStatus.RUNNING,
                phase="started",
                scored=body.scored,
                started_at=datetime.now(UTC).isoformat(),
                duration=0.0,
                counts=RunCounts.of(tasks),
            ),
            benchmark_runs=[bench],
        )

    def task_of_run(
        self, run: BenchmarkRun, task: TaskRun, task_run_id: str
    ) -> tuple[str, BenchmarkPlan, TaskPlan]:
        """The served task of an open task run (409 when the server no longer serves it)."""
        found = self.benchmarks.plans.get(run.benchmark.ref)
        if found is None:
            raise Problem(409, f"{task_run_id}: benchmark {run.benchmark.ref} is not served here")
        display, plain, scored_plan = found
        plan = scored_plan if run.scored else plain
        served = next((t for t in plan.tasks if t.key == task.task_key), None)
        if served is None:
            raise Problem(409, f"{task_run_id}: task {task.task_key} is no longer served")
        return display, plan, served


def one_task_report(
    display: str,
    plan: BenchmarkPlan,
    scored_task: Scored,
    config: TaskConfig,
    scored: bool,
    started: datetime,
) -> Report:
    """The report of one task scored by the service: one benchmark run, one task run."""
    task_run, run = scored_task.task_run, scored_task.run
    # the benchmark run's chain: no task around it (its task run resolved its own)
    threshold = verdict_threshold(None, plan.benchmark.pass_threshold, config.pass_threshold)
    bench = BenchmarkRun.aggregate(
        [task_run],
        float(threshold),
        running=False,
        interrupted=False,
        id=benchmark_run_id(display, [run.label]),
        benchmark=benchmark_info(display, plan),
        runs=[run.model_copy(update={"scored": scored or run.scored})],
        scored=scored or run.scored,
    )
    ended = datetime.now(UTC)
    session = Session(
        status=RunStatus.COMPLETED,
        phase="completed",
        scored=bench.scored,
        started_at=started.isoformat(),
        completed_at=ended.isoformat(),
        duration=(ended - started).total_seconds(),
        counts=RunCounts.of([task_run]),
        verification=scored_task.verification or None,
    )
    return Report(
        generator=Generator(name="pytest-verial", version=__version__),
        session=session,
        benchmark_runs=[bench],
    )


__all__ = ["Benchmarks", "Scored", "Verifier", "load_benchmarks", "one_task_report"]
