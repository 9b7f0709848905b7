"""Bad FHIR data, searches, paths and live settings (issue 9): one line each, never a crash.

Snapshot data (``sandbox/t/fhir/``) that is not FHIR is an error of the criterion that reads
it, naming the file and the line or entry; a search or path the spec does not allow is an
error naming the parameter; a bad ``sources.fhir`` value in run.yaml names the file and key.
"""

from __future__ import annotations

import json
from typing import Any

from bad_input_case import Case

CRITERION = "t::c"


def _benchmark(assertion: dict[str, Any]) -> str:
    body = json.dumps({"assert": "fhir-resource-state", **assertion})
    return f"tasks:\n- id: t\n  criteria:\n  - id: c\n    assertion: {body}\n"


PATIENT = {"resource_type": "Patient", "fields": [{"path": "gender", "expected": "female"}]}
GOOD = json.dumps(
    {"resourceType": "Patient", "id": "p1", "gender": "female", "name": [{"family": "Smith"}]}
)


def _data(case_id: str, files: dict[str, Any], says: str) -> Case:
    """Bad snapshot data under ``sandbox/t/fhir/``."""
    return Case(
        id=case_id,
        kind="fhir",
        criterion=CRITERION,
        says=says,
        files={
            "b.verial.yaml": _benchmark(PATIENT),
            **{f"sandbox/t/fhir/{name}": content for name, content in files.items()},
        },
    )


def _search(case_id: str, assertion: dict[str, Any], says: str) -> Case:
    """A criterion whose search or path is wrong, on good data."""
    return Case(
        id=case_id,
        kind="fhir",
        criterion=CRITERION,
        says=says,
        files={
            "b.verial.yaml": _benchmark(assertion),
            "sandbox/t/fhir/p.json": GOOD,
        },
    )


def _live(case_id: str, settings: str, says: str) -> Case:
    """A bad ``sources.fhir`` in run.yaml (the server is never asked)."""
    return Case(
        id=case_id,
        kind="fhir",
        criterion=CRITERION,
        says=says,
        files={
            "b.verial.yaml": _benchmark(PATIENT),
            "sandbox/run.yaml": "sources:\n  fhir:\n" + settings,
            "sandbox/t/.keep": "",
        },
    )


def _nested_bundles(depth: int) -> str:
    """Bundles in Bundles, as text (json.dumps would hit Python's recursion limit)."""
    head = '{"resourceType": "Bundle", "type": "collection", "entry": [{"resource": '
    return head * depth + GOOD + "}]}" * depth


LIVE = "    base_url: http://127.0.0.1:9/fhir\n"

CASES: list[Case] = [
    # --- data that is not FHIR -----------------------------------------------------------
    _data("fhir-json-truncated", {"p.json": GOOD[:-5]}, "p.json:1: invalid JSON"),
    _data(
        "fhir-ndjson-bad-line-3",
        {"x.ndjson": GOOD + "\n" + GOOD + "\n{oops\n"},
        "x.ndjson:3: invalid JSON",
    ),
    _data("fhir-ndjson-not-utf8", {"x.ndjson": GOOD.encode() + b"\n\xff\xfe{\n"}, "not UTF-8 text"),
    _data(
        "fhir-json-top-level-list",
        {"p.json": "[" + GOOD + "]"},
        "expected a FHIR resource object, found list",
    ),
    _data("fhir-no-resource-type", {"p.json": '{"id": "p1"}'}, "resource has no resourceType"),
    _data(
        "fhir-unknown-resource-type",
        {"p.json": '{"resourceType": "Patients", "id": "p"}'},
        "unknown resourceType 'Patients'",
    ),
    _data(
        "fhir-numeric-id",
        {"p.json": '{"resourceType": "Patient", "id": 7}'},
        "Patient.id must be a string, found 7",
    ),
    _data(
        "fhir-bundle-entry-not-list",
        {"b.json": '{"resourceType": "Bundle", "type": "collection", "entry": {"a": 1}}'},
        "Bundle.entry must be a list",
    ),
    _data(
        "fhir-bundle-entry-without-resource",
        {
            "b.json": json.dumps(
                {
                    "resourceType": "Bundle",
                    "type": "collection",
                    "entry": [{"resource": json.loads(GOOD)}, {"fullUrl": "urn:uuid:1"}],
                }
            )
        },
        "Bundle entry 1 has no resource",
    ),
    _data(
        "fhir-nested-bundle-entry-is-text",
        {
            "b.json": json.dumps(
                {
                    "resourceType": "Bundle",
                    "type": "collection",
                    "entry": [
                        {
                            "resource": {
                                "resourceType": "Bundle",
                                "type": "collection",
                                "entry": [{"resource": "Patient/p1"}],
                            }
                        }
                    ],
                }
            )
        },
        "Bundle entry 0: Bundle entry 0: expected a FHIR resource object, found str",
    ),
    _data(
        "fhir-ndjson-line-is-number",
        {"x.ndjson": GOOD + "\n42\n"},
        "x.ndjson:2: expected a FHIR resource object, found int",
    ),
    _data(
        "fhir-json-nested-100000-deep",
        {"p.json": lambda: "[" * 100_000 + "]" * 100_000},
        "p.json:1: nested deeper than 200 levels",
    ),
    _data(
        "fhir-ndjson-nested-100000-deep",
        {"x.ndjson": lambda: GOOD + "\n" + "[" * 100_000 + "]" * 100_000 + "\n"},
        "x.ndjson:2: nested deeper than 200 levels",
    ),
    _data(
        "fhir-bundles-nested-60-deep",
        {"b.json": lambda: _nested_bundles(60)},
        "Bundles nested deeper than 50",
    ),
    _data("fhir-json-binary", {"p.json": b"\x00\x01\x02FHIR"}, "binary data"),
    # --- searches and paths the spec does not allow --------------------------------------
    _search(
        "fhir-unknown-resource-type-in-criterion",
        {**PATIENT, "resource_type": "Patients"},
        "unknown FHIR R4 resource type 'Patients'; did you mean Patient?",
    ),
    _search(
        "fhir-unknown-search-parameter",
        {**PATIENT, "search": {"patient_name": "x"}},
        "unknown search parameter 'patient_name' for Patient",
    ),
    _search(
        "fhir-unsupported-modifier",
        {**PATIENT, "search": {"name:sounds": "smith"}},
        "modifier 'sounds' is not supported on string parameter 'name'",
    ),
    _search(
        "fhir-bad-date-value",
        {**PATIENT, "search": {"birthdate": "ge24-1-1"}},
        "invalid date search value 'ge24-1-1'",
    ),
    _search(
        "fhir-negative-count", {**PATIENT, "search": {"_count": -1}}, "_count must not be negative"
    ),
    _search(
        "fhir-count-not-a-number",
        {**PATIENT, "search": {"_count": "ten"}},
        "_count must be a whole number, not 'ten'",
    ),
    _search(
        "fhir-missing-not-boolean",
        {**PATIENT, "search": {"gender:missing": "maybe"}},
        "gender:missing must be true or false, not 'maybe'",
    ),
    _search(
        "fhir-chain-on-a-token",
        {**PATIENT, "search": {"gender.name": "x"}},
        "'gender.name': only reference parameters can be chained",
    ),
    _search(
        "fhir-chain-to-nowhere",
        {**PATIENT, "search": {"general-practitioner:Practitioner.bogus": "x"}},
        "no target of 'general-practitioner' defines 'bogus'",
    ),
    _search(
        "fhir-search-value-is-an-object",
        {**PATIENT, "search": {"name": {"a": 1}}},
        "must be a string, number or boolean",
    ),
    _search(
        "fhir-bad-quantity",
        {
            "resource_type": "Observation",
            "search": {"value-quantity": "lots|http://unitsofmeasure.org|mg"},
        },
        "invalid quantity search value 'lots'",
    ),
    _search(
        "fhir-sort-unknown",
        {**PATIENT, "search": {"_sort": "-shoe-size"}},
        "unknown search parameter 'shoe-size' for Patient",
    ),
    _search(
        "fhir-bad-fhirpath",
        {
            **PATIENT,
            "fields": [
                {"path": "name.where(family = 'Smith'", "expected": "x", "syntax": "fhirpath"}
            ],
        },
        "name.where(family = 'Smith'",
    ),
    # --- sources.fhir in run.yaml --------------------------------------------------------
    _live(
        "fhir-live-negative-timeout",
        LIVE + "    timeout: -5\n",
        "run.yaml: sources.fhir.timeout: expected a positive number of seconds, got -5",
    ),
    _live(
        "fhir-live-max-pages-lots",
        LIVE + "    max_pages: lots\n",
        "run.yaml: sources.fhir.max_pages: expected a whole number >= 1, got 'lots'",
    ),
    _live(
        "fhir-live-deadline-zero",
        LIVE + "    deadline: 0\n",
        "run.yaml: sources.fhir.deadline: expected a positive number of seconds, got 0",
    ),
    Case(  # refused when run.yaml is read, before anything runs
        id="fhir-live-unknown-key",
        kind="fhir",
        where="collect",
        says="run.yaml: sources.fhir.max_page: unknown key (did you mean 'max_pages'?)",
        files={
            "b.verial.yaml": _benchmark(PATIENT),
            "sandbox/run.yaml": "sources:\n  fhir:\n" + LIVE + "    max_page: 3\n",
            "sandbox/t/.keep": "",
        },
    ),
    _live(
        "fhir-live-unknown-auth",
        LIVE + "    auth: kerberos\n",
        "run.yaml: sources.fhir.auth: expected one of none, bearer, client_credentials",
    ),
    _live(
        "fhir-live-retries-boolean",
        LIVE + "    retries: true\n",
        "run.yaml: sources.fhir.retries: expected a whole number from 0 to 100, got True",
    ),
    # run.yaml itself is refused (non-finite numbers), before any FHIR setting is read
    Case(
        id="fhir-live-timeout-infinite",
        kind="fhir",
        where="collect",
        says="run.yaml: field 'sources.fhir.timeout': the non-finite number inf is not accepted",
        files={
            "b.verial.yaml": _benchmark(PATIENT),
            "sandbox/run.yaml": "sources:\n  fhir:\n" + LIVE + "    timeout: .inf\n",
            "sandbox/t/.keep": "",
        },
    ),
    _live(
        "fhir-live-base-url-list",
        "    base_url: [a, b]\n",
        "run.yaml: sources.fhir.base_url: expected text, got ['a', 'b']",
    ),
    _live(
        "fhir-snapshot-validation-r3",
        "    validation: R3\n",
        "run.yaml: sources.fhir.validation: expected R4B or R5, got 'R3'",
    ),
]
