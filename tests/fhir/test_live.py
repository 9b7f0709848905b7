"""The live FHIR source against a real server (Medplum) and, for faults, a stub."""

from __future__ import annotations

import os
import socket
from typing import Any

import pytest
from helpers import VERIAL_EXAMPLE, run
from medplum_support import CLIENT_ID, CLIENT_SECRET, TOKEN, MedplumServer, live_settings
from stub_server import stub_server

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError, SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._live import LiveFhir
from pytest_verial.fhir._query import build_query


def test_verial_example_runs_unchanged_against_the_server(medplum: MedplumServer) -> None:
    outcome = run(LiveFhir(live_settings(medplum)), VERIAL_EXAMPLE)
    assert outcome.score == 1.0
    assert outcome.evidence["fieldResults"] == [
        {
            "path": "participant.0.actor.display",
            "expected": "Dr. Rivera",
            "actual": "Dr. Rivera",
            "passed": True,
        }
    ]
    resource = outcome.evidence["resource"]
    assert resource["type"] == "Appointment" and resource["id"] == "appt-john-smith"  # type: ignore[index]
    assert resource["version"]  # type: ignore[index]  # the server's meta.versionId
    assert outcome.evidence["query"] == "Appointment?patient=Patient/john-smith&status=booked"
    assert outcome.evidence["total"] == 1


def test_bearer_token_is_sent_and_never_shown(medplum: MedplumServer) -> None:
    medplum.reset_log()
    outcome = run(LiveFhir(live_settings(medplum)), VERIAL_EXAMPLE)
    seen = medplum.requests()
    assert [r["auth"] for r in seen] == [f"Bearer {TOKEN}"]
    assert TOKEN not in repr(outcome)


def test_wrong_token_is_an_authentication_error(medplum: MedplumServer) -> None:
    os.environ["VERIAL_TEST_WRONG_TOKEN"] = "nope"
    live = LiveFhir(live_settings(medplum, token_env="VERIAL_TEST_WRONG_TOKEN"))
    with pytest.raises(SourceError, match=r"authentication failed: GET .*/R4/Appointment.*401"):
        run(live, VERIAL_EXAMPLE)


def test_missing_token_variable_names_the_variable(medplum: MedplumServer) -> None:
    os.environ.pop("VERIAL_TEST_UNSET", None)
    live = LiveFhir(live_settings(medplum, token_env="VERIAL_TEST_UNSET"))
    with pytest.raises(SourceError, match=r"\$VERIAL_TEST_UNSET is not set"):
        run(live, VERIAL_EXAMPLE)


def test_oauth2_client_credentials(medplum: MedplumServer) -> None:
    os.environ["VERIAL_TEST_CLIENT_SECRET"] = CLIENT_SECRET
    settings = {
        "base_url": medplum.base_url,
        "token_url": medplum.token_url,
        "client_id": CLIENT_ID,
        "client_secret_env": "VERIAL_TEST_CLIENT_SECRET",
    }
    live = LiveFhir(settings)
    assert live.auth == "client_credentials"
    medplum.reset_log()
    assert run(live, VERIAL_EXAMPLE).score == 1.0
    assert run(live, {**VERIAL_EXAMPLE, "search": {"status": "booked"}}).evidence["total"] > 1
    assert [r["auth"] for r in medplum.requests()] == [f"Bearer {TOKEN}"] * 2
    assert live.requests_sent == 3  # one token exchange, two searches


def test_oauth2_wrong_secret(medplum: MedplumServer) -> None:
    os.environ["VERIAL_TEST_BAD_SECRET"] = "wrong"
    live = LiveFhir(
        {
            "base_url": medplum.base_url,
            "token_url": medplum.token_url,
            "client_id": CLIENT_ID,
            "client_secret_env": "VERIAL_TEST_BAD_SECRET",
        }
    )
    with pytest.raises(SourceError, match="refused the client credentials") as info:
        run(live, VERIAL_EXAMPLE)
    assert "wrong" not in str(info.value)


def test_paging_follows_next_links(medplum: MedplumServer, corpus: list[dict[str, Any]]) -> None:
    """The server pages by 20; every page is read once when all matches are needed."""
    live = LiveFhir(live_settings(medplum))
    medplum.reset_log()
    result = live.search(build_query("Observation", {"status": "final"}), need_all=True)
    expected = sorted(
        r["id"] for r in corpus if r["resourceType"] == "Observation" and r["status"] == "final"
    )
    assert len(expected) > 40
    assert sorted(r["id"] for r in result.resources) == expected
    assert result.total == len(expected)
    pages = medplum.requests()
    assert len(pages) == -(-len(expected) // 20)
    assert all("_offset=" in p["url"] for p in pages[1:])


def test_count_limits_the_pages_read(medplum: MedplumServer) -> None:
    """``_count`` is the first page: no further page is requested for it."""
    live = LiveFhir(live_settings(medplum))
    medplum.reset_log()
    result = live.search(build_query("Observation", {"_count": "5"}), need_all=True)
    assert len(result.resources) == 5 and result.total > 100
    assert len(medplum.requests()) == 1


def test_first_match_reads_one_page_only(medplum: MedplumServer) -> None:
    live = LiveFhir(live_settings(medplum))
    medplum.reset_log()
    outcome = run(
        live,
        {
            "resource_type": "Observation",
            "search": {"status": "final"},
            "fields": [{"path": "status", "expected": "final"}],
        },
    )
    assert outcome.score == 1.0 and outcome.evidence["total"] > 20
    assert len(medplum.requests()) == 1
    all_pages = run(
        live,
        {
            "resource_type": "Observation",
            "search": {"status": "final"},
            "match": "all",
            "fields": [{"path": "status", "expected": "final"}],
        },
    )
    assert all_pages.score == 1.0
    assert len(medplum.requests()) > 2  # the rest of the pages, the first one reused


def test_one_request_per_distinct_search(medplum: MedplumServer) -> None:
    live = LiveFhir(live_settings(medplum))
    medplum.reset_log()
    searches = [{"status": "booked"}, {"patient": "Patient/john-smith"}, {"status": "proposed"}]
    for i in range(30):
        run(
            live,
            {
                "resource_type": "Appointment",
                "search": searches[i % 3],
                "fields": [{"path": "status", "expected": "booked"}],
            },
        )
    assert len(medplum.requests()) == 3


def test_wrong_base_url_is_a_404_naming_the_url(medplum: MedplumServer) -> None:
    live = LiveFhir(live_settings(medplum, base_url=medplum.origin + "/fhir/R5"))
    with pytest.raises(SourceError, match=r"GET http://127\.0\.0\.1:\d+/fhir/R5/Appointment.*404"):
        run(live, VERIAL_EXAMPLE)


def test_unknown_search_parameter_is_refused_before_sending(medplum: MedplumServer) -> None:
    live = LiveFhir(live_settings(medplum))
    medplum.reset_log()
    with pytest.raises(
        CheckError, match="unknown search parameter 'pateint' for Appointment; did you mean patient"
    ):
        run(live, {"resource_type": "Appointment", "search": {"pateint": "Patient/x"}})
    assert medplum.requests() == []


# --- faults from the stub ----------------------------------------------------------------


def _stub_live(origin: str, fault: str, **extra: Any) -> LiveFhir:
    return LiveFhir(
        {"base_url": f"{origin}/{fault}", "retries": 2, "backoff": 0.01, "timeout": 5, **extra}
    )


def test_server_error_500_after_retries() -> None:
    with stub_server() as stub:
        with pytest.raises(SourceError, match=r"/500/Patient.*HTTP 500: database is down"):
            run(_stub_live(stub.origin, "500"), {"resource_type": "Patient"})
        assert len(stub.hits) == 3  # first try and two retries


@pytest.mark.parametrize("fault", ["flaky", "429"])
def test_retry_on_503_and_429(fault: str) -> None:
    with stub_server() as stub:
        outcome = run(_stub_live(stub.origin, fault), {"resource_type": "Patient"})
        assert outcome.score == 1.0 and len(stub.hits) == 2


def test_html_instead_of_json() -> None:
    with (
        stub_server() as stub,
        pytest.raises(SourceError, match=r"answered text/html.*not FHIR JSON.*Sign in"),
    ):
        run(_stub_live(stub.origin, "html"), {"resource_type": "Patient"})


def test_invalid_json_body() -> None:
    with stub_server() as stub, pytest.raises(SourceError, match="invalid JSON"):
        run(_stub_live(stub.origin, "notjson"), {"resource_type": "Patient"})


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("badbundle", "Bundle.entry and Bundle.link must be lists"),
        ("outcome", "expected a Bundle, got 'OperationOutcome'"),
    ],
)
def test_malformed_search_answers(fault: str, message: str) -> None:
    with stub_server() as stub, pytest.raises(SourceError, match=message):
        run(_stub_live(stub.origin, fault), {"resource_type": "Patient"})


def test_timeout_names_url_and_limit() -> None:
    with stub_server(slow_seconds=2.0) as stub:
        live = _stub_live(stub.origin, "slow", timeout=0.3, retries=1)
        with pytest.raises(SourceError, match=r"did not answer GET .*/slow/Patient within 0.3 s"):
            run(live, {"resource_type": "Patient"})


def test_unreachable_server_names_url_and_cause() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    live = LiveFhir({"base_url": f"http://127.0.0.1:{port}/fhir", "retries": 0})
    with pytest.raises(
        SourceError, match=rf"unreachable: GET http://127.0.0.1:{port}/fhir/Patient"
    ):
        run(live, {"resource_type": "Patient"})


def test_a_failed_search_is_not_sent_again() -> None:
    with stub_server() as stub:
        live = _stub_live(stub.origin, "500", retries=0)
        for _ in range(3):
            with pytest.raises(SourceError):
                run(live, {"resource_type": "Patient"})
        assert len(stub.hits) == 1


def test_google_default_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """auth: google takes the token from google-auth's application default credentials."""
    import google.auth

    class Credentials:
        token = None

        def refresh(self, request: Any) -> None:
            self.token = "ya29.from-adc"

    monkeypatch.setattr(google.auth, "default", lambda scopes: (Credentials(), "proj"))
    with stub_server() as stub:
        live = _stub_live(stub.origin, "ok", auth="google")
        assert run(live, {"resource_type": "Patient"}).score == 1.0
    assert live._token == "ya29.from-adc"


def test_google_without_credentials_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth
    import google.auth.exceptions

    def no_adc(scopes: Any) -> Any:
        raise google.auth.exceptions.DefaultCredentialsError("Could not find default credentials")

    monkeypatch.setattr(google.auth, "default", no_adc)
    live = LiveFhir({"base_url": "http://127.0.0.1:9/fhir", "auth": "google"})
    with pytest.raises(SourceError, match="Google default credentials unusable.*Could not find"):
        run(live, {"resource_type": "Patient"})
