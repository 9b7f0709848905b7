"""A task run's distinct searches sent at once (issue 12): the live source on its own.

The server (``medplum_slow``) answers each FHIR request after ``SLOW_MS`` and logs when each
started and ended and how many were under way, so overlap is read from its log, never timed.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

import pytest
from helpers import run
from medplum_support import CLIENT_ID, CLIENT_SECRET, MedplumServer, live_settings

from pytest_verial import CheckOutcome

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CriterionError, SourceError
from pytest_verial.checks._fhir import FhirResourceState

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._live import LiveFhir

#: one worker runs this module and test_plugin_fhir_concurrent.py (scripts/test: --dist
#: loadgroup): the slow server is started once for both
pytestmark = pytest.mark.xdist_group("fhir-slow")

#: (resource type, search, match, fields): 8 distinct searches, 3 criteria each
SEARCHES: list[tuple[str, dict[str, Any], str]] = [
    ("Appointment", {"patient": "Patient/john-smith", "status": "booked"}, "first"),
    ("Appointment", {"status": "booked"}, "any"),
    ("Appointment", {"status": "proposed"}, "first"),
    ("Patient", {"family": "Smith"}, "all"),
    ("Observation", {"status": "final"}, "all"),  # three pages of 20
    ("Encounter", {"status": "finished"}, "first"),
    ("Condition", {"subject": "Patient/pat1"}, "first"),
    ("MedicationRequest", {"status": "active"}, "any"),
]


def criteria() -> list[dict[str, Any]]:
    """24 criteria: each search with a passing, a failing and a counting criterion."""
    out: list[dict[str, Any]] = []
    for rtype, search, match in SEARCHES:
        base = {"resource_type": rtype, "search": search}
        out.append({**base, "match": match, "fields": [{"path": "id", "op": "exists"}]})
        out.append({**base, "fields": [{"path": "status", "expected": "cancelled"}]})
        out.append({**base, "count": {"op": "gte", "expected": 1}})
    return out


def planned_live(server: MedplumServer, crits: list[dict[str, Any]], **extra: Any) -> LiveFhir:
    """A live source that knows its task run's criteria, as the sandbox makes it."""
    live = LiveFhir(live_settings(server, **extra))
    specs = [
        FhirResourceState.model_validate({"assert": "fhir-resource-state", **c}) for c in crits
    ]

    def planner() -> list[Any]:  # each criterion's search; one that cannot be built left out
        planned = []
        for spec in specs:
            with contextlib.suppress(CriterionError):
                planned.append(spec.planned_search(live))
        return planned

    live.planner = planner
    return live


def outcomes(live: LiveFhir, crits: list[dict[str, Any]]) -> list[Any]:
    """Each criterion's outcome, or its error's type and message."""
    out: list[Any] = []
    for crit in crits:
        try:
            outcome: CheckOutcome = run(live, crit)
            out.append((outcome.score, outcome.details, outcome.evidence))
        except CriterionError as exc:
            out.append((type(exc).__name__, str(exc)))
    return out


def workers() -> list[threading.Thread]:
    """The live sources' pool threads still alive."""
    return [t for t in threading.enumerate() if t.name.startswith("verial-fhir")]


def test_searches_overlap_once_each_with_the_sequential_outcomes(
    medplum_slow: MedplumServer,
) -> None:
    crits = criteria()
    medplum_slow.reset_log()
    sequential = planned_live(medplum_slow, crits, concurrency=1)
    expected = outcomes(sequential, crits)
    alone = medplum_slow.log()
    medplum_slow.reset_log()
    concurrent = planned_live(medplum_slow, crits, concurrency=8)
    got = outcomes(concurrent, crits)
    together = medplum_slow.log()
    concurrent.close()
    assert got == expected
    assert alone["max_inflight"] == 1  # pool of one: one request at a time, as before
    assert together["max_inflight"] > 1  # requests were under way together
    urls = sorted(r["url"] for r in together["requests"])
    assert urls == sorted(r["url"] for r in alone["requests"])
    assert len(urls) == len(set(urls))  # each page of each search once
    assert len([u for u in urls if "_offset" not in u]) == len(SEARCHES)
    assert not workers()


def test_a_pool_of_one_sends_in_criterion_order(medplum_slow: MedplumServer) -> None:
    crits = criteria()
    medplum_slow.reset_log()
    outcomes(planned_live(medplum_slow, crits, concurrency=1), crits)
    firsts = [r["url"] for r in medplum_slow.requests() if "_offset" not in r["url"]]
    assert [u.split("?")[0] for u in firsts] == [f"/{rtype}" for rtype, _, _ in SEARCHES]
    assert not workers()


def test_failing_searches_fail_only_the_criteria_needing_them(
    medplum_slow: MedplumServer,
) -> None:
    """500, 404, a timeout and a failing second page, each on one search."""
    crits = criteria()
    # the all-pages criterion first: its page 2 fails, yet match: first still scores
    crits.insert(0, {"resource_type": "Observation", "search": {"status": "final"}, "count": 1})
    medplum_slow.reset_log()
    expected = outcomes(planned_live(medplum_slow, crits, concurrency=1), crits)
    medplum_slow.reset_log()
    medplum_slow.faults(
        [
            {"match": "status=proposed", "status": 500},
            {"match": "family=Smith", "status": 404},
            {"match": "/Encounter", "delay": 2500},
            {"match": "_offset=20", "status": 503},
        ]
    )
    live = planned_live(medplum_slow, crits, concurrency=8, timeout=1, retries=1)
    got = outcomes(live, crits)
    live.close()
    medplum_slow.reset_log()
    errors = {
        "status=proposed": "HTTP 500: injected fault 500",
        "family=Smith": "HTTP 404: injected fault 404",
        "Encounter": "did not answer GET",
    }
    for crit, want, have in zip(crits, expected, got, strict=True):
        text = f"{crit['resource_type']}?{'&'.join(f'{k}={v}' for k, v in crit['search'].items())}"
        needs_all = crit.get("match", "first") != "first" or "count" in crit
        broken = next((msg for key, msg in errors.items() if key in text), None)
        if broken is None and crit["resource_type"] == "Observation" and needs_all:
            broken = "HTTP 503"
        if broken is None:
            assert have == want, text
        else:
            assert have[0] == "SourceError" and broken in have[1], (text, have)
            assert "\n" not in have[1]
    assert not workers()


def test_a_stale_token_is_refreshed_once_not_once_per_thread(
    medplum_slow: MedplumServer,
) -> None:
    os.environ["VERIAL_TEST_CLIENT_SECRET"] = CLIENT_SECRET
    crits = criteria()
    live = planned_live(
        medplum_slow,
        crits,
        auth="client_credentials",
        token_url=medplum_slow.token_url,
        client_id=CLIENT_ID,
        client_secret_env="VERIAL_TEST_CLIENT_SECRET",
        token_env=None,
    )
    live._token, live._token_expires = "stale", float("inf")  # every request meets a 401
    medplum_slow.reset_log()
    got = outcomes(live, crits)
    seen = medplum_slow.log()
    live.close()
    assert all(isinstance(o[0], float) for o in got)
    refused = [r for r in seen["requests"] if r["auth"] == "Bearer stale"]
    assert seen["max_inflight"] > 1 and len(refused) > 1  # 401s met by several threads
    assert live.requests_sent - seen["count"] == 1  # and a single token request


def test_close_cancels_the_searches_not_started(medplum_slow: MedplumServer) -> None:
    crits = criteria()
    live = planned_live(medplum_slow, crits, concurrency=2)
    medplum_slow.reset_log()
    first = outcomes(live, crits[:1])
    live.close()  # as when the task run's sandbox closes or the session is interrupted
    assert not workers()
    sent = medplum_slow.log()["count"]
    assert sent < len(SEARCHES)  # the rest never left
    # a criterion of a search that was cancelled still gets it, sent then
    assert outcomes(live, crits[-3:-2])[0][0] == 1.0
    assert medplum_slow.log()["count"] == sent + 1
    assert first[0][0] == 1.0


def test_concurrency_is_checked_like_every_setting() -> None:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial._errors import RunConfigError

    for bad in (0, -1, 65, 2.5, "many", True):
        with pytest.raises(RunConfigError, match=r"sources\.fhir\.concurrency: expected a whole"):
            LiveFhir({"base_url": "http://127.0.0.1:9/fhir", "concurrency": bad})
    assert LiveFhir({"base_url": "http://127.0.0.1:9/fhir"}).concurrency == 8


def test_a_planner_that_fails_only_costs_the_head_start(medplum_slow: MedplumServer) -> None:
    def broken() -> list[Any]:
        raise SourceError("planning failed")

    live = LiveFhir(live_settings(medplum_slow))
    live.planner = broken
    medplum_slow.reset_log()
    assert outcomes(live, criteria()[:1])[0][0] == 1.0
    assert medplum_slow.log()["count"] == 1


def test_the_next_task_run_settles_the_previous_ones_searches(
    medplum_slow: MedplumServer,
) -> None:
    """Searches a task run never asked for (its criteria ended) are cancelled when the next
    task run takes its sandbox, and the threads end; the source is still usable."""
    from pytest_verial.sources import SandboxCache

    class Ended:
        """A sandbox whose FHIR source is ``live`` (the cache only settles and closes it)."""

        def __init__(self, live: LiveFhir) -> None:
            self.live = live

        def settle(self) -> None:
            self.live.settle()

        def close(self) -> None:
            self.live.close()

    live = planned_live(medplum_slow, criteria(), concurrency=2)
    cache = SandboxCache()
    medplum_slow.reset_log()
    cache.get(("run", "first"), lambda: Ended(live))
    outcomes(live, criteria()[:1])  # the task run's only criterion that ran
    assert workers()
    cache.get(("run", "second"), lambda: Ended(LiveFhir(live_settings(medplum_slow))))
    assert not workers()
    assert medplum_slow.log()["count"] < len(SEARCHES)
    cache.close()


def test_a_search_cut_short_by_settling_is_finished_by_its_criterion(
    medplum_slow: MedplumServer,
) -> None:
    """Settling stops paging between pages; that is no error of the search: a criterion
    asking for it later (the same task run's sandbox met again) reads the remaining pages."""
    every = {"resource_type": "Observation", "search": {"status": "final"}, "match": "all"}
    other = {"resource_type": "Patient", "search": {"family": "Smith"}}
    expected = outcomes(planned_live(medplum_slow, [other, every], concurrency=1), [every])
    live = planned_live(medplum_slow, [other, every], concurrency=2)
    outcomes(live, [other])  # SLOW_MS: the Observation pages are under way
    live.settle()
    assert outcomes(live, [every]) == expected
    live.close()
