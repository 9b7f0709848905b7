"""The GCS source against a real emulator: same results as the same tree on disk, one listing
per task run, downloads at most once, prefixes that are string-prefixes of others kept apart."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from pytest_verial import Task

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._config.run_folder import RunDir
from pytest_verial._errors import RunConfigError
from pytest_verial.sources import Sandbox

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import DirectoryFiles, GCSFiles

from .conftest import BUCKET, SANDBOXES, result
from .emulator import Emulator

#: criteria run against every sandbox, on disk and in the bucket
CRITERIA: list[dict[str, Any]] = [
    {"pattern": "outbound/claims/*.json", "min_count": 100},
    {"pattern": "outbound/claims/*.json", "max_count": 10},
    {
        "pattern": "outbound/claims/batch-0042.json",
        "parse": "json",
        "fields": [
            {"path": "claims.1.claim_id", "expected": "CLM-0042-1"},
            {"path": "claims.2.amount", "expected": 1252},
            {"path": "payer", "expected": "Aetna"},
        ],
    },
    {
        "pattern": "outbound/claims/batch-00[0-4]?.json",
        "fields": [{"path": "claims.0.claim_id", "expected": "CLM-0031-0"}],
    },
    {
        "pattern": "outbound/claims/*.json",
        "fields": [
            {"path": "payer", "expected": "Cigna"},
            {"path": "claims.0.cpt", "expected": "72148"},
        ],
    },
    {
        "pattern": "outbound/referrals/**/*.txt",
        "min_count": 100,
        "contains": ["Maria Chen"],
        "regex": r"Reason: lumbar MRI",
    },
    {
        "pattern": "**/referral-0007.txt",
        "parse": "text",
        "fields": [
            {"path": "lines.0", "op": "regex", "expected": r"^REFERRAL PACKET sandbox-\d+/7$"}
        ],
        "not_contains": ["John Smith"],
    },
    {
        "pattern": "inbox/eligibility/response-0003.ndjson",
        "fields": [{"path": "1.active", "expected": False}, {"path": "$rows", "expected": 3}],
    },
    {
        "pattern": "outbound/claims.csv",
        "parse": "csv",
        "fields": [
            {"path": "4.amount", "op": "gte", "expected": 500},
            {"path": "*.patient", "op": "contains", "expected": "Patient 3"},
        ],
    },
    {"pattern": "outbound/claims.csv", "content_type": "text/csv", "max_size": 10},
    {"pattern": "outbound/README", "fields": [{"path": "x"}]},
    {"pattern": "outbound/*.pdf", "min_count": 0, "max_count": 0},
    {"pattern": "**/*.json", "min_count": 100, "max_count": 100},
]


def _disk(root: Path, sandbox: str) -> DirectoryFiles:
    return DirectoryFiles(root / sandbox)


def _gcs(emulator: Emulator, sandbox: str) -> GCSFiles:
    return GCSFiles(BUCKET, sandbox, endpoint=emulator.endpoint)


def test_the_bucket_holds_over_a_thousand_objects_under_several_prefixes(
    emulator: Emulator, tree: tuple[Path, int]
) -> None:
    whole = GCSFiles(BUCKET, "", endpoint=emulator.endpoint)
    names = [e.path for e in whole.entries()]
    assert len(names) == tree[1] >= 1000
    assert {n.split("/", 1)[0] for n in names} == set(SANDBOXES)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_same_criteria_same_results_on_disk_and_in_gcs(
    emulator: Emulator, tree: tuple[Path, int], sandbox: str
) -> None:
    disk, gcs = _disk(tree[0], sandbox), _gcs(emulator, sandbox)
    on_disk = [result(c, disk) for c in CRITERIA]
    in_gcs = [result(c, gcs) for c in CRITERIA]
    for criterion, a, b in zip(CRITERIA, on_disk, in_gcs, strict=True):
        assert a == b, criterion
    scores = [r.get("score", "error") for r in on_disk]
    assert scores == [
        1.0,
        0.0,
        pytest.approx(2 / 3),
        1.0,
        0.5,
        1.0,
        1.0,
        1.0,
        1.0,
        0.5,
        "error",
        1.0,
        1.0,
    ]
    assert "cannot tell how to parse it" in on_disk[10]["error"]


def test_one_listing_per_task_run_and_each_object_downloaded_at_most_once(
    emulator: Emulator,
) -> None:
    gcs = _gcs(emulator, "sandbox-2")
    for _ in range(3):
        for criterion in CRITERIA:
            result(criterion, gcs)
    assert gcs.list_calls == 1
    assert gcs.list_pages == 1  # the emulator returns one page; GCS pages by page_size
    # Criteria stop at the first file that passes everything; failing ones read all matches.
    assert gcs.downloads == len(gcs._content)
    assert gcs.requests == gcs.list_pages + gcs.downloads
    presence_only = _gcs(emulator, "sandbox-3")
    result({"pattern": "**", "min_count": 300}, presence_only)
    assert presence_only.requests == 1 and presence_only.downloads == 0


def test_a_prefix_never_sees_a_longer_sibling_prefix(
    emulator: Emulator, tree: tuple[Path, int]
) -> None:
    one, ten = _gcs(emulator, "sandbox-1"), _gcs(emulator, "sandbox-10")
    assert len(one.entries()) == len(ten.entries()) == (tree[1]) // len(SANDBOXES)
    spec = {
        "pattern": "outbound/claims/batch-0000.json",
        "fields": [{"path": "batch_id", "expected": "sandbox-10-B0000"}],
    }
    assert result(spec, one)["score"] == 0.0
    assert result(spec, ten)["score"] == 1.0
    assert _gcs(emulator, "sandbox-1/").describe() == "gs://verial-sftp/sandbox-1/"


def test_object_names_that_could_escape_are_refused(emulator: Emulator) -> None:
    for name in (
        "sandbox-1/ok.json",
        "sandbox-1/..%2Fsecret.json",
        "sandbox-1//double.json",
        "sandbox-1/a\\b.json",
        "sandbox-1/./x.json",
        "sandbox-10/secret.json",
    ):
        emulator.upload("odd-names", name, b'{"ok": true}')
    source = GCSFiles("odd-names", "sandbox-1", endpoint=emulator.endpoint)
    out = result({"pattern": "**"}, source)
    assert out["evidence"]["matched_paths"] == ["ok.json"]
    assert sorted(out["evidence"]["refused_paths"]) == [
        "..%2Fsecret.json",
        "./x.json",
        "/double.json",
        "a\\b.json",
    ]


def test_storage_emulator_host_variable_is_honoured(
    emulator: Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", emulator.endpoint.removeprefix("http://"))
    source = GCSFiles(BUCKET, "sandbox-3")
    assert result({"pattern": "outbound/claims.csv"}, source)["score"] == 1.0


def _sandbox(tmp_path: Path, files: dict[str, Any], task_key: str = "sandbox-1") -> Sandbox:
    import yaml

    (tmp_path / "run.yaml").write_text(yaml.safe_dump({"sources": {"files": files}}))
    return Sandbox(RunDir(tmp_path), Task(id=task_key), task_key)


def test_run_yaml_selects_the_bucket_and_prefix(emulator: Emulator, tmp_path: Path) -> None:
    sandbox = _sandbox(
        tmp_path,
        {
            "bucket": BUCKET,
            "prefix": "{task_key}",
            "endpoint": emulator.endpoint,
            "max_read_bytes": 4096,
        },
    )
    source = sandbox.source("files")
    assert isinstance(source, GCSFiles)
    assert source.describe() == "gs://verial-sftp/sandbox-1/"
    assert source.max_read_bytes == 4096
    assert result({"pattern": "outbound/claims/*.json", "min_count": 100}, source)["score"] == 1.0
    assert sandbox.source("files") is source  # one source, one listing, per task run


def test_without_a_bucket_the_sandbox_sftp_directory_is_read(tmp_path: Path) -> None:
    (tmp_path / "t1" / "sftp").mkdir(parents=True)
    source = _sandbox(tmp_path, {"max_read_bytes": 10}, "t1").source("files")
    assert isinstance(source, DirectoryFiles)
    assert source.root == tmp_path / "t1" / "sftp" and source.max_read_bytes == 10


@pytest.mark.parametrize(
    "files, message",
    [
        ({"bucket": "b", "prefix": "runs/../other/{task_key}"}, "refused"),
        ({"bucket": "b", "prefix": "{task}"}, "unknown placeholder"),
        ({"bucket": "b", "colour": 1}, "sources.files.colour: unknown key"),
        ({"bucket": "b", "timeout": 0}, r"sources.files.timeout: expected a number > 0, got 0"),
        ({"bucket": ["b"]}, r"sources.files.bucket: expected text, got \['b'\]"),
        # issue 9: plain substitution only, bad values name the file and key
        ({"bucket": "b", "prefix": "{task_key.__class__}"}, r"unknown placeholder \{task_key"),
        ({"bucket": "b", "prefix": "{0}"}, r"unknown placeholder \{0\}"),
        ({"bucket": "b", "prefix": "a}{"}, "unbalanced brace"),
        ({"bucket": "b", "timeout": "soon"}, r"run.yaml: sources.files.timeout: .*'soon'"),
        # NaN is refused by run.yaml's own parser, before any setting is read
        (
            {"bucket": "b", "timeout": float("nan")},
            r"run.yaml: field .sources.files.timeout.: the non-finite number nan is not",
        ),
        ({"bucket": "b", "page_size": 2.5}, "sources.files.page_size: expected a whole number"),
        ({"max_read_bytes": True}, "sources.files.max_read_bytes: expected a whole number"),
        ({"bucket": "b", "endpoint": 5}, "sources.files.endpoint: expected text"),
    ],
)
def test_bad_files_settings_are_run_config_errors(
    tmp_path: Path, files: dict[str, Any], message: str
) -> None:
    with pytest.raises(RunConfigError, match=message):
        _sandbox(tmp_path, files).source("files")


def test_files_above_the_limit_are_never_downloaded(emulator: Emulator) -> None:
    source = GCSFiles(BUCKET, "sandbox-2", endpoint=emulator.endpoint, max_read_bytes=64)
    out = result(
        {
            "pattern": "outbound/claims/batch-0001.json",
            "fields": [{"path": "payer", "expected": "Aetna"}],
        },
        source,
    )
    assert "above the size limit of 64 bytes" in out["error"]
    assert source.downloads == 0 and source.requests == 1


class _Paged(BaseHTTPRequestHandler):
    """Real GCS pages listings; the emulator does not, so this stub serves three pages."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        query = parse_qs(urlparse(self.path).query)
        page = int(query.get("pageToken", ["0"])[0])
        size = int(query["maxResults"][0])
        names = [f"{query['prefix'][0]}outbound/f{n:03d}.json" for n in range(25)]
        chunk = names[page * size : (page + 1) * size]
        body: dict[str, Any] = {
            "kind": "storage#objects",
            "items": [
                {
                    "kind": "storage#object",
                    "name": n,
                    "bucket": "b",
                    "size": "2",
                    "contentType": "application/json",
                }
                for n in chunk
            ],
        }
        if (page + 1) * size < len(names):
            body["nextPageToken"] = str(page + 1)
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


def test_a_paged_listing_is_read_to_the_end_once() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Paged)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        source = GCSFiles("b", "sandbox-1", endpoint=endpoint, page_size=10)
        assert result({"pattern": "outbound/*.json", "min_count": 25}, source)["score"] == 1.0
        assert result({"pattern": "outbound/f02?.json", "min_count": 5}, source)["score"] == 1.0
        assert source.list_pages == 3 and source.requests == 3 and source.list_calls == 1
    finally:
        server.shutdown()
        server.server_close()
