"""The options table (``pytest_verial._config.options``) is the one place options are declared:
pytest registers exactly its rows, the judge's settings agree with it, and README.md's options table
is generated from it (``scripts/options_table.py``; this test is the CI check); and the one
precedence every option is resolved by (command line, environment, ini, default) into the
session's frozen settings. The options' user-visible errors and precedence through a session
are in test_core_options.py."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from core_support import REPO

from pytest_verial import UsageError

# private: unit test of the options table and its resolution, which have no public face
from pytest_verial._config.options import (
    JUDGE_PLUGIN,
    OPTIONS,
    markdown_table,
    of_plugin,
    option,
    resolve,
)
from pytest_verial._config.settings import Settings
from pytest_verial._config.stash import SETTINGS
from pytest_verial._scoring import DEFAULT_VERDICT_THRESHOLD

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.judge._settings import _KEYS, JudgeOptions, JudgeSettings

SCRIPT = REPO / "scripts" / "options_table.py"


def options_table(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False
    )


def test_the_readme_table_is_the_generated_one() -> None:
    done = options_table("--check")
    assert done.returncode == 0, done.stderr
    assert markdown_table() in (REPO / "README.md").read_text(encoding="utf-8")


def test_a_readme_table_edited_by_hand_fails_the_check(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    text = (REPO / "README.md").read_text(encoding="utf-8")
    readme.write_text(text.replace("write the Markdown summary", "write a summary"))
    done = options_table("--check", "--readme", str(readme))
    assert done.returncode == 1 and "scripts/options_table.py --write" in done.stderr
    assert options_table("--write", "--readme", str(readme)).returncode == 0
    assert readme.read_text(encoding="utf-8") == text
    readme.write_text("no markers\n")
    assert options_table("--check", "--readme", str(readme)).returncode == 2


def test_pytest_registers_exactly_the_table(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    text = result.stdout.str()
    flags = set(re.findall(r"^\s+(--verial-[a-z-]+)", text, re.M))
    keys = set(re.findall(r"^\s+(verial_[a-z_]+) \(", text, re.M))
    assert flags == {o.flag for o in OPTIONS if o.flag}
    assert keys == {o.name for o in OPTIONS}
    # without the judge plugin, its rows are not registered
    text = pytester.runpytest("--help", "-p", "no:verial-judge").stdout.str()
    assert set(re.findall(r"^\s+(--verial-[a-z-]+)", text, re.M)) == {
        o.flag for o in OPTIONS if o.flag and o.plugin != JUDGE_PLUGIN
    }


def test_the_judge_settings_agree_with_the_table() -> None:
    judge = of_plugin(JUDGE_PLUGIN)
    assert [f.name for f in fields(JudgeOptions)] == [o.key for o in judge]
    run_yaml = {key: f"sources.judge.{name}" for key, name in _KEYS.values()}
    run_yaml.update(executor_model="executor_model", judge_prices="sources.judge.prices")
    for opt in judge:
        if opt.run_yaml is not None:
            assert opt.run_yaml == run_yaml[opt.key], opt.name
    defaults = JudgeSettings()
    assert defaults.base_url == option("verial_judge_base_url").default
    assert defaults.timeout == option("verial_judge_timeout").default
    assert defaults.retries == option("verial_judge_retries").default
    assert defaults.samples == option("verial_judge_samples").default
    assert defaults.bypass_cost == option("verial_bypass_cost").default


def test_help_texts_name_the_defaults() -> None:
    for opt in OPTIONS:
        if isinstance(opt.default, (int, float)) and not isinstance(opt.default, bool):
            assert f"default {opt.default:g}" in opt.help, opt.name
    assert f"default {DEFAULT_VERDICT_THRESHOLD:g}" in option("verial_pass_threshold").help


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
