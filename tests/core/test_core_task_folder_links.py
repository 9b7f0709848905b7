"""Each task run reads only its own folder: a task folder that is a link to a sibling task's
folder (or into the run folder) is refused; a link out of the run folder stays allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_verial import RunDir, SourceError, Task
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
