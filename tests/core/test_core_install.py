"""Honest set-up (issue 11): ``pip install .`` with no extras scores the README tutorial and
every example benchmark exactly as the full install does.

The test builds a fresh venv and installs the project into it, with no extras: with uv from
the cache the suite's own install filled (seconds), else with pip from its configured index
(a minute or more). Where neither can install it the test skips saying so, except in CI,
where that is a failure.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from core_support import REPO, child_env, shared_project

EXAMPLES = REPO / "example_benchmarks"

#: one xdist worker runs these (scripts/test: --dist loadgroup): the venv is built once under a
#: lock (``plain_python``), mostly waiting on the package index; with the tests dealt to both
#: workers, the second sat idle on the lock while the first waited on the network
pytestmark = pytest.mark.xdist_group("plain-install")


@pytest.fixture(scope="session")
def plain_python(shared_base: Path) -> Path:
    """A venv with ``pip install <repo>`` and nothing else, built once for the whole session
    however many xdist workers run these tests (the others wait for it).

    Built from a copy of what the package is made of: two builds in one source tree (its
    ``build/``) fail.
    """

    def build(root: Path) -> None:
        source = root / "source"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(REPO / name, source / name)
        shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("*.egg-info"))
        # no pip of its own (ensurepip's install of it: ~5 s of CPU): this interpreter's
        # installer installs into it, and nothing in these tests runs pip from it
        venv = [sys.executable, "-m", "venv", "--without-pip", str(root / "venv")]
        subprocess.run(venv, check=True, timeout=300)
        python = str(root / "venv" / "bin" / "python")
        # uv where scripts/_venv.sh installed it: the same dependencies from its cache of the
        # suite's own install (seconds) instead of pip resolving them over the index again
        # (a minute); the wheel of the project is built the same way (PEP 517, setuptools)
        uv = [sys.executable, "-m", "uv", "pip", "install", "-q", "--python", python]
        pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile"]
        proc = None
        for installer in (uv, pip) if importlib.util.find_spec("uv") else (pip,):
            proc = subprocess.run(
                [*installer, str(source)],
                capture_output=True,
                text=True,
                timeout=900,
                check=False,
            )
            if proc.returncode == 0:
                return
        assert proc is not None
        reason = f"pip install . failed: {proc.stderr.strip().splitlines()[-1:]}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)

    return shared_project(shared_base, "plain-install", build) / "venv" / "bin" / "python"


def _scores(python: Path, cwd: Path, out: Path, *args: str) -> dict[str, Any]:
    """Every criterion's status and score, every task's and run's score and verdict, of a
    session of ``python``'s pytest."""
    report = out / f"report-{python.parent.parent.name}.json"
    proc = subprocess.run(
        [
            str(python),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--tb=no",
            *args,
            "--verial-report",
            str(report),
        ],
        cwd=cwd,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-2000:]
    return _report_scores(report)


def _report_scores(report: Path) -> dict[str, Any]:
    """The scores ``_scores`` compares, from a JSON report."""
    data = json.loads(report.read_text(encoding="utf-8"))
    out: dict[str, Any] = {}
    for run in data["benchmark_runs"]:
        out[run["id"]] = (run["score"], run["verdict"])
        for task in run["task_runs"]:
            out[task["id"]] = (task["score"], task["verdict"], task["status"])
            for c in task["criterion_runs"]:
                out[c["nodeid"]] = (c["status"], c["score"])
    return out


@pytest.mark.parametrize("agent", ["good-agent", "flawed-agent"])
def test_examples_score_the_same_without_extras(
    plain_python: Path, agent: str, tmp_path: Path, example_runs: Path
) -> None:
    """The full install's side is ``example_runs``' session of the same run (the same
    arguments, with ``--verial-html``), scored once for the suite."""
    args = (str(EXAMPLES), "--verial-run", str(EXAMPLES / "runs" / agent))
    plain = _scores(plain_python, REPO, tmp_path, *args)
    full = _report_scores(example_runs / f"{agent}.json")
    assert plain == full
    assert not any(s == "error" for s, *_ in (v for k, v in plain.items() if k.count("::") == 2))


def test_readme_tutorial_scores_the_same_without_extras(plain_python: Path, tmp_path: Path) -> None:
    """The tutorial's benchmark (step 1) on its sandbox (step 2), as the README runner builds
    them (``readme_runner.py``)."""
    from readme_runner import blocks, commands

    readme = blocks((REPO / "README.md").read_text(encoding="utf-8"))
    tutorial = [b for b in readme if b.session == "tutorial" and not b.not_run]
    for block in (b for b in tutorial if b.file):
        target = tmp_path / block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text, encoding="utf-8")
    step_2 = next(b for b in tutorial if b.lang == "console")
    for command in commands(step_2):
        subprocess.run(["bash", "-c", command.command], cwd=tmp_path, check=True)
    plain = _scores(plain_python, tmp_path, tmp_path, "benchmarks/")
    assert plain == _scores(Path(sys.executable), tmp_path, tmp_path, "benchmarks/")
    assert plain["benchmarks/pa.verial.yaml::lumbar-mri-pa"] == (1.0, "pass", "completed")


def test_a_missing_live_client_names_the_extra(plain_python: Path, tmp_path: Path) -> None:
    """httpx is not installed without [live]: a live FHIR source says which extra to add."""
    (tmp_path / "sandbox" / "t").mkdir(parents=True)
    (tmp_path / "sandbox" / "run.yaml").write_text(
        "sources: {fhir: {base_url: 'http://127.0.0.1:9'}}\n"
    )
    (tmp_path / "b.verial.yaml").write_text(
        "tasks:\n- id: t\n  criteria:\n  - id: c\n    assertion: {assert: fhir-resource-state, "
        "resource_type: Patient, search: {family: x}, match: any}\n"
    )
    proc = subprocess.run(
        [str(plain_python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--tb=line"],
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "pip install 'pytest-verial[live]'" in proc.stdout, proc.stdout[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr
