"""``verial validate`` warnings and contract guards (issue 11 item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial.cli import main

ROOT = Path(__file__).resolve().parents[2]

BENCH = """\
benchmark: guards
tasks:
  - id: t1
    criteria:
      - id: says-hello
        assertion: {assert: output-match, contains: [hello]}
      - id: no-refusal
        assertion: {assert: output-match, not_contains: [sorry]}
  - id: t2
    criteria:
      - id: words
        assertion: {assert: output-length, min_words: 1}
  - id: t3
"""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["validate", *argv])
    return code, capsys.readouterr().out


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    path = tmp_path / "b" / "guards.verial.yaml"
    path.parent.mkdir()
    path.write_text(BENCH)
    return path


def test_warnings(capsys: pytest.CaptureFixture[str], bench: Path) -> None:
    (bench.parent / "stray.yaml").write_text("- id: x\n  criteria: []\n")
    code, out = _run(capsys, str(bench.parent))
    assert code == 0, out
    assert "task t3: warning: no criteria" in out
    assert "stray.yaml: warning: looks like a benchmark but is not named *.verial.*" in out
    assert "ok, 3 task runs" in out


@pytest.mark.parametrize("name", ["output-lenght", "portal-state-mach", "no-such-check"])
def test_an_unknown_check_is_a_warning_and_an_error_with_strict(
    capsys: pytest.CaptureFixture[str], bench: Path, name: str
) -> None:
    """A criterion that can only score 0 is what pytest warns of (Verial fails it, it is not a
    load error): a warning with a did-you-mean, exit 0; with --strict (as --verial-strict for
    pytest) an error, exit 1."""
    bench.write_text(bench.read_text().replace("assert: output-length", f"assert: {name}"))
    code, out = _run(capsys, str(bench))
    assert code == 0, out
    line = next(line for line in out.splitlines() if name in line)
    assert f"task t2: criterion words: warning: unknown check '{name}'" in line
    assert ("did you mean" in line) is (name != "no-such-check")
    assert "ok, 3 task runs" in out
    code, out = _run(capsys, "--strict", str(bench))
    assert code == 1, out
    assert "ok," not in out
    line = next(line for line in out.splitlines() if name in line)
    assert "task t2: criterion words: field 'assertion.assert'" in line
    assert ("did you mean" in line) is (name != "no-such-check")


@pytest.mark.parametrize(
    "bad, good, where",
    [
        ("min_words", "min_wrds", "assertion.min_wrds"),
        ("- id: says-hello", "- id: says-hello\n        wieght: 2", "wieght"),
        ("  - id: t3", "  - id: t3\n    critera: []", "critera"),
    ],
)
def test_a_field_typo_gets_a_did_you_mean(
    capsys: pytest.CaptureFixture[str], bench: Path, bad: str, good: str, where: str
) -> None:
    bench.write_text(bench.read_text().replace(bad, good, 1))
    code, out = _run(capsys, str(bench))
    assert code == 1
    line = next(line for line in out.splitlines() if f"'{where}'" in line)
    assert "did you mean '" in line, line


def test_run_guard(capsys: pytest.CaptureFixture[str], bench: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    for key in ("t1", "t2"):
        (run / key).mkdir(parents=True)
    code, out = _run(capsys, str(bench), "--run", str(run))
    assert code == 1
    assert "task t3: no sandbox folder" in out and "task t1: no sandbox" not in out


def test_baseline_dir_lists_do_nothing_criteria(
    capsys: pytest.CaptureFixture[str], bench: Path, tmp_path: Path
) -> None:
    pristine = tmp_path / "pristine"
    for key in ("t1", "t2", "t3"):
        (pristine / key).mkdir(parents=True)
    (pristine / "t1" / "output.md").write_text("\n")
    code, out = _run(capsys, str(bench), "--baseline", str(pristine))
    assert code == 1
    assert "criterion no-refusal: passes on the baseline sandbox" in out
    assert "says-hello" not in out


def test_oracle_guard(capsys: pytest.CaptureFixture[str], bench: Path, tmp_path: Path) -> None:
    oracle = tmp_path / "oracle"
    for key in ("t1", "t2", "t3"):
        (oracle / key).mkdir(parents=True)
    (oracle / "t1" / "output.md").write_text("hello there\n")
    code, out = _run(capsys, str(bench), "--oracle", str(oracle))
    assert code == 1
    assert "task t1: scores" not in out
    assert "task t2: scores 0" in out


def test_examples_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, str(ROOT / "example_benchmarks"), "--baseline", "empty")
    assert code == 1
    assert "criterion no-new-orders: passes on the baseline sandbox" in out
    assert "Traceback" not in out


def test_bad_guard_dir_and_conftest_are_one_line(
    capsys: pytest.CaptureFixture[str], bench: Path, tmp_path: Path
) -> None:
    code, out = _run(capsys, str(bench), "--oracle", str(tmp_path / "missing"))
    assert code == 2 and out.strip() == f"--oracle: {tmp_path / 'missing'} is not a directory"
    (bench.parent / "conftest.py").write_text("raise RuntimeError('boom')\n")
    code, out = _run(capsys, str(bench))
    assert code == 1 and f"{bench.parent / 'conftest.py'}: failed to load" in out
    assert "boom" in out and len(out.splitlines()) == 1
    assert "Traceback" not in out


def test_fhir_search_and_fhirpath_errors_are_found_before_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What every run would error on is an error of validate: an unknown search parameter
    (with the nearest one), a FHIRPath that does not compile. HL7 and X12 paths are checked
    by the loader itself."""
    bench = tmp_path / "b.verial.yaml"
    bench.write_text(
        "tasks:\n- id: t\n  criteria:\n"
        "  - id: bad-path\n    assertion: {assert: fhir-resource-state, resource_type: Patient,"
        " search: {family: x}, match: any, fields: [{path: 'name.where(', expected: x}]}\n"
        "  - id: bad-param\n    assertion: {assert: fhir-resource-state, resource_type: Patient,"
        " search: {famly: x}, match: any}\n"
        "  - id: bad-hl7\n    assertion: {assert: hl7-structural, fields: [{path: 'PID..3',"
        " expected: x}]}\n"
    )
    assert main(["validate", str(bench)]) == 1
    out = capsys.readouterr().out
    assert "HL7 path 'PID..3'" in out  # the loader's error stops the file first
    bench.write_text(bench.read_text().split("  - id: bad-hl7")[0])
    assert main(["validate", str(bench)]) == 1
    out = capsys.readouterr().out
    assert "criterion bad-path: field 'assertion.fields[0].path': invalid FHIRPath" in out
    assert "unknown search parameter 'famly' for Patient; did you mean family?" in out


@pytest.mark.parametrize(
    "search",
    [
        '{subject: ""}',
        "{subject: '  ', status: booked}",
        "{status: [booked, '']}",
        "{subject: null}",
        "{subject: []}",
    ],
)
def test_an_empty_fhir_search_value_is_refused_at_collection(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, search: str
) -> None:
    """``subject=`` silently matches nothing on a FHIR server: refused before any run, in the
    line naming the file, task, criterion and field (the plugin's collection uses the same
    loader)."""
    from pytest_verial import BenchmarkFileError, load_benchmark
    from pytest_verial.checks import default_registry

    path = tmp_path / "f.verial.yaml"
    path.write_text(
        "benchmark: f\ntasks:\n  - id: t1\n    criteria:\n      - id: appt\n        assertion:\n"
        "          assert: fhir-resource-state\n          resource_type: Appointment\n"
        f"          search: {search}\n"
    )
    with pytest.raises(BenchmarkFileError) as refused:
        load_benchmark(path, default_registry())
    (problem,) = refused.value.problems
    text = str(problem)
    assert "task 't1', criterion 'appt', field 'assertion.search'" in text
    assert "empty value" in text and str(path) in text
    code, out = _run(capsys, str(path))
    assert code == 1 and "empty value" in out


# -- issue 31: validate walks as pytest collects -----------------------------------------------
CUSTOM_CHECK = """\
from typing import Literal
from pydantic import Field
from pytest_verial import AssertionSpec, CheckOutcome, CheckSpec


class Always(AssertionSpec):
    kind: Literal["always"] = Field(alias="assert")


def pytest_verial_checks():
    return [CheckSpec("always", Always, lambda spec, ctx: CheckOutcome(1.0, "ok"))]
"""
BROKEN = "raise RuntimeError('imported a third party conftest')\n"
BROKEN_BENCH = "tasks: [{id: x, criteria: [{assertion: {assert: nope}}]}]\n"


def _project_with_a_venv(root: Path) -> None:
    """A project whose own conftest adds a check its benchmark uses, beside the folders pytest
    never collects: a virtual environment (dotted and not), .git, node_modules, build, and a
    folder the ini file's norecursedirs names; each holds a broken conftest and a broken
    benchmark file."""
    (root / "pytest.ini").write_text("[pytest]\nnorecursedirs = .* build node_modules data\n")
    (root / "conftest.py").write_text(CUSTOM_CHECK)
    (root / "benchmarks").mkdir()
    (root / "benchmarks" / "b.verial.yaml").write_text(
        "tasks: [{id: t, criteria: [{id: c, assertion: {assert: always}}]}]\n"
    )
    site = root / ".venv" / "lib" / "python3.11" / "site-packages" / "pkg"
    env = root / "env" / "lib" / "python3.11" / "site-packages" / "pkg"  # no dot, no pattern
    skipped = [site, env, root / ".git" / "x", root / "node_modules" / "m", root / "build" / "b"]
    skipped.append(root / "data" / "d")
    for folder in skipped:
        folder.mkdir(parents=True)
        (folder / "conftest.py").write_text(BROKEN)
        (folder / "bad.verial.yaml").write_text(BROKEN_BENCH)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")


def test_validate_skips_what_pytest_skips_and_loads_the_rootdirs_conftest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project_with_a_venv(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out = _run(capsys, ".")
    assert code == 0, out
    assert out.splitlines() == [f"{Path('benchmarks/b.verial.yaml')}: ok, 1 task run"]
    code, out = _run(capsys, "benchmarks")  # the rootdir's conftest, above the argument
    assert code == 0 and "ok, 1 task run" in out, out


def test_validate_of_a_missing_path_says_so_and_loads_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project_with_a_venv(tmp_path)
    (tmp_path / "conftest.py").write_text(BROKEN)  # not even the project's own is imported
    monkeypatch.chdir(tmp_path)
    code = main(["validate", "nope/"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == "verial validate: nope/: no such path\n" and captured.out == ""


def test_the_ini_files_norecursedirs_replace_pytests_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in pytest: an ini file's norecursedirs is the whole list (here build/ is walked),
    and a virtual environment is skipped whatever it says."""
    _project_with_a_venv(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\nnorecursedirs = ["x"]\n')
    (tmp_path / "pytest.ini").unlink()
    for folder in (".git", "node_modules", "data", "build", ".venv/lib", "env/lib"):
        for conftest in (tmp_path / folder).rglob("conftest.py"):
            conftest.unlink()
    monkeypatch.chdir(tmp_path)
    code, out = _run(capsys, ".")
    assert code == 0, out  # the walked file's unknown assert is a warning (exit 1 with --strict)
    assert f"{Path('build/b/bad.verial.yaml')}: task x" in out and "benchmarks" in out
    assert ".venv" not in out and "env/lib" not in out


def test_schema_loads_the_checks_pytest_would_and_names_a_broken_conftest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _project_with_a_venv(tmp_path)
    assert main(["schema", "benchmark", "--rootdir", str(tmp_path)]) == 0
    assert '"always"' in capsys.readouterr().out
    (tmp_path / "benchmarks" / "conftest.py").write_text(BROKEN)
    assert main(["schema", "benchmark", "--rootdir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"verial schema: {tmp_path / 'benchmarks' / 'conftest.py'}: failed")
    assert len(err.splitlines()) == 1
