"""FHIR search semantics of the snapshot source, parameter type by parameter type."""

from __future__ import annotations

from typing import Any

import pytest

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._index import FhirIndex
from pytest_verial.fhir._query import build_query


def _index(*resources: dict[str, Any]) -> FhirIndex:
    index = FhirIndex()
    for r in resources:
        index.add(r)
    return index


def ids(index: FhirIndex, rtype: str, search: dict[str, Any]) -> list[str]:
    return [r["id"] for r in index.search(build_query(rtype, search)).resources]


# --- date: prefixes over partial dates, date-times and periods ------------------------------

ENCOUNTERS = _index(
    {
        "resourceType": "Encounter",
        "id": "jan",
        "status": "finished",
        "period": {"start": "2024-01-10T09:00:00Z", "end": "2024-01-10T10:00:00Z"},
    },
    {
        "resourceType": "Encounter",
        "id": "span",
        "status": "finished",
        "period": {"start": "2024-01-30", "end": "2024-02-02"},
    },
    {
        "resourceType": "Encounter",
        "id": "open",
        "status": "in-progress",
        "period": {"start": "2024-03-01T08:00:00+02:00"},
    },
    {"resourceType": "Encounter", "id": "none", "status": "planned"},
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-01", ["jan"]),  # eq: the month contains the whole period
        ("eq2024", ["jan", "span"]),  # the year contains both closed periods
        ("ne2024-01", ["span", "open"]),
        ("gt2024-01-31", ["span", "open"]),  # ends after the day
        ("lt2024-01-30", ["jan"]),  # starts before the day
        ("ge2024-02-02", ["span", "open"]),
        ("le2024-01-10", ["jan"]),
        ("sa2024-02-03", ["open"]),  # starts after
        ("eb2024-01-30", ["jan"]),  # ends before
        ("ge2024-03-01T06:00:00Z", ["open"]),  # +02:00 is 06:00Z
        ("lt2024-03-01T06:00:00Z", ["jan", "span"]),
    ],
)
def test_date_prefixes(value: str, expected: list[str]) -> None:
    assert ids(ENCOUNTERS, "Encounter", {"date": value}) == expected


def test_date_and_is_a_range() -> None:
    # "span" starts in January, so it is both >= Jan 1 and < Feb 1 (lt: starts before)
    assert ids(ENCOUNTERS, "Encounter", {"date": ["ge2024-01-01", "lt2024-02-01"]}) == [
        "jan",
        "span",
    ]
    assert ids(ENCOUNTERS, "Encounter", {"date": ["ge2024-01-01", "eb2024-02-01"]}) == ["jan"]


def test_date_or_and_missing() -> None:
    assert ids(ENCOUNTERS, "Encounter", {"date": "2024-01-10,sa2024-02-28"}) == ["jan", "open"]
    assert ids(ENCOUNTERS, "Encounter", {"date:missing": "true"}) == ["none"]
    assert ids(ENCOUNTERS, "Encounter", {"date:missing": "false"}) == ["jan", "span", "open"]


def test_partial_birth_date() -> None:
    index = _index(
        {"resourceType": "Patient", "id": "y", "birthDate": "1980"},
        {"resourceType": "Patient", "id": "d", "birthDate": "1980-05-04"},
    )
    assert ids(index, "Patient", {"birthdate": "1980"}) == ["y", "d"]
    assert ids(index, "Patient", {"birthdate": "1980-05"}) == ["d"]  # the year is wider
    assert ids(index, "Patient", {"birthdate": "ge1980-06-01"}) == ["y"]  # overlaps its end


def test_invalid_date_value() -> None:
    with pytest.raises(CheckError, match="invalid date search value 'ge24-1-1'"):
        ids(ENCOUNTERS, "Encounter", {"date": "ge24-1-1"})


# --- token ----------------------------------------------------------------------------------

OBS = _index(
    {
        "resourceType": "Observation",
        "id": "a",
        "status": "final",
        "code": {
            "coding": [{"system": "http://loinc.org", "code": "8867-4", "display": "Heart rate"}]
        },
        "valueQuantity": {
            "value": 72,
            "unit": "/min",
            "system": "http://unitsofmeasure.org",
            "code": "/min",
        },
    },
    {
        "resourceType": "Observation",
        "id": "b",
        "status": "amended",
        "code": {"coding": [{"code": "8867-4"}], "text": "Pulse"},
        "valueQuantity": {"value": 72.4, "unit": "beats/min"},
    },
    {
        "resourceType": "Observation",
        "id": "c",
        "status": "final",
        "code": {"coding": [{"system": "http://snomed.info/sct", "code": "8867-4"}]},
        "valueQuantity": {
            "value": 1.5,
            "unit": "g",
            "system": "http://unitsofmeasure.org",
            "code": "g",
        },
        "identifier": [{"system": "urn:lab", "value": "L-1"}],
    },
)


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ({"code": "http://loinc.org|8867-4"}, ["a"]),
        ({"code": "8867-4"}, ["a", "b", "c"]),
        ({"code": "|8867-4"}, ["b"]),  # explicitly no system
        ({"code": "http://snomed.info/sct|"}, ["c"]),  # any code of the system
        ({"code:text": "heart"}, ["a"]),
        ({"code:text": "puls"}, ["b"]),
        ({"status:not": "final"}, ["b"]),
        ({"status": "final,amended", "code": "http://loinc.org|8867-4"}, ["a"]),
        ({"identifier": "urn:lab|L-1"}, ["c"]),
        ({"_id": "b,c"}, ["b", "c"]),
    ],
)
def test_token(search: dict[str, Any], expected: list[str]) -> None:
    assert ids(OBS, "Observation", search) == expected


# --- quantity and number ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("72", ["a", "b"]),  # eq within the precision of "72": [71.5, 72.5)
        ("72.0", ["a"]),  # [71.95, 72.05)
        ("gt72", ["b"]),
        ("le1.5", ["c"]),
        ("72|http://unitsofmeasure.org|/min", ["a"]),
        ("72||beats/min", ["b"]),  # code matches the unit when no system is given
        ("ap70", ["a", "b"]),  # within 10 %
        ("ne72", ["c"]),
    ],
)
def test_quantity(value: str, expected: list[str]) -> None:
    assert ids(OBS, "Observation", {"value-quantity": value}) == expected


def test_number() -> None:
    index = _index(
        {
            "resourceType": "RiskAssessment",
            "id": "low",
            "status": "final",
            "subject": {"reference": "Patient/1"},
            "prediction": [{"probabilityDecimal": 0.02}],
        },
        {
            "resourceType": "RiskAssessment",
            "id": "high",
            "status": "final",
            "subject": {"reference": "Patient/1"},
            "prediction": [{"probabilityDecimal": 0.8}],
        },
    )
    assert ids(index, "RiskAssessment", {"probability": "gt0.5"}) == ["high"]
    assert ids(index, "RiskAssessment", {"probability": "0.02"}) == ["low"]
    with pytest.raises(CheckError, match="invalid number search value 'abc'"):
        ids(index, "RiskAssessment", {"probability": "abc"})


# --- string, uri, reference --------------------------------------------------------------


def test_string_forms() -> None:
    index = _index(
        {
            "resourceType": "Patient",
            "id": "1",
            "name": [{"family": "Núñez", "given": ["Zoë"]}],
            "address": [{"line": ["1 Élm St"], "city": "São Paulo"}],
        },
        {"resourceType": "Patient", "id": "2", "name": [{"family": "Nunes", "given": ["Zoe"]}]},
    )
    assert ids(index, "Patient", {"family": "nun"}) == ["1", "2"]
    assert ids(index, "Patient", {"family": "NUNEZ"}) == ["1"]
    assert ids(index, "Patient", {"family:exact": "Núñez"}) == ["1"]
    assert ids(index, "Patient", {"family:exact": "nunez"}) == []
    assert ids(index, "Patient", {"name:contains": "une"}) == ["1", "2"]
    assert ids(index, "Patient", {"given": "zoe"}) == ["1", "2"]
    assert ids(index, "Patient", {"address": "sao"}) == ["1"]
    assert ids(index, "Patient", {"address": "1 elm"}) == ["1"]
    assert ids(index, "Patient", {"address": "elm"}) == []  # a prefix of the line, not a word


def test_uri() -> None:
    index = _index(
        {"resourceType": "ValueSet", "id": "1", "status": "active", "url": "http://x.org/vs/a"},
        {"resourceType": "ValueSet", "id": "2", "status": "active", "url": "http://x.org/vs/a/b"},
    )
    assert ids(index, "ValueSet", {"url": "http://x.org/vs/a"}) == ["1"]
    assert ids(index, "ValueSet", {"url:below": "http://x.org/vs/"}) == ["1", "2"]
    assert ids(index, "ValueSet", {"url:above": "http://x.org/vs/a/b/c"}) == ["1", "2"]


def test_reference_forms_and_bundle_urns() -> None:
    index = FhirIndex()
    index.add(
        {"resourceType": "Patient", "id": "p1", "name": [{"family": "Chen"}]}, "urn:uuid:1111"
    )
    index.add({"resourceType": "Condition", "id": "c1", "subject": {"reference": "urn:uuid:1111"}})
    index.add(
        {
            "resourceType": "Condition",
            "id": "c2",
            "subject": {"reference": "https://ehr.example.org/fhir/Patient/p1/_history/3"},
        }
    )
    index.add({"resourceType": "Condition", "id": "c3", "subject": {"reference": "Group/p1"}})
    assert ids(index, "Condition", {"subject": "Patient/p1"}) == ["c1", "c2"]
    assert ids(index, "Condition", {"subject": "p1"}) == ["c1", "c2", "c3"]
    assert ids(index, "Condition", {"patient": "p1"}) == ["c1", "c2"]  # resolve() is Patient
    assert ids(index, "Condition", {"subject:Group": "p1"}) == ["c3"]
    assert ids(index, "Condition", {"subject.name": "chen"}) == ["c1", "c2"]
    assert ids(index, "Condition", {"subject:missing": "true"}) == []


# --- result parameters and errors ---------------------------------------------------------


def test_sort_count_offset() -> None:
    assert ids(OBS, "Observation", {"_sort": "-value-quantity"}) == ["b", "a", "c"]
    assert ids(OBS, "Observation", {"_sort": "status,-_id"}) == ["b", "c", "a"]
    result = OBS.search(build_query("Observation", {"_sort": "_id", "_count": 1, "_offset": 1}))
    assert [r["id"] for r in result.resources] == ["b"] and result.total == 3


@pytest.mark.parametrize(
    ("rtype", "search", "message"),
    [
        ("Observation", {"foo": "1"}, "unknown search parameter 'foo' for Observation"),
        ("Observation", {"sttaus": "final"}, "did you mean status"),
        ("Observation", {"status:exact": "final"}, "modifier 'exact' is not supported on token"),
        ("Observation", {"code-value-quantity": "x"}, "type 'composite'"),
        ("Observation", {"_count": "ten"}, "_count must be a whole number"),
        ("Observation", {"_sort": "nope"}, "unknown search parameter 'nope'"),
        ("Observation", {"status.name": "x"}, "only reference parameters can be chained"),
        ("Observation", {"code:missing": "maybe"}, "must be true or false"),
        ("Apointment", {}, "unknown FHIR R4 resource type 'Apointment'; did you mean Appointment"),
        ("Observation", {"subject:Banana": "1"}, "modifier 'Banana' of reference parameter"),
    ],
)
def test_query_errors(rtype: str, search: dict[str, Any], message: str) -> None:
    with pytest.raises(CheckError, match=message):
        build_query(rtype, search)


def test_parameters_come_from_the_spec_not_a_short_list() -> None:
    """Parameters of rarely used resource types work, straight from SearchParameter."""
    index = _index(
        {
            "resourceType": "VisionPrescription",
            "id": "v",
            "status": "active",
            "created": "2024-01-01",
            "patient": {"reference": "Patient/p"},
            "dateWritten": "2024-02-03",
            "prescriber": {"reference": "Practitioner/d"},
            "lensSpecification": [],
        },
    )
    assert ids(index, "VisionPrescription", {"datewritten": "2024-02", "prescriber": "d"}) == ["v"]
