"""``sources.fhir`` of run.yaml: a bad value or unknown key is one line naming file and key."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import RunConfigError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.fhir._live import LiveFhir

BASE = {"base_url": "http://127.0.0.1:9/fhir"}


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ({"timeout": -5}, "sources.fhir.timeout: expected a positive number of seconds, got -5"),
        ({"timeout": "10s"}, "sources.fhir.timeout: expected a positive number of seconds"),
        ({"deadline": 0}, "sources.fhir.deadline: expected a positive number of seconds, got 0"),
        ({"deadline": float("nan")}, "sources.fhir.deadline: expected a positive number"),
        ({"max_pages": "lots"}, "sources.fhir.max_pages: expected a whole number >= 1, got 'lots'"),
        ({"max_pages": 0}, "sources.fhir.max_pages: expected a whole number >= 1, got 0"),
        ({"max_pages": 2.5}, "sources.fhir.max_pages: expected a whole number >= 1, got 2.5"),
        ({"retries": -1}, "sources.fhir.retries: expected a whole number from 0 to 100"),
        ({"backoff": -1}, "sources.fhir.backoff: expected seconds >= 0, got -1"),
        ({"validate_params": "yes"}, "sources.fhir.validate_params: expected true or false"),
        ({"auth": "basic"}, "sources.fhir.auth: expected one of none, bearer"),
        ({"token_url": 5}, "sources.fhir.token_url: expected text, got 5"),
        ({"max_page": 3}, "sources.fhir.max_page: unknown key (did you mean 'max_pages'?)"),
        ({"timeuot": 3}, "sources.fhir.timeuot: unknown key (did you mean 'timeout'?)"),
    ],
)
def test_bad_setting_names_file_and_key(extra: dict[str, Any], says: str) -> None:
    with pytest.raises(RunConfigError) as info:
        LiveFhir({**BASE, **extra}, where="/runs/r1/run.yaml")
    message = str(info.value)
    assert message.startswith("/runs/r1/run.yaml: ")
    assert says in message and "\n" not in message


def test_good_settings_pass_and_a_yaml_timestamp_becomes_text() -> None:
    since = datetime(2026, 11, 21, 15, tzinfo=UTC)
    checked = LiveFhir(
        {
            **BASE,
            "timeout": 2,
            "deadline": 30.5,
            "max_pages": 3,
            "retries": 0,
            "backoff": 0,
            "baseline_since": since,
        }
    ).settings
    assert checked["baseline_since"] == "2026-11-21T15:00:00+00:00"
    live = LiveFhir({**BASE, "timeout": 2, "deadline": 30.5, "max_pages": 3})
    assert (live.timeout, live.deadline.seconds, live.max_pages) == (2, 30.5, 3)
