"""The controller's recorder: receives reports, builds and writes the benchmark-run report.

Registered only where reports arrive (the controller under xdist, or the single process), it
never collects: under xdist it learns the selected node ids from
``pytest_xdist_node_collection_finished`` and loads the benchmark files itself (ids, weights and
axes only). Each criterion run arrives as plain JSON on ``report.verial``; a report without it
(a crashed worker, a setup error) becomes an error run with score 0. The report is written at
session end, also after Ctrl-C, and checkpointed while the session runs.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ..collect import (
    JUNIT_FIELDS,
    BenchmarkFile,
    CriterionItem,
    NoCriteriaItem,
    display_path,
    file_scored,
    junit_value,
)
from ..engine import now_iso
from ..errors import BenchmarkFileError
from ..loader import BenchmarkPlan, load_benchmark
from ..scoring import reaches
from ..state import SETTINGS
from .build import ReportInput, build_report
from .json_report import write_json_report
from .junit import write_junit
from .terminal import summary_lines

CHECKPOINT_SECONDS = 2.0


class Recorder:
    """Collects criterion runs on the controller and writes the reports."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.settings = config.stash[SETTINGS]
        self.files: dict[str, BenchmarkPlan] = {}
        self.selected: list[str] = []
        self.records: dict[str, dict[str, Any]] = {}
        self.collection_errors: list[dict[str, str]] = []
        self.interrupted = False
        self.started_at = now_iso()
        self.clock = time.perf_counter()
        self.report: dict[str, Any] | None = None
        self._last_checkpoint = 0.0
        self.gate: tuple[bool, int] | None = None
        self.write_errors: list[str] = []
        self._logxml: Any = False  # pytest's LogXML plugin, looked up on first use

    # -- what is planned -------------------------------------------------------------------
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if isinstance(item, (CriterionItem, NoCriteriaItem)):
                file_node = item.getparent(BenchmarkFile)
                assert file_node is not None
                self.files.setdefault(display_path(self.config, file_node.path), file_node.plan)
                self.selected.append(item.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.selected:
            return
        for nodeid in ids:
            display = nodeid.split("::", 1)[0]
            if "::" not in nodeid or display in self.files:
                if display in self.files:
                    self.selected.append(nodeid)
                continue
            path = Path(display) if Path(display).is_absolute() else self.config.rootpath / display
            if not any(path.name.endswith(s) for s in (".json", ".yaml", ".yml")):
                continue
            try:
                scored = file_scored(self.settings, path)
                self.files[display] = load_benchmark(path, None, display, scored=scored)
            except (BenchmarkFileError, OSError):
                continue
            self.selected.append(nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(
                {"nodeid": report.nodeid, "message": str(report.longrepr).strip()}
            )

    # -- what happened ---------------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        record = getattr(report, "verial", None)
        if record is not None:
            self.records[report.nodeid] = {**record, "outcome": report.outcome}
            self._junitxml_properties(report.nodeid, record)
        elif (
            report.failed
            and report.when in ("setup", "call", "???")
            and report.nodeid not in self.records
            and not report.nodeid.endswith("::no-criteria")
        ):
            self.records[report.nodeid] = self._error_record(report)
        self._checkpoint()

    def _junitxml_properties(self, nodeid: str, record: dict[str, Any]) -> None:
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
            self._logxml.add_global_property(f"{nodeid}::verial_{key}", junit_value(record, key))

    def _error_record(self, report: pytest.TestReport) -> dict[str, Any]:
        """A criterion whose process died or whose setup failed before scoring."""
        text = str(report.longrepr).strip().splitlines()
        reason = next((line for line in text if "crashed" in line), text[-1] if text else "")
        plan = self._plan_of(report.nodeid)
        return {
            "criterion_id": report.nodeid.rsplit("::", 1)[-1],
            "label": plan.criterion.label if plan else None,
            "assert": plan.assert_name if plan else None,
            "axis": plan.criterion.axis if plan else None,
            "weight": plan.criterion.weight if plan else 1.0,
            "judge": plan.judge if plan else False,
            "passed": False,
            "score": 0.0,
            "status": "error",
            "details": f"criterion did not complete: {reason.strip()}",
            "evidence": {},
            "started_at": None,
            "completed_at": now_iso(),
            "duration": report.duration,
            "outcome": report.outcome,
        }

    def _plan_of(self, nodeid: str) -> Any:
        parts = nodeid.split("::")
        plan = self.files.get(parts[0])
        if plan is None or len(parts) < 3:
            return None
        several = len(self.settings.run_dirs_for(plan.path)) > 1
        task_name = parts[1].rsplit("@", 1)[0] if several else parts[1]
        for task in plan.tasks:
            if task.key == task_name:
                return next((c for c in task.criteria if c.id == parts[2]), None)
        return None

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    # -- writing ---------------------------------------------------------------------------
    def _input(self, running: bool) -> ReportInput:
        file_runs = {d: self.settings.run_dirs_for(p.path) for d, p in self.files.items()}
        runs: list[Any] = []
        for dirs in file_runs.values():
            runs.extend(r for r in dirs if r not in runs)
        return ReportInput(
            files=list(self.files.items()),
            file_runs=file_runs,
            runs=runs,
            selected=set(self.selected),
            records=self.records,
            pass_threshold=self.settings.pass_threshold,
            scored=self.settings.scored or any(r.config.scored for r in runs),
            started_at=self.started_at,
            completed_at=None if running else now_iso(),
            duration=time.perf_counter() - self.clock,
            interrupted=self.interrupted,
            collection_errors=self.collection_errors,
            running=running,
        )

    def _checkpoint(self) -> None:
        if self.settings.report is None:
            return
        now = time.perf_counter()
        if now - self._last_checkpoint < CHECKPOINT_SECONDS:
            return
        self._last_checkpoint = now
        try:
            write_json_report(self.settings.report, build_report(self._input(running=True)))
        except OSError as exc:  # the final write reports it; scoring goes on
            self.write_errors.append(f"checkpoint of {self.settings.report}: {exc}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.option.collectonly:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self.interrupted = True
        if not self.files and not self.collection_errors:
            return
        data = self._input(running=False)
        report = build_report(data)
        self.config.hook.pytest_verial_report(report=report)
        self.report = report
        try:
            if self.settings.report is not None:
                write_json_report(self.settings.report, report)
            if self.settings.junit is not None:
                write_junit(self.settings.junit, report, data.scored)
        except OSError as exc:
            self.write_errors.append(f"cannot write the report: {exc}")
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        if self.settings.fail_under is not None and not self.interrupted:
            run = report["benchmark_run"]
            errors = run["summary"]["criteria_error"] + run["summary"]["collection_errors"]
            ok = run["score"] is not None and reaches(run["score"], self.settings.fail_under)
            self.gate = (ok, errors)
            session.exitstatus = (
                pytest.ExitCode.OK if ok and not errors else pytest.ExitCode.TESTS_FAILED
            )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        scored = self.report["benchmark_run"]["scored"]
        terminalreporter.write_sep("=", "verial summary")
        for line in summary_lines(self.report, scored):
            terminalreporter.write_line(line)
        if self.gate is not None:
            ok, errors = self.gate
            score = self.report["benchmark_run"]["score"]
            shown = f"{score:.3f}" if score is not None else "-"
            verdict = "reached" if ok else "NOT reached"
            terminalreporter.write_line(
                f"fail-under {self.settings.fail_under}: run score {shown} {verdict}"
                + (f", {errors} errors" if errors else "")
                + f" -> exit {0 if ok and not errors else 1}"
            )
        for problem in self.write_errors:
            terminalreporter.write_line(f"ERROR: {problem}", red=True)
        if self.settings.report is not None and not self.write_errors:
            terminalreporter.write_line(f"JSON report: {self.settings.report}")
        if self.settings.junit is not None:
            terminalreporter.write_line(f"JUnit report: {self.settings.junit}")
