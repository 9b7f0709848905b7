"""A real GCS emulator (gcp-storage-emulator from PyPI) run as a subprocess on 127.0.0.1.

Shared by the tests and ``bench/files.py``: start it on a free port, wait until it answers,
upload a tree of files, stop it by PID.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pytest_verial.sources.files.base import guess_content_type


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Emulator:
    """One gcp-storage-emulator process."""

    def __init__(self, log: Path) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        exe = shutil.which("gcp-storage-emulator", path=str(Path(sys.executable).parent))
        command = [exe] if exe else [sys.executable, "-m", "gcp_storage_emulator"]
        self._log = log.open("wb")
        env = {k: v for k, v in os.environ.items() if k != "STORAGE_EMULATOR_HOST"}
        self.process = subprocess.Popen(
            [*command, "start", "--host", "127.0.0.1", "--port", str(self.port), "--in-memory"],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self._wait()

    def _wait(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gcp-storage-emulator exited with {self.process.returncode}")
            try:
                urllib.request.urlopen(f"{self.endpoint}/storage/v1/b?project=test", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"gcp-storage-emulator not ready on {self.endpoint} after {timeout} s")

    def client(self) -> Any:
        """A storage client for setting up data."""
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage

        return storage.Client(
            project="test",
            credentials=AnonymousCredentials(),
            client_options={"api_endpoint": self.endpoint},
        )

    def upload_tree(self, bucket: str, tree: Path, prefix: str = "", workers: int = 8) -> int:
        """Upload every file under ``tree`` to ``gs://bucket/prefix...``; returns the count."""
        client = self.client()
        target = client.bucket(bucket)
        if not target.exists():
            target = client.create_bucket(bucket)
        files = sorted(p for p in tree.rglob("*") if p.is_file() and not p.is_symlink())

        def put(path: Path) -> None:
            name = prefix + path.relative_to(tree).as_posix()
            target.blob(name).upload_from_filename(
                str(path), content_type=guess_content_type(name) or "application/octet-stream"
            )

        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(put, files))
        return len(files)

    def stop(self) -> None:
        """Stop the process by its PID."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._log.close()
