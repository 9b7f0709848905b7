"""One deadline per live source per task run (issue 9, item 6 of the brief).

A server that accepts and never answers used to cost every distinct search its own timeout x
attempts (40 s each by default). Now every request of one task run shares ``deadline``; past
it, each remaining criterion is a one-line error naming the server, with no request sent.
Assertions are on request counts and messages, never on timings.
"""

from __future__ import annotations

import pytest
from helpers import run
from silent_server import silent_server

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._live import LiveFhir

SEARCHES = [
    {"name": "a"},
    {"name": "b"},
    {"family": "c"},
    {"birthdate": "2020"},
    {"gender": "male"},
    {"identifier": "x"},
]


def _errors(live: LiveFhir) -> list[str]:
    messages = []
    for search in SEARCHES:
        with pytest.raises(SourceError) as info:
            run(live, {"resource_type": "Patient", "search": search})
        messages.append(str(info.value))
    return messages


def test_a_silent_server_costs_one_deadline_not_one_timeout_per_search() -> None:
    with silent_server() as server:
        live = LiveFhir(
            {
                "base_url": f"{server.origin}/fhir",
                "timeout": 0.4,
                "retries": 3,
                "backoff": 0.01,
                "deadline": 1,
            }
        )
        messages = _errors(live)
        live.close()
        # the first search spends the deadline (at most 1 + retries attempts); no other sends
        assert 1 <= server.accepted <= 4
        assert live.requests_sent == server.accepted
    for message in messages[1:]:
        assert message == (
            f"FHIR server {server.origin}/fhir/: the task run's deadline of 1 s "
            "(sources.fhir.deadline) passed; no further request sent"
        )
    assert "deadline" in messages[0]
    assert all("\n" not in m for m in messages)


def test_the_deadline_covers_the_token_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIAL_TEST_DEADLINE_SECRET", "s")
    with silent_server() as server:
        live = LiveFhir(
            {
                "base_url": f"{server.origin}/fhir",
                "timeout": 0.4,
                "retries": 1,
                "deadline": 0.6,
                "token_url": f"{server.origin}/token",
                "client_id": "c",
                "client_secret_env": "VERIAL_TEST_DEADLINE_SECRET",
            }
        )
        messages = _errors(live)
        live.close()
        assert 1 <= server.accepted <= 2
    assert "token endpoint" in messages[0] or "deadline" in messages[0]
    assert sum("deadline" in m for m in messages) >= len(SEARCHES) - 1


def test_the_default_deadline_is_documented() -> None:
    assert LiveFhir({"base_url": "http://127.0.0.1:9/fhir"}).deadline.seconds == 60
