"""README.md runs itself (issue 34): its tutorial, its console samples and its Extending
example are run as printed, each session in a fresh folder, and their output is compared with
the README's (ids, times and folders masked): a changed command or output fails here. The
runner and its markers: ``readme_runner.py``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from core_support import REPO, child_env
from readme_runner import (
    SHELLS,
    Block,
    Command,
    blocks,
    commands,
    matches,
    normalize,
    run,
    shell_env,
)

README = REPO / "README.md"


def _demo(folder: Path, env: dict[str, str]) -> None:
    """As ``./scripts/demo`` leaves a checkout: the example benchmarks scored on each captured
    run, one session each (flawed-agent, then good-agent), with reports/<run>.json, in a git
    checkout (the runs' commit column)."""
    shutil.copytree(REPO / "example_benchmarks", folder / "example_benchmarks")
    git = ["git", "-c", "user.name=you", "-c", "user.email=you@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "examples"]):
        subprocess.run([*git, *args], cwd=folder, env=env, check=True, capture_output=True)
    (folder / "reports").mkdir()
    for run_dir in sorted((folder / "example_benchmarks" / "runs").iterdir()):
        label = run_dir.name
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "example_benchmarks",
                "-p",
                "no:cacheprovider",
                "-q",
                "--tb=no",
                "--no-header",
                "--verial-run",
                f"example_benchmarks/runs/{label}",
                "--verial-report",
                f"reports/{label}.json",
                "--verial-junit",
                f"reports/{label}.junit.xml",
            ],
            cwd=folder,
            env=env,
            check=False,
            capture_output=True,
            timeout=300,
        )
        assert (folder / "reports" / f"{label}.json").is_file(), label


#: sessions prepared before their first block runs, as the README says they are
SETUPS: dict[str, Callable[[Path, dict[str, str]], None]] = {"demo": _demo}


def _blocks() -> list[Block]:
    return blocks(README.read_text(encoding="utf-8"))


def _sessions() -> list[str]:
    return list(dict.fromkeys(b.session for b in _blocks() if b.session and not b.not_run))


def test_every_shell_sample_runs_or_says_why_not() -> None:
    """A shell block is a console session the runner checks, a file it writes, or marked
    ``<!-- readme: not run: REASON -->``; nothing is left unchecked by accident."""
    unmarked = [
        f"README.md:{b.line}: ```{b.lang} block"
        for b in _blocks()
        if b.lang in SHELLS
        and not b.not_run
        and not b.file
        and (b.lang != "console" or b.session is None)
    ]
    assert unmarked == [], "mark them <!-- readme: not run: why --> or make them run"
    assert {"tutorial", "demo", "extending"} <= set(_sessions())


@pytest.mark.parametrize("session", _sessions())
def test_readme_session_runs_as_printed(session: str, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    base = {k: v for k, v in child_env().items() if not k.startswith("VERIAL_")}
    env = shell_env(Path(sys.executable).parent, tmp_path, base)
    setup = SETUPS.get(session)
    if setup is not None:
        setup(folder, env)
    ran = 0
    for block in _blocks():
        if block.session != session or block.not_run:
            continue
        if block.file:
            path = folder / block.file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text, encoding="utf-8")
            continue
        if block.lang != "console":
            continue
        for command in commands(block):
            output = run(command, folder, env)
            actual = [normalize(line, folder) for line in output.splitlines()]
            expected = [normalize(line) for line in command.expected]
            if not matches(expected, actual):
                shown = "\n".join(f"    {line}" for line in output.rstrip().splitlines())
                pytest.fail(
                    f"README.md:{command.line}: $ {command.command}\n"
                    f"  printed (update the README's sample if this is right):\n{shown}",
                    pytrace=False,
                )
            ran += 1
    assert ran, f"session {session}: no command ran"


def test_the_runner_matches_and_masks() -> None:
    """The runner's own rules, so that a sample cannot pass by accident."""
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a"], ["a", "extra"])
    assert matches(["x ... z"], ["x anything z"])
    assert not matches(["x ... z"], ["x anything"])
    line = "br_01M8EM2APKX21KNG1PNSQ6N5WR  2026-11-27 13:45  verification@1  1.00   0cf5ec27a5"
    assert normalize(line) == "br_<id> <time> verification@1 1.00 <commit>"
    assert normalize("=" * 30 + " verial summary " + "=" * 50) == "== verial summary =="
    assert normalize("2 passed in 0.24s") == normalize("2 passed in 13.02s")
    folder = Path(os.sep, "tmp", "x", "project")
    assert normalize(f"JSON report: {folder}/r.json", folder) == (
        "JSON report: /home/you/project/r.json"
    )


def test_a_verial_command_run_in_process_prints_what_the_script_prints(tmp_path: Path) -> None:
    """``run`` takes the README's ``verial`` commands in-process: their output, stderr
    included, and the exit status the README echoes are the console script's in ``bash``."""
    env = shell_env(Path(sys.executable).parent, tmp_path, child_env())
    for text in (  # a refusal on stderr with its status; argparse's usage error (SystemExit)
        'verial compare base.json head.json; echo "exit status $?"',
        "verial runs --no-such-option",
    ):
        inprocess = run(Command(1, text), tmp_path, env)
        script = subprocess.run(
            ["bash", "-c", text],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
            check=False,
        ).stdout
        assert inprocess.strip() and inprocess == script, text
    assert run(Command(1, "verial validate nothing/ | cat"), tmp_path, env).startswith("verial")
