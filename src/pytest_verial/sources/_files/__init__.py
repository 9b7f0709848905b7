"""Files under a sandbox's SFTP prefix: the run directory's ``sftp/`` tree or a GCS bucket.

``run.yaml`` chooses the source::

    sources:
      files:
        bucket: verial-sftp                 # absent: read <run>/<task>/sftp/ from disk
        prefix: "runs/r-42/{task_key}/sftp" # default "{task_key}/sftp"; also {task_id}, {entity}
        endpoint: http://127.0.0.1:9023     # optional; else STORAGE_EMULATOR_HOST, else Google
        project: my-project                 # optional
        timeout: 30                         # seconds per request (and retry budget)
        deadline: 60                        # seconds for all requests of one task run
        page_size: 1000                     # objects per listing page
        max_read_bytes: 16777216            # larger files are never read (disk and GCS)
        concurrency: 8                      # objects of one task run downloaded at once (1-64)

Credentials are Google's default credentials (``GOOGLE_APPLICATION_CREDENTIALS``, metadata
server, gcloud); none are ever written to settings, evidence or reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._contracts.sandbox import fill_template, run_yaml, setting_number, setting_text
from ..._errors import RunConfigError
from .base import (
    DEFAULT_MAX_READ_BYTES,
    BaseFilesSource,
    FileEntry,
    FilesSource,
    guess_content_type,
    unsafe_reason,
)
from .disk import DirectoryFiles
from .gcs import DEFAULT_CONCURRENCY, MAX_CONCURRENCY, GCSFiles

if TYPE_CHECKING:
    from ..._contracts.sandbox import Sandbox

#: run.yaml ``sources.files`` keys
SETTINGS = {
    "bucket",
    "prefix",
    "endpoint",
    "project",
    "timeout",
    "deadline",
    "page_size",
    "max_read_bytes",
    "concurrency",
}


def _prefix(template: str, sandbox: Sandbox) -> str:
    found = getattr(sandbox, "entity", None)  # a conftest's own sandbox may have none
    entity = found.id if found is not None else ""
    values = {"task_key": sandbox.task_key, "task_id": sandbox.task.id, "entity": entity}
    prefix = fill_template(sandbox, "files", "prefix", template, values).strip("/")
    reason = unsafe_reason(prefix) if prefix else None
    if reason is not None:
        raise RunConfigError(
            f"{run_yaml(sandbox)}: sources.files.prefix: {prefix!r} refused: {reason}"
        )
    return prefix


def from_sandbox(sandbox: Sandbox) -> BaseFilesSource:
    """The files source of one task run (built once, shared by its criteria)."""
    settings = sandbox.settings("files", SETTINGS)
    limit = setting_number(
        sandbox, "files", settings, "max_read_bytes", DEFAULT_MAX_READ_BYTES, int
    )
    timeout = setting_number(sandbox, "files", settings, "timeout", 30.0, float)
    page_size = setting_number(sandbox, "files", settings, "page_size", 1000, int)
    endpoint = setting_text(sandbox, "files", settings, "endpoint")
    project = setting_text(sandbox, "files", settings, "project")
    template = setting_text(sandbox, "files", settings, "prefix")
    template = "{task_key}/sftp" if template is None else template
    reads = getattr(sandbox, "reads", None)
    if not settings.get("bucket"):  # its files are held to the sandbox's limits too
        return DirectoryFiles(
            sandbox.path / "sftp", max_read_bytes=limit, task=sandbox.path, reads=reads
        )
    if reads is not None:  # a bucket's object is held to the per-file limit too
        limit = min(limit, reads.limits.max_file)
    bucket = setting_text(sandbox, "files", settings, "bucket")
    assert bucket is not None
    concurrency = setting_number(
        sandbox, "files", settings, "concurrency", DEFAULT_CONCURRENCY, int
    )
    if concurrency > MAX_CONCURRENCY:
        raise RunConfigError(
            f"{run_yaml(sandbox)}: sources.files.concurrency: expected a whole number from 1 "
            f"to {MAX_CONCURRENCY}, got {concurrency!r}"
        )
    source = GCSFiles(
        bucket,
        _prefix(template, sandbox),
        endpoint=endpoint,
        project=project,
        timeout=timeout,
        deadline=setting_number(sandbox, "files", settings, "deadline", 60.0, float),
        page_size=page_size,
        max_read_bytes=limit,
        concurrency=concurrency,
    )
    source.planner = lambda: [c.spec for c in sandbox.planned_criteria()]
    return source


__all__ = [
    "guess_content_type",
    "BaseFilesSource",
    "DirectoryFiles",
    "FileEntry",
    "FilesSource",
    "GCSFiles",
    "from_sandbox",
]
