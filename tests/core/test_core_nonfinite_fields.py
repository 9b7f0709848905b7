"""A NaN or Infinity in the agent's data or in run.yaml is refused in one line naming the file
and the field that holds it, not only the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_verial import RunConfigError, SourceError, load_run_config

# private module: unit test of the JSON readers' refusal of NaN/Infinity
from pytest_verial._safeparse import DataError, load_json
from pytest_verial._sandbox_io.jsonfiles import iter_jsonl, read_json


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
def test_json_names_the_field_of_a_non_finite_number(text: str, field: str) -> None:
    with pytest.raises(DataError) as refused:
        load_json(text, "obs.json")
    message = refused.value.located()
    assert message.startswith(f"obs.json: field {field!r}: the non-finite number ")
    assert len(message.splitlines()) == 1


def test_snapshot_files_name_file_line_and_field(tmp_path: Path) -> None:
    single = tmp_path / "bundle.json"
    single.write_text('{"entry": [{"resource": {"valueDecimal": NaN}}]}')
    with pytest.raises(
        SourceError, match=r"bundle\.json: field 'entry\[0\]\.resource\.valueDecimal'"
    ):
        read_json(single)
    lines = tmp_path / "rows.ndjson"
    lines.write_text('{"ok": 1}\n{"amount": {"value": Infinity}}\n')
    with pytest.raises(SourceError, match=r"rows\.ndjson:2: field 'amount\.value': the non-finite"):
        list(iter_jsonl(lines))


def test_run_yaml_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("tasks:\n  t1: {cost: .nan}\n")
    with pytest.raises(RunConfigError) as refused:
        load_run_config(tmp_path)
    message = str(refused.value)
    assert message.startswith(str(tmp_path / "run.yaml"))
    assert "field 'tasks.t1.cost'" in message and "non-finite" in message
    assert len(message.splitlines()) == 1
