"""Sandboxes in a request (issue 20): a run folder, an archive (tar.gz, zip) or inline files
score alike; an archive or a file list that is unsafe or too big is a 4xx naming the problem,
stores nothing, and leaves the server answering."""

from __future__ import annotations

import base64
import io
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from service_support import RUNS, Api, count_rows

#: the archive entry limit the service states in its 413 answer
MAX_ENTRIES = 10_000


BENCH = "sftp-drops@1"
TASKS = ["sftp-referral-packet", "sftp-claims-batch"]


def _files(run: str, task: str) -> dict[str, bytes]:
    folder = RUNS / run / task
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _tar(entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for info, data in entries:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def _tar_of(files: dict[str, bytes], top: str = "") -> bytes:
    entries = []
    for name, data in files.items():
        info = tarfile.TarInfo(top + name)
        info.size = len(data)
        entries.append((info, data))
    return _tar(entries)


def _zip_of(files: dict[str, bytes], top: str = "") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(top + name, data)
    return out.getvalue()


def _archive(fmt: str, raw: bytes) -> dict[str, Any]:
    return {"archive": {"format": fmt, "data": base64.b64encode(raw).decode()}}


def _verify(api: Api, task: str, sandbox: dict[str, Any]) -> Any:
    body = {"benchmark": BENCH, "task_id": task, "sandbox": sandbox}
    return api.client.post("/v1/verify-task", json=body, headers=api.h(api.org))


def _results(answer: dict[str, Any]) -> list[tuple[str, str, float]]:
    return [(c["criterion_id"], c["status"], c["score"]) for c in answer["criterion_runs"]]


@pytest.mark.parametrize("run", ["good-agent", "flawed-agent"])
@pytest.mark.parametrize("task", TASKS)
def test_an_archive_or_inline_files_score_as_the_run_folder(api: Api, run: str, task: str) -> None:
    folder = _verify(api, task, {"run_dir": run})
    assert folder.status_code == 201, folder.text
    files = _files(run, task)
    forms = {
        "tar.gz, flat": _archive("tar.gz", _tar_of(files)),
        "tar.gz, under the task's folder": _archive("tar.gz", _tar_of(files, f"{task}/")),
        "zip, flat": _archive("zip", _zip_of(files)),
        "zip, under ./": _archive("zip", _zip_of(files, "./")),
        "inline files": {"files": {k: v.decode("utf-8") for k, v in files.items()}},
    }
    for name, sandbox in forms.items():
        answer = _verify(api, task, sandbox)
        assert answer.status_code == 201, (name, answer.text)
        assert _results(answer.json()) == _results(folder.json()), name
        assert answer.json()["score"] == folder.json()["score"], name
    runs = api.client.get("/v1/benchmark-runs", headers=api.h(api.org)).json()["data"]
    assert {r["run_labels"] for r in runs} == {run, "upload", "inline"}


def _problem(api: Api, sandbox: dict[str, Any], status: int, *words: str) -> None:
    answer = _verify(api, TASKS[0], sandbox)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    detail = answer.json()["detail"]
    assert "\n" not in detail and all(w in detail for w in words), detail


def _member(name: str, kind: bytes = tarfile.REGTYPE, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        info.linkname = "/etc/passwd"
    return info


def _zip_link() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        info = zipfile.ZipInfo("sftp/link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    return out.getvalue()


def _bomb(fmt: str) -> bytes:
    """100 MiB of zeros, a few hundred kB packed: refused at the unpacking cap."""
    size = 100 * 1024 * 1024
    if fmt == "zip":
        out = io.BytesIO()
        with (
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf,
            zf.open("sftp/zeros.bin", "w", force_zip64=True) as handle,
        ):
            for _ in range(100):
                handle.write(bytes(1024 * 1024))
        return out.getvalue()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz", compresslevel=9) as tar:
        info = tarfile.TarInfo("sftp/zeros.bin")
        info.size = size
        tar.addfile(info, _Zeros(size))
    return out.getvalue()


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def test_unsafe_or_oversized_sandboxes_are_4xx_and_store_nothing(api: Api) -> None:
    escapes = [
        ("../outside.json", "'..' leads out of the sandbox"),
        ("sftp/../../x", "'..' leads out of the sandbox"),
        ("/etc/cron.d/x", "an absolute path"),
    ]
    for name, words in escapes:
        _problem(api, _archive("tar.gz", _tar_of({name: b"x"})), 422, name, words)
        _problem(api, _archive("zip", _zip_of({name: b"x"})), 422, words)
        _problem(api, {"files": {name: "x"}}, 422, words)
    _problem(
        api, _archive("tar.gz", _tar([(_member("sftp/l", tarfile.SYMTYPE), None)])), 422, "a link"
    )
    _problem(
        api, _archive("tar.gz", _tar([(_member("sftp/h", tarfile.LNKTYPE), None)])), 422, "a link"
    )
    _problem(api, _archive("zip", _zip_link()), 422, "sftp/link", "a link")
    fifo = _tar([(_member("sftp/p", tarfile.FIFOTYPE), None)])
    _problem(api, _archive("tar.gz", fifo), 422, "not a file or folder")
    for fmt in ("tar.gz", "zip"):
        # one 100 MiB entry: over the per-file limit (64 MiB) before the sandbox's
        _problem(api, _archive(fmt, _bomb(fmt)), 413, "sftp/zeros.bin", "over", "64 MiB")
        _problem(api, _archive(fmt, b"not an archive at all"), 422, f"not a readable {fmt}")
    many = {f"sftp/{i}.txt": b"" for i in range(MAX_ENTRIES + 1)}
    _problem(api, _archive("tar.gz", _tar_of(many)), 413, f"over {MAX_ENTRIES} entries")
    _problem(api, {"archive": {"format": "tar.gz", "data": "%%%"}}, 422, "not base64")
    _problem(api, {"archive": {"format": "rar", "data": "AAAA"}}, 400, "format")
    _problem(api, {"files": {"a.txt": "x"}, "run_dir": "good-agent"}, 400, "exactly one")
    _problem(api, {}, 400, "exactly one")
    dup = _tar([(_member("sftp/a.txt", size=1), b"1"), (_member("sftp/a.txt", size=1), b"2")])
    _problem(api, _archive("tar.gz", dup), 422, "sftp/a.txt is given twice")
    assert count_rows(api.app.state.store)["task_runs"] == 0
    assert _verify(api, TASKS[0], {"run_dir": "good-agent"}).status_code == 201


def _zip_patched(method: int | None = None, flags: int = 0) -> bytes:
    """One stored zip entry whose headers (local and central) say ``method`` and ``flags``, as
    another zip tool writes an encrypted entry or a compression zipfile cannot read."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("sftp/a.txt", b"secret")
    raw = bytearray(out.getvalue())
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = raw.index(signature) + offset  # general purpose flags, then the method
        raw[at : at + 2] = (int.from_bytes(raw[at : at + 2], "little") | flags).to_bytes(
            2, "little"
        )
        if method is not None:
            raw[at + 2 : at + 4] = method.to_bytes(2, "little")
    return bytes(raw)


def test_unreadable_or_clashing_entries_are_422_naming_the_entry(api: Api) -> None:
    """Each refusal names the entry and never the server's temporary folder."""
    encrypted = _archive("zip", _zip_patched(flags=0x1))
    _problem(api, encrypted, 422, "entry sftp/a.txt: encrypted")
    unknown = _archive("zip", _zip_patched(method=99))
    _problem(api, unknown, 422, "entry sftp/a.txt: compression method 99 is not supported")
    clash = [(_member("sftp/a", size=1), b"1"), (_member("sftp/a/b.txt", size=1), b"2")]
    _problem(api, _archive("tar.gz", _tar(clash)), 422, "a file where a folder was needed")
    folder = [(_member("sftp/a", size=1), b"1"), (_member("sftp/a", tarfile.DIRTYPE), None)]
    _problem(api, _archive("tar.gz", _tar(folder)), 422, "sftp/a: a file where a folder")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("sftp/a", b"1")
        zf.writestr("sftp/a/b.txt", b"2")
    answer = _verify(api, TASKS[0], _archive("zip", out.getvalue()))
    assert answer.status_code == 422 and "a file where a folder" in answer.json()["detail"]
    assert "/tmp" not in answer.text and "Errno" not in answer.text
    assert count_rows(api.app.state.store)["task_runs"] == 0


def test_a_tar_whose_headers_declare_too_much_is_refused_before_inflating(api: Api) -> None:
    """The 100 MiB member's header is enough: its data, cut off here, is never inflated (that
    would fail as a truncated archive), so a small archive cannot cost the server the CPU of
    inflating it."""
    raw = _bomb("tar.gz")
    _problem(api, _archive("tar.gz", raw[:2048]), 413, "over the per-file limit", "zeros.bin")


def test_an_unpacked_sandbox_is_removed_after_scoring(
    api: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    files = _files("good-agent", TASKS[0])
    assert _verify(api, TASKS[0], _archive("zip", _zip_of(files))).status_code == 201
    assert _verify(api, TASKS[0], _archive("tar.gz", _tar_of({"../x": b""}))).status_code == 422
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("verial-sandbox-")]
