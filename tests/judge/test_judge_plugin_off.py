"""``pytest -p no:verial-judge``: the judge's pytest wiring is its own plugin (README,
"Options"). Left out, the rest of the plugin works; judge criteria are gated or bypassed as
usual and one that would call the judge is an error saying why, as with no judge model."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import pytest_verial

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._results import report_schema

BENCHMARK = """
benchmark: judge-off
version: 1
tasks:
"""
TASK = """
  - id: {id}
    criteria:
      - id: cpt
        assertion: {{assert: output-match, contains: [CPT 72148]}}
      - id: letter
        label: Letter argues medical necessity
        assertion:
          assert: llm-rubric
          principles: [The letter states why the MRI is medically necessary.]
"""
TASKS = {  # task id -> (output, cost in run.yaml)
    "judged": ("CPT 72148, six weeks of PT failed", 0.80),  # the judge would be called
    "gated": ("no code here", 0.80),  # its deterministic criterion fails
    "cheap": ("CPT 72148", 0.01),  # bypassed: cheaper than the bypass cost
}
OFF = "not evaluated: judge turned off"


def make_run(pytester: pytest.Pytester) -> Path:
    pytester.makefile(".verial.yaml", bench=BENCHMARK + "".join(TASK.format(id=t) for t in TASKS))
    run = pytester.path / "run-a"
    lines = ["executor_model: claude-sonnet-4-5", "tasks:"]
    for task, (output, cost) in TASKS.items():
        (run / task).mkdir(parents=True)
        (run / task / "output.md").write_text(output)
        lines.append(f"  {task}: {{cost: {cost}}}")
    (run / "run.yaml").write_text("\n".join(lines) + "\n")
    return run


def judge_runs(pytester: pytest.Pytester, *args: str) -> tuple[Any, dict[str, Any]]:
    """Run the benchmark; the result and the report's judge criterion runs by task."""
    report_path = pytester.path / "report.json"
    report_path.unlink(missing_ok=True)
    result = pytester.runpytest(
        "--verial-run",
        "run-a",
        "--verial-report",
        str(report_path),
        "-p",
        "no:cacheprovider",
        *args,
    )
    report = json.loads(report_path.read_text())
    jsonschema.validate(report, report_schema())
    tasks = report["benchmark_runs"][0]["task_runs"]
    judged = {
        t["task_key"]: next(c for c in t["criterion_runs"] if c["assert"] == "llm-rubric")
        for t in tasks
    }
    return result, {"report": report, "judged": judged, "tasks": {t["task_key"]: t for t in tasks}}


@pytest.mark.parametrize("n", ["0", "2"])
def test_judge_criteria_under_no_verial_judge(pytester: pytest.Pytester, n: str) -> None:
    make_run(pytester)
    result, off = judge_runs(pytester, "-p", "no:verial-judge", "-n", n)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    judged = off["judged"]
    # not evaluated (no judge to ask): an error of the verifier, out of the score
    assert judged["judged"]["status"] == "error" and judged["judged"]["score"] is None
    assert judged["judged"]["passed"] is False
    assert judged["judged"]["details"] == OFF
    assert judged["judged"]["not_evaluated"] == "judge turned off"
    assert judged["gated"]["status"] == "gated"  # the gate still comes first
    assert judged["cheap"]["status"] == "skipped"  # and so do the bypass rules
    result.stdout.fnmatch_lines(
        [
            "criterion 'letter' (llm-rubric) not evaluated: judge turned off*",
            "*to fix: the verial-judge plugin is off (-p no:verial-judge)*",
        ]
    )
    # the deterministic criteria score as before; the judge's report extension is left out
    assert off["tasks"]["judged"]["criterion_runs"][0]["status"] == "passed"
    assert off["report"]["session"].get("verification") is None
    assert all(t.get("feedback") is None for t in off["tasks"].values())
    assert "verification:" not in result.stdout.str()

    # the same outcome as a session with the judge plugin but no judge model configured
    result, unset = judge_runs(pytester, "-n", n)
    for task, run in unset["judged"].items():
        fields = ("status", "score", "passed")
        assert [run[f] for f in fields] == [judged[task][f] for f in fields], task
    assert unset["judged"]["judged"]["details"] == "not evaluated: judge not configured"
    assert unset["tasks"]["gated"]["feedback"]  # the plugin's report extension is back


def test_the_judge_options_leave_with_the_plugin(pytester: pytest.Pytester) -> None:
    make_run(pytester)
    result = pytester.runpytest("-p", "no:verial-judge", "--verial-judge-model", "gpt-4o-mini")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --verial-judge-model*"])
    # ... and judge == executor is not refused (no judge is called at all)
    result = pytester.runpytest(
        "-p", "no:verial-judge", "--verial-run", "run-a", "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, failed=2, skipped=1, errors=1)


def test_judge_equal_to_executor_is_still_refused_by_the_judge_plugin(
    pytester: pytest.Pytester,
) -> None:
    make_run(pytester)
    result = pytester.runpytest(
        "--verial-run",
        "run-a",
        "--verial-judge-model",
        "claude-sonnet-4-5",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: the judge model 'claude-sonnet-4-5' is the executor*"])


SECRET = "tok-Qm7/Vx2+Hs9=Kd"


#: one task: under xdist it goes whole to one worker, so -n 1 (a second worker would idle)
@pytest.mark.parametrize("n", ["0", "1"])
def test_run_secrets_are_masked_without_the_judge_plugin(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, n: str
) -> None:
    """The runs' secret settings are the ``verial`` plugin's to mask, judge or no judge."""
    pytester.makefile(
        ".verial.yaml",
        bench="tasks:\n  - id: t\n    criteria:\n      - id: quiet\n"
        f"        assertion: {{assert: output-match, not_contains: ['{SECRET}']}}\n",
    )
    (pytester.path / "run-a" / "t").mkdir(parents=True)
    (pytester.path / "run-a" / "t" / "output.md").write_text(f"the token is {SECRET}\n")
    (pytester.path / "run-a" / "run.yaml").write_text("sources: {fhir: {token_env: FHIR_TOK}}\n")
    monkeypatch.setenv("FHIR_TOK", SECRET)
    result = pytester.runpytest(
        "-p", "no:verial-judge", "-n", n, "--verial-run", "run-a", "--verial-report", "r.json"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = (pytester.path / "r.json").read_text()
    assert "***" in report
    assert SECRET[:8] not in report + result.stdout.str()


def _imports(path: Path) -> set[str]:
    """Absolute names of the modules ``path`` imports (relative imports resolved)."""
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[:-1])
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


SRC = Path(pytest_verial.__file__).parent


def test_the_judge_library_does_not_import_pytest() -> None:
    """The judge's pytest wiring left ``judge/``: the library serves verify_task and the
    service as it serves the plugin."""
    for path in sorted((SRC / "judge").glob("*.py")):
        assert not {"pytest", "_pytest"} & {n.split(".")[0] for n in _imports(path)}, path.name


def test_the_verial_plugin_does_not_import_the_judge_plugin() -> None:
    assert not any(n.startswith("pytest_verial.judge_plugin") for n in _imports(SRC / "plugin.py"))
