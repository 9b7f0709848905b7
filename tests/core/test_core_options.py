"""Options and ini keys checked before anything runs (issue 11): one line naming the option,
exit 4, no item run; native TOML values under pytest 9's ``[tool.pytest]`` table."""

from __future__ import annotations

from pathlib import Path

import pytest
from core_support import Project, run_subprocess, voice_criterion

from pytest_verial import UsageError

# private module: unit test of option resolution into the frozen Settings
from pytest_verial._options import option, resolve
from pytest_verial._settings import Settings
from pytest_verial._state import SETTINGS

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


# -- one precedence for every option (README, "Options") -------------------------------------


def test_precedence_command_line_environment_ini_default(tmp_path: Path) -> None:
    store = option("verial_store")
    env = {"VERIAL_STORE": "sqlite:///env.db"}
    ini = "sqlite:///ini.db"
    given = {"environ": env, "ini": ini, "rootdir": tmp_path}
    assert resolve(store, cli="sqlite:///cli.db", **given) == "sqlite:///cli.db"
    assert resolve(store, **given) == "sqlite:///env.db"
    assert resolve(store, **{**given, "environ": {"VERIAL_STORE": ""}}) == ini  # empty: unset
    default = f"sqlite:///{tmp_path.resolve()}/.verial/results.db"
    assert resolve(store, environ={}, rootdir=tmp_path) == default
    # an option with a run.yaml key is left unset for run.yaml, then its default, per run
    assert resolve(option("verial_judge_timeout"), rootdir=tmp_path) is None
    assert resolve(option("verial_judge_timeout"), ini=30.0) == 30.0
    # a path is relative to the working directory on the command line, to rootdir in the ini
    cwd, root = tmp_path / "cwd", tmp_path / "root"
    report = option("verial_report")
    assert resolve(report, cli="r.json", ini="i.json", cwd=cwd, rootdir=root) == cwd / "r.json"
    assert resolve(report, ini="i.json", cwd=cwd, rootdir=root) == root / "i.json"
    assert resolve(report, cwd=cwd, rootdir=root) is None
    # the errors keep their words, naming the option
    with pytest.raises(UsageError, match=r"^--verial-fail-under: 'x' is not a number$"):
        resolve(option("verial_fail_under"), ini="x")


def test_precedence_in_a_session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings a session builds once, from its command line, environment and ini file."""
    pytester.makeini(
        "[pytest]\nverial_store = sqlite:///ini.db\nverial_pass_threshold = 0.5\n"
        "verial_judge_timeout = 30\nverial_judge_cache_dir = cache\n"
    )
    monkeypatch.setenv("VERIAL_STORE", "sqlite:///env.db")

    def settings(*args: str) -> Settings:
        return pytester.parseconfigure(*args).stash[SETTINGS]

    first = settings("--verial-store", "sqlite:///cli.db", "--verial-pass-threshold", "0.7")
    assert first.store.url == "sqlite:///cli.db" and first.pass_threshold == 0.7
    second = settings()
    assert second.store.url == "sqlite:///env.db" and second.pass_threshold == 0.5
    assert second.judge is not None and second.judge.judge_timeout == 30.0
    assert second.check_options["judge_cache_dir"] == str(pytester.path / "cache")
    monkeypatch.delenv("VERIAL_STORE")
    assert settings().store.url == "sqlite:///ini.db"
    pytester.makeini("[pytest]\n")
    last = settings()
    assert last.store.url == f"sqlite:///{pytester.path.resolve()}/.verial/results.db"
    assert last.pass_threshold is None  # the verdict hierarchy's default comes later
    assert last.check_options == {  # the session's own defaults (no run.yaml key)
        "judge_cache_dir": str(pytester.path / ".verial-cache/judge"),
        "judge_concurrency": 4,
    }
    assert settings("--verial-store", "NONE").store.url is None


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
