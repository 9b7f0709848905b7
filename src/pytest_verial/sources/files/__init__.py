"""Files under a sandbox's SFTP prefix: the run directory's ``sftp/`` tree or a GCS bucket.

``run.yaml`` chooses the source::

    sources:
      files:
        bucket: verial-sftp                 # absent: read <run>/<task>/sftp/ from disk
        prefix: "runs/r-42/{task_key}/sftp" # default "{task_key}/sftp"; also {task_id}, {entity}
        endpoint: http://127.0.0.1:9023     # optional; else STORAGE_EMULATOR_HOST, else Google
        project: my-project                 # optional
        timeout: 30                         # seconds per request (and retry budget)
        page_size: 1000                     # objects per listing page
        max_read_bytes: 16777216            # larger files are never read (disk and GCS)

Credentials are Google's default credentials (``GOOGLE_APPLICATION_CREDENTIALS``, metadata
server, gcloud); none are ever written to settings, evidence or reports.
"""

from __future__ import annotations

from typing import Any

from ...errors import RunConfigError
from .base import DEFAULT_MAX_READ_BYTES, BaseFilesSource, FileEntry, FilesSource, unsafe_reason
from .disk import DirectoryFiles
from .gcs import GCSFiles

_KEYS = {"bucket", "prefix", "endpoint", "project", "timeout", "page_size", "max_read_bytes"}


def _number(settings: dict[str, Any], key: str, default: float, kind: type = float) -> Any:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise RunConfigError(
            f"run.yaml sources.files.{key}: expected a positive number, got {value!r}"
        )
    return kind(value)


def _prefix(template: str, sandbox: Any) -> str:
    entity = sandbox.entity.id if getattr(sandbox, "entity", None) is not None else ""
    try:
        prefix = template.format(task_key=sandbox.task_key, task_id=sandbox.task.id, entity=entity)
    except (KeyError, IndexError, ValueError) as exc:
        raise RunConfigError(
            f"run.yaml sources.files.prefix {template!r}: unknown placeholder {exc}; "
            "use {task_key}, {task_id} or {entity}"
        ) from None
    prefix = prefix.strip("/")
    reason = unsafe_reason(prefix) if prefix else None
    if reason is not None:
        raise RunConfigError(f"run.yaml sources.files.prefix {prefix!r} refused: {reason}")
    return prefix


def from_sandbox(sandbox: Any) -> BaseFilesSource:
    """The files source of one task run (built once, shared by its criteria)."""
    settings = dict(sandbox.settings("files"))
    unknown = sorted(set(settings) - _KEYS)
    if unknown:
        raise RunConfigError(
            f"run.yaml sources.files: unknown keys {unknown}; known: {', '.join(sorted(_KEYS))}"
        )
    limit = _number(settings, "max_read_bytes", DEFAULT_MAX_READ_BYTES, int)
    bucket = settings.get("bucket")
    if not bucket:
        return DirectoryFiles(sandbox.path / "sftp", max_read_bytes=limit, task=sandbox.path)
    if not isinstance(bucket, str):
        raise RunConfigError("run.yaml sources.files.bucket: expected a bucket name")
    template = settings.get("prefix", "{task_key}/sftp")
    if not isinstance(template, str):
        raise RunConfigError("run.yaml sources.files.prefix: expected a string")
    return GCSFiles(
        bucket,
        _prefix(template, sandbox),
        endpoint=settings.get("endpoint"),
        project=settings.get("project"),
        timeout=_number(settings, "timeout", 30.0),
        page_size=_number(settings, "page_size", 1000, int),
        max_read_bytes=limit,
    )


__all__ = [
    "BaseFilesSource",
    "DirectoryFiles",
    "FileEntry",
    "FilesSource",
    "GCSFiles",
    "from_sandbox",
]
