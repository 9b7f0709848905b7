"""Issue 31: every read of agent-written data is bounded, per file and per sandbox, checked by
the file's size before a byte is read (a sparse file counts by its size) and while reading
(a file that grows past its admitted size stops there). Over a limit, each criterion reading the
file is an error in one line naming the file, relative to the task folder, and the limit; the
other criteria still score. For every source: FHIR snapshot, HL7 and X12 message files, portal
JSON, JSON Lines and SQLite, sftp files (parsed too), the voice transcript, the output, run.yaml
and the judge's file target. The service's side: tests/service/test_service_limits.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_verial import UsageError, verify_task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import RunConfigError

MIB = 1024 * 1024


def sparse(path: Path, size: int = 2 * MIB) -> Path:
    """A file of ``size`` bytes that takes no room on disk (a hole): its size is what counts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


JUDGE = {"judge_model": "judge", "judge_base_url": "http://127.0.0.1:9", "executor_model": "e"}

#: (the file, relative to the task folder, and a criterion that reads it)
SOURCES: dict[str, tuple[str, dict[str, Any]]] = {
    "fhir": (
        "fhir/export.ndjson",
        {"assert": "fhir-resource-state", "resource_type": "Patient", "match": "any"},
    ),
    "fhir-json": (
        "fhir/bundle.json",
        {"assert": "fhir-resource-state", "resource_type": "Patient", "match": "any"},
    ),
    "hl7": (
        "hl7_outbound/adt.hl7",
        {"assert": "hl7-structural", "fields": [{"path": "PID.5.1", "expected": "X"}]},
    ),
    "hl7-events": (
        "hl7_outbound/events.jsonl",
        {"assert": "hl7-structural", "fields": [{"path": "PID.5.1", "expected": "X"}]},
    ),
    "x12": (
        "x12/271.x12",
        {"assert": "x12-response", "fields": [{"path": "EB01", "expected": "1"}]},
    ),
    "portal-json": (
        "portal/rows.json",
        {
            "assert": "portal-state-match",
            "correlate_by": {"resource": "rows"},
            "assertions": [{"path": "x", "op": "exists"}],
        },
    ),
    "portal-jsonl": (
        "portal/rows.jsonl",
        {
            "assert": "portal-state-match",
            "correlate_by": {"resource": "rows"},
            "assertions": [{"path": "x", "op": "exists"}],
        },
    ),
    "portal-sqlite": (
        "portal/portal.sqlite",
        {
            "assert": "portal-state-match",
            "correlate_by": {"resource": "rows"},
            "assertions": [{"path": "x", "op": "exists"}],
        },
    ),
    "sftp": (
        "sftp/out/claim.json",
        {
            "assert": "sftp-file-present",
            "pattern": "out/*.json",
            "parse": "json",
            "fields": [{"path": "claim_id", "expected": "C-1"}],
        },
    ),
    "voice": ("voice/turns.jsonl", {"assert": "voice-transcript", "contains": ["hello"]}),
    "output": ("output.md", {"assert": "output-match", "contains": ["hello"]}),
    "judge-file": (
        "notes/letter.md",
        {"assert": "llm-rubric", "target": "file", "path": "notes/letter.md", "principles": ["x"]},
    ),
}


def _task(assertion: dict[str, Any], folder: Path | None = None) -> dict[str, Any]:
    """A task of the criterion reading the file, and another that reads a small file of
    another source (written into ``folder``) and passes."""
    other: dict[str, Any] = {"assert": "output-match", "contains": ["hello"]}
    if folder is not None and assertion["assert"] == "output-match":
        other = {"assert": "voice-transcript", "contains": ["hello"]}
        (folder / "voice").mkdir(parents=True, exist_ok=True)
        (folder / "voice" / "turns.json").write_text('[{"speaker": "agent", "text": "hello"}]')
    elif folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "output.md").write_text("hello")
    return {
        "id": "t",
        "criteria": [
            {"id": "reads-it", "assertion": assertion},
            {"id": "other", "assertion": other},
        ],
    }


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_a_file_over_the_per_file_limit_is_refused_before_it_is_read(
    tmp_path: Path, source: str
) -> None:
    name, assertion = SOURCES[source]
    folder = tmp_path / "run" / "t"
    file = sparse(folder / name)
    assert file.stat().st_blocks * 512 < MIB  # a hole on disk: its size still counts
    run = verify_task(_task(assertion, folder), folder, {"max_file_size": "1MiB", **JUDGE})
    refused, other = run.criterion_runs
    assert refused["status"] == "error", refused["details"]
    assert refused["details"] == (
        f"{name}: 2,097,152 bytes, over the per-file limit of 1 MiB (max_file_size); not read"
    )
    assert str(tmp_path) not in refused["details"]
    assert other["status"] == "passed"  # the rest of the task still scores


def test_the_files_of_one_sandbox_are_held_to_a_total(tmp_path: Path) -> None:
    folder = tmp_path / "run" / "t"
    folder.mkdir(parents=True)
    (folder / "output.md").write_text("word " * (600 * 1024 // 5))
    sparse(folder / "voice" / "turns.jsonl", 600 * 1024)
    task = {
        "id": "t",
        "criteria": [
            {"id": "out", "assertion": {"assert": "output-match", "not_contains": ["x"]}},
            {"id": "voice", "assertion": {"assert": "voice-transcript", "contains": ["x"]}},
            {"id": "out-again", "assertion": {"assert": "output-length", "max_words": 10**6}},
        ],
    }
    run = verify_task(task, folder, {"max_sandbox_size": "1MiB"})
    out, voice, again = run.criterion_runs
    assert out["status"] == "passed" and again["status"] == "passed"  # read once, counted once
    assert voice["status"] == "error"
    assert voice["details"] == (
        "voice/turns.jsonl: 614,400 bytes, which would bring the files read from this sandbox "
        "to 1,228,800 bytes, over the per-sandbox limit of 1 MiB (max_sandbox_size); not read"
    )


def test_a_file_that_grows_while_it_is_read_stops_at_its_admitted_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file's size as opened is what is admitted; bytes past it are refused. (A real file
    growing between fstat and read is a race; fstat is made to report the smaller size the
    file had when it was opened, which is the state that race leaves.)"""
    folder = tmp_path / "run" / "t"
    (folder / "portal").mkdir(parents=True)
    rows = folder / "portal" / "rows.jsonl"
    rows.write_text('{"x": 1}\n' * 1000)
    real_fstat = os.fstat

    def fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        if st.st_size == rows.stat().st_size:  # the rows file, "before it grew"
            values = list(st)
            values[6] = 100  # st_size
            return os.stat_result(values)
        return st

    monkeypatch.setattr(os, "fstat", fstat)
    run = verify_task(_task(SOURCES["portal-jsonl"][1]), folder)
    refused = run.criterion_runs[0]
    assert refused["status"] == "error"
    assert refused["details"].startswith("portal/rows.jsonl: grew while it was read")


def test_run_yaml_over_the_per_file_limit_is_one_line(tmp_path: Path) -> None:
    sparse(tmp_path / "run" / "run.yaml", 2 * MIB)
    (tmp_path / "run" / "t").mkdir()
    with pytest.raises(RunConfigError) as refused:
        verify_task(_task(SOURCES["output"][1]), tmp_path / "run" / "t", {"max_file_size": MIB})
    assert str(refused.value) == (
        "run.yaml: 2,097,152 bytes, over the per-file limit of 1 MiB (max_file_size); not read"
    )


@pytest.mark.parametrize("value", ["lots", "0", "-1", "1.5MiB", "1e999"])
def test_a_bad_limit_is_a_usage_error(tmp_path: Path, value: str) -> None:
    with pytest.raises(UsageError, match=r"^config max_file_size: expected a size"):
        verify_task(_task(SOURCES["output"][1]), tmp_path, {"max_file_size": value})


def test_the_plugin_takes_its_limits_from_its_options(pytester: pytest.Pytester) -> None:
    """``--verial-max-file-size`` (and the ini key) in a pytest session; a bad value is a
    usage error naming the option, before anything runs."""
    pytester.makefile(
        ".verial.yaml",
        big="tasks:\n- id: t\n  criteria:\n"
        "  - {id: c, assertion: {assert: output-match, contains: [hello]}}\n",
    )
    sparse(pytester.path / "sandbox" / "t" / "output.md", 2 * MIB)
    result = pytester.runpytest_inprocess(
        "--verial-max-file-size", "1MiB", "--verial-store", "none", "-rA"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*output.md: 2,097,152 bytes, over the per-file limit of 1 MiB "
         "(--verial-max-file-size); not read*"]
    )  # fmt: skip
    pytester.makeini("[pytest]\nverial_max_sandbox_size = 1MiB\n")
    result = pytester.runpytest_inprocess("--verial-store", "none", "-rA")
    result.stdout.fnmatch_lines(
        ["*over the per-sandbox limit of 1 MiB (--verial-max-sandbox-size)*"]
    )
    result = pytester.runpytest_inprocess("--verial-max-file-size", "huge")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--verial-max-file-size: expected a size such as 64MiB*"])
