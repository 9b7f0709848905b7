"""Issue 9: no run scored against nothing, and nothing read outside a task folder.

A run directory holding no folder for any selected task run of a benchmark is a usage error
before anything runs (exit 4, one line), at ``-n 0`` and ``-n 2``; a task run whose folder
alone is missing is an error naming it; a symbolic link leading out of a task folder makes
every source reading it an error naming the link.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from core_support import (
    Project,
    QuietHandler,
    criterion_runs,
    local_http,
    run_subprocess,
    shared_project,
)


def _length(cid: str = "c") -> dict[str, Any]:
    return {"id": cid, "assertion": {"assert": "output-length", "min_chars": 1}}


def _tasks(*ids: str) -> dict[str, Any]:
    return {"benchmark": "b", "tasks": [{"id": t, "criteria": [_length()]} for t in ids]}


def _usage(path: Path, *args: str) -> str:
    code, output = run_subprocess(path, *args)
    assert code == 4, output[-2000:]
    assert "Traceback" not in output and "INTERNALERROR" not in output, output[-2000:]
    lines = [line for line in output.splitlines() if "no sandbox for any task run" in line]
    assert len(lines) == 1, output[-2000:]
    # nothing ran: no summary of task runs cancelled before they started buries the error
    assert "verial summary" not in output and "[cancelled]" not in output, output[-2000:]
    return lines[0]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_no_sandbox_beside_the_benchmark_is_a_usage_error(project: Project, workers: str) -> None:
    project.benchmark("b", _tasks("t1", "t2"))
    line = _usage(project.path, "-n", workers)
    assert "sandbox (the default sandbox/ beside it) does not exist" in line
    assert "expected task folders t1/, t2/" in line


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_parent_of_the_runs_is_a_usage_error(project: Project, workers: str) -> None:
    project.benchmark("b", _tasks(*(f"t{i:02}" for i in range(12))))
    project.sandbox("t00", {"output.md": "hi"}, run="runs/r1")
    line = _usage(project.path, "-n", workers, "--verial-run", "runs")
    assert "holds none of its task folders" in line and str(project.path / "runs") in line
    assert "t00/, t01/, t02/, t03/, t04/ ... and 7 more" in line


@pytest.mark.parametrize("workers", ["0", "2"])
def test_an_empty_folder_is_a_usage_error(project: Project, workers: str) -> None:
    project.benchmark("b", _tasks("t1"))
    (project.path / "empty").mkdir()
    assert "--verial-run" in _usage(project.path, "-n", workers, "--verial-run", "empty")


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_selection_whose_task_folders_are_all_missing_is_a_usage_error(
    project: Project, workers: str
) -> None:
    project.benchmark("b", _tasks("t1", "t2"))
    project.sandbox("t1", {"output.md": "hi"})
    assert "expected task folders t2/" in _usage(project.path, "-n", workers, "-k", "t2")


def test_entity_bound_tasks_expect_bracketed_folders(project: Project) -> None:
    project.benchmark(
        "b",
        {
            "benchmark": "b",
            "tasks": [
                {"id": "t", "entities": [{"id": "e1"}, {"id": "e2"}], "criteria": [_length()]}
            ],
        },
    )
    project.sandbox("t", {"output.md": "hi"})
    assert "expected task folders t[e1]/, t[e2]/" in _usage(project.path, "-n", "0")


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_missing_task_folder_scores_its_task_run_as_errors(
    project: Project, workers: str
) -> None:
    project.benchmark(
        "b",
        {
            "benchmark": "b",
            "tasks": [
                {"id": "t1", "criteria": [_length()]},
                {"id": "t2", "criteria": [_length("a"), _length("b")]},
            ],
        },
    )
    project.sandbox("t1", {"output.md": "hi"})
    code, output = run_subprocess(project.path, "-n", workers, "--verial-report", "report.json")
    assert code == 1, output[-2000:]
    runs = criterion_runs(project.read_report())
    assert runs["b.verial.yaml::t1::c"]["status"] == "passed"
    for cid in ("a", "b"):
        run = runs[f"b.verial.yaml::t2::{cid}"]
        assert (run["status"], run["score"]) == ("error", 0.0)
        assert run["details"] == (
            f"no sandbox folder for task run 't2': {project.path / 'sandbox' / 't2'} does not exist"
        )


def test_a_missing_source_folder_stays_an_empty_source(project: Project) -> None:
    project.benchmark("b", _tasks("t1"))
    project.sandbox("t1", {"portal/.keep": ""})
    code, output = run_subprocess(project.path, "--verial-report", "report.json")
    run = criterion_runs(project.read_report())["b.verial.yaml::t1::c"]
    assert run["status"] == "failed", output[-2000:]


# -- confinement -------------------------------------------------------------------------------

SOURCES: dict[str, tuple[dict[str, Any], str]] = {
    # source: (assertion, path under the task folder that is made a link out)
    "output": ({"assert": "output-length", "min_chars": 1}, "output.md"),
    "voice": ({"assert": "voice-transcript", "contains": ["hi"]}, "voice/turns.json"),
    "portal-json": (
        {
            "assert": "portal-state-match",
            "correlate_by": {"resource": "claims"},
            "assertions": [{"path": "id", "expected": "1"}],
        },
        "portal/claims.json",
    ),
    "portal-sqlite": (
        {
            "assert": "portal-state-match",
            "correlate_by": {"resource": "claims"},
            "assertions": [{"path": "id", "expected": "1"}],
        },
        "portal.sqlite",
    ),
    "files": ({"assert": "sftp-file-present", "pattern": "**"}, "sftp/a.json"),
    "files-folder": ({"assert": "sftp-file-present", "pattern": "**"}, "sftp"),
    "fhir": (
        {"assert": "fhir-resource-state", "resource_type": "Patient", "fields": []},
        "fhir/p.json",
    ),
    "fhir-folder": (
        {"assert": "fhir-resource-state", "resource_type": "Patient", "fields": []},
        "fhir",
    ),
    "hl7": (
        {"assert": "hl7-structural", "fields": [{"path": "MSH.9", "expected": "ADT^A01"}]},
        "hl7_outbound/m.hl7",
    ),
    "hl7-nested": (
        {"assert": "hl7-structural", "fields": [{"path": "MSH.9", "expected": "ADT^A01"}]},
        "hl7_outbound/deep",
    ),
    "x12": ({"assert": "x12-response", "transaction": "271"}, "x12/r.x12"),
}


def _outside(base: Path, kind: str) -> Path:
    """A target outside the task folder of the kind the link stands for."""
    outside = base / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "p.json").write_text(json.dumps({"resourceType": "Patient", "id": "p"}))
    (outside / "a.json").write_text("{}")
    (outside / "m.hl7").write_text("MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\r")
    if kind.endswith(("folder", "nested")):
        return outside
    return outside / "p.json"


def _link_out_of_each_task_folder(path: Path) -> None:
    """A task per source, each task folder holding a link out of it, scored in one session;
    its output kept in ``output.txt``."""
    project = Project(path)
    tasks = [
        {"id": f"t-{name}", "criteria": [{"id": "c", "assertion": assertion}]}
        for name, (assertion, _) in SOURCES.items()
    ]
    project.benchmark("b", {"benchmark": "b", "tasks": tasks})
    for name, (_, link) in SOURCES.items():
        task = project.sandbox(f"t-{name}", {"keep.txt": ""})
        target = _outside(path, name)
        (task / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, task / link)
    _, output = run_subprocess(path, "--verial-report", "report.json")
    (path / "output.txt").write_text(output, encoding="utf-8")


@pytest.fixture(scope="module")
def linked_out(shared_base: Path) -> Path:
    """The project of ``_link_out_of_each_task_folder``, scored once for every source's test
    below (each reads its own task's criterion run) and every xdist worker."""
    return shared_project(shared_base, "links-out", _link_out_of_each_task_folder)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_link_out_of_the_task_folder_is_refused(linked_out: Path, name: str) -> None:
    _, link = SOURCES[name]
    task = linked_out / "sandbox" / f"t-{name}"
    target = os.readlink(task / link)
    output = (linked_out / "output.txt").read_text(encoding="utf-8")
    run = criterion_runs(Project(linked_out).read_report())[f"b.verial.yaml::t-{name}::c"]
    assert run["status"] == "error", (run, output[-2000:])
    # the files of the sandbox named relative to its task folder (the link's target is not in it)
    said = f"{Path(link).as_posix()}: a symbolic link leading outside the task folder; refused"
    assert said in run["details"], run["details"]
    assert str(task) not in run["details"] and str(target) not in run["details"]


def test_links_inside_the_task_folder_and_a_linked_run_folder_are_read(project: Project) -> None:
    project.benchmark("b", _tasks("t"))
    real = project.sandbox("t", {"drafts/answer.md": "hi"}, run="real-run")
    os.symlink("drafts/answer.md", real / "output.md")
    os.symlink(project.path / "real-run", project.path / "latest")
    code, output = run_subprocess(
        project.path, "--verial-run", "latest", "--verial-report", "report.json"
    )
    assert code == 0, output[-2000:]
    assert criterion_runs(project.read_report())["b.verial.yaml::t::c"]["status"] == "passed"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_two_files_with_one_task_id_reading_one_folder_warn(project: Project, workers: str) -> None:
    project.benchmark("a", _tasks("t"))
    project.benchmark("b", _tasks("t"))
    project.sandbox("t", {"output.md": "hi"})
    code, output = run_subprocess(project.path, "-n", workers, "--verial-report", "report.json")
    assert code == 0, output[-2000:]
    message = (
        "task run 't' of a.verial.yaml and b.verial.yaml reads the same sandbox folder "
        f"{project.path / 'sandbox' / 't'}"
    )
    assert f"VerialWarning: {message}" in output
    warnings = project.read_report()["session"]["warnings"]
    assert [w for w in warnings if w.startswith(message)], warnings


@pytest.mark.parametrize(
    ("run_yaml", "says"),
    [
        ("tasks: {t: {cost: -1}}", "field 'tasks.t.cost'"),
        ("scored: maybe", "field 'scored'"),
        ("sources: {files: soon}", "field 'sources.files'"),
    ],
)
def test_bad_top_level_run_yaml_fields_are_one_line(
    project: Project, run_yaml: str, says: str
) -> None:
    project.benchmark("b", _tasks("t"))
    project.sandbox("t", {"output.md": "hi"})
    (project.path / "sandbox" / "run.yaml").write_text(run_yaml, encoding="utf-8")
    code, output = run_subprocess(project.path)
    assert code != 0 and "Traceback" not in output, output[-2000:]
    lines = [line for line in output.splitlines() if says in line]
    assert lines and str(project.path / "sandbox" / "run.yaml") in lines[0], output[-2000:]


@pytest.fixture
def judge_server() -> Iterator[tuple[str, list[str]]]:
    """An OpenAI-compatible judge on 127.0.0.1 rating every principle 5; it records the
    prompts it is sent."""
    prompts: list[str] = []
    reply = {"ratings": [{"principle": 1, "rating": 5, "reasoning": "clear"}], "confidence": 0.9}
    body = json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "judge-model",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": json.dumps(reply)},
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
    ).encode()

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompts.append(json.dumps(request["messages"]))
            self.reply(body, "application/json")

    with local_http(Handler) as url:
        yield f"{url}/v1", prompts


def test_the_judge_file_target_is_confined_too(
    project: Project, judge_server: tuple[str, list[str]]
) -> None:
    url, prompts = judge_server

    def judged(cid: str, path: str) -> dict[str, Any]:
        assertion = {
            "assert": "llm-rubric",
            "target": "file",
            "path": path,
            "principles": ["clear"],
        }
        return {"id": cid, "assertion": assertion}

    criteria = [
        judged("out", "notes/letter.md"),
        judged("alias", "notes/alias.md"),
        judged("none", "notes/none.md"),
    ]
    project.benchmark("b", {"benchmark": "b", "tasks": [{"id": "t", "criteria": criteria}]})
    task = project.sandbox("t", {"notes/inside.md": "a letter"})
    (project.path / "secret.md").write_text("the answer")
    os.symlink(project.path / "secret.md", task / "notes" / "letter.md")
    os.symlink("inside.md", task / "notes" / "alias.md")
    code, output = run_subprocess(
        project.path,
        *("--verial-report", "report.json", "--verial-judge-model", "judge-model"),
        *("--verial-judge-base-url", url, "--verial-judge-cache-dir", "off"),
    )
    runs = criterion_runs(project.read_report())
    out, alias, none = (runs[f"b.verial.yaml::t::{c}"] for c in ("out", "alias", "none"))
    assert out["status"] == "error", (out, output[-2000:])
    assert out["details"] == (
        "notes/letter.md: a symbolic link leading outside the task folder; refused"
    ), out["details"]
    assert alias["status"] == "passed", (alias, output[-2000:])  # a link inside is read
    assert none["details"] == "nothing to judge: the file notes/none.md is missing or empty"
    assert len(prompts) == 1 and "a letter" in prompts[0] and "the answer" not in prompts[0]


def test_the_link_blamed_is_the_one_leaving_the_task_folder(project: Project) -> None:
    fhir = {"assert": "fhir-resource-state", "resource_type": "Patient", "fields": []}
    project.benchmark(
        "b",
        {"benchmark": "b", "tasks": [{"id": "t", "criteria": [{"id": "c", "assertion": fhir}]}]},
    )
    patient = {"resourceType": "Patient", "id": "p"}
    real_task = project.sandbox("t", {"fhir/p.json": patient}, run="real-run")
    elsewhere = project.path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "p.json").write_text("{}")
    os.symlink(project.path / "real-run", project.path / "latest")  # a linked run folder is fine
    os.symlink(elsewhere, real_task / "fhir" / "more")
    task = project.path / "latest" / "t"
    args = ("--verial-run", "latest", "--verial-report", "report.json")
    code, output = run_subprocess(project.path, *args)
    run = criterion_runs(project.read_report())["b.verial.yaml::t::c"]
    assert run["status"] == "error", (run, output[-2000:])
    assert "fhir/more: a symbolic link leading outside the task folder; refused" in run["details"]
    assert str(elsewhere) not in run["details"]
    assert str(task) not in run["details"] and str(real_task) not in run["details"]
    (real_task / "fhir" / "more").unlink()  # the folder read through the linked run folder
    code, output = run_subprocess(project.path, *args)
    assert code == 0, output[-2000:]
    assert criterion_runs(project.read_report())["b.verial.yaml::t::c"]["status"] == "passed"
