"""A live search never stops silently at ``max_pages`` (issue 9).

Against a real FHIR server (Medplum's router) holding Synthea's 1,745 MedicationRequests, two
of them penicillin: a "no penicillin order" check must not pass because the page holding the
order was never read. ``match: first`` needs only the first page and still scores.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import run
from medplum_support import MedplumServer, live_settings
from stub_server import stub_server

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._live import LiveFhir

PENICILLIN = [
    {"path": "medicationCodeableConcept.text", "op": "contains", "expected": "Penicillin"}
]
ALL_ORDERS: dict[str, Any] = {"resource_type": "MedicationRequest", "search": {"intent": "order"}}


def _live(server: MedplumServer, max_pages: int) -> LiveFhir:
    return LiveFhir(live_settings(server, max_pages=max_pages))


@pytest.mark.parametrize(
    "extra",
    [
        {"match": "none", "fields": PENICILLIN},
        {"match": "any", "fields": PENICILLIN},
        {"match": "all", "fields": PENICILLIN},
        {"count": 0},
        {"match": "first", "count": {"op": "gte", "expected": 1}},
    ],
)
def test_partial_paging_is_an_error_saying_how_much_was_read(
    medplum_synthea: MedplumServer, extra: dict[str, Any]
) -> None:
    live = _live(medplum_synthea, max_pages=3)
    medplum_synthea.reset_log()
    with pytest.raises(SourceError) as info:
        run(live, {**ALL_ORDERS, **extra})
    message = str(info.value)
    assert "read 60 of 1745 results" in message
    assert "max_pages 3" in message and medplum_synthea.base_url in message
    assert "\n" not in message
    assert len(medplum_synthea.requests()) == 3


def test_first_needs_only_the_first_page(medplum_synthea: MedplumServer) -> None:
    live = _live(medplum_synthea, max_pages=1)
    medplum_synthea.reset_log()
    outcome = run(live, {**ALL_ORDERS, "fields": [{"path": "intent", "expected": "order"}]})
    assert outcome.score == 1.0 and outcome.evidence["total"] == 1745
    assert len(medplum_synthea.requests()) == 1


def test_every_page_read_finds_the_order(medplum_synthea: MedplumServer) -> None:
    """With enough pages the same check sees the penicillin order and fails, as it should."""
    live = _live(medplum_synthea, max_pages=100)
    outcome = run(live, {**ALL_ORDERS, "match": "none", "fields": PENICILLIN})
    assert outcome.score == 0.0
    assert "Penicillin" in str(outcome.evidence["fieldResults"])


def test_a_first_criterion_still_scores_after_an_incomplete_one(
    medplum_synthea: MedplumServer,
) -> None:
    live = _live(medplum_synthea, max_pages=2)
    with pytest.raises(SourceError, match="read 40 of 1745"):
        run(live, {**ALL_ORDERS, "match": "none", "fields": PENICILLIN})
    assert run(live, {**ALL_ORDERS, "fields": [{"path": "intent", "expected": "order"}]}).score == 1


def test_without_total_says_at_least() -> None:
    with stub_server() as stub:
        live = LiveFhir({"base_url": f"{stub.origin}/endless", "max_pages": 4, "retries": 0})
        with pytest.raises(
            SourceError, match=r"read 4 results, of at least 5; more pages remained"
        ):
            run(live, {"resource_type": "Patient", "match": "all"})
        assert len(stub.hits) == 4
