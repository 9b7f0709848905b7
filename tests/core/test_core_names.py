"""One name per run (issue 34): run.yaml's ``agent``, else the run folder's label, the same in
the terminal summary, ``verial show``, ``verial compare``, the Markdown summary, the HTML page
and ``verial runs``; criteria without an axis read ``(no axis)`` everywhere, never
``__default__``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from core_support import Project, voice_criterion

from pytest_verial.cli import main

GREETS = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}]}


def _project(path: Path) -> Project:
    project = Project(path)
    project.benchmark(
        "greet",
        {
            "benchmark": "greet",
            "version": 1,
            "tasks": [
                {
                    "id": "t1",
                    "criteria": [
                        voice_criterion("hello", contains=["good morning"]),
                        voice_criterion("bye", contains=["goodbye"], axis="manners"),
                    ],
                }
            ],
        },
    )
    project.sandbox("t1", GREETS, run="good-agent")
    project.run_yaml({"agent": "front-office-v7"}, run="good-agent")
    project.sandbox("t1", GREETS, run="plain")  # no run.yaml: its label is its name
    return project


def test_a_run_is_named_by_its_agent_on_every_surface(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path)
    result = pytester.runpytest(
        "--verial-run",
        "good-agent",
        "--verial-report",
        "report.json",
        "--verial-markdown",
        "summary.md",
        "--verial-html",
        "report.html",
        "--verial-store",
        f"sqlite:///{pytester.path / 'store.db'}",
        "-p",
        "no:cacheprovider",
    )
    out = result.stdout.str()
    assert "benchmark run greet@1 on front-office-v7 (greet.verial.yaml)" in out
    assert "(no axis) 1.00 (w1)  manners 0.00 (w1)" in out
    assert "on good-agent" not in out
    markdown = (pytester.path / "summary.md").read_text()
    assert "on front-office-v7" in markdown and "(no axis) 1.00" in markdown
    assert "__default__" not in markdown
    page = (pytester.path / "report.html").read_text()
    assert "r.agent || r.label" in page and '"(no axis)"' in page

    report = str(pytester.path / "report.json")
    assert main(["show", report]) == 0
    assert "on front-office-v7" in capsys.readouterr().out
    assert main(["show", report, "t1"]) == 0
    shown = capsys.readouterr().out
    assert "on front-office-v7" in shown
    assert "(no axis) 1.00 (w1)" in shown and "__default__" not in shown
    assert main(["compare", report, report, "--json", str(pytester.path / "c.json")]) == 0
    compared = capsys.readouterr().out
    assert "front-office-v7 -> front-office-v7: ok" in compared
    delta = json.loads((pytester.path / "c.json").read_text())["benchmark_runs"][0]
    assert delta["base_name"] == delta["head_name"] == "front-office-v7"
    assert delta["base_runs"] == ["good-agent"]  # the folder label is still recorded
    store = f"sqlite:///{pytester.path / 'store.db'}"
    assert main(["runs", "--json", "--store", store]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["front-office-v7"]


def test_a_run_folder_without_an_agent_is_named_by_its_label(pytester: pytest.Pytester) -> None:
    _project(pytester.path)
    result = pytester.runpytest(
        "--verial-run", "plain", "--verial-store", "none", "-p", "no:cacheprovider"
    )
    result.stdout.fnmatch_lines(["benchmark run greet@1 on plain (greet.verial.yaml)"])
