"""``verial schema benchmark``: one JSON Schema for every benchmark file form (issue 11 item 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from pytest_verial.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "example_benchmarks").glob("*.verial.yaml"))


def _schema(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["schema", *argv]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _errors(schema: dict[str, Any], data: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema)
    return [e.message for e in validator.iter_errors(data)]


TASK = {
    "id": "t1",
    "criteria": [{"assertion": {"assert": "output-length", "min_words": 1}}],
}


@pytest.mark.parametrize("which", ["benchmark", "criteria"])
def test_every_ref_resolves(capsys: pytest.CaptureFixture[str], which: str) -> None:
    schema = _schema(capsys, which)
    jsonschema.Draft202012Validator.check_schema(schema)
    refs = _refs(schema)
    assert refs
    for ref in refs:
        assert ref.startswith("#/$defs/"), ref
        assert ref.removeprefix("#/$defs/") in schema["$defs"], ref


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_validate(capsys: pytest.CaptureFixture[str], path: Path) -> None:
    schema = _schema(capsys, "benchmark")
    assert _errors(schema, yaml.safe_load(path.read_text())) == []


def test_all_three_forms(capsys: pytest.CaptureFixture[str]) -> None:
    schema = _schema(capsys, "benchmark")
    assert _errors(schema, {"benchmark": "b", "version": 1, "tasks": [TASK]}) == []
    assert _errors(schema, [TASK]) == []
    assert _errors(schema, TASK) == []


def test_unknown_criterion_key_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    schema = _schema(capsys, "benchmark")
    bad = {"id": "t1", "criteria": [{**TASK["criteria"][0], "wieght": 2}]}  # type: ignore[dict-item]
    assert _errors(schema, bad)


def test_misspelt_assert_field_rejected(capsys: pytest.CaptureFixture[str]) -> None:
    schema = _schema(capsys, "benchmark")
    bad = {"id": "t1", "criteria": [{"assertion": {"assert": "output-length", "min_wrds": 1}}]}
    assert _errors(schema, bad)
    assert _errors(_schema(capsys, "criteria"), {"assert": "output-length", "min_wrds": 1})


def test_unknown_assert_type_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    # The loader accepts it (scored 0 at run time, as Verial does), so the schema must too.
    schema = _schema(capsys, "benchmark")
    assert (
        _errors(schema, {"id": "t", "criteria": [{"assertion": {"assert": "x-y", "a": 1}}]}) == []
    )


def test_rootdir_adds_conftest_checks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from typing import Literal\n"
        "from pydantic import Field\n"
        "from pytest_verial import CheckSpec\n"
        "from pytest_verial import AssertionSpec as Model\n"
        "class Spec(Model):\n"
        "    kind: Literal['my-check'] = Field(alias='assert')\n"
        "    needle: str\n"
        "def pytest_verial_checks():\n"
        "    return [CheckSpec('my-check', Spec, lambda spec, ctx: 1.0)]\n"
    )
    plain = _schema(capsys, "benchmark")
    assert "my-check" not in json.dumps(plain)
    schema = _schema(capsys, "benchmark", "--rootdir", str(tmp_path))
    good = {"id": "t", "criteria": [{"assertion": {"assert": "my-check", "needle": "x"}}]}
    typo = {"id": "t", "criteria": [{"assertion": {"assert": "my-check", "neddle": "x"}}]}
    assert _errors(schema, good) == []
    assert _errors(schema, typo)
