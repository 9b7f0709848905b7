"""Snapshot search on third-party data read in place: HL7 R4 examples and a Synthea export."""

from __future__ import annotations

import pytest
from real_corpus import corpus_path

from pytest_verial.fhir.index import FhirIndex
from pytest_verial.fhir.query import build_query
from pytest_verial.fhir.snapshot import iter_resources


def _ids(index: FhirIndex, rtype: str, search: dict[str, object]) -> list[str]:
    return [r["id"] for r in index.search(build_query(rtype, search)).resources]


@pytest.fixture(scope="module")
def lipids() -> FhirIndex:
    path = corpus_path("fhir/r4-examples/Bundle-lipids.json")
    index = FhirIndex()
    for resource, full_url in iter_resources(path.parent):
        if full_url and "example.com/base" in full_url:
            index.add(resource, full_url)
    return index


@pytest.mark.parametrize(("rtype", "text", "expected"), [
    # code.text differs from the LOINC display: both are searchable by :text
    ("Observation", "LDL Chol", ["ldlcholesterol"]),             # text only
    ("Observation", "Cholesterol in LDL", ["ldlcholesterol"]),   # display only
    ("Observation", "Cholesterol in HDL", ["hdlcholesterol"]),   # text only
    ("Observation", "HDL Cholesterol", ["hdlcholesterol"]),      # display only
    ("Observation", "cholesterol", ["cholesterol", "hdlcholesterol", "ldlcholesterol"]),
    ("DiagnosticReport", "Lipid Panel", ["lipids"]),             # text only
    ("DiagnosticReport", "lipid 1996", ["lipids"]),              # display only
])
def test_text_matches_concept_text_and_coding_display(
    lipids: FhirIndex, rtype: str, text: str, expected: list[str]
) -> None:
    assert _ids(lipids, rtype, {"code:text": text}) == expected


def test_text_does_not_change_code_search_or_sort(lipids: FhirIndex) -> None:
    assert _ids(lipids, "Observation", {"code": "http://loinc.org|13457-7"}) == ["ldlcholesterol"]
    assert _ids(lipids, "Observation", {"code:not": "13457-7", "_sort": "code"}) == [
        "hdlcholesterol", "cholesterol", "triglyceride"]
    assert lipids.search(build_query("Observation", {"code:text": "LDL"})).total == 1
