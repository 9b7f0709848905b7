"""Collection: BenchmarkFile -> TaskNode -> CriterionItem (README, "The criterion format").

Node ids are ``path::task::criterion``; a task bound to entities gives ``task[entity]``, and
with several ``--verial-run`` directories each task node carries ``@<run>``. Items ask for the
fixtures of the sources their check reads (``verial_portal`` ...), so a conftest can override
any source; the check runs in :func:`pytest_verial._engine.run_criterion`.
"""

from __future__ import annotations

import inspect
import re
import warnings
from collections.abc import Callable, Iterator
from functools import cached_property, lru_cache, partial
from pathlib import Path
from typing import Any, cast

import pytest

from . import _heap as heap
from ._config.run_folder import RunDir, empty_run_problem, shared_folders
from ._config.stash import CONCURRENT_JUDGING, PRIOR, REGISTRIES, SANDBOXES, SETTINGS, TASK_LEFT
from ._contracts.sandbox import Sandbox, SandboxCache
from ._display import describe_char, escape, unsafe_char
from ._engine import identity, now_iso, run_criterion, verification_skipped
from ._errors import BenchmarkFileError, BenchmarkProblem, RunConfigError
from ._loader import BenchmarkPlan, CriterionPlan, TaskPlan, is_benchmark_file, load_benchmark
from ._nodeids import parse, split_task_name, task_name
from ._record import CriterionRecord, Status
from ._sandbox_paths import SandboxPaths
from ._scoring import DEFAULT_AXIS, verdict_threshold
from .checks import BUILTIN, CheckRegistry

NO_CRITERIA = "no-criteria"
#: criterion-run fields copied into pytest's own --junitxml as ``verial_<field>``
JUNIT_FIELDS = ("score", "weight", "axis", "status")
#: a tag or axis usable as a marker name (pytest refuses names starting with '_')
_MARKER = re.compile(r"[A-Za-z][\w\-]*")
#: pytest's markers that act on a test: a tag or axis so named must not skip or xfail criteria
_PYTEST_MARKERS = frozenset(
    {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
)
_OUR_DOCS = ("task tag from a benchmark file", "criterion axis from a benchmark file")
_ACTING: pytest.StashKey[frozenset[str]] = pytest.StashKey()
#: marker names declared so far (the ini's, plugins', and the tags and axes added here)
_KNOWN: pytest.StashKey[set[str]] = pytest.StashKey()
#: the mark each tag or axis name adds (``pytest.mark.<name>`` builds a new one per access)
_MARKS: pytest.StashKey[dict[str, pytest.MarkDecorator]] = pytest.StashKey()
#: each benchmark file's path as shown (``display_path``), asked for once per item
_SHOWN: pytest.StashKey[dict[Path, str]] = pytest.StashKey()
#: a quoted value in a message ('...' or "...", with backslash escapes)
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
WITHHELD = "details withheld: scored run; see the JSON report"


def file_scored(settings: Any, path: Path) -> bool:
    """Whether a benchmark file is scored on a scored run (``--verial-scored`` or ``scored:
    true`` in the run.yaml of any of its run directories)."""
    if settings.scored:
        return True
    try:
        return any(settings.scored_for(run) for run in settings.run_dirs_for(path))
    except RunConfigError:
        return False


def withhold_values(problem: BenchmarkProblem) -> BenchmarkProblem:
    """A problem of a scored file, its quoted values replaced by ``'…'``: the message of a bad
    pattern or field may quote what a criterion expects. File, line, task, criterion (by id
    or position) and field still say where it is."""
    message = _QUOTED.sub("'…'", problem.message)
    return BenchmarkProblem(
        problem.file, message, problem.line, problem.task, problem.criterion, problem.field
    )


#: (benchmark file, run, task key) of every task run collected so far (shared folders)
CLAIMS = pytest.StashKey[list[tuple[str, RunDir, str]]]()


class VerialWarning(pytest.PytestWarning):
    """A pytest-verial warning (shown in pytest's warnings summary and the JSON report)."""


def junit_value(run: CriterionRecord, key: str) -> Any:
    """A criterion-run field as a JUnit property value (no axis reads ``__default__``)."""
    value = getattr(run, key)
    return DEFAULT_AXIS if key == "axis" and value is None else value


class CriterionFailed(Exception):
    """Raised by an item whose criterion did not pass; carries the criterion run (None for a
    task without criteria, which has no run of its own)."""

    def __init__(self, run: CriterionRecord | None, message: str | None = None) -> None:
        super().__init__(message or (run.details if run else None) or "criterion failed")
        self.run = run


def registry_for(node: pytest.Collector) -> CheckRegistry:
    """Built-in checks plus those the conftests visible from ``node`` contribute."""
    return registry_of(node.config, node.ihook)


def registry_of(config: pytest.Config, hook: Any) -> CheckRegistry:
    """Built-in checks plus those a hook proxy's conftests contribute (the xdist controller,
    which collects nothing, asks ``session.gethookproxy(path)`` for the file's conftests)."""
    extra = [spec for specs in hook.pytest_verial_checks() or [] for spec in specs or []]
    cache = config.stash.setdefault(REGISTRIES, {})
    key = tuple(id(s) for s in extra)
    if key not in cache:
        cache[key] = CheckRegistry(extra, builtins=BUILTIN)
    return cache[key]


def display_path(config: pytest.Config, path: Path) -> str:
    """The path as pytest shows it: relative to rootdir when inside it (kept per path: the
    recorder and the task-run grouping ask it for each of a file's items)."""
    shown = config.stash.setdefault(_SHOWN, {})
    found = shown.get(path)
    if found is None:
        try:
            found = path.relative_to(config.rootpath).as_posix()
        except ValueError:
            found = str(path)
        shown[path] = found
    return found


class BenchmarkFile(pytest.File):
    """A ``*.verial.yaml|yml|json`` file; a file with problems is one collection error."""

    plan: BenchmarkPlan

    @cached_property
    def display(self) -> str:
        """The file's path as pytest shows it (each criterion run names it)."""
        return display_path(self.config, self.path)

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        try:
            registry = registry_for(self)
        except ValueError as exc:  # a conftest registered an assert type twice
            raise self.CollectError(f"{display_path(self.config, self.path)}: {exc}") from None
        settings = self.config.stash[SETTINGS]
        scored = file_scored(settings, self.path)
        try:
            with heap.no_gc():
                self.plan = load_benchmark(
                    self.path, registry, display_path(self.config, self.path), scored=scored
                )
        except BenchmarkFileError as exc:
            count = len(exc.problems)
            header = f"{count} problem{'s' if count > 1 else ''} in benchmark file:\n"
            if scored:
                exc = BenchmarkFileError([withhold_values(p) for p in exc.problems])
                header = header.replace(":\n", " (quoted values withheld: scored run):\n")
            raise self.CollectError(header + str(exc)) from None
        self._unknown_checks(registry, settings.strict)
        try:
            runs = settings.run_dirs_for(self.path)
        except RunConfigError as exc:
            raise self.CollectError(str(exc)) from None
        self._warn_shared_folders(runs)
        for run in runs:
            for task in self.plan.tasks:
                name = task_name(task.key, run.label, len(runs) > 1)
                yield TaskNode.from_parent(self, name=name, task=task, run=run)

    def _unknown_checks(self, registry: CheckRegistry, strict: bool) -> None:
        """An ``assert`` no check knows: Verial fails the criterion (``unsupported assertion:
        X``, score 0), so it runs; a warning with the nearest known name says it now, or, with
        ``--verial-strict``, a collection error (every one of the file at once)."""
        from ._loader import unknown_checks

        found = unknown_checks(self.display, self.plan, registry)
        if not found:
            return
        if strict:
            count = len(found)
            raise self.CollectError(
                f"{count} problem{'s' if count > 1 else ''} in benchmark file "
                "(--verial-strict):\n" + "\n".join(escape(text) for _, text in found)
            )
        for line, text in found:  # at the criterion's line (node.warn would say the file's 0)
            warnings.warn_explicit(
                VerialWarning(escape(text)), None, filename=str(self.path), lineno=line or 1
            )

    def _warn_shared_folders(self, runs: list[RunDir]) -> None:
        """Warn when a task of this file reads the folder of another file's task."""
        claims = self.config.stash.setdefault(CLAIMS, [])
        before = set(shared_folders(claims))
        display = display_path(self.config, self.path)
        claims.extend((display, run, task.key) for run in runs for task in self.plan.tasks)
        for message in shared_folders(claims):
            if message not in before:
                self.warn(VerialWarning(message))


class UnsafeFileName(pytest.File):
    """A benchmark file whose path holds a control or invisible character: one collection
    error under an escaped node id (pytest would write the raw path into its terminal lines and
    its --junitxml, which XML 1.0 cannot hold)."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        shown = display_path(self.config, self.path)
        char = unsafe_char(shown)
        assert char is not None
        raise self.CollectError(
            escape(f"{shown}: the benchmark file's path contains {describe_char(char)}: rename it")
        )


def benchmark_file_node(parent: pytest.Collector, path: Path) -> pytest.File:
    """The node of one benchmark file (:class:`UnsafeFileName` when its path is unsafe)."""
    shown = display_path(parent.config, path)
    if unsafe_char(shown) is None:
        return BenchmarkFile.from_parent(parent, path=path)
    return UnsafeFileName.from_parent(parent, path=path, nodeid=escape(shown))


class TaskNode(pytest.Collector):
    """One task run: a task (maybe bound to an entity) scored on one run directory."""

    def __init__(self, *, task: TaskPlan, run: RunDir, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.task = task
        self.run = run
        self._folder_missing: bool | None = None
        for name in task.task.tags:
            _add_marker(self, name, "task tag from a benchmark file")

    @property
    def benchmark_file(self) -> BenchmarkFile:
        """The file node above this task."""
        parent = self.parent
        assert isinstance(parent, BenchmarkFile)
        return parent

    def collect(self) -> Iterator[pytest.Item]:
        if not self.task.criteria:
            yield NoCriteriaItem.from_parent(self, name=NO_CRITERIA)
            return
        # Items of one task see the same fixtures: compute the fixture closure once per
        # set of sources, as pytest does for the parametrizations of one test function.
        closures: dict[tuple[str, ...], Any] = {}
        for plan in self.task.criteria:
            names = (
                "verial_sandbox",
                *(f"verial_{s}" for s in (plan.check.sources if plan.check else ())),
            )
            item = CriterionItem.from_parent(
                self,
                name=plan.id,
                plan=plan,
                callobj=_callobj(names),
                fixtureinfo=closures.get(names),
            )
            closures.setdefault(names, item._fixtureinfo)
            yield item

    def folder_missing(self) -> bool:
        """Whether this task run's folder is missing (and nothing is read live): looked up
        once, by its first criterion, not a stat per criterion."""
        if self._folder_missing is None:
            self._folder_missing = self.run.folder_missing(self.task.key)
        return self._folder_missing

    def sandbox(self) -> Sandbox:
        """This task run's sandbox, shared by its criteria (cached per session)."""
        cache = self.config.stash.get(SANDBOXES, None)  # set at configure: no new default
        if cache is None:
            cache = self.config.stash.setdefault(SANDBOXES, SandboxCache())
        settings = self.config.stash[SETTINGS]
        key = (str(self.run.path), self.task.key)
        return cache.get(
            key,
            lambda: Sandbox(
                self.run,
                self.task.task,
                self.task.key,
                self.task.entity,
                settings.check_options,
                planned=self.planned_criteria,
            ),
        )

    def planned_criteria(self) -> list[CriterionPlan]:
        """This task run's criteria that this session scores (after -k, --verial-resume, ...),
        in run order; none when verification is skipped. Live sources fetch ahead for them."""
        from ._config.stash import PLANNED

        index = self.config.stash.get(PLANNED, None)
        if index is None:  # built once, when a live source first asks
            index = {}
            for item in self.session.items:
                if isinstance(item, CriterionItem):
                    index.setdefault(item.task_node.nodeid, []).append(item.plan)
            self.config.stash[PLANNED] = index
        if verification_skipped(self.task, self.sandbox()):
            return []
        return index.get(self.nodeid, [])


def _marker_name(line: str) -> str:
    return line.split(":")[0].split("(")[0].strip()


def _acting_markers(config: pytest.Config) -> frozenset[str]:
    """Markers that change how a test runs: pytest's own and those plugins register.

    Markers the project declares in its ini file (``markers =``) are only labels, so a tag or
    axis named like one still becomes that marker (``-m safety`` selects it).
    """
    if _ACTING not in config.stash:
        declared = getattr(config, "_inicfg", {}).get("markers")  # the ini file's own lines
        value = getattr(declared, "value", declared)
        own = value.splitlines() if isinstance(value, str) else list(value or [])
        labels = {_marker_name(line) for line in own}
        acting = {
            _marker_name(line)
            for line in config.getini("markers")
            if not line.rstrip().endswith(_OUR_DOCS)
        }
        config.stash[_ACTING] = frozenset((acting - labels) | _PYTEST_MARKERS)
    return config.stash[_ACTING]


def _add_marker(node: pytest.Item | pytest.Collector, name: str, doc: str) -> None:
    """Mark ``node`` with a tag or axis, unless the name is unusable or would act on the test."""
    marks = node.config.stash.setdefault(_MARKS, {})
    mark = marks.get(name)  # a name seen before passed the checks below (once per name)
    if mark is None:
        if not _MARKER.fullmatch(name):
            return
        if name in _acting_markers(node.config):
            warnings.warn(  # node.warn needs a line number, which a JSON file does not give
                pytest.PytestCollectionWarning(
                    f"{node.nodeid}: {doc} {name!r} is not made a pytest marker: pytest or a "
                    f"plugin acts on markers named {name!r}"
                ),
                stacklevel=1,
            )
            return
        known = node.config.stash.get(_KNOWN, None)
        if known is None:
            known = node.config.stash[_KNOWN] = {
                _marker_name(line) for line in node.config.getini("markers")
            }
        if name not in known:
            node.config.addinivalue_line("markers", f"{name}: {doc}")
            known.add(name)
        mark = marks[name] = getattr(pytest.mark, name)
    node.add_marker(mark)


@lru_cache(maxsize=64)
def _callobj(fixtures: tuple[str, ...]) -> Any:
    """A function whose signature asks pytest for exactly these fixtures."""

    def verial_criterion(**_: Any) -> None:
        """Placeholder body; CriterionItem.runtest scores the criterion."""

    verial_criterion.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in fixtures]
    )
    return verial_criterion


class CriterionItem(pytest.Function):
    """One criterion of one task run. Passes, fails with prose, or errors with the cause."""

    def __init__(self, *, plan: CriterionPlan, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.verial_criterion_run: CriterionRecord | None = None
        axis = plan.criterion.axis
        if axis:
            _add_marker(self, axis, "criterion axis from a benchmark file")

    @property
    def task_node(self) -> TaskNode:
        """The task run this criterion belongs to."""
        parent = self.parent
        assert isinstance(parent, TaskNode)
        return parent

    def identity(self) -> dict[str, Any]:
        """Fields that place this criterion run in the report."""
        task_node = self.task_node
        file_node = task_node.benchmark_file
        return {
            "nodeid": self.nodeid,
            "task_run": task_node.nodeid,
            "file": file_node.display,
            "benchmark": file_node.plan.slug,
            "run": task_node.run.label,
        }

    def runtest(self) -> None:
        task_node = self.task_node
        if task_node.folder_missing():
            self._missing_sandbox()
        sources = {
            name: self.funcargs[f"verial_{name}"]
            for name in (self.plan.check.sources if self.plan.check else ())
        }
        prior = self.config.stash.setdefault(PRIOR, {}).setdefault(task_node.nodeid, {})
        judging = self.config.stash.get(CONCURRENT_JUDGING, None) if self.plan.judge else None
        if judging is not None:  # --verial-judge-concurrency above 1
            run = judging.criterion_run(self, sources, prior)
        else:
            run = self.scoring(sources, self.sandbox_arg(), prior)()
        self.verial_criterion_run = run
        prior[self.plan.id] = run
        if self.config.getini("junit_family") in ("xunit1", "legacy"):
            # Testcase properties are valid in xunit1 only; for xunit2 the recorder adds
            # them as suite properties named after the node id.
            for key in JUNIT_FIELDS:
                self.user_properties.append((f"verial_{key}", junit_value(run, key)))
        if run.status is Status.SKIPPED:
            reason = run.details or "criterion skipped"
            reason = f"criterion skipped ({WITHHELD})" if self.scored() else reason
            # at the criterion's line; a JSON benchmark file has none (pytest would crash)
            raise pytest.skip.Exception(reason, _use_item_location=self.plan.line is not None)
        if run.not_evaluated is not None:  # an error of the verifier (whatever its points)
            raise CriterionFailed(run)
        if run.met if run.points is not None and run.points < 0 else not run.passed:
            # a penalty (negative points) fails its item when met, and passes when not
            raise CriterionFailed(run)

    def sandbox_arg(self) -> Sandbox:
        """The ``verial_sandbox`` fixture's value (a conftest may override the fixture)."""
        return cast(Sandbox, self.funcargs["verial_sandbox"])

    def scoring(
        self, sources: dict[str, Any], sandbox: Sandbox, prior: dict[str, CriterionRecord]
    ) -> Callable[[], CriterionRecord]:
        """This criterion's scoring on ``sources`` (by source name) given the task run's
        criterion runs so far, ready to run here or on a judge worker thread: everything it
        reads from the nodes is read now."""
        task_node = self.task_node
        settings = self.config.stash[SETTINGS]
        benchmark = task_node.benchmark_file.plan.benchmark
        return partial(
            run_criterion,
            self.plan,
            task_node.task,
            sources,
            options=settings.check_options,
            prior=prior,
            task_threshold=verdict_threshold(
                task_node.task.task.pass_threshold,
                benchmark.pass_threshold,
                settings.pass_threshold,
            ),
            benchmark=benchmark,
            placement=self.identity(),
            sandbox=sandbox,
        )

    def scored(self) -> bool:
        """Whether this criterion runs in a scored run (nothing it expects may be shown)."""
        return bool(self.config.stash[SETTINGS].scored_for(self.task_node.run))

    def _missing_sandbox(self) -> None:
        """A task run without its folder is an error, never "the agent wrote nothing"."""
        task_node = self.task_node
        message = task_node.run.missing_message(task_node.task.key)
        run = self.errored(message, "MissingSandbox", relative=False)
        raise CriterionFailed(run)

    def errored(self, details: str, error: str, relative: bool = True) -> CriterionRecord:
        """Record this criterion as an error run (it could not be scored) and return it.
        ``relative``: files in ``details`` named relative to the task's sandbox folder, as
        the engine names them (not for the missing folder itself)."""
        if relative:
            run_dir = self.task_node.run
            paths = SandboxPaths(run_dir.sandbox_path(self.task_node.task.key), run_dir.path)
            details = paths.text(details)
        now = now_iso()
        run = CriterionRecord.errored(
            {**identity(self.plan, self.task_node.task), **self.identity()},
            details,
            evidence={"error": error},
            started_at=now,
            completed_at=now,
            duration=0.0,
        )
        self.verial_criterion_run = run
        return run

    def done(self) -> None:
        """After teardown: drop this item's criterion run (the recorder keeps its own), and the
        task run's prior runs (and judge criteria scored ahead but never taken) once its last
        criterion on this process is done."""
        self.verial_criterion_run = None
        left = self.config.stash.get(TASK_LEFT, {})
        task = self.task_node.nodeid
        if task in left:
            left[task] -= 1
            if left[task] <= 0:
                del left[task]
                self.config.stash.get(PRIOR, {}).pop(task, None)
                judging = self.config.stash.get(CONCURRENT_JUDGING, None)
                if judging is not None:
                    judging.task_done(task)

    def repr_failure(self, excinfo: Any) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, CriterionFailed):
            from ._results import CriterionRun
            from .reporting._terminal import describe_failure

            run = excinfo.value.run
            assert run is not None  # a criterion item fails with its run
            return describe_failure(CriterionRun.of(run), self.scored())  # its evidence's rows
        return super().repr_failure(excinfo)

    def _repr_failure_py(self, excinfo: Any, style: Any = None) -> Any:
        """In a scored run an unexpected exception (in a check, a source or a fixture) is one
        line naming the criterion: a traceback shows source lines and, with ``-l``, locals
        that may hold expected values. The JSON report keeps the exception's message."""
        from _pytest.fixtures import FixtureLookupError

        value = excinfo.value
        if not self.scored() or isinstance(value, (CriterionFailed, FixtureLookupError)):
            return super()._repr_failure_py(excinfo, style=style)
        from ._secrets import redact

        if self.verial_criterion_run is None:
            self.errored(redact(f"{type(value).__name__}: {value}"), type(value).__name__)
        return (
            f"criterion {self.plan.id!r} ({self.plan.assert_name}) error: "
            f"{type(value).__name__} ({WITHHELD})"
        )

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.plan.line - 1 if self.plan.line else None
        # A label may quote an expected value; scored runs keep it out of agent-visible output.
        scored = self.scored()
        label = self.plan.criterion.label
        label = f": {label}" if label and not scored else ""
        return self.task_node.benchmark_file.path, line, escape(f"criterion {self.plan.id}{label}")


class NoCriteriaItem(pytest.Item):
    """Stands for a task without criteria, which Verial scores 0 with verdict ``fail``."""

    def runtest(self) -> None:
        raise CriterionFailed(
            None,
            f"task {self.parent.name!r} has no criteria: scored 0, verdict fail",  # type: ignore[union-attr]
        )

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        if isinstance(excinfo.value, CriterionFailed):
            return escape(str(excinfo.value))
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, escape(f"task {self.parent.name} (no criteria)")  # type: ignore[union-attr]


#: selected task runs by (benchmark file as shown, run directory): the file, run and task keys
TaskRuns = dict[tuple[str, str], tuple[str, RunDir, list[str]]]


def task_runs_of_items(config: pytest.Config, items: list[pytest.Item]) -> TaskRuns:
    """The task runs the selected items belong to (a session that collected them)."""
    found: TaskRuns = {}
    last: pytest.Collector | None = None
    keys: list[str] = []
    key = ""
    for item in items:
        node = item.parent
        if node is not last:  # the items of a task run come together: looked up once
            if not isinstance(node, TaskNode):
                continue
            last, key = node, node.task.key
            file = display_path(config, node.benchmark_file.path)
            keys = found.setdefault((file, str(node.run.path)), (file, node.run, []))[2]
        keys.append(key)
    return found


def task_runs_of_ids(config: pytest.Config, ids: list[str]) -> TaskRuns:
    """The same from node ids, as the xdist controller (which collects nothing) sees them."""
    settings = config.stash[SETTINGS]
    found: TaskRuns = {}
    unknown: set[tuple[str, str]] = set()
    for nodeid in ids:
        file_id, name, _ = parse(nodeid)
        path = Path(file_id)
        path = path if path.is_absolute() else config.rootpath / path
        if not name or not is_benchmark_file(path, settings.patterns):
            continue
        try:
            runs = settings.run_dirs_for(path)
        except RunConfigError:
            continue  # the workers report it as a collection error
        key, label = split_task_name(name, [r.label for r in runs])
        run = next((r for r in runs if r.label == label), None)
        if run is None:
            continue
        if "\\" in key:  # an escaped name (a control character): its folder is unknown here
            unknown.add((file_id, str(run.path)))
        entry = found.setdefault((file_id, str(run.path)), (file_id, run, []))
        entry[2].append(key)
    return {k: v for k, v in found.items() if k not in unknown}


def refuse_empty_runs(config: pytest.Config, task_runs: TaskRuns) -> None:
    """A usage error when a run directory holds no folder for any selected task run of a
    benchmark file: a wrong ``--verial-run`` would otherwise score everything 0 (README, "Run
    directories")."""
    explicit = bool(config.stash[SETTINGS].runs)
    for file, run, keys in task_runs.values():
        problem = empty_run_problem(file, run, keys, explicit)
        if problem is not None:
            raise pytest.UsageError(problem)
