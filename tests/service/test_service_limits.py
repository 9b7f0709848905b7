"""Issue 31: what one request may cost the service, over SQLite and PostgreSQL.

- a run folder's file over ``--max-file-size`` (or the sandbox over ``--max-sandbox-size``) is
  refused before it is read: the criterion reading it errs naming the file, sandbox-relative,
  and the limit; a run.yaml over it is a 400 naming run.yaml, never the server's path;
- an upload (archive or inline files) whose entry passes the per-file limit, or that unpacks
  past the per-sandbox limit, is a 413; a tar.gz whose first header is a huge GNU long-name or
  pax record is refused before the record is inflated (it counts as inflated bytes);
- an inline task over ``--max-inline-criteria`` is a 413 before it is scored, an answer over
  ``--max-answer-size`` a 413 with nothing stored.
"""

from __future__ import annotations

import base64
import gzip
import io
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from service_support import EXAMPLES, RUNS, Api, count_rows, run_verial
from test_service_api import is_problem

from pytest_verial.service import create_app

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.service._keys import create_key

MIB = 1024 * 1024
TASK = "sftp-referral-packet"
LIMITS = {
    "max_file_size": "1MiB",
    "max_sandbox_size": "3MiB",
    "max_inline_criteria": 5,
    "max_answer_size": "64KiB",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def limited(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Api]:
    """A service with small limits over a runs root holding a copy of the good agent's run."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'store.db'}"
    else:
        url = str(request.getfixturevalue("service_postgres").new_database())
    root = tmp_path / "runs"
    shutil.copytree(RUNS / "good-agent", root / "good-agent", symlinks=True)
    app = create_app(url, [EXAMPLES / "files.verial.yaml"], root, limits=LIMITS)
    org, org_key = create_key(app.state.store, "org", "ci")
    with TestClient(app) as client:
        yield Api(client, app, org_key, "", "", org.id, url)


def _sparse(path: Path, size: int) -> None:
    with path.open("r+b" if path.exists() else "wb") as handle:
        handle.truncate(size)


def _verify(api: Api, sandbox: dict[str, Any], **extra: Any) -> Any:
    body = {"benchmark": "sftp-drops@1", "task_id": TASK, "sandbox": sandbox, **extra}
    return api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))


def _runs_root(api: Api) -> Path:
    return Path(api.app.state.runs_root)


def test_a_run_folder_file_over_the_limit_is_an_error_naming_it(limited: Api) -> None:
    packet = _runs_root(limited) / "good-agent" / TASK / "sftp/outbound/referrals"
    _sparse(packet / "REF-20261121-0042.json", 2 * MIB)  # a hole: its size is what counts
    answer = _verify(limited, {"run_dir": "good-agent"})
    assert answer.status_code == 201, answer.text
    details = [c["details"] for c in answer.json()["criterion_runs"] if c["status"] == "error"]
    line = (
        "sftp/outbound/referrals/REF-20261121-0042.json: 2,097,152 bytes, over the per-file "
        "limit of 1 MiB (verial serve --max-file-size); not read"
    )
    assert details and all(line in d for d in details), details
    assert not any(str(_runs_root(limited)) in d for d in details)


def test_a_run_yaml_over_the_limit_is_a_422_naming_run_yaml(limited: Api) -> None:
    _sparse(_runs_root(limited) / "good-agent" / "run.yaml", 2 * MIB)
    detail = is_problem(_verify(limited, {"run_dir": "good-agent"}), 422)["detail"]
    assert "run.yaml: 2,097,152 bytes, over the per-file limit of 1 MiB" in detail
    assert str(_runs_root(limited)) not in detail
    assert count_rows(limited.app.state.store)["task_runs"] == 0


def _archive(fmt: str, raw: bytes) -> dict[str, Any]:
    return {"archive": {"format": fmt, "data": base64.b64encode(raw).decode()}}


def _tar(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_an_upload_over_the_limits_is_a_413(limited: Api) -> None:
    big = {"sftp/outbound/referrals/x.json": "x" * (MIB + 1)}
    detail = is_problem(_verify(limited, {"files": big}), 413)["detail"]
    assert detail == (
        "body sandbox.files: entry sftp/outbound/referrals/x.json: over the per-file limit of "
        "1 MiB (verial serve --max-file-size)"
    )
    four = {f"sftp/{n}.bin": bytes(900 * 1024) for n in range(4)}  # 3.5 MiB, each under 1
    detail = is_problem(_verify(limited, _archive("tar.gz", _tar(four))), 413)["detail"]
    assert detail.startswith("body sandbox.archive: ") and "over 3 MiB" in detail
    assert count_rows(limited.app.state.store)["task_runs"] == 0


def _long_name_first(kind: bytes, size: int) -> bytes:
    """A tar.gz whose first header is a GNU long-name (or pax) record of ``size`` bytes of
    zeros, then one small file: a few tens of kB packed."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as gz:
        record = tarfile.TarInfo("././@LongLink")
        record.type, record.size = kind, size
        gz.write(record.tobuf(format=tarfile.GNU_FORMAT))
        block = bytes(MIB)
        for _ in range(size // MIB):
            gz.write(block)
        gz.write(bytes(-size % 512))
        member = tarfile.TarInfo("sftp/a.txt")
        member.size = 1
        gz.write(member.tobuf(format=tarfile.GNU_FORMAT) + b"x" + bytes(511) + bytes(1024))
    return out.getvalue()


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE])
def test_a_huge_header_record_counts_and_is_refused_before_it_is_inflated(
    limited: Api, kind: bytes
) -> None:
    raw = _long_name_first(kind, 16 * MIB)  # tarfile reads such a record whole
    detail = is_problem(_verify(limited, _archive("tar.gz", raw)), 413)["detail"]
    assert detail == (
        "body sandbox.archive: inflates to over 3 MiB, header records included (verial serve "
        "--max-sandbox-size)"
    )


def _inline(criteria: int) -> dict[str, Any]:
    check = {"assert": "output-match", "contains": ["hello"]}
    return {"id": "t", "criteria": [{"id": f"c{n}", "assertion": check} for n in range(criteria)]}


def test_an_inline_task_over_the_criteria_cap_is_a_413_before_scoring(limited: Api) -> None:
    body = {"task": _inline(6), "sandbox": {"files": {"output.md": "hello"}}}
    answer = limited.client.post("/v1/verify-task", json=body, headers=limited.h(limited.org))
    assert is_problem(answer, 413)["detail"] == (
        "body task.criteria: 6 criteria, over the 5 an inline task may hold "
        "(verial serve --max-inline-criteria)"
    )
    body["task"] = _inline(5)
    answer = limited.client.post("/v1/verify-task", json=body, headers=limited.h(limited.org))
    assert answer.status_code == 201, answer.text


def test_an_answer_over_the_cap_is_a_413_and_nothing_is_stored(limited: Api) -> None:
    # each criterion's evidence and the task's snapshot quote its long phrases: over 64 KiB
    task = _inline(5)
    for n, criterion in enumerate(task["criteria"]):
        criterion["assertion"]["contains"] = [f"{n}-{p}-" + "y" * 1000 for p in range(10)]
    body = {"task": task, "sandbox": {"files": {"output.md": "hello"}}}
    answer = limited.client.post("/v1/verify-task", json=body, headers=limited.h(limited.org))
    detail = is_problem(answer, 413)["detail"]
    assert (
        detail.startswith("the answer would be ") and "(verial serve --max-answer-size)" in detail
    )
    assert count_rows(limited.app.state.store)["task_runs"] == 0


@pytest.mark.parametrize(
    "flag, value, line",
    [
        ("--max-file-size", "lots", "--max-file-size: expected a size such as 64MiB"),
        ("--max-inline-criteria", "0", "--max-inline-criteria: expected a whole number above 0"),
        ("--header-timeout", "inf", "--header-timeout: expected a number of seconds above 0"),
    ],
)
def test_serve_refuses_a_bad_limit_in_one_line(
    tmp_path: Path, flag: str, value: str, line: str
) -> None:
    done = run_verial(tmp_path, "serve", "--store", f"sqlite:///{tmp_path / 's.db'}", flag, value)
    assert done.returncode == 2
    assert done.stderr.startswith(f"verial serve: {line}") and done.stderr.count("\n") == 1
