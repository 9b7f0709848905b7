"""One store per project (issue 34): ``pytest benchmarks/`` at the project's root and ``cd
benchmarks && pytest`` add to one history, and the session that creates the store says so in
one line. The rule (``pytest_verial.store._url.project_folder``): the nearest folder from
pytest's rootdir upward holding ``.verial/results.db`` or a project file, else the rootdir."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.store._url import project_folder

CRITERIA = """\
benchmark: prior-auth
version: 1
tasks:
  - id: lumbar-mri-pa
    criteria:
      - id: no-ssn
        assertion:
          assert: voice-transcript
          speaker: agent
          not_contains: [social security number]
"""
TURNS = '[{"speaker": "agent", "text": "Can I have your date of birth?"}]'
CREATED = "results store created: "


@pytest.fixture(autouse=True)
def _home_elsewhere(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytester makes the project folder the home folder, which the walk never climbs into:
    home is its parent here, as for a project checked out under a user's home."""
    monkeypatch.setenv("HOME", str(pytester.path.parent))


def _tutorial(root: Path) -> Path:
    """The README tutorial's layout: no ini file, the benchmark in ``benchmarks/``."""
    benchmarks = root / "benchmarks"
    (benchmarks / "sandbox" / "lumbar-mri-pa" / "voice").mkdir(parents=True)
    (benchmarks / "pa.verial.yaml").write_text(CRITERIA, encoding="utf-8")
    (benchmarks / "sandbox" / "lumbar-mri-pa" / "voice" / "turns.json").write_text(TURNS, "utf-8")
    return benchmarks


def _sessions(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[dict[str, object]]:
    """``verial runs --sessions`` as a user in ``folder`` runs it (the default store)."""
    monkeypatch.chdir(folder)
    capsys.readouterr()
    assert main(["runs", "--sessions", "--json"]) == 0
    return list(json.loads(capsys.readouterr().out))


def test_pytest_at_the_root_then_in_the_subfolder_add_to_one_history(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The tutorial's order, in a folder with no ini file, no pyproject.toml and no .git."""
    benchmarks = _tutorial(pytester.path)
    first = pytester.runpytest("benchmarks/", "-p", "no:cacheprovider")
    first.assert_outcomes(passed=1)
    store = pytester.path / ".verial" / "results.db"
    assert store.is_file()
    created = [line for line in first.outlines if line.startswith(CREATED)]
    assert created == [
        f"{CREATED}{store} (this project's history: sessions started in its folder or below "
        "add to it; verial runs lists them)"
    ]
    monkeypatch.chdir(benchmarks)
    second = pytester.runpytest("-p", "no:cacheprovider")  # rootdir: benchmarks/
    second.assert_outcomes(passed=1)
    assert not any(line.startswith(CREATED) for line in second.outlines)
    assert not (benchmarks / ".verial").exists()
    assert len(_sessions(pytester.path, monkeypatch, capsys)) == 2
    assert len(_sessions(benchmarks, monkeypatch, capsys)) == 2  # the same store from below


@pytest.mark.parametrize("marker", ["pyproject.toml", ".git"])
def test_a_project_file_above_keeps_one_history_in_either_order(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    marker: str,
) -> None:
    """With a project file (or a git checkout) at the root, the subfolder's session goes first
    and still stores at the root."""
    benchmarks = _tutorial(pytester.path)
    if marker == ".git":
        (pytester.path / ".git").mkdir()
    else:
        (pytester.path / marker).write_text("[project]\nname = 'x'\n", encoding="utf-8")
    monkeypatch.chdir(benchmarks)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert not (benchmarks / ".verial").exists()
    assert (pytester.path / ".verial" / "results.db").is_file()
    monkeypatch.chdir(pytester.path)
    pytester.runpytest("benchmarks/", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert len(_sessions(benchmarks, monkeypatch, capsys)) == 2


def test_the_walk_stops_at_a_project_file_and_below_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    (home / ".git").mkdir(parents=True)  # a dotfiles checkout of the home folder
    scratch = home / "scratch" / "deep"
    scratch.mkdir(parents=True)
    assert project_folder(scratch) == scratch  # the walk never climbs into the home folder
    inner = tmp_path / "work" / "inner" / "deep"
    inner.mkdir(parents=True)
    assert project_folder(inner) == inner  # nothing above but the temporary folder
    (tmp_path / "work" / "inner" / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "work" / ".verial").mkdir()
    (tmp_path / "work" / ".verial" / "results.db").write_bytes(b"")
    assert project_folder(inner) == tmp_path / "work" / "inner"  # the nearer one wins
    (tmp_path / "work" / "inner" / "pyproject.toml").unlink()
    assert project_folder(inner) == tmp_path / "work"
