"""A real GCS emulator (gcp-storage-emulator from PyPI) run as a subprocess on 127.0.0.1.

Shared by the tests and ``bench/files.py``. Uploading through the API costs O(objects) per
upload in this emulator (it rewrites its whole metadata file each time: ~15 ms at 100 objects,
~40 ms at 1,200), so large trees are *seeded* into its on-disk data directory before it starts
(its own layout: ``.cloudstorage/.meta`` plus one file per object); everything after that goes
through the real JSON API. Started on a free port, waited for, stopped by PID.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lifetime_support import tie

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import guess_content_type


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _crc32c(data: bytes) -> str:
    import google_crc32c

    return base64.b64encode(google_crc32c.value(data).to_bytes(4, "big")).decode()


class Emulator:
    """One gcp-storage-emulator process with an on-disk data directory."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.data_dir = workdir / "data"
        self.store = self.data_dir / ".cloudstorage"
        self.log_path = workdir / "emulator.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._dismiss: Callable[[], None] = lambda: None
        self._meta: dict[str, Any] = {
            "buckets": {},
            "objects": {},
            "resumable": {},
            "bucket_iam_policies": {},
            "soft_deleted": {},
        }

    # ---- seeding (before start) ----

    def seed(self, bucket: str, tree: Path, prefix: str = "") -> int:
        """Place every regular file under ``tree`` as ``gs://bucket/<prefix><relative path>``."""
        assert self.process is None, "seed before start()"
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self._meta["buckets"].setdefault(
            bucket,
            {
                "kind": "storage#bucket",
                "id": bucket,
                "name": bucket,
                "projectNumber": "1234",
                "selfLink": f"/storage/v1/b/{bucket}",
                "timeCreated": now,
                "updated": now,
                "metageneration": "1",
                "location": "US",
                "locationType": "multi-region",
                "storageClass": "STANDARD",
                "etag": "CAE=",
                "acl": [],
                "defaultObjectAcl": [],
                "iamConfiguration": {
                    "bucketPolicyOnly": {"enabled": False},
                    "uniformBucketLevelAccess": {"enabled": False},
                },
            },
        )
        objects = self._meta["objects"].setdefault(bucket, {})
        count = 0
        for path in sorted(tree.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            name = prefix + path.relative_to(tree).as_posix()
            data = path.read_bytes()
            target = self.store / bucket / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            md5 = base64.b64encode(hashlib.md5(data).digest()).decode()  # noqa: S324 - GCS's hash
            generation = str(time.time_ns())
            objects[name] = {
                "kind": "storage#object",
                "id": f"{bucket}/{name}/{generation}",
                "selfLink": f"/storage/v1/b/{bucket}/o/{name}",
                "name": name,
                "bucket": bucket,
                "generation": generation,
                "metageneration": "1",
                "contentType": guess_content_type(name) or "application/octet-stream",
                "timeCreated": now,
                "updated": now,
                "storageClass": "STANDARD",
                "timeStorageClassUpdated": now,
                "size": str(len(data)),
                "md5Hash": md5,
                "crc32c": _crc32c(data),
                "etag": md5,
                "acl": [],
                "mediaLink": f"{self.endpoint}/download/storage/v1/b/{bucket}/o/{name}"
                f"?generation={generation}&alt=media",
            }
            count += 1
        return count

    # ---- process ----

    def start(self, timeout: float = 20.0) -> Emulator:
        """Write the seeded metadata, start the process, wait until it answers."""
        self.store.mkdir(parents=True, exist_ok=True)
        (self.store / ".meta").write_text(json.dumps(self._meta))
        exe = shutil.which("gcp-storage-emulator", path=str(Path(sys.executable).parent))
        command = [exe] if exe else [sys.executable, "-m", "gcp_storage_emulator"]
        env = {k: v for k, v in os.environ.items() if k != "STORAGE_EMULATOR_HOST"}
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    *command,
                    "-d",
                    str(self.data_dir),
                    "start",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "-q",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self._dismiss = tie(self.process.pid)  # stopped with this process, however it ends
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"gcp-storage-emulator exited with {self.process.returncode}; "
                    f"see {self.log_path}"
                )
            try:
                urllib.request.urlopen(f"{self.endpoint}/storage/v1/b?project=test", timeout=1)
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"gcp-storage-emulator not ready on {self.endpoint} after {timeout} s")

    def client(self) -> Any:
        """A storage client for putting a few more objects through the API."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(
            project="test",
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": self.endpoint},
        )

    def upload(self, bucket: str, name: str, data: bytes, content_type: str | None = None) -> None:
        """One object through the JSON API (creating the bucket when needed)."""
        client = self.client()
        target = client.bucket(bucket)
        if not target.exists():
            target = client.create_bucket(bucket)
        kind = content_type or guess_content_type(name) or "application/octet-stream"
        target.blob(name).upload_from_string(data, content_type=kind)

    def stop(self) -> None:
        """Stop the process by its PID."""
        self._dismiss()
        if self.process is None or self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
