"""Secrets read from the environment never reach a criterion run's details or evidence."""

from __future__ import annotations

import pytest
from core_support import Project, criterion_runs


def test_a_secret_echoed_by_a_check_is_masked_in_every_output(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = Project(pytester.path)
    project.conftest(
        "import os\n"
        "from typing import Literal\n"
        "from pydantic import Field\n"
        "from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec\n"
        "from pytest_verial.checks import register_secret as register\n\n"
        "class Echo(AssertionSpec):\n"
        "    kind: Literal['echo'] = Field(alias='assert')\n\n"
        "def echo(spec, ctx):\n"
        "    key = register(os.environ['PARTNER_API_KEY'])\n"
        "    return CheckOutcome(0.0, f'server said: bad key {key}', {'body': {'msg': key}})\n\n"
        "def pytest_verial_checks():\n"
        "    return [CheckSpec('echo', Echo, echo)]\n"
    )
    project.benchmark(
        "b", {"tasks": [{"id": "t", "criteria": [{"id": "c", "assertion": {"assert": "echo"}}]}]}
    )
    project.sandbox("t", {})  # an empty task folder (issue 9: a missing one is an error)
    monkeypatch.setenv("PARTNER_API_KEY", "pk-live-4242-abcdef")
    result = pytester.runpytest("--verial-report", "report.json", "--verial-junit", "j.xml")
    result.assert_outcomes(failed=1)
    assert "pk-live-4242-abcdef" not in result.stdout.str()
    assert "pk-live-4242-abcdef" not in (pytester.path / "report.json").read_text()
    assert "pk-live-4242-abcdef" not in (pytester.path / "j.xml").read_text()
    run = criterion_runs(project.read_report())["b.verial.yaml::t::c"]
    assert run["details"] == "server said: bad key ***"
    assert run["evidence"] == {"body": {"msg": "***"}}
