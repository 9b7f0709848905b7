"""Options and ini keys checked before anything runs (issue 11): one line naming the option,
exit 4, no item run; native TOML values under pytest 9's ``[tool.pytest]`` table; the judge's
options over run.yaml. The precedence rule itself is unit-tested in test_core_options_table.py."""

from __future__ import annotations

import pytest
from core_support import Project, run_subprocess, voice_criterion

BENCH = {"tasks": [{"id": "t", "criteria": [voice_criterion("hi", contains=["hi"])]}]}
TURNS = {"voice/turns.json": [{"speaker": "agent", "text": "hi"}]}

BAD = [
    (("--verial-verification-budget", "2x"), "--verial-verification-budget: "),
    (("--verial-judge-timeout", "-5"), "--verial-judge-timeout: judge setting 'timeout': must be"),
    (("--verial-judge-timeout", "inf"), "--verial-judge-timeout: "),
    (("--verial-judge-retries", "-1"), "--verial-judge-retries: "),
    (("--verial-judge-retries", "1.5"), "expected a whole number"),
    (("--verial-judge-response-format", "xml"), "--verial-judge-response-format: "),
    (("--verial-judge-prices", "no-such-prices.yaml"), "--verial-judge-prices: "),
    (("--verial-bypass-cost", "nan"), "--verial-bypass-cost: "),
    (("--verial-pass-threshold", "1.2"), "--verial-pass-threshold: 1.2 is outside [0, 1]"),
    (("--verial-fail-under", "x"), "--verial-fail-under: 'x' is not a number"),
    (("--verial-shard", "4/3"), "--verial-shard: "),
    (("--verial-resume", "no-such.json"), "--verial-resume: "),
]


# every case at -n 0; under xdist the controller checks options before any worker starts,
# shown for the cases that used to crash or print a traceback
CASES = [
    (w, a, s) for a, s in BAD for w in ("0", "2") if w == "0" or "judge" in a[0] or "budget" in a[0]
]


@pytest.mark.parametrize(
    ("workers", "args", "says"), CASES, ids=[f"n{w}-{' '.join(a)}" for w, a, _ in CASES]
)
def test_a_bad_option_is_one_line_before_anything_runs(
    pytester: pytest.Pytester, workers: str, args: tuple[str, ...], says: str
) -> None:
    project = Project(pytester.path)
    project.benchmark("b", BENCH)
    project.sandbox("t", TURNS)
    code, output = run_subprocess(pytester.path, "-n", workers, *args, "--verial-report", "r.json")
    assert code == pytest.ExitCode.USAGE_ERROR, output[-2000:]
    errors = [line for line in output.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1 and says in errors[0], output[-2000:]
    assert "Traceback" not in output and "passed" not in output
    assert not (pytester.path / "r.json").exists()


def test_ini_text_that_is_not_a_number_names_the_key(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark("b", BENCH)
    project.sandbox("t", TURNS)
    (pytester.path / "pytest.ini").write_text("[pytest]\nverial_judge_timeout = soon\n")
    code, output = run_subprocess(pytester.path)
    assert code == pytest.ExitCode.USAGE_ERROR
    assert "--verial-judge-timeout: judge setting 'timeout': expected a number" in output


@pytest.mark.skipif(
    tuple(int(p) for p in pytest.__version__.split(".")[:2]) < (9, 2),
    reason="native TOML ini values need pytest 9.2's typed ini keys",
)
def test_native_toml_values_under_tool_pytest(pytester: pytest.Pytester) -> None:
    project = Project(pytester.path)
    project.benchmark("b", BENCH)
    project.sandbox("t", TURNS)
    (pytester.path / "pytest.ini").unlink(missing_ok=True)  # the TOML file is the config
    (pytester.path / "pyproject.toml").write_text(
        "[tool.pytest]\nverial_pass_threshold = 0.95\nverial_fail_under = 0.5\n"
        "verial_scored = true\nverial_judge_timeout = 30\nverial_judge_retries = 2\n"
        "verial_report = 'r.json'\n"
    )
    code, output = run_subprocess(pytester.path)
    assert code == 0, output[-2000:]
    report = project.read_report("r.json")
    assert report["benchmark_runs"][0]["pass_threshold"] == 0.95
    assert report["session"]["scored"] is True
    (pytester.path / "pyproject.toml").write_text("[tool.pytest]\nverial_judge_timeout = -1\n")
    code, output = run_subprocess(pytester.path)
    assert code == pytest.ExitCode.USAGE_ERROR
    assert "--verial-judge-timeout: judge setting 'timeout': must be > 0" in output


JUDGED = """
benchmark: precedence
version: 1
tasks:
  - id: t
    criteria:
      - id: hello
        assertion: {assert: output-match, contains: [hello]}
      - id: judged
        assertion: {assert: llm-rubric, principles: [It greets.]}
"""


def test_judge_options_over_run_yaml_over_the_default(pytester: pytest.Pytester) -> None:
    """Command line > ini > run.yaml > default, seen in the judge model a gated judge
    criterion records (its deterministic criterion fails: no judge is called)."""
    project = Project(pytester.path)
    project.benchmark("b", JUDGED)
    for run in ("run-a", "run-b"):
        project.sandbox("t", {"output.md": "bye"}, run=run)
    project.run_yaml({"sources": {"judge": {"model": "yaml-model"}}}, run="run-a")

    def models(*args: str) -> dict[str, str | None]:
        result = pytester.runpytest("--verial-run", "run-a", "--verial-run", "run-b", *args)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-2000:]
        report = project.read_report("r.json")
        return {
            run["runs"][0]["label"]: run["task_runs"][0]["criterion_runs"][1]["evidence"]["judge"][
                "model"
            ]
            for run in report["benchmark_runs"]
        }

    assert models("--verial-report", "r.json") == {"run-a": "yaml-model", "run-b": None}
    (pytester.path / "pytest.ini").write_text("[pytest]\nverial_judge_model = ini-model\n")
    assert models("--verial-report", "r.json") == {"run-a": "ini-model", "run-b": "ini-model"}
    both = models("--verial-report", "r.json", "--verial-judge-model", "cli-model")
    assert both == {"run-a": "cli-model", "run-b": "cli-model"}
