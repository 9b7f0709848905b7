"""One deadline per task run for the GCS files source (issue 9): a bucket endpoint that
accepts and never answers costs at most ``deadline``, then every read is a one-line error.
Assertions are on connection counts and messages, never on timings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fhir"))

from silent_server import silent_server  # noqa: E402

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import FileEntry

pytest.importorskip("google.cloud.storage")

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import GCSFiles


def test_a_silent_bucket_costs_one_deadline_not_one_timeout_per_read() -> None:
    with silent_server() as server:
        source = GCSFiles("b", "task/sftp", endpoint=server.origin, timeout=0.4, deadline=1.0)
        messages = []
        for name in ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"]:
            with pytest.raises(SourceError) as info:
                source.read(FileEntry(name, 5))
            messages.append(str(info.value))
        with pytest.raises(SourceError) as listing:
            source.entries()
        source.close()
        accepted = server.accepted
    expected = (
        "gs://b/task/sftp/: the task run's deadline of 1 s (sources.files.deadline) "
        "passed; no further request sent"
    )
    assert str(listing.value) == expected
    assert messages[-1] == expected
    assert sum(m == expected for m in messages) >= 3
    assert 1 <= accepted < 6  # without the deadline: 5 reads + 1 listing, each sent
    assert all("\n" not in m for m in messages)
