"""No pattern, symlink, '..', absolute path or encoded separator reaches outside the prefix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import SourceError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import BaseFilesSource, DirectoryFiles, FileEntry

from .conftest import run_check


class Listed(BaseFilesSource):
    """A files source whose listing is ``names`` as given (a bucket can list any name)."""

    def __init__(self, *names: str) -> None:
        super().__init__()
        self.names = names

    def describe(self) -> str:
        return "listed/"

    def _list(self) -> list[FileEntry]:
        return [FileEntry(name, 1) for name in self.names]

    def _fetch(self, entry: FileEntry) -> bytes:
        return b"{}"


def matched(pattern: str, *names: str) -> list[str]:
    """The names of a listing that ``pattern`` matches."""
    return [e.path for e in Listed(*names).match(pattern)]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two sandboxes whose names are string-prefixes of each other, plus a secret outside."""
    for sandbox, claim in (("sandbox-1", "CLM-1"), ("sandbox-10", "CLM-10")):
        folder = tmp_path / sandbox / "sftp" / "outbound"
        folder.mkdir(parents=True)
        (folder / "claim.json").write_text(f'{{"claim_id": "{claim}"}}')
    (tmp_path / "secret.json").write_text('{"password": "hunter2"}')
    return tmp_path


@pytest.mark.parametrize(
    "pattern",
    [
        "../sandbox-10/sftp/outbound/claim.json",
        "outbound/../../secret.json",
        "**/../*.json",
        "./outbound/claim.json",
        "/etc/passwd",
        "//etc/passwd",
        "C:/Windows/win.ini",
        "outbound\\..\\..\\secret.json",
        "..%2F..%2Fsecret.json",
        "..%2fsecret.json",
        "%2e%2e/secret.json",
        "outbound%5C..%5Csecret.json",
        "outbound//claim.json",
        "~/secret.json",
        "outbound/claim.json\x00.txt",
    ],
)
def test_escaping_patterns_are_refused_when_loading(pattern: str) -> None:
    with pytest.raises(ValidationError, match="would leave the SFTP prefix"):
        run_check({"pattern": pattern}, None)


def test_source_refuses_an_escaping_pattern_even_without_the_model(run_dir: Path) -> None:
    source = DirectoryFiles(run_dir / "sandbox-1" / "sftp")
    with pytest.raises(SourceError, match="refused"):
        source.match("../../secret.json")


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("outbound/leak.json", "{run}/secret.json"),
        ("other", "{run}/sandbox-10/sftp/outbound"),
        ("outbound/relative-leak.json", "../../../secret.json"),
    ],
)
def test_symlink_pointing_out_is_refused(run_dir: Path, link: str, target: str) -> None:
    # Issue 9: a link out of the task folder is an error naming it (it used to be skipped
    # and listed as refused); the intent, never reading it, is unchanged.
    sftp = run_dir / "sandbox-1" / "sftp"
    os.symlink(target.format(run=run_dir), sftp / link)
    with pytest.raises(SourceError) as refused:
        DirectoryFiles(sftp).match("**")
    # named as the task folder names it: never the link's target, nor a path of the machine
    message = str(refused.value)
    assert message.endswith(f"{link}: a symbolic link leading outside the task folder; refused")
    assert str(run_dir) not in message and "secret" not in message


def test_symlink_inside_the_prefix_is_followed(run_dir: Path) -> None:
    sftp = run_dir / "sandbox-1" / "sftp"
    os.symlink("claim.json", sftp / "outbound" / "latest.json")
    out = run_check(
        {"pattern": "outbound/latest.json", "fields": [{"path": "claim_id", "expected": "CLM-1"}]},
        DirectoryFiles(sftp),
    )
    assert out.score == 1.0


def test_symlink_swapped_after_listing_is_refused_at_read(run_dir: Path) -> None:
    sftp = run_dir / "sandbox-1" / "sftp"
    source = DirectoryFiles(sftp)
    assert [e.path for e in source.entries()] == ["outbound/claim.json"]
    (sftp / "outbound" / "claim.json").unlink()
    os.symlink(run_dir / "secret.json", sftp / "outbound" / "claim.json")
    with pytest.raises(SourceError, match="resolves outside"):
        source.read(source.entries()[0])


def test_a_forged_entry_cannot_be_read(run_dir: Path) -> None:
    source = DirectoryFiles(run_dir / "sandbox-1" / "sftp")
    with pytest.raises(SourceError, match="resolves outside"):
        source.read(FileEntry("../../secret.json", 10))


def test_sandbox_prefix_is_not_a_string_prefix_match(run_dir: Path) -> None:
    one = DirectoryFiles(run_dir / "sandbox-1" / "sftp")
    spec = {"pattern": "**/*.json", "fields": [{"path": "claim_id", "expected": "CLM-10"}]}
    out = run_check(spec, one)
    assert out.evidence["matched_paths"] == ["outbound/claim.json"]
    assert out.score == 0.0
    assert run_check(spec, DirectoryFiles(run_dir / "sandbox-10" / "sftp")).score == 1.0


@pytest.mark.parametrize(
    "name", ["a/../b", "./a", "/abs", "a//b", "a\\b", "a%2Fb", "a/.", "..", ""]
)
def test_listed_names_that_could_escape_are_unsafe(name: str) -> None:
    source = Listed(name, "ok.json")
    assert [e.path for e in source.entries()] == ["ok.json"]
    assert source.refused == [name]
    with pytest.raises(SourceError, match="refused"):  # nor can a pattern name it
        source.match(name)


def test_glob_wildcards_never_cross_a_separator() -> None:
    assert matched("outbound/*.json", "outbound/claims/a.json") == []
    # a name with empty segments is refused at listing, and no wildcard reaches it
    assert matched("outbound/?/a", "outbound///a") == []
    assert matched("outbound/[!x]/a", "outbound///a") == []
    # nor does a wildcard or a class stand for the separator of a name that is listed
    assert matched("outbound?x/a", "outbound/x/a", "outbound_x/a") == ["outbound_x/a"]
    assert matched("outbound[!x]x/a", "outbound/x/a", "outbound_x/a") == ["outbound_x/a"]
    assert matched("outbound*", "outbound/x", "outbound.x") == ["outbound.x"]
    assert matched("outbound/[/]x", "outbound/x") == []
    assert matched("**/a.json", "a.json") == ["a.json"]
    assert matched("**/a.json", "x/y/a.json") == ["x/y/a.json"]
    assert matched("a/**/b", "a/b") == ["a/b"]
    assert matched("a.json", "a_json") == []
