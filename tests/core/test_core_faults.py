"""Faults lose no completed result (issue 9, item 7): SIGTERM, a hard crash of the session
(``os._exit``, SIGKILL) recovered from the journal, and outputs that cannot be written."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from core_support import (
    Project,
    child_env,
    interruptible_pytest,
    only_run,
    pytest_command,
    task_runs,
    voice_criterion,
)

from pytest_verial.cli import main

WORKERS = pytest.mark.parametrize("workers", [0, 2], ids=["n0", "n2"])
GREETS = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning, Valley Health."}]}
JOURNAL = "report.json.journal.jsonl"

FAULT_CHECKS = """
import os
import shutil
import time
from pathlib import Path
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec
from pytest_verial.checks import register_secret as register

HERE = Path(__file__).parent


class Exit(AssertionSpec):
    kind: Literal["exit-process"] = Field(alias="assert")


class Hang(AssertionSpec):
    kind: Literal["hang"] = Field(alias="assert")
    wait_for: int = 0  # criterion runs of other tasks the controller must have journaled
    hold: int = 20  # seconds it hangs once its marker is written


class Break(AssertionSpec):
    kind: Literal["break-path"] = Field(alias="assert")
    path: str
    into: Literal["file", "dir"]


class Leak(AssertionSpec):
    kind: Literal["leak"] = Field(alias="assert")


def exit_process(spec, ctx):
    os._exit(1)  # the whole session dies here, as under an OOM kill


def hang(spec, ctx):
    journal = HERE / "report.json.journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count("\\n") > spec.wait_for:
            break
        time.sleep(0.05)
    (HERE / "marker").write_text("1")
    time.sleep(spec.hold)  # shorter than a signal test's wait: a lost signal ends the run
    return CheckOutcome(1.0, "slept")


def break_path(spec, ctx):
    target = HERE / spec.path
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    if spec.into == "file":
        target.write_text("in the way")
    else:
        target.mkdir()
    return CheckOutcome(1.0, f"{spec.path} is now a {spec.into}")


def leak(spec, ctx):
    secret = register("sk-journal-secret-4242")
    return CheckOutcome(0.0, f"the server echoed {secret}")


def pytest_verial_checks():
    return [CheckSpec(name="exit-process", model=Exit, run=exit_process),
            CheckSpec(name="hang", model=Hang, run=hang),
            CheckSpec(name="break-path", model=Break, run=break_path),
            CheckSpec(name="leak", model=Leak, run=leak)]
"""


def _project(path: Path, tasks: list[dict[str, Any]]) -> Project:
    project = Project(path)
    project.conftest(FAULT_CHECKS)
    project.benchmark("faults", {"tasks": tasks})
    for task in tasks:
        project.sandbox(task["id"], GREETS)
    return project


def _first(weight: int = 3) -> dict[str, Any]:
    """A task of three criteria scoring 4/5 (partial)."""
    return {
        "id": "first",
        "criteria": [
            voice_criterion("greets", contains=["good morning"], weight=weight),
            voice_criterion("asks-dob", contains=["date of birth"]),
            voice_criterion("valley", contains=["valley health"]),
        ],
    }


def _hanging(wait_for: int, hold: int = 20) -> dict[str, Any]:
    return {
        "id": "second",
        "criteria": [
            {"id": "waits", "assertion": {"assert": "hang", "wait_for": wait_for, "hold": hold}},
            voice_criterion("later", contains=["good morning"]),
        ],
    }


def _start(path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        interruptible_pytest(*args),
        cwd=path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _signal_when_hanging(proc: subprocess.Popen[str], path: Path, sig: int, group: bool) -> str:
    """Wait for the hanging check, send ``sig``, return the output once the session ends."""
    try:
        deadline = time.monotonic() + 90
        while not (path / "marker").exists():
            assert proc.poll() is None, proc.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the hanging check never started"
            time.sleep(0.05)
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            # workers orphaned by a SIGKILL of the controller
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
    return output


def _assert_first_kept(report: dict[str, Any], output: str) -> None:
    run = only_run(report)
    assert (run["status"], report["session"]["phase"]) == ("cancelled", "completed"), output[-3000:]
    tasks = task_runs(report)
    first = tasks["faults.verial.yaml::first"]
    assert first["status"] == "completed", output[-3000:]
    assert (first["score"], first["verdict"]) == (pytest.approx(4 / 5), "partial")
    second = tasks["faults.verial.yaml::second"]
    assert (second["status"], second["score"]) == ("cancelled", None)
    assert run["score"] == pytest.approx(4 / 5)


def _names(output: str, label: str, name: str) -> bool:
    """True when a terminal line says ``label`` and the path ending in ``name``."""
    return any(line.startswith(label) and line.endswith(name) for line in output.splitlines())


def _verial_here(
    capsys: pytest.CaptureFixture[str], path: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """``verial ARGS`` run in ``path``, in this process (``main``, as the console script
    calls it): these commands need no process of their own, and a child's start-up costs a
    second of CPU. An exception fails the test where the console script would print a
    traceback."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(path)
        code = main(list(args))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(["verial", *args], code, out, err)


# -- SIGTERM -------------------------------------------------------------------------------


@WORKERS
@pytest.mark.parametrize("group", [False, True], ids=["controller", "group"])
def test_sigterm_keeps_completed_tasks_and_writes_every_file(
    tmp_path: Path, workers: int, group: bool
) -> None:
    _project(tmp_path, [_first(), _hanging(wait_for=3)])
    proc = _start(
        tmp_path, "-n", str(workers), "--verial-report", "report.json",
        "--verial-junit", "junit.xml", "--junitxml", "pytest-junit.xml",
    )  # fmt: skip
    output = _signal_when_hanging(proc, tmp_path, signal.SIGTERM, group)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, output[-3000:]
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    _assert_first_kept(report, output)
    suites = {s.get("name"): s for s in ET.parse(tmp_path / "junit.xml").getroot()}
    assert suites["faults.verial.yaml::first"].get("tests") == "3"
    cases = ET.parse(tmp_path / "pytest-junit.xml").getroot().iter("testcase")
    assert {c.get("name") for c in cases} >= {"greets", "asks-dob", "valley"}
    assert not (tmp_path / JOURNAL).exists()  # removed once the report is written
    for label, name in (("JSON report: ", "/report.json"), ("JUnit report: ", "/junit.xml")):
        assert _names(output, label, name), output[-3000:]


SIGTERM_TWICE = """
import os
import signal
import time
from pathlib import Path


def _term(name):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(2)  # the handler runs at the next bytecode; never reached when handled
    except KeyboardInterrupt:
        Path(name).write_text("KeyboardInterrupt")
    else:
        Path(name).write_text("ignored")


def test_term():
    _term("first")
    _term("second")  # killed here unless SIGTERM is ignored
"""


#: pytest in a child process that starts with SIGTERM at a given disposition
SIGTERM_AT = (
    "import runpy, signal, sys; signal.signal(signal.SIGTERM, signal.{}); "
    "sys.argv[0] = 'pytest'; runpy.run_module('pytest', run_name='__main__', alter_sys=True)"
)


def _sigterm_twice(path: Path, disposition: str) -> tuple[int, dict[str, str]]:
    """A session whose test sends itself SIGTERM twice, started with SIGTERM at
    ``disposition``: its exit code, and what each SIGTERM did (absent: the process died)."""
    (path / "test_term.py").write_text(SIGTERM_TWICE, encoding="utf-8")
    command = pytest_command("-p", "no:randomly", "-n", "0", "test_term.py")
    assert command[1:3] == ["-m", "pytest"], command
    proc = subprocess.run(
        [command[0], "-c", SIGTERM_AT.format(disposition), *command[3:]],
        cwd=path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    done = {n: (path / n).read_text() for n in ("first", "second") if (path / n).exists()}
    return proc.returncode, done


def test_a_second_sigterm_acts_as_without_the_plugin(tmp_path: Path) -> None:
    # the first SIGTERM winds the session down as Ctrl-C does; the handler put the default
    # back before raising, so the next one kills
    code, done = _sigterm_twice(tmp_path, "SIG_DFL")
    assert code == -signal.SIGTERM, done
    assert done == {"first": "KeyboardInterrupt"}


def test_an_ignored_sigterm_stays_ignored(tmp_path: Path) -> None:
    # ignored on purpose by the parent: left alone, as Python leaves an ignored SIGINT
    code, done = _sigterm_twice(tmp_path, "SIG_IGN")
    assert code == 0, done
    assert done == {"first": "ignored", "second": "ignored"}


def test_the_session_restores_the_sigterm_handler(pytester: pytest.Pytester) -> None:
    project = _project(pytester.path, [_first()])
    del project
    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        pytester.runpytest("--verial-report", "report.json")
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, before)


# -- a hard crash: os._exit and SIGKILL, then recovery ---------------------------------------

CRASHING = [
    _first(),
    {"id": "steady", "criteria": [voice_criterion("greets", contains=["good morning"])]},
    {
        "id": "crashing",
        "criteria": [
            voice_criterion("greets", contains=["good morning"]),
            {"id": "dies", "assertion": {"assert": "exit-process"}},
            voice_criterion("never", contains=["good morning"]),
        ],
    },
    {"id": "after", "criteria": [voice_criterion("greets", contains=["good morning"])]},
]


def _assert_crash_recovered(report: dict[str, Any], journal: Path) -> None:
    run = report["session"]
    assert run["status"] == "cancelled"
    assert run["recovered"]["journal"].endswith(journal.name)
    assert run["recovered"]["criterion_runs"] == 5
    tasks = task_runs(report)
    first, steady = tasks["faults.verial.yaml::first"], tasks["faults.verial.yaml::steady"]
    assert (first["status"], first["score"]) == ("completed", pytest.approx(4 / 5))
    assert (steady["status"], steady["score"]) == ("completed", 1.0)
    crashing = tasks["faults.verial.yaml::crashing"]
    assert crashing["status"] == "cancelled"
    assert [c["status"] for c in crashing["criterion_runs"]] == ["passed", "not_run", "not_run"]
    assert tasks["faults.verial.yaml::after"]["status"] == "cancelled"
    assert only_run(report)["score"] == pytest.approx((4 / 5 + 1.0) / 2)
    assert any("recovered from the journal" in w for w in run["warnings"])


def test_os_exit_in_a_check_loses_only_the_task_run_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, CRASHING)
    proc = subprocess.run(
        pytest_command("-n", "0", "--verial-report", "out/report.json", "--verial-junit", "j.xml"),
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout[-3000:]
    journal = tmp_path / "out" / JOURNAL
    assert journal.exists(), proc.stdout[-3000:]
    # the report goes where the journal's name says (out/report.json); the JUnit file the
    # session named is written only when asked for on the command line
    result = _verial_here(capsys, tmp_path, "report", "--recover", str(journal), "--junit", "j.xml")
    assert result.returncode == 0, result.stderr
    assert "JSON report recovered: " in result.stderr
    assert "status cancelled" in result.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    _assert_crash_recovered(report, journal)
    suites = {s.get("name") for s in ET.parse(tmp_path / "j.xml").getroot()}
    assert "faults.verial.yaml::first" in suites
    assert not journal.exists()


def test_the_next_session_recovers_a_crashed_one(tmp_path: Path) -> None:
    _project(tmp_path, CRASHING)
    args = ("-n", "0", "--verial-report", "report.json")
    first = subprocess.run(
        pytest_command(*args), cwd=tmp_path, env=child_env(), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert (tmp_path / JOURNAL).exists(), first.stdout[-3000:]
    (tmp_path / "faults.verial.yaml").rename(tmp_path / "faults.verial.yaml.orig")
    # the next session scores something else into the same report path
    Project(tmp_path).benchmark("other", {"tasks": [{"id": "steady", "criteria": [
        voice_criterion("greets", contains=["good morning"])]}]})  # fmt: skip
    result = subprocess.run(
        pytest_command(*args, "other.verial.yaml"), cwd=tmp_path, env=child_env(),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    # the benchmark file it was scored against moved away: refused with the reason, kept aside
    assert "faults.verial.yaml" in result.stdout and "warning:" in result.stdout, result.stdout
    assert (tmp_path / (JOURNAL + ".damaged")).exists()
    # put it back and crash again: this time the next session recovers it
    (tmp_path / "faults.verial.yaml.orig").rename(tmp_path / "faults.verial.yaml")
    subprocess.run(
        pytest_command(*args, "faults.verial.yaml"), cwd=tmp_path, env=child_env(),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    result = subprocess.run(
        pytest_command(*args, "other.verial.yaml"), cwd=tmp_path, env=child_env(),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert "2 completed task runs recovered into" in result.stdout, result.stdout[-3000:]
    recovered = json.loads((tmp_path / "report.recovered.json").read_text(encoding="utf-8"))
    _assert_crash_recovered(recovered, tmp_path / JOURNAL)
    assert not (tmp_path / JOURNAL).exists()
    assert task_runs(json.loads((tmp_path / "report.json").read_text()))  # its own report


@WORKERS
def test_sigkill_of_the_session_loses_only_the_task_run_in_flight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workers: int
) -> None:
    _project(tmp_path, [_first(), _hanging(wait_for=3)])
    proc = _start(tmp_path, "-n", str(workers), "--verial-report", "report.json")
    output = _signal_when_hanging(proc, tmp_path, signal.SIGKILL, group=False)
    assert proc.returncode == -signal.SIGKILL
    journal = tmp_path / JOURNAL
    with journal.open("ab") as handle:  # a crash in the middle of writing a line
        handle.write(b'{"nodeid": "faults.verial.yaml::second::waits", "rec')
    result = _verial_here(
        capsys, tmp_path, "report", "--recover", str(journal), "-o", "rebuilt.json"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "rebuilt.json").read_text(encoding="utf-8"))
    _assert_first_kept(report, output)
    assert report["session"]["recovered"]["criterion_runs"] == 3


def test_the_journal_holds_no_secret(tmp_path: Path) -> None:
    _project(
        tmp_path,
        [
            {"id": "leaky", "criteria": [{"id": "echo", "assertion": {"assert": "leak"}}]},
            {"id": "dies", "criteria": [{"id": "now", "assertion": {"assert": "exit-process"}}]},
        ],
    )
    subprocess.run(
        pytest_command("-n", "0", "--verial-report", "report.json"), cwd=tmp_path,
        env=child_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    text = (tmp_path / JOURNAL).read_text(encoding="utf-8")
    assert "the server echoed ***" in text
    assert "sk-journal-secret-4242" not in text


# -- a damaged journal ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"", "empty, or cut before its header"),
        (b'{"journal": "pytest-verial/jour', "empty, or cut before its header"),
        (b'{"something": "else"}\n', ":1: not a pytest-verial journal"),
        (b"\xff\xfe not text\n", ":1: damaged line (not JSON)"),
        (b"[" * 100_000 + b"\n", ":1: damaged line (not JSON)"),
        (b'{"journal": "pytest-verial/journal/v2"}\n', "header field 'files' missing"),
        (b'{"journal": "pytest-verial/journal/v1"}\n', "recover it with the version that wrote"),
    ],
    ids=["empty", "torn-header", "not-a-journal", "binary", "deep-nesting", "no-files", "v1"],
)
def test_a_damaged_journal_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    journal = tmp_path / "report.json.journal.jsonl"
    journal.write_bytes(content)
    result = _verial_here(capsys, tmp_path, "report", "--recover", str(journal))
    assert result.returncode == 2, result.stderr
    assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert journal.exists()  # never removed when nothing was recovered


@pytest.mark.parametrize("kind", ["directory", "missing"])
def test_a_journal_that_is_no_file_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    journal = tmp_path / "report.json.journal.jsonl"
    if kind == "directory":
        journal.mkdir()
    result = _verial_here(capsys, tmp_path, "report", "--recover", str(journal))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().startswith(f"verial report: {journal}: cannot read: ")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_damaged_middle_line_or_changed_benchmark_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, CRASHING)
    subprocess.run(
        pytest_command("-n", "0", "--verial-report", "report.json"), cwd=tmp_path,
        env=child_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    journal = tmp_path / JOURNAL
    good = journal.read_bytes()
    lines = good.split(b"\n")
    journal.write_bytes(b"\n".join([lines[0], b"{not json", *lines[1:]]))
    result = _verial_here(capsys, tmp_path, "report", "--recover", str(journal))
    assert (result.returncode, result.stderr.strip()) == (
        2, f"verial report: {journal}:2: damaged line (not JSON): cannot recover",
    )  # fmt: skip
    journal.write_bytes(good)
    bench = tmp_path / "faults.verial.yaml"
    bench.write_text(bench.read_text() + "\n# edited\n")
    result = _verial_here(capsys, tmp_path, "report", "--recover", str(journal))
    assert result.returncode == 2
    assert "changed since the run: cannot rebuild its report" in result.stderr, result.stderr


def test_a_journal_in_use_is_not_recovered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # held until the test kills it: under load, the second session's start-up alone can
    # take longer than a signal test's 20 s, and the first session would end (its journal
    # removed) before the second one looked
    _project(tmp_path, [_first(), _hanging(wait_for=3, hold=600)])
    proc = _start(tmp_path, "-n", "0", "--verial-report", "report.json")
    try:
        deadline = time.monotonic() + 90
        while not (tmp_path / "marker").exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        result = _verial_here(capsys, tmp_path, "report", "--recover", JOURNAL)
        assert result.returncode == 2
        assert "still running" in result.stderr, result.stderr
        second = subprocess.run(
            pytest_command("-n", "0", "--verial-report", "report.json"), cwd=tmp_path,
            env=child_env(), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert second.returncode == pytest.ExitCode.USAGE_ERROR, second.stdout[-2000:]
        assert "is being written by another session that is still running" in second.stderr
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


# -- outputs that cannot be written ------------------------------------------------------------


@WORKERS
def test_junit_is_written_when_the_json_report_cannot_be(tmp_path: Path, workers: int) -> None:
    """The report's folder becomes a file mid-run (a real fault: no mock)."""
    _project(
        tmp_path,
        [
            _first(),
            {"id": "breaks", "criteria": [
                {"id": "it", "assertion": {"assert": "break-path", "path": "out", "into": "file"}},
            ]},
        ],
    )  # fmt: skip
    proc = subprocess.run(
        pytest_command("-n", str(workers), "-p", "no:randomly", "--verial-report",
                       "out/report.json", "--verial-junit", "junit.xml"),
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, output[-3000:]
    errors = [line for line in output.splitlines() if "cannot write the JSON report" in line]
    assert len(errors) == 1 and "out/report.json" in errors[0], output[-3000:]
    assert "JSON report: " not in output  # never claimed
    assert _names(output, "JUnit report: ", "/junit.xml"), output[-3000:]
    suites = {s.get("name") for s in ET.parse(tmp_path / "junit.xml").getroot()}
    assert suites == {"faults.verial.yaml::first", "faults.verial.yaml::breaks"}
    assert "Traceback" not in output


def test_the_json_report_is_written_when_junit_cannot_be(tmp_path: Path) -> None:
    _project(
        tmp_path,
        [{"id": "breaks", "criteria": [
            {"id": "it", "assertion": {"assert": "break-path", "path": "junit.xml", "into": "dir"}},
        ]}],
    )  # fmt: skip
    proc = subprocess.run(
        pytest_command("-n", "0", "--verial-report", "report.json", "--verial-junit", "junit.xml"),
        cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode == pytest.ExitCode.INTERNAL_ERROR, output[-3000:]
    assert "ERROR: cannot write the JUnit report " in output, output[-3000:]
    assert not _names(output, "JUnit report: ", "/junit.xml"), output[-3000:]
    assert _names(output, "JSON report: ", "/report.json"), output[-3000:]
    assert json.loads((tmp_path / "report.json").read_text())["benchmark_runs"][0]["score"] == 1.0
    assert not (tmp_path / JOURNAL).exists()


def test_disk_full_on_the_report_keeps_junit_and_the_journal(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC cannot be produced on this machine's disk: the rename of the report raises it."""
    import errno

    _project(pytester.path, [_first()])
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if str(dst).endswith("report.json"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)  # the writers' atomic rename
    result = pytester.runpytest(
        "--verial-report", "report.json", "--verial-junit", "junit.xml", "--verial-fail-under", "0"
    )
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR  # not 0, though the gate is reached
    result.stdout.fnmatch_lines(
        ["ERROR: cannot write the JSON report */report.json: No space left on device"]
    )
    result.stdout.no_fnmatch_line("JSON report: *")
    result.stdout.fnmatch_lines(["*-> exit 3"])
    result.stdout.fnmatch_lines(["JUnit report: *junit.xml"])
    assert (pytester.path / "junit.xml").exists()
    assert (pytester.path / JOURNAL).exists()  # kept: the results are not on disk otherwise
