"""Sandbox text with control characters is shown safely on every surface (issue 18, class 6).

One real session scores a sandbox whose text holds ESC/CSI sequences, C0 and C1 controls, CR,
bidi overrides and isolates, a bare URL and a ``www.`` name. Every surface that shows it is read
back: the terminal (``-vv -rA``), the task JUnit and pytest's ``--junitxml``, the Markdown
summary and the CI step summary, the in-session and ``verial html`` pages, ``verial feedback``,
``show`` (task and criterion), ``report`` and ``compare``. No control character may be on any of
them, and on the Markdown pages no ``://`` or ``www.`` may be left for an autolinker.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from core_support import HOSTILE, LINKS, Project, bad_characters, run_subprocess

from pytest_verial.cli import main

#: every test reads the one session of the module fixture ``session``: in one xdist group it is
#: scored once, not once on each worker that runs a test of the module
pytestmark = pytest.mark.xdist_group("control-chars")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("controls")
    project = Project(root)
    project.benchmark(
        "b",
        {
            "benchmark": "controls",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "id": "note",
                            "label": "The note is calm",
                            "assertion": {
                                "assert": "output-match",
                                "fields": [{"path": "note", "expected": "calm"}],
                            },
                        },
                        {
                            "id": "phrase",
                            "assertion": {"assert": "output-match", "contains": ["calm"]},
                        },
                    ],
                }
            ],
        },
    )
    project.sandbox("t", {"output.json": json.dumps({"note": HOSTILE})})
    project.run_yaml({"agent": "a"})
    code, output = run_subprocess(
        root,
        "-n",
        "0",
        "-vv",
        "-rA",
        "--verial-report",
        "report.json",
        "--verial-junit",
        "task.xml",
        "--junitxml",
        "pytest.xml",
        "--verial-markdown",
        "summary.md",
        "--verial-html",
        "page.html",
        env={"GITHUB_STEP_SUMMARY": str(root / "step.md")},
    )
    assert code == 1, output[-2000:]
    (root / "terminal.txt").write_text(output, encoding="utf-8", newline="")
    assert "RED" in output  # the sandbox text is shown, escaped
    return root


def _page_strings(page: str) -> str:
    """Every string of an HTML page's embedded data, decoded (what textContent will show)."""
    match = re.search(r'<script[^>]*id="verial-data"[^>]*>(.*?)</script>', page, re.S)
    assert match, page[:500]
    data = json.loads(match.group(1))
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k)
                walk(v)

    walk(data)
    return "\n".join(out)


@pytest.mark.parametrize(
    "name", ["terminal.txt", "task.xml", "pytest.xml", "summary.md", "step.md", "page.html"]
)
def test_session_surfaces_hold_no_control_character(session: Path, name: str) -> None:
    with open(session / name, encoding="utf-8", newline="") as f:  # CR kept as it is
        text = f.read()
    if name.endswith(".html"):
        text = _page_strings(text)
    assert "RED" in text, name  # the hostile text did reach this surface
    assert bad_characters(text) == [], name
    if name.endswith(".md"):
        assert LINKS.findall(text) == [], name


def _verial(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize(
    "argv",
    [
        ("feedback", "{r}", "t"),
        ("show", "{r}"),
        ("show", "{r}", "t"),
        ("show", "{r}", "t", "note"),
        ("show", "{r}", "t", "phrase"),
        ("report", "{r}"),
        ("compare", "{r}", "{r}"),
    ],
    ids=lambda a: "-".join(a).replace("{r}", "R"),
)
def test_commands_print_no_control_character(
    session: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, output = _verial(capsys, *(a.format(r=session / "report.json") for a in argv))
    assert code in (0, 1), output
    assert bad_characters(output) == []
    if argv[0] != "compare" and argv[-1] != "phrase":
        assert "RED" in output


@pytest.mark.parametrize("with_base", [False, True], ids=["run-page", "compare-page"])
def test_verial_html_page_holds_no_control_character(
    session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], with_base: bool
) -> None:
    out = tmp_path / "p.html"
    report = str(session / "report.json")
    code, output = _verial(capsys, "html", report, *([report] if with_base else []), "-o", str(out))
    assert code == 0, output
    page = out.read_text(encoding="utf-8")
    if with_base:  # the two side by side: a static page, its text in the markup
        text = html.unescape(re.sub(r"<[^>]+>", " ", page.split("<main>", 1)[1]))
    else:  # the run page: its data embedded as JSON
        text = _page_strings(page)
    assert "RED" in text and bad_characters(text) == []
