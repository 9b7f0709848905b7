"""Snapshot search on third-party data read in place: HL7 R4 examples and a Synthea export."""

from __future__ import annotations

import json
from typing import Any

import pytest
from real_corpus import corpus_path

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._index import FhirIndex
from pytest_verial.fhir._query import build_query
from pytest_verial.fhir._snapshot import iter_resources


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


@pytest.mark.parametrize(
    ("rtype", "text", "expected"),
    [
        # code.text differs from the LOINC display: both are searchable by :text
        ("Observation", "LDL Chol", ["ldlcholesterol"]),  # text only
        ("Observation", "Cholesterol in LDL", ["ldlcholesterol"]),  # display only
        ("Observation", "Cholesterol in HDL", ["hdlcholesterol"]),  # text only
        ("Observation", "HDL Cholesterol", ["hdlcholesterol"]),  # display only
        ("Observation", "cholesterol", ["cholesterol", "hdlcholesterol", "ldlcholesterol"]),
        ("DiagnosticReport", "Lipid Panel", ["lipids"]),  # text only
        ("DiagnosticReport", "lipid 1996", ["lipids"]),  # display only
    ],
)
def test_text_matches_concept_text_and_coding_display(
    lipids: FhirIndex, rtype: str, text: str, expected: list[str]
) -> None:
    assert _ids(lipids, rtype, {"code:text": text}) == expected


def test_text_does_not_change_code_search_or_sort(lipids: FhirIndex) -> None:
    assert _ids(lipids, "Observation", {"code": "http://loinc.org|13457-7"}) == ["ldlcholesterol"]
    assert _ids(lipids, "Observation", {"code:not": "13457-7", "_sort": "code"}) == [
        "hdlcholesterol",
        "cholesterol",
        "triglyceride",
    ]
    assert lipids.search(build_query("Observation", {"code:text": "LDL"})).total == 1


# --- Synthea bulk export: conditional references ----------------------------------------------

NPI = "http://hl7.org/fhir/sid/us-npi"


@pytest.fixture(scope="module")
def synthea() -> FhirIndex:
    directory = corpus_path("fhir/synthea-10-patients")
    index = FhirIndex()
    for resource, full_url in iter_resources(directory):
        index.add(resource, full_url)
    return index


def _practitioner(index: FhirIndex, npi: str) -> dict[str, Any]:
    found = index.search(build_query("Practitioner", {"identifier": f"{NPI}|{npi}"})).resources
    assert len(found) == 1
    return found[0]


def _expected(index: FhirIndex, rtype: str, element: str, ref: str) -> set[str]:
    """Ids of resources holding ``ref`` anywhere under ``element`` (read from the raw JSON)."""
    return {
        r["id"]
        for r in index.by_type[rtype]
        if f'"reference": "{ref}"' in json.dumps(r.get(element))
    }


def test_reference_search_finds_conditional_references(synthea: FhirIndex) -> None:
    doctor = _practitioner(synthea, "9999974394")
    ref = f"Practitioner?identifier={NPI}|9999974394"
    expected = _expected(synthea, "MedicationRequest", "requester", ref)
    assert len(expected) > 100
    found = _ids(synthea, "MedicationRequest", {"requester": f"Practitioner/{doctor['id']}"})
    assert set(found) == expected
    assert set(_ids(synthea, "MedicationRequest", {"requester": doctor["id"]})) == expected


def test_chained_search_through_conditional_references(synthea: FhirIndex) -> None:
    doctor = _practitioner(synthea, "9999974493")
    family = doctor["name"][0]["family"]
    ref = f"Practitioner?identifier={NPI}|9999974493"
    expected = _expected(synthea, "Encounter", "participant", ref)
    assert len(expected) > 100
    assert (
        set(_ids(synthea, "Encounter", {"practitioner.identifier": f"{NPI}|9999974493"}))
        == expected
    )
    assert set(_ids(synthea, "Encounter", {"participant:Practitioner.name": family})) >= expected
    assert set(_ids(synthea, "Encounter", {"practitioner.name": family})) >= expected


def test_chained_search_on_locations_and_organizations(synthea: FhirIndex) -> None:
    location = synthea.by_type["Location"][0]
    ref = (
        f"Location?identifier={location['identifier'][0]['system']}|"
        f"{location['identifier'][0]['value']}"
    )
    expected = _expected(synthea, "Encounter", "location", ref)
    found = set(_ids(synthea, "Encounter", {"location.name:exact": location["name"]}))
    assert expected and found >= expected
    organization = synthea.by_type["Organization"][0]
    by_org = _ids(synthea, "Encounter", {"service-provider.name:exact": organization["name"]})
    assert by_org


def test_missing_and_type_modifier_see_conditional_references(synthea: FhirIndex) -> None:
    every = {r["id"] for r in synthea.by_type["MedicationRequest"]}
    assert set(_ids(synthea, "MedicationRequest", {"requester:missing": "false"})) == every
    assert _ids(synthea, "MedicationRequest", {"requester:missing": "true"}) == []


def test_unresolvable_conditional_reference_stays_as_it_is() -> None:
    index = FhirIndex()
    index.add(
        {"resourceType": "Practitioner", "id": "a", "identifier": [{"system": NPI, "value": "1"}]}
    )
    index.add(
        {
            "resourceType": "Practitioner",
            "id": "b",
            "identifier": [{"system": NPI, "value": "2"}, {"value": "shared"}],
        }
    )
    index.add({"resourceType": "Practitioner", "id": "c", "identifier": [{"value": "shared"}]})
    for n, ref in enumerate(
        [
            f"Practitioner?identifier={NPI}|1",
            "Practitioner?identifier=2",
            "Practitioner?identifier=shared",
            "Practitioner?identifier=nope",
            "Practitioner?family=x",
            "Practitioner?bogus=1",
            "Nope?x=1",
            "Practitioner?identifier=|shared",
        ]
    ):
        index.add(
            {
                "resourceType": "MedicationRequest",
                "id": f"m{n}",
                "status": "active",
                "intent": "order",
                "subject": {"reference": "Patient/p"},
                "medicationCodeableConcept": {"text": "x"},
                "requester": {"reference": ref},
            }
        )
    assert index.resolve_conditional(f"Practitioner?identifier={NPI}|1") == ("Practitioner", "a")
    assert index.resolve_conditional("Practitioner?identifier=2") == ("Practitioner", "b")
    assert (
        index.resolve_conditional("Practitioner?identifier=|shared")[1]
        == "Practitioner?identifier=|shared"
    )  # two match: left as it is
    assert _ids(index, "MedicationRequest", {"requester": "Practitioner/a"}) == ["m0"]
    assert _ids(index, "MedicationRequest", {"requester": "Practitioner/b"}) == ["m1"]
    assert _ids(index, "MedicationRequest", {"requester:missing": "true"}) == []
    assert _ids(index, "MedicationRequest", {"requester:Practitioner.identifier": "shared"}) == [
        "m1"
    ]
