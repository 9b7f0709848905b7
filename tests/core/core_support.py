"""Helpers of the core suite: benchmark projects on disk, child pytest runs, report lookups.

A plain module with a name no other test directory uses (``conftest`` is re-imported per
directory, so importing helpers from it is fragile). Fixtures live in ``conftest.py``.
"""

from __future__ import annotations

import fcntl
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
JUNIT_XSD = REPO.parent / "shared" / "data" / "junit-10.xsd"
#: keys whose values legitimately differ between two runs of the same benchmark
TIMING_KEYS = frozenset({"started_at", "completed_at", "duration"})


class Project:
    """A directory holding benchmark files, run directories and conftests for one test."""

    def __init__(self, path: Path) -> None:
        self.path = path
        ini = path / "pytest.ini"
        if not ini.exists():  # pin rootdir: node ids are relative to this directory
            ini.write_text("[pytest]\n", encoding="utf-8")

    def benchmark(self, name: str, data: Any, fmt: str = "yaml") -> Path:
        """Write ``<name>.verial.<fmt>``; ``data`` is text (written as is) or an object."""
        path = self.path / f"{name}.verial.{fmt}"
        if isinstance(data, bytes):
            path.write_bytes(data)
        elif isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        elif fmt == "json":
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    def sandbox(self, task_key: str, files: dict[str, Any], run: str = "sandbox") -> Path:
        """Write files of one task run's sandbox (objects as JSON, str/bytes as they are)."""
        base = self.path / run / task_key
        for rel, content in files.items():
            target = base / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            elif isinstance(content, str):
                target.write_text(content, encoding="utf-8")
            else:
                target.write_text(json.dumps(content), encoding="utf-8")
        base.mkdir(parents=True, exist_ok=True)
        return base

    def run_yaml(self, data: dict[str, Any], run: str = "sandbox") -> None:
        """Write ``run.yaml`` of a run directory."""
        (self.path / run).mkdir(parents=True, exist_ok=True)
        (self.path / run / "run.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")

    def conftest(self, source: str) -> None:
        """Write ``conftest.py`` at the project root."""
        (self.path / "conftest.py").write_text(source, encoding="utf-8")

    def read_report(self, name: str = "report.json") -> dict[str, Any]:
        """Load a JSON report written into the project."""
        return json.loads((self.path / name).read_text(encoding="utf-8"))


def pytest_command(*args: str) -> list[str]:
    """``python -m pytest`` for a child process, without the cache plugin."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]


#: Runs pytest with SIGINT and SIGTERM at their defaults, as a terminal's Ctrl-C or a ``kill``
#: finds them. A shell without job control (``cmd &``, ``nohup``, many CI runners) starts its
#: background jobs with SIGINT ignored; an ignored signal stays ignored across ``exec``, and
#: Python then installs no KeyboardInterrupt handler, so a child that inherited it would sleep
#: through the test's Ctrl-C. That is how the Ctrl-C test once hung past its deadline.
SIGNALS_AT_DEFAULT = (
    "import runpy, signal, sys; "
    "signal.signal(signal.SIGINT, signal.default_int_handler); "
    "signal.signal(signal.SIGTERM, signal.SIG_DFL); "
    "sys.argv[0] = 'pytest'; "
    "runpy.run_module('pytest', run_name='__main__', alter_sys=True)"
)


def interruptible_pytest(*args: str) -> list[str]:
    """The command of a child pytest that receives signals as an interactive one would."""
    command = pytest_command(*args)
    assert command[1:3] == ["-m", "pytest"], command
    return [command[0], "-c", SIGNALS_AT_DEFAULT, *command[3:]]


#: ``$VERIAL_STORE`` of every child session and in-process run of the core suite (see
#: ``child_env`` and ``conftest.no_default_store``); a test of the store names its own URL, and
#: one of the default store sets ``DEFAULT_STORE`` (empty: unset, so the default applies).
NO_STORE = "none"
DEFAULT_STORE = ""


def child_env() -> dict[str, str]:
    """The environment for a child pytest: nothing from the outer session leaks in, and
    hypothesis's plugin stays out (its terminal summary imports and assertion-rewrites all of
    hypothesis: 0.8 s of each child's 1.7 s), and anyio's (it imports trio: 0.5 s of CPU in
    every child process, xdist workers included; no child session runs an async test).
    The results store is off (``$VERIAL_STORE=none``) unless the test asks for one: a child
    with the default store imports SQLAlchemy and creates and migrates a new database, 0.6 s
    of its 1.3 s of CPU, for rows no test of these reads."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest -p no:schemathesis -p no:anyio"
    env.setdefault("VERIAL_STORE", NO_STORE)
    return env


def run_subprocess(
    path: Path, *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run pytest in ``path`` in a child process; return (exit code, stdout + stderr).
    ``env`` adds variables to the child's clean environment."""
    proc = subprocess.run(
        pytest_command(*args),
        cwd=path,
        env={**child_env(), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def run_inprocess(pytester: pytest.Pytester, *args: str) -> tuple[int, str]:
    """``run_subprocess(pytester.path, *args)`` in this process (pytester's in-process run, the
    store off as in a child): for a session that needs no process of its own, saving a child's
    start-up (0.7 s of CPU). Only for one that cannot end this process (no crashing or
    ``os._exit`` check, no worker), registers no secret (no signing key, no source setting:
    the secret registry is process-wide) and whose report does not depend on the process."""
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)
    return int(result.ret), "\n".join(result.outlines + result.errlines)


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (xdist workers of the outer session)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_project(base: Path, name: str, build: Callable[[Path], object]) -> Path:
    """``base/name`` built once by ``build`` however many xdist workers ask for it."""
    path = base / name
    with file_lock(base / f"{name}.lock"):
        if not (path / ".built").exists():
            if path.exists():
                shutil.rmtree(path)
            path.mkdir(parents=True)
            build(path)
            (path / ".built").write_text("", encoding="utf-8")
    return path


#: the example runs ``score_examples`` scores (``./scripts/demo``'s)
EXAMPLE_AGENTS = ("good-agent", "flawed-agent")


def score_examples(path: Path) -> None:
    """The example benchmarks scored on each example run, one child session each, as
    ``./scripts/demo`` does: ``path/<agent>.json``, ``<agent>.html`` and ``<agent>.out`` (the
    session's exit code on its first line, then its output). Built once per suite run (the
    ``example_runs`` fixture) for the tests that read these reports, pages or outputs: each
    session is two to three seconds of CPU."""
    examples = REPO / "example_benchmarks"
    for agent in EXAMPLE_AGENTS:
        code, output = run_subprocess(
            REPO,
            str(examples),
            "--tb=no",
            "--verial-run",
            str(examples / "runs" / agent),
            "--verial-report",
            str(path / f"{agent}.json"),
            "--verial-html",
            str(path / f"{agent}.html"),
        )
        assert code in (0, 1), output[-3000:]
        (path / f"{agent}.out").write_text(f"{code}\n{output}", encoding="utf-8")


def example_output(path: Path, agent: str) -> tuple[int, str]:
    """The exit code and output of ``score_examples``'s session of ``agent``."""
    code, output = (path / f"{agent}.out").read_text(encoding="utf-8").split("\n", 1)
    return int(code), output


def strip_timing(value: Any) -> Any:
    """A copy of a report without the keys that hold times (and its seal, a digest of them)."""
    if isinstance(value, dict):
        return {
            k: strip_timing(v)
            for k, v in value.items()
            if k not in TIMING_KEYS and not (k == "integrity" and "benchmark_runs" in value)
        }
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


def write_sealed(path: Path, report: dict[str, Any]) -> Path:
    """Write an edited report sealed anew, as a forger without the signing key could: the
    checks behind the seal (merge, resume) are what such a test exercises."""
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.reporting._json_report import report_text

    path.write_text(report_text(report) + "\n", encoding="utf-8")
    return path


def criterion_runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every criterion run of a report, by node id."""
    return {c["nodeid"]: c for t in all_task_runs(report) for c in t["criterion_runs"]}


def task_runs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every task run of a report, by its id (``file::task``)."""
    return {t["id"]: t for t in all_task_runs(report)}


def all_task_runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Every task run of every benchmark run, in report order."""
    return [t for run in report["benchmark_runs"] for t in run["task_runs"]]


def only_run(report: dict[str, Any]) -> dict[str, Any]:
    """The report's one benchmark run (a test that scores one benchmark on one run folder)."""
    runs = report["benchmark_runs"]
    assert len(runs) == 1, [r["id"] for r in runs]
    return runs[0]


def portal_criterion(
    cid: str,
    resource: str,
    key: str | None,
    value: Any,
    assertions: list[dict[str, Any]],
    **extra: Any,
) -> dict[str, Any]:
    """A ``portal-state-match`` criterion."""
    correlate: dict[str, Any] = {"resource": resource}
    if key is not None:
        correlate["key"] = key
    if value is not None:
        correlate["value"] = value
    return {
        "id": cid,
        **extra,
        "assertion": {
            "assert": "portal-state-match",
            "correlate_by": correlate,
            "assertions": assertions,
        },
    }


def voice_criterion(
    cid: str,
    speaker: str | None = "agent",
    contains: list[str] | None = None,
    not_contains: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``voice-transcript`` criterion."""
    assertion: dict[str, Any] = {"assert": "voice-transcript"}
    if speaker is not None:
        assertion["speaker"] = speaker
    if contains:
        assertion["contains"] = contains
    if not_contains:
        assertion["not_contains"] = not_contains
    return {"id": cid, **extra, "assertion": assertion}


# -- a realistic benchmark shared by the report, scored-mode and xdist tests ------------------

#: every string a criterion expects; a scored run must not show any of them outside the JSON
EXPECTED_STRINGS = (
    "submitted-quokka",
    "72148-quokka",
    "quokka member number",
    "wombat secret phrase",
    "sent-platypus",
    "cardiology-platypus",
    "cardio-platypus",
    "narwhal tuesday",
    "booked-narwhal",
    "active-echidna",
)

PRIOR_AUTH: dict[str, Any] = {
    "benchmark": "prior-auth",
    "version": 3,
    "name": "Prior authorization",
    "entities": {
        "maria-chen": {"name": "Maria Chen", "request_id": "PA-1001"},
        "john-smith": {"name": "John Smith", "request_id": "PA-1002"},
    },
    "tasks": [
        {
            "id": "pa-lumbar-mri",
            "name": "Submit a PA for a lumbar MRI",
            "task_item": {"instruction": "Submit a prior authorization request for a lumbar MRI"},
            "entities": ["maria-chen", "john-smith"],
            "tags": ["prior-auth"],
            "criteria": [
                portal_criterion(
                    "pa-submitted",
                    "prior_auth_requests",
                    "request_id",
                    "{entity.request_id}",
                    [
                        {"path": "status", "expected": "submitted-quokka"},
                        {"path": "cpt", "expected": "72148-quokka"},
                    ],
                    label="PA submitted in the payer portal",
                    weight=2,
                    axis="correctness",
                ),
                voice_criterion("asks-member-id", contains=["quokka member number"], axis="safety"),
                voice_criterion("no-secret", not_contains=["wombat secret phrase"], axis="safety"),
            ],
        },
        {
            "id": "referral-cardiology",
            "name": "Send a cardiology referral",
            "tags": ["referral"],
            "criteria": [
                portal_criterion(
                    "referral-sent",
                    "referrals",
                    "referral_id",
                    "REF-77",
                    [
                        {"path": "status", "expected": "sent-platypus"},
                        {
                            "path": "specialty",
                            "op": "in",
                            "expected": ["cardiology-platypus", "cardio-platypus"],
                        },
                    ],
                ),
                portal_criterion(
                    "sent-fast",
                    "referrals",
                    "referral_id",
                    "REF-77",
                    [{"path": "days_to_send", "op": "lte", "expected": 2}],
                    weight=0.5,
                    axis="efficiency",
                ),
            ],
        },
        {
            "id": "schedule-follow-up",
            "name": "Book the follow-up visit",
            "criteria": [
                portal_criterion(
                    "appointment-booked",
                    "appointments",
                    None,
                    None,
                    [{"path": "status", "expected": "booked-narwhal"}],
                    axis="correctness",
                ),
                {
                    "id": "fax-sent",
                    "axis": "correctness",
                    "assertion": {"assert": "fax-received", "pages": 2},
                },
                voice_criterion("confirms-date", contains=["narwhal tuesday"], axis="correctness"),
            ],
        },
        {"id": "empty-task", "name": "A task nobody wrote criteria for"},
    ],
}

ELIGIBILITY: dict[str, Any] = {
    "benchmark": "eligibility",
    "tasks": [
        {
            "id": "elig-check",
            "criteria": [
                portal_criterion(
                    "coverage-active",
                    "eligibility_checks",
                    "member_id",
                    "M-555",
                    [{"path": "coverage", "expected": "active-echidna"}],
                )
            ],
        }
    ],
}

#: task run id -> (score, verdict) the prior-auth project must produce
PRIOR_AUTH_SCORES = {
    "eligibility.verial.json::elig-check": (1.0, "pass"),
    "pa.verial.yaml::pa-lumbar-mri[maria-chen]": (1.0, "pass"),
    "pa.verial.yaml::pa-lumbar-mri[john-smith]": (0.25, "partial"),
    "pa.verial.yaml::referral-cardiology": (1.0, "pass"),
    "pa.verial.yaml::schedule-follow-up": (1 / 3, "partial"),
    "pa.verial.yaml::empty-task": (0.0, "fail"),
}


def build_prior_auth_project(path: Path, run: str = "sandbox") -> Project:
    """The prior-auth benchmark, an eligibility file and a captured run with pass/partial/fail."""
    project = Project(path)
    project.benchmark("pa", PRIOR_AUTH)
    project.benchmark("eligibility", ELIGIBILITY, fmt="json")
    project.sandbox(
        "pa-lumbar-mri[maria-chen]",
        {
            "portal/prior_auth_requests.json": [
                {"request_id": "PA-1001", "status": "submitted-quokka", "cpt": "72148-quokka"}
            ],
            "voice/turns.json": [
                {"speaker": "caller", "text": "Hi, this is Maria Chen."},
                {"speaker": "agent", "text": "Could you give me your Quokka member-number?"},
            ],
        },
        run=run,
    )
    project.sandbox(
        "pa-lumbar-mri[john-smith]",
        {
            "portal/prior_auth_requests.json": [
                {"request_id": "PA-1002", "status": "draft", "cpt": "72148-quokka"}
            ],
            "voice/turns.json": [
                {"speaker": "agent", "text": "Please confirm the wombat secret phrase."}
            ],
        },
        run=run,
    )
    project.sandbox(
        "referral-cardiology",
        {
            "portal/referrals.jsonl": json.dumps(
                {
                    "referral_id": "REF-77",
                    "status": "sent-platypus",
                    "specialty": "cardio-platypus",
                    "days_to_send": 1,
                }
            )
            + "\n",
        },
        run=run,
    )
    project.sandbox(
        "schedule-follow-up",
        {
            "portal/appointments.json": '[{"status": "booked-narwhal",',  # truncated by the agent
            "voice/turns.json": [{"speaker": "agent", "text": "See you on Narwhal Tuesday!"}],
        },
        run=run,
    )
    project.sandbox(
        "elig-check",
        {
            "portal/eligibility_checks.json": [
                {"member_id": "M-555", "coverage": "active-echidna"}
            ],
        },
        run=run,
    )
    return project


class LazyRuns:
    """Child pytest runs of one project, made on first use and kept (``-n 0`` / ``-n 2``).

    The outcome is cached on disk under a lock, so when the outer suite itself runs under
    xdist, tests of one module on two workers share one child run per worker count.
    """

    def __init__(self, path: Path, *args: str) -> None:
        self.path, self.args = path, args
        self._done: dict[int, RunResult] = {}

    def get(self, workers: int) -> RunResult:
        if workers not in self._done:
            files = {k: f"{k}-{workers}" for k in ("report", "junit", "pytest_junit")}
            cache = self.path / f".run-{workers}.json"
            with file_lock(self.path / f".run-{workers}.lock"):
                if cache.exists():
                    code, output = json.loads(cache.read_text(encoding="utf-8"))
                else:
                    code, output = run_subprocess(
                        self.path,
                        "-n",
                        str(workers),
                        *self.args,
                        "--verial-report",
                        f"{files['report']}.json",
                        "--verial-junit",
                        f"{files['junit']}.xml",
                        "--junitxml",
                        f"{files['pytest_junit']}.xml",
                    )
                    cache.write_text(json.dumps([code, output]), encoding="utf-8")
            self._done[workers] = RunResult(
                code,
                output,
                self.path / f"{files['report']}.json",
                self.path / f"{files['junit']}.xml",
                self.path / f"{files['pytest_junit']}.xml",
            )
        return self._done[workers]


class RunResult:
    """What one child run left behind."""

    def __init__(
        self, code: int, output: str, report: Path, junit: Path, pytest_junit: Path
    ) -> None:
        self.code, self.output = code, output
        self.report_path, self.junit, self.pytest_junit = report, junit, pytest_junit

    @property
    def report(self) -> dict[str, Any]:
        assert self.report_path.exists(), self.output[-3000:]
        return json.loads(self.report_path.read_text(encoding="utf-8"))


# -- a check that kills its process -----------------------------------------------------

_GREETS = {"voice/turns.json": [{"speaker": "agent", "text": "Good morning!"}]}

CRASH_CHECK = """
import os
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec


class Crash(AssertionSpec):
    kind: Literal["crash"] = Field(alias="assert")


def crash(spec, ctx):
    os._exit(1)


def pytest_verial_checks():
    return [CheckSpec(name="crash", model=Crash, run=crash)]
"""


def crash_project(path: Path) -> None:
    """A benchmark whose second criterion kills the process scoring it (``os._exit``)."""
    project = Project(path)
    project.conftest(CRASH_CHECK)
    project.benchmark(
        "crashy",
        {
            "tasks": [
                {
                    "id": "crashy",
                    "criteria": [
                        voice_criterion("before", contains=["good morning"], weight=2),
                        {"id": "boom", "axis": "safety", "assertion": {"assert": "crash"}},
                        voice_criterion("after", contains=["good morning"]),
                    ],
                },
                {
                    "id": "steady",
                    "criteria": [voice_criterion("greets", contains=["good morning"])],
                },
            ]
        },
    )
    project.sandbox("crashy", _GREETS)
    project.sandbox("steady", _GREETS)


#: sandbox text with every kind of control character, for the surfaces' tests
HOSTILE = (
    "\x1b[31mRED\x1b[0m \x1b]8;;http://x\x07osc\x1b]8;;\x07 \u202eevil\u202c \u2066iso\u2069 "
    "\u202aemb\u202b \u200fmark cr\rline nul\x00 bell\x07 del\x7f nel\x85 csi\x9b2J "
    "www.evil.example HTTPS://evil.example/p?q=1 ftp://host mail me@evil.example mailto:x"
)
#: what may not reach a surface (line feed and tab are a surface's own layout)
BAD = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
LINKS = re.compile(r"://|\bwww\.|\w@[\w-]+\.|mailto:", re.IGNORECASE)


def bad_characters(text: str) -> list[str]:
    """The control and bidi characters in ``text`` that no surface may show."""
    return sorted({repr(m.group()) for m in BAD.finditer(text)})


@contextmanager
def local_http(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 for the block; yields ``http://127.0.0.1:PORT``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class QuietHandler(http.server.BaseHTTPRequestHandler):
    """A request handler that logs nothing, and answers with :meth:`reply`."""

    def reply(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


#: the evidence row key each check type writes: Verial's documented table (fieldResults,
#: field_results, assertionResults, phraseResults), ours for the output and judge checks
DOCUMENTED = {
    "fhir-resource-state": "fieldResults",
    "hl7-structural": "field_results",
    "portal-state-match": "assertionResults",
    "sftp-file-present": "fieldResults",
    "voice-transcript": "phraseResults",
    "x12-response": "fieldResults",
    "output-format": "fieldResults",
    "output-length": "fieldResults",
    "output-sections": "fieldResults",
    "output-match": "fieldResults",
    "output-json-schema": "fieldResults",
    "llm-rubric": "rubric_results",
    "output-consistency": "rubric_results",
}


def modules_of_session(path: Path, *args: str) -> set[str]:
    """The modules a pytest session with only this plugin and the store off imported (its
    conftest dumps ``sys.modules`` to modules.json at the end); the session must pass."""
    env = {**child_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": ""}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "pytest_verial.plugin"]
        + ["--verial-store", "none", *args],
        cwd=path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
    os.remove(path / "modules.json")
    return set(modules)
