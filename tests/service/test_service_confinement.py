"""Issue 31: the service's confinement covers the whole run folder, over SQLite and PostgreSQL.

``run.yaml`` that links out of ``--runs-root`` is a 422 (its agent and executor model were
stored); a task's sandbox is its own folder: a link in it to a sibling task's folder, at any
depth, or the task folder itself linking to a sibling, is a 422; a file run.yaml names (a live
events file, a database) outside --runs-root is refused; and no error names a server path
(run.yaml's errors name it as the caller named the run folder)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_support import EXAMPLES, RUNS, Api, count_rows
from test_service_api import is_problem

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

TASK = "sftp-referral-packet"
SIBLING = "sftp-claims-batch"


@pytest.fixture(params=["sqlite", "postgresql"])
def runs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Api]:
    """A service over a runs root (in tmp_path) holding a copy of the good agent's run."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = str(request.getfixturevalue("service_postgres").new_database())
    root = tmp_path / "runs"
    shutil.copytree(RUNS / "good-agent", root / "good", symlinks=True)
    paths = [EXAMPLES / "files.verial.yaml", EXAMPLES / "interop.verial.yaml"]
    app = create_app(url, paths, root)
    org, org_key = create_key(app.state.store, "org", "ci")
    with TestClient(app) as client:
        yield Api(client, app, org_key, "", "", org.id, url)


def _root(api: Api) -> Path:
    return Path(api.app.state.runs_root)


def _verify(api: Api, task: str = TASK, benchmark: str = "sftp-drops@1") -> Any:
    body = {"benchmark": benchmark, "task_id": task, "sandbox": {"run_dir": "good"}}
    return api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))


def _refused(api: Api, *words: str) -> str:
    detail = str(is_problem(_verify(api), 422)["detail"])
    assert all(w in detail for w in words), detail
    assert str(_root(api)) not in detail and str(_root(api).parent) not in detail
    assert count_rows(api.app.state.store)["task_runs"] == 0
    return detail


def test_a_run_yaml_linking_out_of_the_runs_root_is_refused(runs: Api, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "run.yaml"
    outside.parent.mkdir()
    outside.write_text("agent: someone-elses-agent\nexecutor_model: their-model\n")
    (_root(runs) / "good" / "run.yaml").unlink()
    (_root(runs) / "good" / "run.yaml").symlink_to(outside)
    _refused(runs, "body sandbox.run_dir: good/run.yaml is a link outside --runs-root")


def test_a_bad_run_yaml_is_named_as_the_caller_named_the_run(runs: Api) -> None:
    (_root(runs) / "good" / "run.yaml").write_text("scored: [not, a, flag]\n")
    detail = _refused(runs, "good/run.yaml", "scored")
    assert detail.startswith("body sandbox.run_dir: good/run.yaml: ")


@pytest.mark.parametrize(
    "link, target",
    [
        ("sftp", "../sftp-claims-batch/sftp"),  # a source folder
        ("sftp/outbound", "../../sftp-claims-batch/sftp/outbound"),  # a nested folder
        ("sftp/outbound/referrals/REF-20261121-0042.json", "../../../../sftp-claims-batch/sftp"
         "/outbound/claims/manifest-20261121.json"),  # a file
    ],
)  # fmt: skip
def test_a_link_into_a_sibling_tasks_folder_is_refused_at_every_level(
    runs: Api, link: str, target: str
) -> None:
    path = _root(runs) / "good" / TASK / link
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    path.symlink_to(target)
    assert path.resolve().exists()  # inside --runs-root: allowed before, read as this task's
    _refused(runs, f"good/{TASK}/{link} is a link outside its task's folder")


def test_a_task_folder_that_is_a_link_to_a_sibling_is_refused(runs: Api) -> None:
    shutil.rmtree(_root(runs) / "good" / TASK)
    (_root(runs) / "good" / TASK).symlink_to(SIBLING, target_is_directory=True)
    _refused(runs, f"good/{TASK} is a link to another task's folder in good")


def test_a_live_file_run_yaml_names_outside_the_runs_root_is_refused(
    runs: Api, tmp_path: Path
) -> None:
    events = tmp_path / "elsewhere" / "events.jsonl"
    events.parent.mkdir()
    events.write_text(
        (RUNS / "good-agent/hl7-register-outpatient/hl7_outbound/events.jsonl").read_text()
    )
    run_yaml = _root(runs) / "good" / "run.yaml"
    run_yaml.write_text(run_yaml.read_text() + f"sources:\n  hl7: {{events: {events}}}\n")
    answer = _verify(runs, "hl7-register-outpatient", "interop@1")
    assert answer.status_code == 201, answer.text
    details = {c["details"] for c in answer.json()["criterion_runs"]}
    assert details == {
        "hl7 source unusable: run.yaml sources.hl7.events: names a file outside --runs-root; "
        "refused"
    }
    # the same file inside --runs-root is read
    inside = _root(runs) / "captures" / "events.jsonl"
    inside.parent.mkdir()
    shutil.copy(events, inside)
    run_yaml.write_text(run_yaml.read_text().replace(str(events), str(inside)))
    answer = _verify(runs, "hl7-register-outpatient", "interop@1")
    assert {c["status"] for c in answer.json()["criterion_runs"]} == {"passed"}


@pytest.mark.parametrize("link", ["sftp", "sftp/outbound/referrals/REF-20261121-0042.json"])
def test_a_link_to_an_absolute_path_elsewhere_is_named_without_it(
    runs: Api, tmp_path: Path, link: str
) -> None:
    """A task's file or folder linking to an absolute path out of --runs-root: the answer
    names the link as the caller named the run folder, never its target nor any path of the
    server."""
    path = _root(runs) / "good" / TASK / link
    target = tmp_path / "elsewhere-5e2b" / link
    target.parent.mkdir(parents=True)
    shutil.move(path, target)
    path.symlink_to(target)
    detail = _refused(runs, f"good/{TASK}/{link} is a link outside --runs-root")
    assert "elsewhere-5e2b" not in detail and str(tmp_path) not in detail
    assert not re.search(r"(^|[\s'\"(])/[\w.]", detail), detail
