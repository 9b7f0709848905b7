"""Task-level JUnit XML: one ``<testsuite>`` per task run, one ``<testcase>`` per criterion.

Suite properties carry the task's score, verdict, status and axis scores, and each criterion's
score, weight, axis and status as ``criterion.<id>.<field>`` (the JUnit schema allows
properties on suites only). Errors (a source could not be read) are ``<failure
type="error">`` since the Jenkins JUnit schema allows no ``<error>`` inside a testcase; a
criterion the verifier could not evaluate is ``<failure type="not_evaluated">`` with its reason
(the build must not pass on what was never checked), and its suite says ``verification
incomplete``. In a scored run the failure text says only the score: details and evidence stay
in the JSON report.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._display import escape
from .._record import UNCOUNTED, counts_against
from .._results import Report
from .._safeparse import strict_json_value
from .._secrets import redact_json
from ._json_report import write_atomic
from ._outputs import write_chunks_atomic

if TYPE_CHECKING:
    from ._build import LightReport


def _t(seconds: float | None) -> str:
    return f"{(seconds or 0.0):.3f}"


def _props(parent: ET.Element, values: dict[str, Any]) -> None:
    props = ET.SubElement(parent, "properties")
    for name, value in values.items():
        if value is not None:
            ET.SubElement(props, "property", name=name, value=str(value))


def _against(c: dict[str, Any]) -> bool:
    """A case that counts against its task (:func:`~pytest_verial._results.counts_against`)."""
    return counts_against(c["status"], c.get("points"), c.get("met"), c.get("not_evaluated"))


def _failing(c: dict[str, Any]) -> bool:
    """A case written as a ``<failure>``: against its task, or not evaluated."""
    return _against(c) or c.get("not_evaluated") is not None


def build_junit(report: dict[str, Any], scored: bool) -> ET.Element:
    """The ``<testsuites>`` element for a report (its JSON form)."""
    root = ET.Element("testsuites", name="pytest-verial", time=_t(report["session"]["duration"]))
    total = failures = 0
    for run in report["benchmark_runs"]:
        for task in run["task_runs"]:
            # a scored benchmark run is elided on its own
            fails = _task_suite(root, task, scored or bool(run.get("scored")))
            total, failures = total + len(task["criterion_runs"]), failures + fails
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    xml_safe(root)
    return root


def _task_suite(root: ET.Element, task: dict[str, Any], scored: bool) -> int:
    """A task run's ``<testsuite>`` (its figures as properties, a case per criterion run),
    added to ``root``; its number of failures."""
    cases = task["criterion_runs"]
    fails = sum(1 for c in cases if _failing(c))
    suite = ET.SubElement(
        root,
        "testsuite",
        name=task["id"],
        tests=str(len(cases)),
        failures=str(fails),
        errors="0",
        skipped=str(sum(1 for c in cases if c["status"] in UNCOUNTED)),
        time=_t(sum(c["duration"] or 0.0 for c in cases)),
    )
    _props(suite, _task_props(task))
    for c in cases:
        _case(suite, task["id"], c, scored)
    return fails


#: the fields of each criterion run written as its task's suite properties
_CASE_PROPS = ("score", "weight", "axis", "status", "assert", "points", "met", "not_evaluated")


def _task_props(task: dict[str, Any]) -> dict[str, Any]:
    """A task suite's properties: its figures, its axes, each criterion run's figures."""
    cases = task["criterion_runs"]
    props: dict[str, Any] = {
        "score": task["score"],
        "verdict": task["verdict"],
        "status": task["status"],
        "verification": task.get("verification", "complete"),
        "errors": sum(1 for c in cases if c["status"] == "error"),
        "not_evaluated": len(task.get("not_evaluated") or []) or None,
        "benchmark": task["benchmark"],
        "run": task["run"],
        # a task scored by points (None, so left out, for a weighted task)
        "points_earned": task.get("points_earned"),
        "points_possible": task.get("points_possible"),
        "penalties_applied": ",".join(task.get("penalties_applied") or []) or None,
    }
    for axis, value in task["axes"].items():
        props[f"axis.{axis}.score"] = value["score"]
        props[f"axis.{axis}.weight"] = value["weight"]
        props[f"axis.{axis}.points_earned"] = value.get("points_earned")
        props[f"axis.{axis}.points_possible"] = value.get("points_possible")
    for c in cases:
        for field in _CASE_PROPS:
            props[f"criterion.{c['criterion_id']}.{field}"] = c.get(field)
    return props


def _case(suite: ET.Element, classname: str, c: dict[str, Any], scored: bool) -> None:
    """A criterion run's ``<testcase>``: a failure when not evaluated or against its task
    (details and evidence unless ``scored``), skipped when not counted."""
    case = ET.SubElement(
        suite, "testcase", name=c["criterion_id"], classname=classname, time=_t(c["duration"])
    )
    status = c["status"]
    if c.get("not_evaluated") is not None:
        ET.SubElement(
            case,
            "failure",
            message=f"not evaluated: {c['not_evaluated']} (the verifier could not "
            "check it; not the agent's failure)",
            type="not_evaluated",
        )
    elif _against(c):
        score = c["score"] if c["score"] is not None else 0.0
        penalty = f"penalty applied ({c.get('points')} points)" if c.get("met") else ""
        message = (
            f"criterion {penalty or status} (score {score:.2f})"
            if scored
            else "; ".join(x for x in (penalty, c["details"] or "") if x) or f"criterion {status}"
        )
        failure = ET.SubElement(
            case, "failure", message=message, type="error" if status == "error" else status
        )
        if not scored and c["evidence"]:
            evidence = strict_json_value(c["evidence"])
            failure.text = json.dumps(evidence, indent=2, default=str)
    elif status in UNCOUNTED:
        reason = status if scored else (c["details"] or status)
        ET.SubElement(case, "skipped", message=reason)


def xml_safe(root: ET.Element) -> None:
    """Escape, in place, what XML 1.0 cannot hold or a CI page would act on (ESC, NUL, bidi
    overrides, lone surrogates...) in every attribute and text: ``\x1b``, ``\u202e``.

    Ids are clean (the loader refuses such characters), but file names, run labels and the
    values quoted in details and evidence come from the sandbox (pytest_verial._display).
    """
    for element in root.iter():
        for key, value in element.attrib.items():
            element.set(key, escape(value))
        if element.text:
            element.text = escape(element.text, keep="\n\t")
        if element.tail:
            element.tail = escape(element.tail, keep="\n\t")


_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n'


def write_junit(path: Path, report: Report, scored: bool) -> None:
    """Write the task-level JUnit file atomically, with every secret masked (:mod:`.._secrets`)."""
    root = build_junit(redact_json(report.to_json()), scored)
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode", xml_declaration=False)
    write_atomic(path, _HEAD + text + "\n")


def write_junit_stream(path: Path, light: LightReport, scored: bool) -> None:
    """:func:`write_junit` of the whole report, byte for byte, made one task run at a time
    from ``light`` (:class:`~pytest_verial.reporting._build.LightReport`): each task run's
    ``<testsuite>`` built from its criterion runs' JSON form, masked, indented as
    ``ElementTree.indent`` indents it inside the whole tree, written and
    dropped. The totals on ``<testsuites>`` come from the light report's figures: its task
    runs' counts (every criterion run) and the failing criterion runs it keeps."""
    report = light.report
    runs = [
        (r, run, t, task)
        for r, run in enumerate(report.benchmark_runs)
        for t, task in enumerate(run.task_runs)
    ]
    if not runs:  # nothing to stream: ``<testsuites ... />``
        write_junit(path, report, scored)
        return
    total = sum(
        sum(task.counts.model_dump().values()) - task.counts.not_evaluated for *_, task in runs
    )
    failures = sum(
        1
        for *_, task in runs
        for c in task.criterion_runs
        if c.against or c.not_evaluated is not None
    )
    root = ET.Element(
        "testsuites",
        name="pytest-verial",
        time=_t(report.session.duration),
        tests=str(total),
        failures=str(failures),
        errors="0",
    )
    root.text = "\n  "
    xml_safe(root)
    start = ET.tostring(root, encoding="unicode").partition(">")[0] + ">"

    def chunks() -> Iterator[str]:
        yield _HEAD + start + "\n  "
        for n, (r, run, t, task) in enumerate(runs):
            data = redact_json(light.task_json(r, t, task))
            holder = ET.Element("testsuites")
            _task_suite(holder, data, scored or run.scored)
            xml_safe(holder)
            ET.indent(holder)  # the suite's own indent is the same at any place in the tree
            suite = holder[0]
            suite.tail = None
            yield ET.tostring(suite, encoding="unicode")
            yield "\n  " if n + 1 < len(runs) else "\n"
        yield "</testsuites>\n"

    write_chunks_atomic(path, chunks())
