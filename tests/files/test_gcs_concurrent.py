"""GCS objects a task run will read, downloaded at once after its one listing (issue 12).

Each download of READS is slowed by 200 ms in the client (the emulator answers at once), so
downloads that run together overlap; how many were under way is counted, never timed.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_verial import Task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._config.run_folder import RunDir
from pytest_verial._errors import RunConfigError, SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.checks._files import SftpFilePresent
from pytest_verial.sources import Sandbox

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import FileEntry, GCSFiles

from .conftest import BUCKET, result
from .emulator import Emulator
from .test_gcs import CRITERIA

#: content criteria over distinct first files: each is read ahead
READS = [
    {"pattern": f"outbound/claims/batch-{n:04d}.json", "fields": [{"path": "payer"}]}
    for n in range(10)
]


def specs(criteria: list[dict[str, Any]]) -> list[SftpFilePresent]:
    return [SftpFilePresent.model_validate({"assert": "sftp-file-present", **c}) for c in criteria]


class Watch:
    """Wraps a source's downloads: 200 ms more for READS, which threads ran them, overlap."""

    def __init__(self, source: GCSFiles, fail: str | None = None) -> None:
        self.threads: list[str] = []
        self.under_way = self.most = 0
        self._lock = threading.Lock()
        fetch = source._fetch

        def slow(entry: FileEntry) -> bytes:
            with self._lock:
                self.under_way += 1
                self.most = max(self.most, self.under_way)
                self.threads.append(threading.current_thread().name)
            try:
                if entry.path.startswith("outbound/claims/batch-000"):  # those of READS
                    time.sleep(0.2)
                if entry.path == fail:
                    raise SourceError(f"reading {entry.path!r} from {source.describe()}: gone")
                return fetch(entry)
            finally:
                with self._lock:
                    self.under_way -= 1

        source._fetch = slow  # type: ignore[method-assign]


def planned(emulator: Emulator, criteria: list[dict[str, Any]], concurrency: int) -> GCSFiles:
    source = GCSFiles(BUCKET, "sandbox-2", endpoint=emulator.endpoint, concurrency=concurrency)
    plan = specs(criteria)
    source.planner = lambda: plan
    return source


def workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("verial-files")]


def test_reads_ahead_together_with_the_sequential_results_and_requests(
    emulator: Emulator,
) -> None:
    criteria = READS + CRITERIA
    one = planned(emulator, criteria, 1)
    watch_one = Watch(one)
    expected = [result(c, one) for c in criteria]
    eight = planned(emulator, criteria, 8)
    watch_eight = Watch(eight)
    got = [result(c, eight) for c in criteria]
    eight.close()
    assert got == expected
    assert (eight.requests, eight.downloads, eight.list_calls) == (
        one.requests,
        one.downloads,
        1,
    )
    assert watch_one.most == 1 and not any(t.startswith("verial-files") for t in watch_one.threads)
    assert watch_eight.most > 1
    assert sum(t.startswith("verial-files") for t in watch_eight.threads) >= len(READS) - 1
    assert not workers()


def test_a_failed_download_errs_only_the_criterion_reading_it(emulator: Emulator) -> None:
    expected = [result(c, planned(emulator, READS, 1)) for c in READS]
    source = planned(emulator, READS, 8)
    Watch(source, fail="outbound/claims/batch-0004.json")
    got = [result(c, source) for c in READS]
    source.close()
    for n, (want, have) in enumerate(zip(expected, got, strict=True)):
        if n == 4:
            assert "batch-0004.json" in have["error"] and "gone" in have["error"]
        else:
            assert have == want
    assert not workers()


def test_close_cancels_the_downloads_not_started(emulator: Emulator) -> None:
    source = planned(emulator, READS, 2)
    watch = Watch(source)
    result(READS[0], source)
    source.close()
    assert not workers()
    assert source.downloads < len(READS) and len(watch.threads) == source.downloads
    fresh = planned(emulator, READS, 1)
    assert result(READS[-1], source) == result(READS[-1], fresh)  # read now by the criterion


def _sandbox(tmp_path: Path, files: dict[str, Any], plans: list[Any]) -> Sandbox:
    import yaml

    (tmp_path / "run.yaml").write_text(yaml.safe_dump({"sources": {"files": files}}))
    return Sandbox(RunDir(tmp_path), Task(id="sandbox-2"), "sandbox-2", planned=lambda: plans)


def test_run_yaml_sets_the_concurrency_and_the_sandbox_the_plan(
    emulator: Emulator, tmp_path: Path
) -> None:
    class Plan:
        def __init__(self, spec: Any) -> None:
            self.spec = spec

    plans = [Plan(s) for s in specs(READS)]
    files = {"bucket": BUCKET, "prefix": "{task_key}", "endpoint": emulator.endpoint}
    source = _sandbox(tmp_path, {**files, "concurrency": 3}, plans).source("files")
    assert isinstance(source, GCSFiles) and source.concurrency == 3
    assert source.planner is not None and source.planner() == [p.spec for p in plans]
    default = _sandbox(tmp_path, files, plans).source("files")
    assert default.concurrency == 8


@pytest.mark.parametrize("bad", [0, 65, 2.5, "many"])
def test_a_bad_concurrency_is_one_line(tmp_path: Path, bad: Any) -> None:
    files = {"bucket": "b", "concurrency": bad}
    with pytest.raises(RunConfigError, match=r"sources\.files\.concurrency: expected a whole"):
        _sandbox(tmp_path, files, []).source("files")
