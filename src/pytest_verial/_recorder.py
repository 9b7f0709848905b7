"""The controller's recorder: receives reports, builds and writes the benchmark-run report.

Registered only where reports arrive (the controller under xdist, or the single process), it
never collects: under xdist it learns the selected node ids from
``pytest_xdist_node_collection_finished`` and loads the benchmark files itself (ids, weights and
axes only). Each criterion run arrives typed (``state.FINISHED``) or, from an xdist worker, as plain
JSON on ``report.verial``; a report without it
(a crashed worker, a setup error) becomes an error run with score 0. The report is written
once, at session end, also after Ctrl-C or SIGTERM; while the session runs, every criterion
run is appended to a journal beside the report (``journal.py``), from which a session that
died without writing is recovered. Each journal line is written as its criterion run arrives;
the journal is fsynced and the results store written in batches (issue 33): at a batch
boundary (every ``BATCH_TASK_RUNS`` completed task runs or ``BATCH_SECONDS``, whichever first)
the journal is fsynced, then the store's task runs of the batch are inserted in one
transaction, so the store never holds a task run the journal does not. The JSON report and
the JUnit file are written independently: one that cannot be written is one ``ERROR`` line
and a non-zero exit status, and the terminal names only the files that were written.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import _heap as heap
from ._collect import (
    JUNIT_FIELDS,
    BenchmarkFile,
    CriterionItem,
    NoCriteriaItem,
    display_path,
    file_scored,
    junit_value,
    registry_for,
    registry_of,
)
from ._config.stash import FINISHED, SETTINGS, SHARD_INFO
from ._display import escape
from ._engine import identity, now_iso
from ._errors import BenchmarkFileError
from ._loader import BenchmarkPlan, CriterionPlan, TaskPlan, load_benchmark
from ._nodeids import file_of, is_no_criteria, parse, property_name, split_task_name, task_run_of
from ._record import CriterionRecord
from ._scoring import reaches
from .reporting._journal import (
    BATCH_SECONDS,
    BATCH_TASK_RUNS,
    Journal,
    JournalBusy,
    journal_path,
    make_header,
    recover,
    recovered_path,
)
from .reporting._json_report import write_json_report
from .reporting._outputs import OutputRefused, check_outputs

if TYPE_CHECKING:  # the result models load when a criterion ran, never under --co
    from ._results import Report
    from ._store_session import SessionStore
    from .checks import CheckRegistry
    from .reporting._build import LightReport, ReportInput
    from .reporting._canonical import CanonicalDigest


class Recorder:
    """Collects criterion runs on the controller and writes the reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = config.stash[SETTINGS]
        self.files: dict[str, BenchmarkPlan] = {}
        self.selected: list[str] = []
        #: node id -> its plain record (the typed run is built once, for the report)
        self.criterion_runs: dict[str, CriterionRecord] = {}
        self.collection_errors: list[dict[str, str]] = []
        self.interrupted = False
        self.started_at = now_iso()
        self.clock = time.perf_counter()
        self.report: Report | None = None
        #: task runs completed since the last batch boundary, and when that boundary was
        self._batch_tasks = 0
        self._batch_at = time.monotonic()
        self.shard_info: dict[str, Any] | None = None
        self.gate: list[tuple[str, float | None, bool]] | None = None
        self.gate_errors = 0
        self.exit_status = 0
        self.write_errors: list[str] = []
        self.written: list[tuple[str, Path]] = []
        self.notes: list[str] = []
        #: an output was refused after collection: the session writes nothing
        self.refused = False
        self._logxml: Any = False  # pytest's LogXML plugin, looked up on first use
        report = self.settings.outputs.report
        self.journal: Journal | None = None
        self._task_left: dict[str, int] = {}
        #: the results store this session is written into (``--verial-store``)
        self.store: SessionStore | None = None
        self._store_input: ReportInput | None = None
        #: an ``assert`` no check knows, one line each (warnings of the report)
        self.unknown_warnings: list[str] = []
        #: the results store's file when this session created it (said in one line)
        self.store_created: Path | None = None
        if report is not None and not config.option.collectonly:
            self._recover_previous(report)
            self.journal = Journal(journal_path(report))

    def _recover_previous(self, report: Path) -> None:
        """A journal left by a session that died writing this report: rebuild its report."""
        path = journal_path(report)
        if not path.exists():
            return
        try:
            recovered, _ = recover(path)
        except JournalBusy:
            raise pytest.UsageError(
                f"--verial-report: {report} is being written by another session that is "
                f"still running (its journal {path} is locked)"
            ) from None
        except ValueError as exc:
            aside = path.with_name(path.name + ".damaged")
            try:
                path.replace(aside)
            except OSError as move:
                raise pytest.UsageError(
                    f"--verial-report: {exc}; and it cannot be moved aside: {move.strerror}"
                ) from None
            self.notes.append(f"{exc}; journal moved to {aside}")
            return
        target = recovered_path(report)
        try:
            write_json_report(target, recovered)
        except OSError as exc:  # keep the journal out of this session's way, for --recover
            kept = path.with_name(path.name + ".kept")
            path.replace(kept)
            self.notes.append(
                f"cannot write the report recovered from {kept} to {target}: "
                f"{exc.strerror or exc}; recover it with: verial report --recover {kept}"
            )
            return
        path.unlink(missing_ok=True)
        done = recovered.session.counts.completed
        self.notes.append(
            f"a previous session writing {report} ended without its report; "
            f"{done} completed task runs recovered into {target}"
        )

    # -- what is planned -------------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if isinstance(item, (CriterionItem, NoCriteriaItem)):
                file_node = item.getparent(BenchmarkFile)
                assert file_node is not None
                display = display_path(self.config, file_node.path)
                if display not in self.files:
                    self.files[display] = file_node.plan
                    self._unknown_checks(display, file_node.plan, registry_for(file_node))
                self.selected.append(item.nodeid)
        self._refuse_outputs({item.path for item in session.items})
        self._keep_resumed()

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.selected:
            return
        for nodeid in ids:
            if parse(nodeid).task is not None and self._load_file(file_of(nodeid)):
                self.selected.append(nodeid)
        self._refuse_outputs({self.config.rootpath / file_of(n) for n in ids})
        self._keep_resumed()

    def _refuse_outputs(self, collected: set[Path]) -> None:
        """No output may be a file the session collected (a benchmark file, a test module) or
        lie in a run folder: checked once they are known, before any criterion runs."""
        if self.config.option.collectonly:
            return
        inputs: list[tuple[str, Path | None]] = list(self.settings.outputs.inputs)
        for plan in self.files.values():
            inputs.append(("the benchmark file", plan.path))
            inputs.extend(("the run folder", r.path) for r in self.settings.run_dirs_for(plan.path))
        inputs.extend(("the collected file", p) for p in sorted(collected))
        try:
            check_outputs(self.settings.outputs.files, inputs)
        except OutputRefused as exc:
            self.refused = True  # the session ends here: it writes nothing at all
            raise pytest.UsageError(escape(str(exc))) from None

    def _load_file(self, display: str) -> bool:
        """Load a benchmark file the workers collected (its ids, weights and axes)."""
        if display in self.files:
            return True
        path = Path(display) if Path(display).is_absolute() else self.config.rootpath / display
        if not any(path.name.endswith(s) for s in (".json", ".yaml", ".yml")):
            return False
        try:
            scored = file_scored(self.settings, path)
            # the same registry as the workers (conftest checks too): a deselected
            # criterion's identity (its judge flag) is the same at -n 0 and -n 2
            registry = registry_of(self.config, self._hook_for(path))
            self.files[display] = load_benchmark(path, registry, display, scored=scored)
        except (BenchmarkFileError, OSError):
            return False
        self._unknown_checks(display, self.files[display], registry)
        return True

    def _unknown_checks(self, display: str, plan: BenchmarkPlan, registry: CheckRegistry) -> None:
        """An ``assert`` no check knows is a warning of the report too (the verial summary
        lists it): the same line pytest's collection warned with."""
        from ._loader import unknown_checks

        self.unknown_warnings.extend(text for _, text in unknown_checks(display, plan, registry))

    def _keep_resumed(self) -> None:
        """``--verial-resume``: the kept criterion runs go into the report as they were, once
        the report is known to be of this session's benchmark files and run folders."""
        resume = self.settings.resume
        if resume is None or self.config.option.collectonly:
            return
        for origin in resume.origins.values():  # a file whose tasks were all kept: deselected
            if origin.file not in self.files and self._in_session(origin.file):
                self._load_file(origin.file)
        current = {
            display: (
                plan.sha256,
                {
                    run.label: (run.label, run.config.id, run.config.agent)
                    for run in self.settings.run_dirs_for(plan.path)
                },
            )
            for display, plan in self.files.items()
        }
        problem = resume.mismatch(current)
        if problem is not None:
            self.refused = True  # the session ends here: it writes nothing at all
            raise pytest.UsageError(
                escape(f"--verial-resume: {resume.source}: {problem}: score afresh without it")
            )
        for nodeid, run in resume.kept.items():
            if nodeid not in self.criterion_runs:
                self.criterion_runs[nodeid] = CriterionRecord.of(run)
                self.selected.append(nodeid)

    def _carried_failures(self) -> bool:
        resume = self.settings.resume
        return resume is not None and resume.carried_failures(
            self.criterion_runs[n] for n in resume.kept if n in self.criterion_runs
        )

    def _in_session(self, display: str) -> bool:
        """True when a benchmark file lies in what this session was asked to collect (its
        arguments, or testpaths): a resumed report's task runs of any other file are foreign."""
        path = (self.config.rootpath / display).resolve()
        here = self.config.invocation_params.dir
        for arg in self.config.args:
            base = (here / file_of(arg)).resolve()
            if path == base or base in path.parents:
                return True
        return False

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        if self.config.option.collectonly or self.settings.store.url is None:
            return  # no store: SQLAlchemy is not imported at all
        from ._store_session import SessionStore
        from .store import StoreError

        args = [Path(file_of(a)) for a in self.config.args]
        try:  # a store that cannot be opened stops the session before any criterion runs
            self.store = SessionStore.open(self.config, self.started_at, self.settings.runs, args)
        except StoreError as exc:
            raise pytest.UsageError(f"--verial-store: {exc}") from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker's ``session.shard`` block (each computes the same one)."""
        info = (getattr(node, "workeroutput", None) or {}).get("verial_shard")
        if info is not None:
            self.shard_info = info

    def _hook_for(self, path: Path) -> Any:
        session = getattr(self, "session", None)
        return session.gethookproxy(path) if session is not None else self.config.hook

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(
                {"nodeid": report.nodeid, "message": str(report.longrepr).strip()}
            )

    # -- what happened ---------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = report.__dict__.pop("verial", None)  # from an xdist worker, as JSON
        # pytest keeps every test report to the end; the plain record is the one kept
        run = (
            CriterionRecord.from_json(record)
            if record is not None
            else self.config.stash.get(FINISHED, {}).pop(report.nodeid, None)
        )
        if run is not None:
            run.outcome = report.outcome
            self.criterion_runs[report.nodeid] = run
            self._junitxml_properties(report.nodeid, run)
        elif (
            report.failed
            and report.when in ("setup", "call", "???")
            and report.nodeid not in self.criterion_runs
            and not is_no_criteria(report.nodeid)
        ):
            self.criterion_runs[report.nodeid] = self._error_record(report)
        else:
            return
        self._journal(report.nodeid)
        if self.store is not None:  # a task run whose last criterion arrived joins the batch
            if self._store_input is None:
                self._store_input = self._input(running=True)
            self.store.criterion_done(report.nodeid, self.selected, self._store_input)
        if self._task_complete(report.nodeid):
            self._batch_tasks += 1
        if self._batch_tasks >= BATCH_TASK_RUNS or (
            self._batch_tasks and time.monotonic() - self._batch_at >= BATCH_SECONDS
        ):
            self._flush()
        heap.checkpoint()

    def _task_complete(self, nodeid: str) -> bool:
        """Count the criterion run against its task run: True when it was the last one."""
        if not self._task_left:
            for selected in self.selected:
                task = task_run_of(selected)
                self._task_left[task] = self._task_left.get(task, 0) + 1
        task = task_run_of(nodeid)
        left = self._task_left.get(task)
        if left is None:
            return False
        self._task_left[task] = left - 1
        return left - 1 == 0

    def _flush(self) -> None:
        """A batch boundary: the journal fsynced, then the store's task runs of the batch."""
        self._batch_tasks = 0
        self._batch_at = time.monotonic()
        if self.journal is not None:
            try:
                self.journal.flush()
            except OSError as exc:
                self._journal_failed(exc)
        if self.store is not None:
            self.store.flush()

    def _journal_failed(self, exc: Exception) -> None:
        assert self.journal is not None
        self.notes.append(
            f"journal {self.journal.path}: {exc}; a crash from here on loses the results"
        )
        self.journal.close(remove=False)
        self.journal = None

    def _journal(self, nodeid: str) -> None:
        """Append the criterion run to the journal (fsynced at the next batch boundary)."""
        if self.journal is None:
            return
        try:
            if not self.journal.open:
                data = self._input(running=True)
                assert self.settings.outputs.report is not None
                self.journal.start(
                    make_header(
                        self.settings.outputs.report,
                        self.settings.outputs.junit,
                        data.files,
                        data.file_runs,
                        data.selected,
                        {
                            "started_at": data.started_at,
                            "scored": data.scored,
                            "pass_threshold": data.pass_threshold,
                            "trials": data.trials,
                            "collection_errors": list(data.collection_errors),
                            # verial report --recover marks this session interrupted there
                            "store_session": self.store.session_id if self.store else None,
                        },
                    )
                )
                kept = self.settings.resume.kept if self.settings.resume else {}
                for old in kept:  # what a resumed session kept is journaled like the rest
                    if old != nodeid and old in self.criterion_runs:
                        self.journal.record(old, self.criterion_runs[old].to_json())
            self.journal.record(nodeid, self.criterion_runs[nodeid].to_json())
        except (OSError, ValueError, JournalBusy) as exc:
            self._journal_failed(exc)

    def _junitxml_properties(self, nodeid: str, run: CriterionRecord) -> None:
        """Per-criterion properties in pytest's --junitxml, valid under the xunit2 schema.

        xunit2 allows properties on the suite only, so they are named ``<nodeid>::verial_*``.
        Under xunit1 the item itself records them on its testcase (``user_properties``).
        """
        if self._logxml is False:
            self._logxml = next(
                (
                    p
                    for p in self.config.pluginmanager.get_plugins()
                    if type(p).__name__ == "LogXML" and hasattr(p, "add_global_property")
                ),
                None,
            )
        if self._logxml is None or self.config.getini("junit_family") in ("xunit1", "legacy"):
            return
        for key in JUNIT_FIELDS:
            # a file name may hold any character
            name = escape(property_name(nodeid, f"verial_{key}"))
            self._logxml.add_global_property(name, junit_value(run, key))

    def _error_record(self, report: pytest.TestReport) -> CriterionRecord:
        """A criterion whose process died or whose setup failed before scoring."""
        text = str(report.longrepr).strip().splitlines()
        reason = next((line for line in text if "crashed" in line), text[-1] if text else "")
        found = self._plan_of(report.nodeid)
        who: dict[str, Any] = {"criterion_id": parse(report.nodeid).criterion or report.nodeid}
        if found is not None:
            who = identity(*found)
        return CriterionRecord.errored(
            {**who, "nodeid": report.nodeid, "outcome": report.outcome},
            f"criterion did not complete: {reason.strip()}",
            completed_at=now_iso(),
            duration=report.duration,
        )

    def _plan_of(self, nodeid: str) -> tuple[CriterionPlan, TaskPlan] | None:
        file, name, criterion = parse(nodeid)
        plan = self.files.get(file)
        if plan is None or name is None or criterion is None:
            return None
        labels = [r.label for r in self.settings.run_dirs_for(plan.path)]
        task_key, _ = split_task_name(name, labels)
        for task in plan.tasks:
            if task.key == task_key:
                found = next((c for c in task.criteria if c.id == criterion), None)
                return (found, task) if found is not None else None
        return None

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    # -- writing ---------------------------------------------------------------------------
    def _input(self, running: bool) -> ReportInput:
        from .reporting._build import ReportInput

        file_runs = {d: self.settings.run_dirs_for(p.path) for d, p in self.files.items()}
        runs: list[Any] = []
        for dirs in file_runs.values():
            runs.extend(r for r in dirs if r not in runs)
        shard = self.shard_info or self.config.stash.get(SHARD_INFO, None)
        resume = self.settings.resume
        selected = set(self.selected)
        if shard is not None and resume is not None:  # what another shard scored stays out
            mine = set(shard["task_runs"])
            selected -= {n for n in resume.kept if task_run_of(n) not in mine}
        return ReportInput(
            files=list(self.files.items()),
            file_runs=file_runs,
            runs=runs,
            selected=selected,
            criterion_runs=self.criterion_runs,
            pass_threshold=self.settings.pass_threshold,
            scored=self.settings.scored or any(r.config.scored for r in runs),
            started_at=self.started_at,
            completed_at=None if running else now_iso(),
            duration=time.perf_counter() - self.clock,
            interrupted=self.interrupted,
            collection_errors=self.collection_errors,
            running=running,
            trials=self.settings.trials,
            extra_warnings=self.unknown_warnings,
            shard=shard,
            resumed=(
                {"from": resume.source, "kept_criterion_runs": len(set(resume.kept) & selected)}
                if resume is not None
                else None
            ),
        )

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.option.collectonly or self.refused:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self.interrupted = True
        # A usage error before any criterion ran (no sandbox for a benchmark, a judge that
        # grades itself): pytest prints it; a summary of task runs cancelled before they
        # started, or a report of them, would only bury it.
        nothing_ran = exitstatus == pytest.ExitCode.USAGE_ERROR and not self.criterion_runs
        if nothing_ran or (not self.files and not self.collection_errors):
            if self.journal is not None:
                self.journal.close(remove=True)
            if self.store is not None:  # nothing was scored: nothing stays in the store
                self.store.discard()
                self.store = None
            return
        self._flush()  # the last batch: a failure from here on loses nothing completed
        from .reporting._build import build_light, build_report

        typed = self._typed()
        with heap.no_gc():
            data = self._input(running=False)
            # streamed: the figures now, each task run's criterion runs as it is written (the
            # results store's end too: its digest is fed as the JSON report is written)
            judge = self.config.pluginmanager.get_plugin("verial-judge-reporting")
            keep = judge.keeps if judge is not None else None
            light = None if typed else build_light(data, keep=keep)
            report = build_report(data) if light is None else light.report
        resume = self.settings.resume
        if (
            resume is not None
            and resume.kept
            and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)
        ):  # a resumed session's exit status equals an unresumed one's on the same results
            failed = self._carried_failures()
            session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK
        self._gate(session, report)
        report.session.exit_status = int(session.exitstatus)
        if judge is not None:  # feedback and the verification summary
            judge.annotate(report)
        if self.config.hook.pytest_verial_report.get_hookimpls():  # extensions: a round trip
            extended = report.to_json()
            self.config.hook.pytest_verial_report(report=extended)
            try:
                from ._results import Report

                report = Report.from_json(extended)
            except ValueError as exc:  # an extension broke the report: say so, keep the original
                self.write_errors.append(
                    "a pytest_verial_report hook made the report invalid: "
                    + str(exc).splitlines()[0]
                )
        self.report = report
        canonical = None
        if light is not None and self.store is not None:  # the store's report_digest
            from .reporting._canonical import CanonicalDigest, head_of

            canonical = CanonicalDigest(head_of(report))
        self._write_outputs(report, data.scored, light, canonical)
        if self.store is not None:  # after the JSON report: a store failure never loses it
            problem = self.store.finish(report, light=light, canonical=canonical)
            if problem is None:
                self.store_created = self.store.created
            self.store = None
            if problem is not None:
                self.write_errors.append(problem)
        if self.write_errors and exitstatus != pytest.ExitCode.INTERRUPTED:
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        self.exit_status = int(session.exitstatus)

    def _typed(self) -> bool:
        """Whether the session's end needs the typed report whole (every criterion run typed)
        rather than streaming it (:class:`~.reporting._build.LightReport`): a
        ``pytest_verial_report`` hook (it gets the whole report), ``--verial-baseline`` (its
        deltas compare every criterion run), and the Markdown, HTML and step summaries, which
        render it whole. Otherwise the JSON report and the JUnit file
        are written one task run at a time; the terminal summary and ``--verial-fail-under``
        read the figures and the failing criterion runs only, the judge's feedback and
        verification summary the criterion runs it keeps typed (``JudgeReporting.keeps``)."""
        named = self.settings.outputs
        return (
            bool(self.config.hook.pytest_verial_report.get_hookimpls())
            # --verial-baseline compares every criterion run with the baseline's
            or self.config.pluginmanager.get_plugin("verial-baseline") is not None
            or named.markdown is not None
            or named.html is not None
            or any(o.label == "$GITHUB_STEP_SUMMARY" for o in named.files)
        )

    def _write_outputs(
        self,
        report: Report,
        scored: bool,
        light: LightReport | None,
        canonical: CanonicalDigest | None = None,
    ) -> None:
        """Each output on its own: one that cannot be written does not stop the others.
        ``light``: the JSON report and the JUnit file are streamed from it (see :meth:`_typed`);
        ``canonical``: fed each task run's JSON as the JSON report is written (the results
        store's digest, :mod:`.reporting._canonical`)."""
        from .reporting._html import write_html  # each writer loads when its output is asked for
        from .reporting._json_report import write_json_stream
        from .reporting._junit import write_junit, write_junit_stream
        from .reporting._markdown import append_step_summary, write_markdown

        named = self.settings.outputs
        step_summary = next(
            (o.path for o in named.files if o.label == "$GITHUB_STEP_SUMMARY"), None
        )
        outputs: list[tuple[str, Path | None, Callable[[Path], object]]] = [
            (
                "JSON report",
                named.report,
                lambda p: (
                    write_json_report(p, report)
                    if light is None
                    else write_json_stream(p, light, canonical)
                ),
            ),
            (
                "JUnit report",
                named.junit,
                lambda p: (
                    write_junit(p, report, scored)
                    if light is None
                    else write_junit_stream(p, light, scored)
                ),
            ),
            ("Markdown summary", named.markdown, lambda p: write_markdown(p, report)),
            ("HTML report", named.html, lambda p: write_html(p, report)),
            (
                "GitHub step summary",
                Path(step_summary) if step_summary else None,
                lambda p: append_step_summary(report, path=p),
            ),
        ]
        for label, path, write in outputs:
            if path is None:
                continue
            try:
                write(path)
            except (OSError, ValueError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                self.write_errors.append(f"cannot write the {label} {path}: {reason}")
            else:
                self.written.append((label, path))
        if self.journal is not None:  # kept for recovery unless the JSON report is on disk
            self.journal.close(remove=any(p == named.report for _, p in self.written))

    def _gate(self, session: pytest.Session, report: Report) -> None:
        """``--verial-fail-under``: every benchmark run must reach it, with no errors."""
        if self.settings.fail_under is None or self.interrupted:
            return
        counts = report.session.counts
        self.gate_errors = counts.criteria_error + len(report.session.collection_errors)
        self.gate = [
            (
                run.id,
                run.score,
                run.score is not None and reaches(run.score, self.settings.fail_under),
            )
            for run in report.benchmark_runs
        ]
        ok = bool(self.gate) and all(reached for _, _, reached in self.gate)
        session.exitstatus = (
            pytest.ExitCode.OK if ok and not self.gate_errors else pytest.ExitCode.TESTS_FAILED
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for note in self.notes:
            terminalreporter.write_line(f"warning: {note}", yellow=True)
        if self.report is None:
            return
        terminalreporter.write_sep("=", "verial summary")
        from .reporting._terminal import plural, summary

        lines = summary(
            self.report,
            verbosity=self.config.get_verbosity(),
            width=terminalreporter._tw.fullwidth,
            # a log (CI, a file) keeps each failing criterion's details whole
            cut=bool(getattr(terminalreporter, "isatty", True)),
            # pytest's FAILURES section already shows each failing criterion in full
            # carried over by --verial-resume: not in pytest's FAILURES section, so listed here
            failures=self.config.option.tbstyle in ("no", "line") or self._carried_failures(),
        )
        for text, colour in lines:
            terminalreporter.write_line(
                escape(text, keep="\n"), **({colour: True} if colour else {})
            )
        if self.gate is not None:
            floor, errors = self.settings.fail_under, self.gate_errors
            unverified = self.report.session.counts.criteria_not_evaluated
            why = f" ({unverified} not evaluated)" if unverified else ""
            tail = (
                f", {plural(errors, 'error')}{why}" if errors else ""
            ) + f" -> exit {self.exit_status}"
            if not self.gate:
                terminalreporter.write_line(f"fail-under {floor}: no run score{tail}")
            for n, (run_id, score, reached) in enumerate(self.gate, start=1):
                shown = f"{score:.3f}" if score is not None else "-"
                which = "" if len(self.gate) == 1 else f" of {run_id}"
                line = (
                    f"fail-under {floor}: run score{which} {shown} "
                    + ("reached" if reached else "NOT reached")
                    + (tail if n == len(self.gate) else "")
                )
                terminalreporter.write_line(escape(line))
        for problem in self.write_errors:
            terminalreporter.write_line(escape(f"ERROR: {problem}"), red=True)
        for label, path in self.written:  # only files actually on disk are named
            terminalreporter.write_line(escape(f"{label}: {path}"))
        if self.store_created is not None:
            terminalreporter.write_line(
                escape(
                    f"results store created: {self.store_created} (this project's history: "
                    "sessions started in its folder or below add to it; verial runs lists them)"
                )
            )

    def pytest_unconfigure(self) -> None:
        if self.store is not None:  # ended before sessionfinish: what was stored stays
            if self.journal is not None:  # the journal's batch first: it holds the store's
                with contextlib.suppress(OSError):
                    self.journal.flush()
            self.store.flush()
            self.store.close()
        if self.journal is not None:  # the session ended before sessionfinish: keep it
            self.journal.close(remove=False)
