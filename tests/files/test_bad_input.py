"""Bad input: each a clear criterion error naming the file; other criteria still score."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CheckError, CriterionError, SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import DirectoryFiles, GCSFiles

from .conftest import BUCKET, run_check
from .emulator import Emulator


@pytest.fixture
def bad(tmp_path: Path) -> DirectoryFiles:
    root = tmp_path / "sftp"
    root.mkdir()
    files = {
        "broken.json": b'{"claim_id": "CLM-1",\n  "amount": }\n',
        "empty.json": b"",
        "blank.csv": b"\n\n",
        "ragged.csv": b"claim_id,amount\nCLM-1,100\nCLM-2,80,extra\n",
        "unterminated.csv": b'claim_id,note\nCLM-1,"never closed\n',
        "lines.ndjson": b'{"a": 1}\n{"a": \n',
        "scan.txt": b"%PDF-1.7\x00\x01\x02binary",
        "latin1.txt": "Müller".encode("latin-1"),
        "good.json": b'{"claim_id": "CLM-9"}',
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    return DirectoryFiles(root)


@pytest.mark.parametrize(
    "pattern, parse, message",
    [
        ("broken.json", "json", r"broken.json:2: invalid JSON: Expecting value \(column 13\)"),
        ("empty.json", "json", r"empty.json: empty file, expected a JSON document"),
        ("blank.csv", "csv", r"blank.csv: empty file, expected a CSV header row"),
        ("ragged.csv", "csv", r"ragged.csv:3: CSV row has 3 fields, the header has 2"),
        ("unterminated.csv", "csv", r"unterminated.csv:\d+: invalid CSV: unexpected end of data"),
        ("lines.ndjson", "ndjson", r"lines.ndjson:2: invalid JSON line"),
        ("scan.txt", "text", r"scan.txt: binary data where text was expected"),
        ("latin1.txt", "text", r"latin1.txt: not UTF-8 text \(invalid byte at offset 1\)"),
    ],
)
def test_unreadable_content_is_a_source_error_naming_the_file(
    bad: DirectoryFiles, pattern: str, parse: str, message: str
) -> None:
    with pytest.raises(SourceError, match=message):
        run_check({"pattern": pattern, "parse": parse, "fields": [{"path": "0.x"}]}, bad)


def test_binary_file_with_contains_is_an_error_not_a_miss(bad: DirectoryFiles) -> None:
    with pytest.raises(SourceError, match="binary data"):
        run_check({"pattern": "scan.txt", "contains": ["PDF"]}, bad)


def test_presence_alone_never_reads_the_file(bad: DirectoryFiles) -> None:
    assert run_check({"pattern": "broken.json"}, bad).score == 1.0
    assert bad.downloads == 0


def test_other_criteria_of_the_same_source_still_score(bad: DirectoryFiles) -> None:
    with pytest.raises(SourceError):
        run_check({"pattern": "broken.json", "fields": [{"path": "claim_id"}]}, bad)
    ok = run_check(
        {"pattern": "good.json", "fields": [{"path": "claim_id", "expected": "CLM-9"}]}, bad
    )
    assert ok.score == 1.0


def test_an_unreadable_candidate_is_skipped_when_another_scores(bad: DirectoryFiles) -> None:
    out = run_check(
        {"pattern": "*.json", "fields": [{"path": "claim_id", "expected": "CLM-9"}]}, bad
    )
    assert out.score == 1.0
    assert out.evidence["file"]["path"] == "good.json"
    assert [u["path"] for u in out.evidence["unreadable"]] == ["broken.json", "empty.json"]
    assert "2 unreadable" in out.details


def test_when_no_candidate_can_be_read_the_error_lists_them(bad: DirectoryFiles) -> None:
    with pytest.raises(SourceError, match=r"broken.json:2: .* \(and 1 more unreadable files\)"):
        run_check({"pattern": "[be]*.json", "fields": [{"path": "claim_id"}]}, bad)


def test_parse_errors_are_cached_per_file(bad: DirectoryFiles) -> None:
    for _ in range(3):
        with pytest.raises(SourceError):
            run_check({"pattern": "broken.json", "fields": [{"path": "a"}]}, bad)
    assert bad.downloads == 1


def test_files_above_the_size_limit_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "big.json").write_bytes(b"[" + b"1," * 2000 + b"1]")
    source = DirectoryFiles(tmp_path, max_read_bytes=1000)
    assert run_check({"pattern": "big.json", "min_size": 1000}, source).score == 1.0
    with pytest.raises(SourceError, match=r"big.json: 4003 bytes, above the size limit of 1000"):
        run_check({"pattern": "big.json", "fields": [{"path": "0", "expected": 1}]}, source)
    assert source.downloads == 0


# ---- GCS faults: a missing bucket on the real emulator; stubs for what it cannot produce ----


def test_missing_bucket_is_a_clear_error(emulator: Emulator, bucket: str) -> None:
    source = GCSFiles("no-such-bucket", "sandbox-1", endpoint=emulator.endpoint)
    with pytest.raises(
        SourceError,
        match=r"listing gs://no-such-bucket/sandbox-1/: bucket "
        r"'no-such-bucket' not found",
    ):
        run_check({"pattern": "**"}, source)
    with pytest.raises(SourceError, match="not found"):
        run_check({"pattern": "outbound/**"}, source)
    assert source.list_calls == 1 and source.requests == 1  # the failure is remembered


class _Denied(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        body = json.dumps(
            {
                "error": {
                    "code": 403,
                    "message": "anonymous caller does not have "
                    "storage.objects.list access to the Google Cloud Storage bucket.",
                }
            }
        ).encode()
        self.send_response(403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def denying_server() -> Iterator[str]:
    """A stub answering 403 to everything (the emulator does not enforce permissions)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Denied)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A socket that accepts connections and never answers (a hung endpoint)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def test_denied_access_is_a_clear_error(denying_server: str) -> None:
    source = GCSFiles(BUCKET, "sandbox-1", endpoint=denying_server)
    with pytest.raises(
        SourceError,
        match=r"listing gs://verial-sftp/sandbox-1/: access denied "
        r"\(HTTP 403\)",
    ):
        run_check({"pattern": "**"}, source)


def test_timeout_is_a_clear_error(silent_server: str) -> None:
    source = GCSFiles(BUCKET, "sandbox-1", endpoint=silent_server, timeout=0.3)
    with pytest.raises(
        SourceError,
        match=r"listing gs://verial-sftp/sandbox-1/: timed out after "
        r"0.3 s",
    ):
        run_check({"pattern": "**"}, source)
    with pytest.raises(SourceError, match="timed out"):
        run_check({"pattern": "outbound/*"}, source)  # remembered: no second wait
    assert source.list_calls == 1


def test_unreachable_endpoint_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    source = GCSFiles(BUCKET, "sandbox-1", endpoint=f"http://127.0.0.1:{port}", timeout=0.3)
    with pytest.raises(CriterionError, match=r"listing gs://verial-sftp/sandbox-1/: "):
        run_check({"pattern": "**"}, source)


def test_a_file_of_unknown_kind_among_others_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "README").write_text("not data")
    (tmp_path / "claim.json").write_text('{"claim_id": "CLM-1"}')
    out = run_check(
        {"pattern": "*", "fields": [{"path": "claim_id", "expected": "CLM-1"}]},
        DirectoryFiles(tmp_path),
    )
    assert out.score == 1.0 and out.evidence["file"]["path"] == "claim.json"
    with pytest.raises(CheckError, match="README: cannot tell how to parse it"):
        run_check({"pattern": "R*", "fields": [{"path": "claim_id"}]}, DirectoryFiles(tmp_path))
