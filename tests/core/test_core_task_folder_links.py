"""Each task run reads only its own folder: a task folder that is a link to a sibling task's
folder (or into the run folder) is refused; a link out of the run folder stays allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_verial import Task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._config.run_folder import RunDir
from pytest_verial._errors import SourceError
from pytest_verial.sources import Sandbox


def _portal(folder: Path, status: str) -> None:
    (folder / "portal").mkdir(parents=True)
    rows = [{"request_id": "PA-1", "status": status}]
    (folder / "portal" / "prior_auth_requests.json").write_text(json.dumps(rows))


def _sandbox(run: Path, key: str) -> Sandbox:
    return Sandbox(RunDir(run), Task(id=key, criteria=[]), key)


@pytest.mark.parametrize("target", ["t1", "t1/portal/..", "."])
def test_a_task_folder_linked_into_its_run_folder_is_refused(tmp_path: Path, target: str) -> None:
    run = tmp_path / "run"
    _portal(run / "t1", "submitted")
    (run / "t2").symlink_to(target if target != "." else run, target_is_directory=True)
    with pytest.raises(SourceError) as refused:
        _sandbox(run, "t2").source("portal")
    message = str(refused.value)
    assert "t2" in message and "another task's sandbox" in message
    assert len(message.splitlines()) == 1
    assert str(tmp_path) not in message  # no path of the machine, not the link's target
    assert _sandbox(run, "t1").source("portal") is not None  # t1 itself is read


def test_a_task_folder_linked_out_of_the_run_folder_is_read(tmp_path: Path) -> None:
    elsewhere = tmp_path / "store" / "t1"
    _portal(elsewhere, "submitted")
    run = tmp_path / "run"
    run.mkdir()
    (run / "t1").symlink_to(elsewhere, target_is_directory=True)
    assert _sandbox(run, "t1").source("portal") is not None


def test_a_run_folder_reached_through_a_link_is_read(tmp_path: Path) -> None:
    real = tmp_path / "runs" / "2026-11-25"
    _portal(real / "t1", "submitted")
    (tmp_path / "runs" / "latest").symlink_to(real, target_is_directory=True)
    assert _sandbox(tmp_path / "runs" / "latest", "t1").source("portal") is not None


# -- issue 31: a link to a sibling task's folder, at any level, in a pytest session -----------
SIBLING_TEXT = "sibling-secret-7f3a"


@pytest.mark.parametrize(
    "link, target",
    [
        ("t1/portal", "../t2/portal"),  # a source folder
        ("t1/sftp/out", "../../t2/sftp/out"),  # a nested folder
        ("t1/portal/prior_auth_requests.json", "../../t2/portal/prior_auth_requests.json"),
        ("t1/output.md", "../t2/output.md"),
        ("t1/voice/turns.json", "../../t2/voice/turns.json"),
    ],
)
def test_a_link_to_a_sibling_tasks_file_is_never_scored(
    pytester: pytest.Pytester, link: str, target: str
) -> None:
    """t1's files link into t2's folder (inside the run folder): each criterion reading them is
    an error naming the link, and t2's text never reaches t1's criterion runs in the report."""
    rows = [{"request_id": "PA-1", "status": SIBLING_TEXT}]
    (pytester.path / "sandbox" / "t2" / "portal").mkdir(parents=True)
    (pytester.path / "sandbox" / "t2" / "portal" / "prior_auth_requests.json").write_text(
        json.dumps(rows)
    )
    (pytester.path / "sandbox" / "t2" / "sftp" / "out").mkdir(parents=True)
    (pytester.path / "sandbox" / "t2" / "sftp" / "out" / "claim.txt").write_text(SIBLING_TEXT)
    (pytester.path / "sandbox" / "t2" / "output.md").write_text(SIBLING_TEXT)
    (pytester.path / "sandbox" / "t2" / "voice").mkdir()
    turns = [{"speaker": "agent", "text": SIBLING_TEXT}]
    (pytester.path / "sandbox" / "t2" / "voice" / "turns.json").write_text(json.dumps(turns))
    for folder in ("portal", "voice", "sftp"):
        (pytester.path / "sandbox" / "t1" / folder).mkdir(parents=True, exist_ok=True)
    linked = pytester.path / "sandbox" / link
    if linked.is_dir():
        linked.rmdir()
    linked.parent.mkdir(parents=True, exist_ok=True)
    linked.symlink_to(target)
    checks = {
        "portal": {
            "assert": "portal-state-match",
            "correlate_by": {
                "resource": "prior_auth_requests",
                "key": "request_id",
                "value": "PA-1",
            },
            "assertions": [{"path": "status", "expected": SIBLING_TEXT}],
        },
        "output": {"assert": "output-match", "contains": [SIBLING_TEXT]},
        "voice": {"assert": "voice-transcript", "contains": [SIBLING_TEXT]},
        "sftp": {
            "assert": "sftp-file-present",
            "pattern": "out/*.txt",
            "fields": [{"path": "$text", "op": "contains", "expected": SIBLING_TEXT}],
        },
    }
    criteria = [{"id": name, "assertion": check} for name, check in checks.items()]
    tasks = [{"id": "t1", "criteria": criteria}, {"id": "t2", "criteria": criteria}]
    pytester.makefile(".verial.json", links=json.dumps({"tasks": tasks}))
    pytester.runpytest_inprocess("--verial-report", "r.json", "--verial-store", "none")
    report = json.loads((pytester.path / "r.json").read_text())
    t1, t2 = report["benchmark_runs"][0]["task_runs"]
    assert {c["status"] for c in t2["criterion_runs"]} == {"passed"}
    reading = link.split("/")[1].removesuffix(".md").removesuffix(".json")
    reading = {"portal": "portal", "output": "output", "voice": "voice", "sftp": "sftp"}[reading]
    refused = next(c for c in t1["criterion_runs"] if c["criterion_id"] == reading)
    assert refused["status"] == "error", refused
    assert "outside the task folder" in refused["details"]
    assert SIBLING_TEXT not in json.dumps(refused["evidence"])
    assert t1["verdict"] != "pass"


# -- issue 31: a refusal names the link as the task folder names it, never where it points ----
ELSEWHERE = "elsewhere-7c1d"


@pytest.mark.parametrize(
    "link, named",
    [
        ("portal/prior_auth_requests.json", "portal/prior_auth_requests.json"),  # a file
        ("portal", "portal"),  # a source folder
    ],
)
def test_a_link_out_of_the_task_folder_is_named_without_any_absolute_path(
    pytester: pytest.Pytester, link: str, named: str
) -> None:
    """A file or folder of t1 linking to an absolute path out of the run folder: the
    criterion's details, its feedback and the task's feedback in the JSON report name the link
    relative to the task folder, and neither the link's target nor any path of the machine."""
    target = pytester.path / ELSEWHERE
    (target / "portal").mkdir(parents=True)
    rows = json.dumps([{"request_id": "PA-1", "status": "submitted"}])
    (target / "portal" / "prior_auth_requests.json").write_text(rows)
    (pytester.path / "sandbox" / "t1" / "portal").mkdir(parents=True)
    linked = pytester.path / "sandbox" / "t1" / link
    if linked.is_dir():
        linked.rmdir()
    linked.symlink_to(target / link)  # absolute
    check = {
        "assert": "portal-state-match",
        "correlate_by": {"resource": "prior_auth_requests", "key": "request_id", "value": "PA-1"},
        "assertions": [{"path": "status", "expected": "submitted"}],
    }
    task = {"id": "t1", "criteria": [{"id": "portal", "assertion": check}]}
    pytester.makefile(".verial.json", links=json.dumps({"tasks": [task]}))
    pytester.runpytest_inprocess("--verial-report", "r.json", "--verial-store", "none")
    run = json.loads((pytester.path / "r.json").read_text())["benchmark_runs"][0]
    (criterion,) = run["task_runs"][0]["criterion_runs"]
    assert criterion["status"] == "error", criterion
    assert criterion["details"] == (
        f"{named}: a symbolic link leading outside the task folder; refused"
    )
    said = json.dumps([criterion, run["task_runs"][0].get("feedback")])
    assert str(pytester.path) not in said and ELSEWHERE not in said, said
