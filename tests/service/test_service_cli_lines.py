"""What ``verial serve`` and ``verial keys list`` print (issue 34): the benchmarks the server
was started with counted once each, a busy port in one line (exit 2) instead of uvicorn's
start-up and shutdown lines, and the key list under a header."""

from __future__ import annotations

import socket
from pathlib import Path

from service_support import EXAMPLES, new_key, run_verial, serve


def test_serve_counts_each_benchmark_once(tmp_path: Path) -> None:
    """Five example benchmark files, each of one version, are found by slug@version and by
    slug: five benchmarks, not ten names."""
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with serve(tmp_path, store, str(EXAMPLES)) as server:
        first = server.text().splitlines()[0]
    assert first.startswith("verial serve: http://127.0.0.1:")
    assert first.endswith("(5 benchmarks, 0 active keys)"), first


def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_verial(tmp_path, "serve", "--port", str(port), "--store", store)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"verial serve: cannot listen on 127.0.0.1:{port}: address already in use "
        "(another server there? choose another --port)\n"
    )


def test_keys_list_has_a_header(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    org_id, _ = new_key(tmp_path, store, "org")
    lines = run_verial(tmp_path, "keys", "list", "--store", store).stdout.splitlines()
    assert lines[0].split() == ["id", "scope", "state", "created", "(UTC)", "name"]
    assert lines[1].split()[:3] == [org_id, "org", "active"]
    # the columns line up under the header
    assert lines[1].index("org") == lines[0].index("scope")
