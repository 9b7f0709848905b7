"""The judge's annotations of a light report are those of the whole report (issue 33).

The judge's reporting plugin is registered whenever pytest-verial is installed, and its
``annotate`` writes each failed or partial task run's ``feedback`` and the session's
verification summary. The session's end streams a light report (every figure, the
noteworthy criterion runs typed) also with the judge on, keeping typed the criterion runs
``annotate`` reads (``JudgeReporting.keeps``): the JSON report written from it must be the
one the whole typed report writes, feedback and summary included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_core_plain_record import _secret, _stream_input

from pytest_verial._record import CriterionRecord
from pytest_verial.judge_plugin import JudgeReporting
from pytest_verial.reporting._build import ReportInput, build_light, build_report
from pytest_verial.reporting._json_report import write_json_report, write_json_stream

#: criterion runs made judged: a judge criterion that ran, one gated, one not evaluated
JUDGED = {"passes", "gated", "unverified", "earned"}


def _judged(data: ReportInput) -> ReportInput:
    for nodeid, record in list(data.criterion_runs.items()):
        if nodeid.rsplit("::", 1)[-1] in JUDGED:
            data.criterion_runs[nodeid] = CriterionRecord.from_json(
                {**record.to_json(), "judge": True}
            )
    return data


def _annotator() -> JudgeReporting:
    return JudgeReporting(config=None, options={})  # type: ignore[arg-type]


def test_the_judges_annotations_of_the_light_report_are_the_whole_reports(
    tmp_path: Path,
) -> None:
    data = _judged(_stream_input(tmp_path / "project"))
    judge = _annotator()
    with _secret():
        typed = build_report(data)
        judge.annotate(typed)
        whole_summary = judge.summary
        light = build_light(data, keep=JudgeReporting.keeps)
        judge.annotate(light.report)
        write_json_report(tmp_path / "typed.report", typed)
        write_json_stream(tmp_path / "streamed.report", light)

    assert judge.summary == whole_summary
    judged = sum(1 for r in data.criterion_runs.values() if r.judge)
    assert whole_summary is not None and whole_summary["judge_criteria"] == judged > 0
    feedback = [t.feedback for t in typed.task_runs() if t.feedback]
    assert feedback and [t.feedback for t in light.report.task_runs() if t.feedback] == feedback
    assert (tmp_path / "streamed.report").read_bytes() == (tmp_path / "typed.report").read_bytes()


def test_without_the_judges_keep_the_light_report_loses_what_annotate_reads(
    tmp_path: Path,
) -> None:
    """The keep matters: light without it, the summary counts fewer judged runs."""
    data = _judged(_stream_input(tmp_path / "project"))
    judge = _annotator()
    typed = build_report(data)
    judge.annotate(typed)
    whole: Any = judge.summary
    judge.annotate(build_light(data).report)
    assert judge.summary is not None and judge.summary["judge_criteria"] < whole["judge_criteria"]
