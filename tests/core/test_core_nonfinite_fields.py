"""A NaN or Infinity in the agent's data or in run.yaml is refused in one line naming the file
and the field that holds it, not only the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial import RunConfigError, load_run_config, verify_task


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
