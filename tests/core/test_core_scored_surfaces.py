"""No surface that renders a scored run shows its rubric (issue 18, class 2).

Two real sessions over one benchmark slug: a scored one whose labels, expected values and
sandbox text are sentinels, and an unscored one with other words. Every command that renders a
report (``html`` with the scored report as the report and as the BASE, ``compare`` text and
``--json``, ``show`` at each level, ``report``, ``feedback``) and every session output that
renders one (terminal with ``--verial-baseline`` naming the scored report, Markdown, the step
summary, the in-session HTML) is read back: no sentinel may appear. The JSON report keeps them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from core_support import Project, run_subprocess

from pytest_verial.cli import main

SENTINELS = ("zqsclabel", "zqscexpected", "zqscfield", "zqscsandbox", "zqscregex")


def _project(path: Path, words: dict[str, str], scored: bool) -> Project:
    path.mkdir()
    project = Project(path)
    project.benchmark(
        "b",
        {
            "benchmark": "surfaces",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "label": f"Output names {words['label']}",
                            "assertion": {
                                "assert": "output-match",
                                "contains": [words["expected"]],
                            },
                        },
                        {
                            "id": "field",
                            "assertion": {
                                "assert": "output-match",
                                "fields": [{"path": "patient.id", "expected": words["field"]}],
                            },
                        },
                        {
                            "id": "pattern",
                            "assertion": {"assert": "output-match", "regex": [words["regex"]]},
                        },
                    ],
                }
            ],
        },
    )
    note = {"patient": {"id": words["sandbox"]}, "note": f"seen {words['sandbox']}"}
    project.sandbox("t", {"output.json": json.dumps(note)})
    project.run_yaml({"agent": "a", "scored": True} if scored else {"agent": "a"})
    return project


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """scored.json (sentinels) and plain.json (other words), each from a real session."""
    root = tmp_path_factory.mktemp("surfaces")
    plain = _project(
        root / "plain",
        {
            "label": "plainlabel",
            "expected": "plainexpected",
            "field": "plainfield",
            "sandbox": "plainsandbox",
            "regex": "plainregex-[0-9]+",
        },
        scored=False,
    )
    code, output = run_subprocess(plain.path, "-n", "0", "--verial-report", "plain.json")
    assert code == 1, output[-2000:]
    scored = _project(
        root / "scored",
        {
            "label": "zqsclabel",
            "expected": "zqscexpected",
            "field": "zqscfield",
            "sandbox": "zqscsandbox",
            "regex": "zqscregex-[0-9]+",
        },
        scored=True,
    )
    summary = scored.path / "step.md"
    code, output = run_subprocess(
        scored.path,
        "-n",
        "0",
        "-rA",
        "-vv",
        "--verial-report",
        "scored.json",
        "--verial-html",
        "session.html",
        "--verial-markdown",
        "summary.md",
        f"--verial-baseline={plain.path / 'plain.json'}",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 1, output[-2000:]
    (scored.path / "terminal.txt").write_text(output, encoding="utf-8")
    # and a session whose baseline is the scored report: its deltas are rendered too
    code, output = run_subprocess(
        plain.path,
        "-n",
        "0",
        "-vv",
        f"--verial-baseline={scored.path / 'scored.json'}",
    )
    assert code == 1, output[-2000:]
    (scored.path / "baseline-terminal.txt").write_text(output, encoding="utf-8")
    record = (scored.path / "scored.json").read_text(encoding="utf-8")
    assert all(s in record for s in SENTINELS)  # the JSON report is the record: it keeps them
    return {
        "scored": scored.path / "scored.json",
        "plain": plain.path / "plain.json",
        "dir": scored.path,
    }


def _leaks(text: str) -> list[str]:
    return [s for s in SENTINELS if s in text]


@pytest.mark.parametrize(
    "name", ["terminal.txt", "baseline-terminal.txt", "session.html", "summary.md", "step.md"]
)
def test_session_outputs_of_a_scored_run_hold_no_sentinel(
    reports: dict[str, Path], name: str
) -> None:
    text = (reports["dir"] / name).read_text(encoding="utf-8")
    assert text.strip(), name
    assert _leaks(text) == [], name


def _verial(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("as_base", [False, True], ids=["report", "base"])
def test_verial_html_elides_a_scored_report_and_a_scored_base(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], as_base: bool
) -> None:
    pair = (reports["plain"], reports["scored"]) if as_base else (reports["scored"],)
    code, output = _verial(capsys, "html", *map(str, pair), "-o", str(tmp_path / "r.html"))
    assert code == 0, output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert _leaks(page) == []
    if as_base:  # the unscored report itself is shown whole
        assert "plainlabel" in page and "plainsandbox" in page


@pytest.mark.parametrize(
    "argv",
    [
        ("compare", "{plain}", "{scored}"),
        ("compare", "{scored}", "{plain}"),
        ("show", "{scored}"),
        ("show", "{scored}", "t"),
        ("show", "{scored}", "t", "criterion-1"),
        ("show", "{scored}", "t", "field"),
        ("show", "{scored}", "t", "pattern"),
        ("report", "{scored}"),
    ],
    ids=lambda a: "-".join(a).replace("{", "").replace("}", ""),
)
def test_commands_that_print_a_scored_run_print_no_sentinel(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    args = [a.format(plain=reports["plain"], scored=reports["scored"]) for a in argv]
    code, output = _verial(capsys, *args)
    assert code in (0, 1), output
    assert output.strip()
    assert _leaks(output) == []


def test_compare_json_holds_no_sentinel(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp.json"
    code, output = _verial(
        capsys, "compare", str(reports["plain"]), str(reports["scored"]), "--json", str(out)
    )
    assert code in (0, 1), output
    assert _leaks(out.read_text(encoding="utf-8")) == []


def test_feedback_refuses_a_scored_run_unless_told_to_show_the_rubric(
    reports: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = _verial(capsys, "feedback", str(reports["scored"]), "t")
    assert code == 2
    assert output.count("\n") == 1 and "scored run" in output and "--show-rubric" in output
    assert _leaks(output) == []
    code, output = _verial(capsys, "feedback", str(reports["scored"]), "t", "--show-rubric")
    assert code == 0, output
    assert "zqscexpected" in output  # the user asked for the rubric
    code, output = _verial(capsys, "feedback", str(reports["plain"]), "t")
    assert code == 0 and "plainexpected" in output


def test_junit_elides_a_scored_benchmark_run_on_its_own(reports: dict[str, Path]) -> None:
    """A report whose session is not marked scored (runs merged from sessions, one scored by
    its run.yaml) still keeps each scored run's details out of the JUnit file."""
    import xml.etree.ElementTree as ET

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.reporting._json_report import load_report
    from pytest_verial.reporting._junit import build_junit

    report = load_report(str(reports["scored"]))
    session = report.session.model_copy(update={"scored": False})
    data = report.model_copy(update={"session": session}).to_json()
    text = ET.tostring(build_junit(data, scored=False), encoding="unicode")
    assert "criterion failed" in text and _leaks(text) == []
