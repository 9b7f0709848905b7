"""What users read (issue 11): the terminal summary, ``verial show`` and the Markdown summary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from core_support import REPO, run_subprocess

from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.reporting._json_report import load_report
from pytest_verial.reporting._markdown import markdown

EXAMPLES = REPO / "example_benchmarks"


@pytest.fixture(scope="module")
def flawed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The example benchmarks scored on the flawed run: the report and pytest's output."""
    out = tmp_path_factory.mktemp("flawed")
    report = out / "report.json"
    code, output = run_subprocess(
        REPO,
        str(EXAMPLES),
        "-p",
        "no:cacheprovider",
        "--tb=short",
        "--verial-run",
        str(EXAMPLES / "runs" / "flawed-agent"),
        "--verial-report",
        str(report),
        "--verial-markdown",
        str(out / "summary.md"),
    )
    assert code == 1, output[-3000:]
    return report, output


def _summary(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "verial summary" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary" in line)
    return lines[start + 1 : end]


def test_each_failing_criterion_is_shown_once(flawed: tuple[Path, str]) -> None:
    """pytest's FAILURES section shows each failure in full; the summary does not repeat it."""
    _, output = flawed
    # (pytest's short test summary, one line per failure, is its index, not a second showing)
    body = output.split("short test summary info")[0]
    assert body.count("criterion 'summary-values' (output-match) failed") == 1
    assert "38 failing criteria: details in the FAILURES section above" in output


def test_summary_lines_fit_the_width_and_have_no_trailing_spaces(
    flawed: tuple[Path, str],
) -> None:
    _, output = flawed
    summary = _summary(output)
    assert summary, output[-2000:]
    for line in summary:
        if line.startswith(("judge ", "verification cost")):
            continue  # the judge's own lines
        assert len(line) <= 80, line
        assert line == line.rstrip(), repr(line)
    # an axis entry is never split across lines
    assert "correctness 0.83 (w3)" in "\n".join(summary)


@pytest.mark.parametrize(("flag", "tables"), [("", True), ("-q", True), ("-qq", False)])
def test_quiet_shortens_the_summary(tmp_path: Path, flag: str, tables: bool) -> None:
    args = [str(EXAMPLES), "-p", "no:cacheprovider", "--tb=no"]
    args += ["--verial-run", str(EXAMPLES / "runs" / "flawed-agent")]
    code, output = run_subprocess(REPO, *args, *([flag] if flag else []))
    assert code == 1
    text = "\n".join(_summary(output))
    assert text.count("run score ") == 5  # the run lines stay at every verbosity
    assert ("task  " in text) is tables
    if flag == "":  # every failing criterion with its expected / actual rows
        assert re.search(r"provider\s+'Dr\. Rivera'\s+'Dr\. Ramirez'\s+FAIL", text)
    elif flag == "-q":  # a short line each, pointing at the criterion's file and line
        where = r"appointment-booked\s+\(example_benchmarks/prior-auth.verial.yaml:\d+\)"
        assert re.search(where, text), text
        # no expected / actual rows (the details, whole in a log, may say "(FAIL)" themselves)
        assert not re.search(r"path\s+expected\s+actual", text)
        assert not re.search(r"'Dr\. Rivera'\s+'Dr\. Ramirez'\s+FAIL", text)
    else:
        assert "failing criteria" not in text


def test_details_show_op_and_quantifier_in_one_line() -> None:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._compare import describe_field

    assert describe_field({"path": "PID.3", "op": "exists", "actual": None}) == (
        "PID.3: expected a value, got nothing"
    )
    assert (
        describe_field(
            {
                "path": "OBX[*].5",
                "op": "contains",
                "expected": "POS",
                "quantifier": "all",
                "actual": ["POS", "NEG"],
            }
        )
        == 'OBX[*].5: expected (all values) containing \'POS\', got ["POS", "NEG"]'
    )
    assert describe_field({"path": "a", "op": "absent", "actual": "x"}) == (
        "a: expected no value, got 'x'"
    )


def test_singular_and_plural(flawed: tuple[Path, str]) -> None:
    _, output = flawed
    assert "1 errors" not in output
    assert "of 1 task runs" not in output


def test_colour_on_a_tty(tmp_path: Path) -> None:
    code, output = run_subprocess(
        REPO,
        str(EXAMPLES / "prior-auth.verial.yaml"),
        "-p",
        "no:cacheprovider",
        "--color=yes",
        "--tb=no",
        "--verial-run",
        str(EXAMPLES / "runs" / "good-agent"),
    )
    assert code == 0, output[-2000:]
    assert re.search(r"\x1b\[32m[^\n]*run score 1\.000, verdict pass", output), output[-1500:]


# -- verial show ---------------------------------------------------------------------------


def test_show_benchmark_runs_task_run_and_criterion_run(
    flawed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    report, _ = flawed
    assert main(["show", str(report)]) == 0
    out = capsys.readouterr().out
    assert out.count("benchmark run ") == 5
    assert main(["show", str(report), "schedule-followup"]) == 0
    out = capsys.readouterr().out
    assert "task run example_benchmarks/prior-auth.verial.yaml::schedule-followup" in out
    assert re.search(r"appointment-booked\s+failed\s+0\.750\s+2", out)
    node = "example_benchmarks/prior-auth.verial.yaml::schedule-followup::appointment-booked"
    for args in (["schedule-followup", "appointment-booked"], [node]):
        assert main(["show", str(report), *args]) == 0
        out = capsys.readouterr().out
        assert f"criterion run {node}" in out
        assert re.search(r"provider\s+'Dr\. Rivera'\s+'Dr\. Ramirez'\s+FAIL", out)
        assert '"assertionResults"' in out  # the evidence


def test_show_names_what_it_cannot_find(
    flawed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    report, _ = flawed
    assert main(["show", str(report), "no-such-task"]) == 2
    err = capsys.readouterr().err
    assert "no task run 'no-such-task'" in err and "schedule-followup" in err
    assert main(["show", str(report), "schedule-followup", "nope"]) == 2
    assert "no criterion 'nope'" in capsys.readouterr().err
    assert main(["show", str(report) + ".missing"]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_show_withholds_details_for_a_scored_run(
    flawed: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    report, _ = flawed
    assert main(["show", "--scored", str(report), "schedule-followup", "appointment-booked"]) == 0
    out = capsys.readouterr().out
    assert "withheld" in out and "Dr. Ramirez" not in out


# -- the Markdown summary --------------------------------------------------------------------


def test_markdown_renders_as_github_tables(flawed: tuple[Path, str]) -> None:
    from markdown_it import MarkdownIt

    report, _ = flawed
    text = (report.parent / "summary.md").read_text(encoding="utf-8")
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert html.count("<table>") >= 5 + 5  # a task table and a failing-criteria table per run
    assert "<td>schedule-followup</td>" in html
    assert "<details><summary>" in html
    assert "Dr. Ramirez" in html  # expected / actual rows


def test_markdown_cells_cannot_break_the_table() -> None:
    from markdown_it import MarkdownIt

    report = load_report(_fake_report_path())
    text = markdown(report)
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script>" not in html  # escaped, shown as text
    task_table = html.split("<table>")[1].split("</table>")[0]
    rows = re.findall(r"<tr>(.*?)</tr>", task_table, re.S)
    assert [len(re.findall(r"<t[dh]\b", row)) for row in rows] == [5, 5]  # header, one task
    assert "injected" in rows[1]  # the pipe stayed inside its cell


def test_step_summary_is_appended(tmp_path: Path) -> None:
    summary = tmp_path / "step.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    code, output = run_subprocess(
        REPO,
        str(EXAMPLES / "prior-auth.verial.yaml"),
        "-p",
        "no:cacheprovider",
        "--verial-run",
        str(EXAMPLES / "runs" / "good-agent"),
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert code == 0, output[-2000:]
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "## pytest-verial" in text
    assert "GitHub step summary: " in output


def _fake_report_path() -> Path:
    import tempfile

    from pytest_verial import CriterionRun, Report, TaskRun

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._results import Generator, Session

    hostile = "a|b\n<script>x</script> | injected"
    crit = CriterionRun.scored({"criterion_id": "c"}, 0.0, False, details=hostile)
    task = TaskRun.aggregate([crit], 0.9, id="f::t", task_id="t", task_key=hostile, run="r")
    from pytest_verial import BenchmarkRun

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._results import BenchmarkInfo, RunInfo

    run = BenchmarkRun.aggregate(
        [task],
        0.9,
        running=False,
        interrupted=False,
        id="f@r",
        benchmark=BenchmarkInfo(slug="s", ref="s", file="f"),
        runs=[RunInfo(label="r", path="/r")],
    )
    report = Report(
        generator=Generator(name="pytest-verial", version="0"),
        session=Session(
            status="completed", phase="completed", started_at="x", duration=0, counts=run.counts
        ),
        benchmark_runs=[run],
    )
    path = Path(tempfile.mkdtemp()) / "r.json"
    path.write_text(json.dumps(report.to_json()), encoding="utf-8")
    return path


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_verial_version(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_verial import __version__

    with pytest.raises(SystemExit) as stop:
        main([flag])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"pytest-verial {__version__}\n"
