"""``verial init`` (issue 34): a working benchmark, a sample run folder and the pytest
configuration, so that the next ``pytest`` scores them; it never overwrites a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial.cli import main

#: what init writes (README, "A five-minute tutorial")
FILES = [
    "benchmarks/prior-auth.verial.yaml",
    "runs/sample-agent/run.yaml",
    "runs/sample-agent/lumbar-mri-pa/portal/prior_auth_requests.json",
    "runs/sample-agent/lumbar-mri-pa/voice/turns.json",
    "pytest.ini",
]


def test_init_in_an_empty_folder_then_pytest_scores_it(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(pytester.path)]) == 0
    out = capsys.readouterr().out
    assert sorted(p.relative_to(pytester.path).as_posix() for p in _files(pytester.path)) == sorted(
        FILES
    )
    assert "next: " in out and "pytest" in out
    result = pytester.runpytest("-p", "no:cacheprovider")  # no argument: pytest.ini says what
    result.assert_outcomes(passed=2)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "benchmark run prior-auth@1 on sample-agent (benchmarks/prior-auth.verial.yaml)",
            "lumbar-mri-pa   1.000  pass      correctness 1.00 (w2)  safety 1.00 (w1)",
            "run score 1.000, verdict pass, strict success 100%, status completed",
        ]
    )


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and ".verial" not in p.parts]


def test_init_never_overwrites_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "benchmarks" / "prior-auth.verial.yaml"
    mine.parent.mkdir()
    mine.write_text("benchmark: mine\n", encoding="utf-8")
    assert main(["init", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "benchmarks/prior-auth.verial.yaml already exists" in err and "nothing written" in err
    assert mine.read_text(encoding="utf-8") == "benchmark: mine\n"
    assert _files(tmp_path) == [mine]  # all or nothing: no other file was written


def test_init_keeps_the_project_s_pytest_configuration(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pytest.ini beside a pyproject.toml that configures pytest would silently replace it:
    init writes the benchmark and the run folder, and says what to add."""
    config = '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n'
    (pytester.path / "pyproject.toml").write_text(config, encoding="utf-8")
    assert main(["init", str(pytester.path)]) == 0
    out = capsys.readouterr().out
    assert not (pytester.path / "pytest.ini").exists()
    assert (pytester.path / "pyproject.toml").read_text(encoding="utf-8") == config
    assert "your pytest configuration (pyproject.toml) is kept" in out
    pytester.runpytest("benchmarks", "--verial-run", "runs/sample-agent").assert_outcomes(passed=2)


def test_init_into_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("", encoding="utf-8")
    assert main(["init", str(tmp_path / "f")]) == 2
    assert capsys.readouterr().err == f"verial init: {tmp_path / 'f'} is not a folder\n"
