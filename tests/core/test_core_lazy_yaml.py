"""A session reading no YAML does not import PyYAML (issue 33: ``pytest --co`` start-up).

PyYAML was imported by every pytest process the plugin loads in (the safe parser and the
line-remembering loader imported it at module level), though a project of JSON benchmark files
and run folders without run.yaml reads no YAML at all: ~20-40 ms of start-up
(BENCHMARKS.md, "issue 33, wave 7"). It is now imported when a YAML text is first read. Each
session runs in a child process with only the plugin loaded (other plugins may import PyYAML
themselves) and lists the modules it imported at its end.
"""

from __future__ import annotations

import json

import pytest
from core_support import Project, modules_of_session, portal_criterion

MODULES = """
import json, sys

def pytest_sessionfinish(session):
    with open("modules.json", "w") as out:
        json.dump(sorted(sys.modules), out)
"""


def _project(project: Project, fmt: str, run_yaml: bool) -> None:
    criterion = portal_criterion(
        "submitted", "prior_auth_requests", None, None, [{"path": "status", "expected": "x"}]
    )
    project.benchmark("pa", {"tasks": [{"id": "pa", "criteria": [criterion]}]}, fmt=fmt)
    project.sandbox("pa", {"portal/prior_auth_requests.json": [{"status": "x"}]})
    if run_yaml:
        project.run_yaml({"agent": "a"})
    (project.path / "conftest.py").write_text(MODULES, encoding="utf-8")


@pytest.mark.parametrize("args", [("--co",), ("--verial-report", "r.json")], ids=["co", "run"])
def test_json_benchmarks_without_run_yaml_import_no_yaml(
    project: Project, args: tuple[str, ...]
) -> None:
    _project(project, "json", run_yaml=False)
    modules = modules_of_session(project.path, "--verial-run", "sandbox", *args)
    assert "pytest_verial._yamlsource" in modules  # the plugin loaded its parser
    assert not {m for m in modules if m == "yaml" or m.startswith("yaml.")}


@pytest.mark.parametrize(("fmt", "run_yaml"), [("yaml", False), ("json", True)])
def test_a_yaml_text_still_imports_and_reads_it(project: Project, fmt: str, run_yaml: bool) -> None:
    """A YAML benchmark file, or a run.yaml beside JSON benchmarks: read as before."""
    _project(project, fmt, run_yaml)
    modules = modules_of_session(
        project.path, "--verial-run", "sandbox", "--verial-report", "r.json"
    )
    assert "yaml" in modules
    report = json.loads((project.path / "r.json").read_text(encoding="utf-8"))
    (run,) = report["benchmark_runs"]
    assert run["task_runs"][0]["criterion_runs"][0]["status"] == "passed"
    assert [r["agent"] for r in run["runs"]] == (["a"] if run_yaml else [None])
