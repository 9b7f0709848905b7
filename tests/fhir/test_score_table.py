"""Every ``match`` x ``count`` x ``fields`` combination scores by the documented rule.

docs/fhir.md, Score: passed items / all items; ``match: none`` is ONE item (1 when no result
passes every field, else 0); ``count`` adds one item, scored even without a target. The
expected scores below are worked out by hand from that rule, not computed by the code under test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import run

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._fhir import SnapshotSource

FINAL = [{"path": "status", "expected": "final"}]  # o1 passes, o2 does not
CANCELLED = [{"path": "status", "expected": "cancelled"}]  # no result passes
NO_FIELDS: list[dict[str, str]] = []
FIELDS = {"none": NO_FIELDS, "final": FINAL, "cancelled": CANCELLED}

# (match, fields, count, score) for a search with two results (o1 final, o2 amended)
TWO_RESULTS = [
    ("first", "none", None, 1.0),
    ("first", "none", 2, 1.0),
    ("first", "none", 5, 0.0),
    ("any", "none", None, 1.0),
    ("any", "none", 2, 1.0),
    ("any", "none", 5, 0.0),
    ("all", "none", None, 1.0),
    ("all", "none", 2, 1.0),
    ("all", "none", 5, 0.0),
    ("none", "none", None, 0.0),
    ("none", "none", 2, 0.5),
    ("none", "none", 5, 0.0),
    ("first", "final", None, 1.0),
    ("first", "final", 2, 1.0),
    ("first", "final", 5, 0.5),
    ("any", "final", None, 1.0),
    ("any", "final", 2, 1.0),
    ("any", "final", 5, 0.5),
    ("all", "final", None, 0.5),
    ("all", "final", 2, 0.75),
    ("all", "final", 5, 0.25),
    ("none", "final", None, 0.0),
    ("none", "final", 2, 0.5),
    ("none", "final", 5, 0.0),
    ("first", "cancelled", None, 0.0),
    ("first", "cancelled", 2, 0.5),
    ("first", "cancelled", 5, 0.0),
    ("any", "cancelled", None, 0.0),
    ("any", "cancelled", 2, 0.5),
    ("any", "cancelled", 5, 0.0),
    ("all", "cancelled", None, 0.0),
    ("all", "cancelled", 2, 0.5),
    ("all", "cancelled", 5, 0.0),
    ("none", "cancelled", None, 1.0),
    ("none", "cancelled", 2, 1.0),
    ("none", "cancelled", 5, 0.5),
]

# the same for a search that finds nothing
NO_RESULTS = [
    ("first", "none", None, 0.0),
    ("first", "none", 0, 1.0),
    ("first", "none", 2, 0.0),
    ("any", "none", 0, 1.0),
    ("all", "none", 2, 0.0),
    ("none", "none", None, 1.0),
    ("none", "none", 0, 1.0),
    ("none", "none", 2, 0.5),
    ("first", "final", None, 0.0),
    ("first", "final", 0, 0.5),
    ("first", "final", 2, 0.0),
    ("any", "final", 0, 0.5),
    ("all", "final", 0, 0.5),
    ("all", "final", 2, 0.0),
    ("none", "final", None, 1.0),
    ("none", "final", 0, 1.0),
    ("none", "final", 2, 0.5),
]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> SnapshotSource:
    fhir = tmp_path_factory.mktemp("score") / "fhir"
    fhir.mkdir()
    lines = [
        {
            "resourceType": "Observation",
            "id": "o1",
            "status": "final",
            "code": {"coding": [{"system": "http://loinc.org", "code": "2339-0"}]},
        },
        {
            "resourceType": "Observation",
            "id": "o2",
            "status": "amended",
            "code": {"coding": [{"system": "http://loinc.org", "code": "2339-0"}]},
        },
    ]
    (fhir / "obs.ndjson").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return SnapshotSource(fhir, None)


def _score(source: SnapshotSource, code: str, match: str, fields: str, count: Any) -> float:
    assertion: dict[str, Any] = {
        "resource_type": "Observation",
        "search": {"code": code},
        "match": match,
        "fields": FIELDS[fields],
    }
    if count is not None:
        assertion["count"] = count
    return run(source, assertion).score


@pytest.mark.parametrize(("match", "fields", "count", "score"), TWO_RESULTS)
def test_two_results(
    snapshot: SnapshotSource, match: str, fields: str, count: Any, score: float
) -> None:
    assert _score(snapshot, "2339-0", match, fields, count) == pytest.approx(score)


@pytest.mark.parametrize(("match", "fields", "count", "score"), NO_RESULTS)
def test_no_results(
    snapshot: SnapshotSource, match: str, fields: str, count: Any, score: float
) -> None:
    assert _score(snapshot, "0000-0", match, fields, count) == pytest.approx(score)


def test_count_op_form_is_one_item_too(snapshot: SnapshotSource) -> None:
    score = _score(snapshot, "2339-0", "none", "cancelled", {"op": "gte", "expected": 3})
    assert score == pytest.approx(0.5)
