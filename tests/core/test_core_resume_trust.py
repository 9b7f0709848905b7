"""Resume and recover trust only what belongs to the session (issue 18, class 4).

A resumed report or journal must be sealed, of the same benchmark files (their SHA-256), the
same run folders (label, run.yaml id, agent) and unedited; anything else is refused in one line
naming the file and what differs. Carried-over failures count in the exit status.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from core_support import (
    Project,
    child_env,
    run_inprocess,
    run_subprocess,
    voice_criterion,
    write_sealed,
)

from pytest_verial import BenchmarkRun
from pytest_verial.cli import main

HELLO = {"voice/turns.json": [{"speaker": "agent", "text": "hello there"}]}


def _project(path: Path, name: str = "greet", runs: tuple[str, ...] = ("sandbox",)) -> Project:
    path.mkdir(parents=True, exist_ok=True)
    project = Project(path)
    tasks = [
        {"id": "t1", "criteria": [voice_criterion("says-bye", contains=["goodbye"])]},
        {"id": "t2", "criteria": [voice_criterion("says-hello", contains=["hello"])]},
    ]
    project.benchmark(name, {"benchmark": name, "version": 1, "tasks": tasks})
    for run in runs:
        for task in ("t1", "t2"):
            project.sandbox(task, HELLO, run=run)
    return project


def _refused(output: str, code: int, *words: str) -> None:
    assert code == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    line = next(x for x in output.splitlines() if "--verial-resume: " in x)
    assert all(w in line for w in words), line
    assert "Traceback" not in output


# Sessions without a signing key or a crash run in this process (``run_inprocess``); those
# with ``VERIAL_SIGNING_KEY`` (it is registered as a secret for the process's lifetime) or
# that end with ``os._exit`` stay child sessions.


def test_resume_refuses_a_report_of_another_benchmark(pytester: pytest.Pytester) -> None:
    tmp_path = pytester.path
    _project(tmp_path, "greet")
    _project(tmp_path, "other")
    code, output = run_inprocess(pytester, "other.verial.yaml", "--verial-report", "o.json")
    assert code == 1, output[-2000:]
    code, output = run_inprocess(
        pytester, "greet.verial.yaml", "--verial-resume", "o.json", "--verial-report", "r.json"
    )
    _refused(output, code, "o.json", "other.verial.yaml", "which this session does not score")
    assert not (tmp_path / "r.json").exists()


def test_resume_refuses_a_report_of_another_run_folder_or_agent(pytester: pytest.Pytester) -> None:
    project = _project(pytester.path, runs=("agent-a", "agent-b"))
    code, output = run_inprocess(
        pytester, "--verial-run", "agent-a", "--verial-report", "a.json", "-p", "no:randomly"
    )
    assert code == 1, output[-2000:]
    code, output = run_inprocess(pytester, "--verial-run", "agent-b", "--verial-resume", "a.json")
    _refused(output, code, "a.json", "run folder agent-a", "does not score (it scores agent-b)")
    project.run_yaml({"agent": "v2"}, run="agent-a")  # the same folder, another agent's run
    code, output = run_inprocess(pytester, "--verial-run", "agent-a", "--verial-resume", "a.json")
    _refused(output, code, "agent None", "agent 'v2' now")


def test_resume_refuses_an_edited_report_and_a_forged_one_when_signing(tmp_path: Path) -> None:
    _project(tmp_path)
    key = {"VERIAL_SIGNING_KEY": "k-7f3a91c0d2"}
    code, output = run_subprocess(tmp_path, "--verial-report", "r.json", env=key)
    assert code == 1, output[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    failed = next(
        c for r in report["benchmark_runs"] for t in r["task_runs"] for c in t["criterion_runs"]
        if not c["passed"]
    )  # fmt: skip
    failed.update(passed=True, score=1.0, status="passed")
    (tmp_path / "edited.json").write_text(json.dumps(report))
    code, output = run_subprocess(tmp_path, "--verial-resume", "edited.json", env=key)
    _refused(output, code, "edited.json", "edited since it was written")
    write_sealed(tmp_path / "forged.json", report)  # a plain digest: no key needed to forge
    code, output = run_subprocess(tmp_path, "--verial-resume", "forged.json", env=key)
    _refused(output, code, "forged.json", "not signed", "VERIAL_SIGNING_KEY is set")
    code, output = run_subprocess(tmp_path, "--verial-resume", "r.json", env=key)
    assert code == 1, output[-2000:]  # the signed report itself resumes
    assert "k-7f3a91c0d2" not in output + (tmp_path / "r.json").read_text()


def test_a_resumed_session_fails_on_the_failures_it_carried_over(
    pytester: pytest.Pytester,
) -> None:
    """t1 fails and is kept; t2 is scored again and passes: exit 1, as without resuming."""
    tmp_path = pytester.path
    _project(tmp_path)
    code, output = run_inprocess(pytester, "--verial-report", "r.json")
    assert code == 1, output[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    run = report["benchmark_runs"][0]
    run["task_runs"] = [t for t in run["task_runs"] if t["task_id"] == "t1"]  # t2 not scored
    # scored again as a session that scored t1 alone would have (a reader checks the figures)
    run = BenchmarkRun.model_validate(run).rescored().model_dump(mode="json", by_alias=True)
    report["benchmark_runs"] = [run]
    report["session"]["counts"] = run["counts"]
    write_sealed(tmp_path / "half.json", report)
    code, output = run_inprocess(
        pytester, "--verial-resume", "half.json", "--verial-report", "resumed.json"
    )
    assert code == 1, output[-2000:]
    resumed = json.loads((tmp_path / "resumed.json").read_text())
    assert resumed["session"]["resumed"]["kept_criterion_runs"] == 1
    assert resumed["session"]["exit_status"] == 1


def _journal(tmp_path: Path) -> Path:
    """The journal a session leaves when it dies after scoring every criterion."""
    project = _project(tmp_path)
    project.conftest(
        "import os, pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_sessionfinish(session):\n"
        "    os._exit(3)\n"
        "    yield\n"
    )  # fmt: skip
    code, output = run_subprocess(tmp_path, "--verial-report", "r.json", "-p", "no:randomly")
    assert code == 3, output[-2000:]
    (tmp_path / "conftest.py").unlink()
    journal = tmp_path / "r.json.journal.jsonl"
    assert len(journal.read_bytes().splitlines()) == 3  # header, t1, t2
    return journal


def _recover(journal: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["report", "--recover", str(journal), "-o", str(journal.with_name("rec.json"))])
    return code, capsys.readouterr().err


def _link(previous: str, body: bytes) -> str:
    """An unsigned journal line's digest: SHA-256 over the previous line's digest, a line
    break and this line's bytes (what anyone who reads the code can compute)."""
    return "sha256:" + hashlib.sha256(previous.encode("ascii") + b"\n" + body).hexdigest()


def _rechain(lines: list[bytes]) -> list[bytes]:
    """The lines with their digest chain computed anew, as a forger without a key can."""
    out, previous = [], ""
    for line in lines:
        body = line[: line.rindex(b',"chain":"')]
        previous = _link(previous, body)
        out.append(body + b',"chain":"' + previous.encode() + b'"}\n')
    return out


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ("passed", "edited since it was written"),
        ("dropped-middle", "edited since it was written"),
        ("duplicate", "a second line for"),
        ("unknown", "is not a criterion this journal's session selected"),
    ],
)
def test_recover_refuses_an_edited_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: str, words: str
) -> None:
    journal = _journal(tmp_path)
    lines = journal.read_bytes().splitlines(keepends=True)
    if edit == "passed":
        lines[1] = lines[1].replace(b'"passed": false', b'"passed": true')
        assert b'"passed": true' in lines[1]
    elif edit == "dropped-middle":
        del lines[1]
    elif edit == "duplicate":  # consistent digests: the line itself is what is refused
        lines = _rechain([*lines, lines[1]])
    else:
        lines = _rechain([*lines, lines[2].replace(b"::t2::", b"::t9::")])
    journal.write_bytes(b"".join(lines))
    code, err = _recover(journal, capsys)
    assert code != 0 and err.count("\n") == 1, err
    assert str(journal) in err and words in err, err
    assert not journal.with_name("rec.json").exists()


def test_recover_verifies_a_signed_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = _journal(tmp_path)  # written without a key: a plain digest chain
    # in a child process: the key read is registered as a secret for the process's lifetime
    recover = ["report", "--recover", str(journal), "-o", str(journal.with_name("rec.json"))]
    child = subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", *recover],
        env={**child_env(), "VERIAL_SIGNING_KEY": "Qz7wV2mX9kLp"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    err = child.stderr
    assert child.returncode != 0 and "not signed, and VERIAL_SIGNING_KEY is set" in err, err
    assert not journal.with_name("rec.json").exists()
    monkeypatch.delenv("VERIAL_SIGNING_KEY", raising=False)  # here: no key
    code, err = _recover(journal, capsys)
    assert code == 0, err
    recovered = json.loads(journal.with_name("rec.json").read_text())
    assert recovered["session"]["counts"]["criteria"] == 2


def test_resume_refuses_a_journal_of_another_benchmark(
    tmp_path: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = _journal(tmp_path / "a")
    other = _project(tmp_path / "b", "other")
    monkeypatch.chdir(other.path)  # the session's folder, as a child's working directory
    code, output = run_inprocess(pytester, "--verial-resume", str(journal))
    _refused(output, code, "greet.verial.yaml", "which this session does not score")
