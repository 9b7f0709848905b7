"""The options table (``pytest_verial._options``) is the one place options are declared: pytest
registers exactly its rows, the judge's settings agree with it, and README.md's options table
is generated from it (``scripts/options_table.py``; this test is the CI check)."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from core_support import REPO

# private module: unit test of the options table (docs generated from it)
from pytest_verial._options import JUDGE_PLUGIN, OPTIONS, markdown_table, of_plugin, option
from pytest_verial._scoring import DEFAULT_VERDICT_THRESHOLD
from pytest_verial.judge import JudgeSettings
from pytest_verial.judge._settings import _KEYS, JudgeOptions

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
