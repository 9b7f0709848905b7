"""`verial serve` under attack (issue 31): /healthz latency and the server's memory while 100
slow connections and a stream of oversized sandboxes hit a real server.

One `verial serve` process (1 worker, SQLite, the limits' defaults unless ``--serve-args``),
scoring example_benchmarks/files.verial.yaml and prior-auth.verial.yaml over a runs root
holding the good agent's run and an oversized copy of it (its referral packet and a call
transcript sparse files of ``--sparse-mib`` MiB). Measured:

1. quiet: ``--probes`` GETs of /healthz, one after another (p50, p99);
2. under attack, at once:
   - ``--slow`` connections that trickle a header byte every second (a connection the server
     closes is opened again, so ``--slow`` stay open or opening all along),
   - ``--attackers`` threads each POSTing, one after another, oversized sandboxes: the
     oversized run folder (its call transcript read by the voice criteria of
     front-office@3's schedule-followup); a tar.gz whose first header is a 1.5 GB GNU
     long-name record; a tar.gz whose one entry declares 100 MiB,
   - ``--probes`` GETs of /healthz, one every 20 ms (p50, p99, the slowest, failures);
3. the server's peak RSS (VmHWM of its process) and its RSS after the attack, how many
   oversized requests were answered and with which statuses, and how many slow connections
   the server closed.

    python bench/service_attack.py [--slow 100] [--attackers 4] [--probes 500]
        [--sparse-mib 1024] [--python PYTHON] [--serve-args "--header-timeout 10"]

``--python`` runs the server with another interpreter (another checkout's ``.venv``, to
measure main before the change); a server that does not know a flag of ``--serve-args``
refuses to start.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import io
import multiprocessing
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from service import _pct, _port  # the verify-task bench's (bench/ is sys.path[0])

ROOT = Path(__file__).resolve().parents[1]
FILES = ROOT / "example_benchmarks" / "files.verial.yaml"
PRIOR_AUTH = ROOT / "example_benchmarks" / "prior-auth.verial.yaml"
RUNS = ROOT / "example_benchmarks" / "runs"
TASK = "sftp-referral-packet"
MIB = 1024 * 1024


def runs_root(folder: Path, sparse_mib: int) -> Path:
    """The good agent's run, and ``oversized``: the same with sparse files of ``sparse_mib``
    MiB where the referral packet (sftp) and the follow-up call's transcript (voice) were."""
    root = folder / "runs"
    shutil.copytree(RUNS / "good-agent", root / "good-agent")
    shutil.copytree(RUNS / "good-agent", root / "oversized")
    for name in (
        f"{TASK}/sftp/outbound/referrals/REF-20261121-0042.json",
        "schedule-followup/voice/turns.json",
    ):
        with (root / "oversized" / name).open("r+b") as handle:
            handle.truncate(sparse_mib * MIB)
    return root


def long_name_archive(size: int = 1536 * MIB) -> str:
    """A tar.gz whose first header is a GNU long-name record of ``size`` bytes (zeros)."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as gz:
        record = tarfile.TarInfo("././@LongLink")
        record.type, record.size = tarfile.GNUTYPE_LONGNAME, size
        gz.write(record.tobuf(format=tarfile.GNU_FORMAT))
        block = bytes(8 * MIB)
        for _ in range(size // len(block)):
            gz.write(block)
        gz.write(bytes(1024))
    return base64.b64encode(out.getvalue()).decode()


def declared_archive(size: int = 100 * MIB) -> str:
    """A tar.gz of one entry whose header declares ``size`` bytes (its data cut off)."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb") as gz:
        member = tarfile.TarInfo("sftp/outbound/referrals/big.json")
        member.size = size
        gz.write(member.tobuf(format=tarfile.GNU_FORMAT) + bytes(4096))
    return base64.b64encode(out.getvalue()).decode()


@contextlib.contextmanager
def server(
    python: str, root: Path, store: str, serve_args: list[str], log: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERIAL_")}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [python, "-m", "pytest_verial.cli", "serve", str(FILES), str(PRIOR_AUTH),
             "--runs-root", str(root),
             "--store", store, "--port", str(port), *serve_args],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"verial serve exited {proc.returncode}: {log.read_text()[-800:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("verial serve not ready in 120 s")
            time.sleep(0.05)
        yield url, proc
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of the process in MB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            values[name] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def probes(url: str, count: int, every: float) -> tuple[list[float], int]:
    """``count`` GETs of /healthz, one each ``every`` seconds: latencies (s), failures."""
    times: list[float] = []
    failed = 0
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(count):
            start = time.perf_counter()
            try:
                ok = client.get("/healthz").status_code == 200
            except httpx.HTTPError:
                ok = False
            took = time.perf_counter() - start
            if ok:
                times.append(took)
            else:
                failed += 1
            time.sleep(max(0.0, every - took))
    return times, failed


class SlowConnections:
    """``count`` connections trickling header bytes, each opened again once closed."""

    def __init__(self, url: str, count: int) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.address = (host, int(port))
        self.count = count
        self.closed_by_server = 0
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._one, daemon=True) for _ in range(count)]

    def _one(self) -> None:
        while not self.stop.is_set():
            try:
                with socket.create_connection(self.address, timeout=5) as sock:
                    sock.sendall(b"POST /v1/verify-task HTTP/1.1\r\nHost: x\r\n")
                    while not self.stop.is_set():
                        sock.sendall(b"X")
                        sock.settimeout(1.0)
                        try:
                            if sock.recv(4096) is not None:  # an answer (408) or the close
                                self.closed_by_server += 1
                                break
                        except TimeoutError:
                            continue
            except OSError:
                self.closed_by_server += 1
                time.sleep(0.1)

    def __enter__(self) -> SlowConnections:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=10)


FORM_NAMES = ("run_dir", "long_name", "declared")


def oversized() -> list[tuple[str, dict[str, Any]]]:
    """The oversized sandboxes an attacker sends (packed once)."""
    return [
        ("oversized transcript", {"run_dir": "oversized"}),
        ("1.5 GB long-name header", {"archive": {"format": "tar.gz", "data": long_name_archive()}}),
        ("100 MiB declared entry", {"archive": {"format": "tar.gz", "data": declared_archive()}}),
    ]


def attack(
    url: str,
    key: str,
    forms: list[tuple[str, dict[str, Any]]],
    stop: threading.Event,
    statuses: Counter[str],
) -> None:
    """Oversized sandboxes, one after another, until ``stop``."""
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, timeout=300) as client:
        while not stop.is_set():
            for name, sandbox in forms:
                body = {"benchmark": "sftp-drops@1", "task_id": TASK, "sandbox": sandbox}
                if "run_dir" in sandbox:  # its transcript is read by the voice criteria
                    body.update(benchmark="front-office@3", task_id="schedule-followup")
                try:
                    status = str(
                        client.post("/v1/verify-task", json=body, headers=headers).status_code
                    )
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                statuses[f"{name}: {status}"] += 1
                if stop.is_set():
                    return


def attack_process(
    url: str,
    key: str,
    forms: list[tuple[str, dict[str, Any]]],
    slow_count: int,
    attackers: int,
    stop: Any,
    results: Any,
) -> None:
    """The attack, in a process of its own: slow connections and oversized sandboxes until
    ``stop``; puts (statuses, slow connections the server closed) on ``results``."""
    statuses: Counter[str] = Counter()
    done = threading.Event()
    threads = [
        threading.Thread(target=attack, args=(url, key, forms, done, statuses), daemon=True)
        for _ in range(attackers)
    ]
    with SlowConnections(url, slow_count) as slow:
        time.sleep(1.0)
        for thread in threads:
            thread.start()
        stop.wait()
        done.set()
        for thread in threads:
            thread.join(timeout=300)
        closed = slow.closed_by_server
    results.put((dict(statuses), closed))


def org_key(python: str, store: str) -> str:
    done = subprocess.run(
        [python, "-m", "pytest_verial.cli", "keys", "create", "--scope", "org", "--store", store],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slow", type=int, default=100)
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument("--probes", type=int, default=500)
    parser.add_argument("--sparse-mib", type=int, default=1024)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--serve-args", default="")
    parser.add_argument(
        "--forms",
        default="run_dir,long_name,declared",
        help="the oversized sandboxes sent: any of run_dir, long_name, declared",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verial-attack-") as tmp:
        folder = Path(tmp)
        root = runs_root(folder, args.sparse_mib)
        store = f"sqlite:///{folder / 'store.db'}"
        key = org_key(args.python, store)
        chosen = args.forms.split(",")
        forms = [form for name, form in zip(FORM_NAMES, oversized(), strict=True) if name in chosen]
        serve_args = shlex.split(args.serve_args)
        with server(args.python, root, store, serve_args, folder / "serve.log") as (url, proc):
            quiet, quiet_failed = probes(url, args.probes, 0.0)
            before_rss, _ = memory_mb(proc.pid)
            # the attack from another process: its threads (JSON of megabytes, 100 sockets)
            # must not delay this process's probes, which time the server alone
            context = multiprocessing.get_context("spawn")
            results = context.Queue()
            stop = context.Event()
            attacker = context.Process(
                target=attack_process,
                args=(url, key, forms, args.slow, args.attackers, stop, results),
            )
            attacker.start()
            time.sleep(3.0)  # every slow connection open, the first oversized requests sent
            loaded, loaded_failed = probes(url, args.probes, 0.02)
            stop.set()
            statuses, closed = results.get(timeout=600)
            attacker.join(timeout=60)
            rss, peak = memory_mb(proc.pid)
    ms = 1000.0
    print(f"server: {args.python} serve {args.serve_args}".rstrip())
    print("| phase | /healthz p50 | p99 | slowest | failed | probes |")
    print("|---|---|---|---|---|---|")
    for name, times, failed in (
        ("quiet", quiet, quiet_failed),
        ("under attack", loaded, loaded_failed),
    ):
        if times:
            p50, p99 = statistics.median(times) * ms, _pct(times, 0.99) * ms
            print(
                f"| {name} | {p50:.1f} ms | {p99:.1f} ms | {max(times) * ms:.1f} ms "
                f"| {failed} | {len(times) + failed} |"
            )
        else:
            print(f"| {name} | - | - | - | {failed} | {failed} |")
    print(
        f"server RSS: {before_rss:.0f} MB before the attack, {rss:.0f} MB after, peak {peak:.0f} MB"
    )
    print(f"slow connections closed by the server: {closed} ({args.slow} kept open or opening)")
    for name, count in sorted(statuses.items()):
        print(f"  {name}: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
