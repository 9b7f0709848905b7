"""Sources as fixtures: overrides from conftest.py, one load per task run, new assert types."""

from __future__ import annotations

import pytest
from core_support import (
    Project,
    criterion_runs,
    portal_criterion,
    run_subprocess,
    voice_criterion,
)

from pytest_verial.sources import SOURCE_NAMES

SUBMITTED = [{"path": "status", "expected": "submitted"}]


def _pa_benchmark(project: Project, name: str = "pa", task: str = "pa") -> None:
    project.benchmark(
        name,
        {
            "tasks": [
                {
                    "id": task,
                    "criteria": [
                        portal_criterion(
                            "submitted", "prior_auth_requests", "request_id", "PA-1", SUBMITTED
                        ),
                        voice_criterion("asks-member-id", contains=["member ID"]),
                    ],
                }
            ]
        },
    )


def test_every_source_fixture_exists(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures")
    names = [
        "verial_fhir",
        "verial_hl7",
        "verial_portal",
        "verial_files",
        "verial_voice",
        "verial_x12",
        "verial_output",
        "verial_judge",
        "verial_sandbox",
    ]
    assert {f"verial_{n}" for n in SOURCE_NAMES} | {"verial_sandbox"} >= set(names)
    result.stdout.fnmatch_lines_random([f"{name}*" for name in names])


OVERRIDE = '''
import pytest

class FakePortal:
    """A live portal stand-in: the request is submitted there, whatever the snapshot says."""

    def tables(self):
        return ["prior_auth_requests"]

    def rows(self, resource):
        if resource == "prior_auth_requests":
            return [{"request_id": "PA-1", "status": "submitted"}]
        return None


@pytest.fixture
def verial_portal():
    return FakePortal()
'''


def test_overriding_verial_portal_in_a_conftest_changes_results(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    for sub in ("plain", "overridden"):
        (pytester.path / sub).mkdir()
        _pa_benchmark(Project(pytester.path / sub), sub, task=f"pa-{sub}")
        project.sandbox(
            f"pa-{sub}",
            {
                "portal/prior_auth_requests.json": [{"request_id": "PA-1", "status": "draft"}],
                "voice/turns.json": [{"speaker": "agent", "text": "Your member ID, please?"}],
            },
            run="run",
        )
    (pytester.path / "overridden" / "conftest.py").write_text(OVERRIDE, encoding="utf-8")
    result = pytester.runpytest("--verial-report", "report.json", "--verial-run", "run")
    runs = criterion_runs(project.read_report())
    # the override applies to benchmark files under its conftest only
    assert runs["overridden/overridden.verial.yaml::pa-overridden::submitted"]["status"] == "passed"
    assert runs["plain/plain.verial.yaml::pa-plain::submitted"]["status"] == "failed"
    assert runs["overridden/overridden.verial.yaml::pa-overridden::asks-member-id"]["score"] == 1.0
    result.assert_outcomes(passed=3, failed=1)


def test_files_in_subdirectories_each_read_their_own_sandbox(pytester: pytest.Pytester) -> None:
    """Two benchmark folders, each with its default ``sandbox/``: both are scored."""
    project = Project(pytester.path)
    for sub, status in (("referrals", "submitted"), ("prior-auth", "draft")):
        (pytester.path / sub).mkdir()
        _pa_benchmark(Project(pytester.path / sub), sub, task=f"pa-{sub}")
        Project(pytester.path / sub).sandbox(
            f"pa-{sub}",
            {
                "portal/prior_auth_requests.json": [{"request_id": "PA-1", "status": status}],
                "voice/turns.json": [{"speaker": "agent", "text": "Your member ID, please?"}],
            },
        )
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=3, failed=1)
    report = project.read_report()
    scores = {
        t["id"]: t["score"] for t in [t for r in report["benchmark_runs"] for t in r["task_runs"]]
    }
    assert scores == {
        "referrals/referrals.verial.yaml::pa-referrals": 1.0,
        "prior-auth/prior-auth.verial.yaml::pa-prior-auth": 0.5,
    }
    # two benchmarks: two benchmark runs, each scored on its own tasks
    assert {r["benchmark"]["file"]: r["score"] for r in report["benchmark_runs"]} == {
        "referrals/referrals.verial.yaml": 1.0,
        "prior-auth/prior-auth.verial.yaml": 0.5,
    }
    result.stdout.fnmatch_lines(["pa-prior-auth *0.500*partial*", "pa-referrals *1.000*pass*"])


def test_a_failing_source_override_is_a_criterion_error(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    _pa_benchmark(project)
    project.sandbox(
        "pa", {"portal/prior_auth_requests.json": [{"request_id": "PA-1", "status": "submitted"}]}
    )
    project.conftest(
        "import pytest\n\n@pytest.fixture\ndef verial_voice():\n"
        "    raise ConnectionError('voice service unreachable')\n"
    )
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=1, errors=1)
    runs = criterion_runs(project.read_report())
    voice = runs["pa.verial.yaml::pa::asks-member-id"]
    assert (voice["status"], voice["score"]) == ("error", 0.0)
    assert "voice service unreachable" in voice["details"]
    assert runs["pa.verial.yaml::pa::submitted"]["score"] == 1.0


def test_a_source_is_built_once_per_task_run(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.conftest(COUNTING_CONFTEST)
    criteria = [
        portal_criterion("status", "prior_auth_requests", "request_id", "PA-1", SUBMITTED),
        portal_criterion(
            "cpt",
            "prior_auth_requests",
            "request_id",
            "PA-1",
            [{"path": "cpt", "expected": "72148"}],
        ),
        portal_criterion(
            "payer", "prior_auth_requests", None, None, [{"path": "payer", "expected": "Aetna"}]
        ),
        portal_criterion("note", "notes", None, None, [{"path": "text", "op": "exists"}]),
        voice_criterion("greets", contains=["hello"]),
    ]
    project.benchmark(
        "once", {"tasks": [{"id": "a", "criteria": criteria}, {"id": "b", "criteria": criteria}]}
    )
    for key in ("a", "b"):
        project.sandbox(
            key,
            {
                "portal/prior_auth_requests.json": [
                    {"request_id": "PA-1", "status": "submitted", "cpt": "72148", "payer": "Aetna"}
                ],
                "portal/notes.jsonl": '{"text": "called payer"}\n',
                "voice/turns.json": [{"speaker": "agent", "text": "Hello"}],
            },
        )
    code, output = run_subprocess(pytester.path, "-n", "0", "-p", "no:randomly")
    assert code == 0 and "10 passed" in output, output[-2000:]
    log = (pytester.path / "builds.log").read_text(encoding="utf-8").splitlines()
    assert [line.split()[1] for line in log if line.startswith("built ")] == ["a", "b"]
    assert sorted(line.split()[1] for line in log if line.startswith("read ")) == [
        "a/notes.jsonl",
        "a/prior_auth_requests.json",
        "b/notes.jsonl",
        "b/prior_auth_requests.json",
    ]


NEW_CHECK = """
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec


class FaxReceived(AssertionSpec):
    kind: Literal["fax-received"] = Field(alias="assert")
    folder: str
    min_pages: int = Field(ge=1)


def check(spec, ctx):
    files = ctx.source("files")
    folder = files.path / spec.folder
    pages = sorted(p.name for p in folder.glob("*.pdf")) if folder.is_dir() else []
    ok = len(pages) >= spec.min_pages
    return CheckOutcome(1.0 if ok else 0.0, f"{len(pages)} pages in {spec.folder}",
                        {"pages": pages})


def pytest_verial_checks():
    return [CheckSpec(name="fax-received", model=FaxReceived, run=check, sources=("files",))]
"""


def test_a_conftest_registers_a_new_assert_type(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.conftest(NEW_CHECK)
    project.benchmark(
        "fax",
        {
            "tasks": [
                {
                    "id": "fax-referral",
                    "criteria": [
                        {
                            "id": "two-pages",
                            "assertion": {
                                "assert": "fax-received",
                                "folder": "fax/inbox",
                                "min_pages": 2,
                            },
                        },
                        {
                            "id": "five-pages",
                            "assertion": {
                                "assert": "fax-received",
                                "folder": "fax/inbox",
                                "min_pages": 5,
                            },
                        },
                    ],
                }
            ]
        },
    )
    project.sandbox(
        "fax-referral", {"sftp/fax/inbox/p1.pdf": b"%PDF-1.4", "sftp/fax/inbox/p2.pdf": b"%PDF-1.4"}
    )
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=1)
    runs = criterion_runs(project.read_report())
    two = runs["fax.verial.yaml::fax-referral::two-pages"]
    assert two["evidence"] == {"pages": ["p1.pdf", "p2.pdf"]}
    assert two["details"] == "2 pages in fax/inbox"
    assert runs["fax.verial.yaml::fax-referral::five-pages"]["score"] == 0.0


def test_a_new_assert_type_validates_its_fields_at_collection(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.conftest(NEW_CHECK)
    project.benchmark(
        "fax",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "id": "c",
                            "assertion": {"assert": "fax-received", "folder": "x", "min_pages": 0},
                        }
                    ],
                }
            ]
        },
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["fax.verial.yaml:*: task 't', criterion 'c', field 'assertion.min_pages': *"]
    )
    assert "Traceback" not in result.stdout.str()


def test_registering_a_name_twice_is_a_clear_error(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.conftest(NEW_CHECK.replace('name="fax-received"', 'name="portal-state-match"'))
    _pa_benchmark(project)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    output = result.stdout.str()
    assert "Traceback" not in output
    result.stdout.fnmatch_lines(
        ["*pa.verial.yaml*assert type 'portal-state-match' is registered twice*"]
    )


COUNTING_CONFTEST = """
import importlib
import os
import sys
from pathlib import Path

from pytest_verial._config.source_table import SOURCE_FACTORIES

LOG = Path(__file__).parent / "builds.log"
# the built-in portal factory, by the import path the public table names it with
_module, _, _name = SOURCE_FACTORIES["portal"].partition(":")
_real = getattr(importlib.import_module(_module), _name)


def _log(line):
    with LOG.open("a") as log:
        log.write(f"{line}\\n")


def _counting(sandbox):
    _log(f"built {sandbox.task_key} {os.getpid()}")
    return _real(sandbox)


def _opened(event, args):
    # every file opened below a portal/ folder, however it is read (PEP 578 audit events)
    if event == "open" and isinstance(args[0], (str, os.PathLike)):
        path = Path(os.fspath(args[0]))
        if path.parent.name == "portal":
            _log(f"read {path.parent.parent.name}/{path.name} {os.getpid()}")


SOURCE_FACTORIES["portal"] = "conftest:_counting"
sys.addaudithook(_opened)
"""


def test_under_xdist_each_task_run_builds_its_source_once(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.conftest(COUNTING_CONFTEST)
    criteria = [
        portal_criterion(f"c{i}", "prior_auth_requests", "request_id", "PA-1", SUBMITTED)
        for i in range(4)
    ]
    keys = [f"task-{n}" for n in range(6)]
    project.benchmark("many", {"tasks": [{"id": k, "criteria": criteria} for k in keys]})
    for key in keys:
        project.sandbox(
            key,
            {"portal/prior_auth_requests.json": [{"request_id": "PA-1", "status": "submitted"}]},
        )
    code, output = run_subprocess(pytester.path, "-n", "2")
    assert code == 0, output[-2000:]
    log = (pytester.path / "builds.log").read_text(encoding="utf-8").splitlines()
    builds = [line.split() for line in log if line.startswith("built ")]
    assert sorted(b[1] for b in builds) == keys  # one per task run, its 4 criteria anywhere
    assert len({b[2] for b in builds}) == 2  # both workers were used


ODD_SCORES = """
from typing import Literal

from pydantic import Field

from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec


class Odd(AssertionSpec):
    kind: Literal["odd"] = Field(alias="assert")
    value: float | str


def odd(spec, ctx):
    return CheckOutcome(float(spec.value), f"returned {spec.value}")


def pytest_verial_checks():
    return [CheckSpec(name="odd", model=Odd, run=odd)]


def pytest_verial_report(report):
    report["extensions"]["ci"] = {"pipeline": "nightly"}
"""


def test_check_scores_are_bounded_and_the_report_hook_runs(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.conftest(ODD_SCORES)
    project.benchmark(
        "odd",
        {
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {"id": "over", "assertion": {"assert": "odd", "value": 1.5}},
                        {"id": "under", "assertion": {"assert": "odd", "value": -2}},
                        {"id": "nan", "assertion": {"assert": "odd", "value": "nan"}},
                    ],
                }
            ]
        },
    )
    # the check makes the NaN itself: a benchmark file's .nan is refused at load (safeparse)
    project.sandbox("t", {})  # an empty task folder (issue 9: a missing one is an error)
    result = pytester.runpytest("--verial-report", "report.json")
    result.assert_outcomes(passed=1, failed=2)
    report = project.read_report()
    runs = criterion_runs(report)
    assert [runs[f"odd.verial.yaml::t::{c}"]["score"] for c in ("over", "under", "nan")] == [
        1.0,
        0.0,
        0.0,
    ]
    assert report["extensions"]["ci"] == {"pipeline": "nightly"}
