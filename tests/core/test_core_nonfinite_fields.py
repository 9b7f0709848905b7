"""A NaN or Infinity in the agent's data or in run.yaml is refused in one line naming the file
and the field that holds it, not only the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial import verify_task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._config.run_folder import load_run_config
from pytest_verial._errors import RunConfigError


def details_of(task_folder: Path, resource: str) -> str:
    """The details of a portal criterion reading ``portal/<resource>.*`` of the folder."""
    assertion = {
        "assert": "portal-state-match",
        "correlate_by": {"resource": resource},
        "assertions": [{"path": "x", "op": "exists"}],
    }
    task = {"id": "t", "criteria": [{"id": "c", "assertion": assertion}]}
    run = verify_task(task, task_folder).criterion_runs[0]
    assert run["status"] == "error"
    return str(run["details"])


@pytest.mark.parametrize(
    "text, field",
    [
        ('{"a": {"b": [1, NaN]}}', "a.b[1]"),
        ('[{"x": 1}, {"y": {"z": -Infinity}}]', "[1].y.z"),
        (
            '{"resourceType": "Observation", "valueQuantity": {"value": Infinity}}',
            "valueQuantity.value",
        ),
    ],
)
def test_json_names_the_field_of_a_non_finite_number(tmp_path: Path, text: str, field: str) -> None:
    task = tmp_path / "run" / "t"
    (task / "portal").mkdir(parents=True)
    (task / "portal" / "obs.json").write_text(text)
    message = details_of(task, "obs")
    # the file named from the task's sandbox folder
    assert message.startswith(f"portal/obs.json: field {field!r}: the non-finite "), message
    assert str(task) not in message
    assert len(message.splitlines()) == 1


def test_snapshot_files_name_file_line_and_field(tmp_path: Path) -> None:
    task = tmp_path / "run" / "t"
    (task / "portal").mkdir(parents=True)
    (task / "portal" / "bundle.json").write_text('{"entry": [{"resource": {"valueDecimal": NaN}}]}')
    assert "bundle.json: field 'entry[0].resource.valueDecimal'" in details_of(task, "bundle")
    (task / "portal" / "rows.jsonl").write_text('{"ok": 1}\n{"amount": {"value": Infinity}}\n')
    assert "rows.jsonl:2: field 'amount.value': the non-finite" in details_of(task, "rows")


def test_run_yaml_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("tasks:\n  t1: {cost: .nan}\n")
    with pytest.raises(RunConfigError) as refused:
        load_run_config(tmp_path)
    message = str(refused.value)
    assert message.startswith(str(tmp_path / "run.yaml"))
    assert "field 'tasks.t1.cost'" in message and "non-finite" in message
    assert len(message.splitlines()) == 1


# -- issue 31: text that parses to a non-finite number, and numbers given by a caller ----------


@pytest.mark.parametrize("cost", ["1e999", '"Infinity"', '"-inf"', '"NaN"'])
def test_run_yaml_text_that_would_parse_to_a_non_finite_cost_is_refused(
    tmp_path: Path, cost: str
) -> None:
    # YAML reads 1e999 as text; pydantic turned such text into inf, stored as null
    (tmp_path / "run.yaml").write_text(f"tasks:\n  t1: {{cost: {cost}}}\n")
    with pytest.raises(RunConfigError) as refused:
        load_run_config(tmp_path)
    message = str(refused.value)
    assert "field 'tasks.t1.cost'" in message and "finite number" in message
    assert len(message.splitlines()) == 1


@pytest.mark.parametrize(
    "task, field",
    [
        ({"timeout": "Infinity"}, "field 'timeout'"),
        (
            {"criteria": [{"id": "c", "weight": "1e999", "assertion": {"assert": "output-match"}}]},
            "criterion 'c', field 'weight'",
        ),
    ],
)
def test_a_benchmark_field_given_non_finite_text_is_refused(
    tmp_path: Path, task: dict[str, object], field: str
) -> None:
    from pytest_verial import BenchmarkFileError

    spec = {"id": "t", "criteria": [{"id": "c", "assertion": {"assert": "output-match"}}], **task}
    with pytest.raises(BenchmarkFileError) as refused:
        verify_task(spec, tmp_path)
    assert field in str(refused.value) and "finite number" in str(refused.value)


@pytest.mark.parametrize(
    "config, line",
    [
        ({"cost": float("inf")}, "config cost: inf is not a finite number"),
        ({"cost": "1e999"}, "config cost: Input should be a finite number"),
        ({"pass_threshold": float("nan")}, "config pass_threshold: nan is not a finite number"),
        ({"pass_threshold": 2}, "config pass_threshold: 2 is not a number in [0, 1]"),
        ({"bypass_cost": float("inf")}, "config bypass_cost: inf is not a finite number"),
    ],
)
def test_verify_task_refuses_a_non_finite_config_value(
    tmp_path: Path, config: dict[str, object], line: str
) -> None:
    from pytest_verial import UsageError

    check = {"assert": "output-match", "contains": ["x"]}
    task = {"id": "t", "criteria": [{"id": "c", "assertion": check}]}
    with pytest.raises(UsageError) as refused:
        verify_task(task, tmp_path, config)
    assert str(refused.value) == line


@pytest.mark.parametrize("flag", ["--min-kappa", "--min-f1"])
def test_calibrate_refuses_a_gate_that_is_not_finite(tmp_path: Path, flag: str) -> None:
    import subprocess
    import sys

    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"id": "1", "output": "x", "principles": ["y"], "met": true}\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest_verial.cli",
            "judge",
            "calibrate",
            str(labels),
            "--verial-judge-model",
            "m",
            f"{flag}=-inf",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"verial judge calibrate: {flag}: -inf is not a finite number\n"
