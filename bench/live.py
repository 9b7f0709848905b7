"""Live FHIR figures for BENCHMARKS.md (issue 12, item 2), measured side by side in one run.

The Medplum test server (``tests/servers/medplum``) is seeded with the Synthea export of
``../shared/corpus/fhir/synthea-10-patients`` (read in place; ``VERIAL_SHARED`` overrides the
folder) and started with ``--latency MS``: every FHIR answer is delayed that long without
blocking the server, as a WAN round trip would. pytest scores a generated benchmark in a child
process; the wall time of that process is what is reported (start-up and collection included).

a. One task of 40 ``fhir-resource-state`` criteria over 10 real patients (30 distinct searches:
   Patient by id, their AllergyIntolerances and Observations), with ``sources.fhir.concurrency``
   1 (one request at a time, as before) and 8 (the default), alternating, median of rounds.
b. 40 such tasks (1,600 criteria, 1,200 searches), ``-n 0`` and ``-n 4``, at concurrency 1
   and 8.

Each pair is checked to score every criterion identically and to send the same requests; the
server's log gives the request count and the most requests it had under way at once.

    python bench/live.py --latency 50 --latency 0
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "servers" / "medplum"


def corpus_dir() -> Path:
    """The Synthea export, read in place (never copied)."""
    shared = Path(os.environ.get("VERIAL_SHARED") or ROOT.parent / "shared")
    path = shared / "corpus" / "fhir" / "synthea-10-patients"
    if not path.is_dir():
        raise SystemExit(f"{path} not found: set VERIAL_SHARED to the shared folder")
    return path


def resources() -> list[dict[str, Any]]:
    """Every resource of the export."""
    out = []
    for file in sorted(corpus_dir().glob("*.ndjson")):
        with file.open(encoding="utf-8") as handle:
            out.extend(json.loads(line) for line in handle if line.strip())
    return out


class Server:
    """The Medplum test server with ``--latency``; stopped by its PID."""

    def __init__(self, latency: int, seed: list[dict[str, Any]]) -> None:
        self.proc = subprocess.Popen(
            ["node", "--experimental-websocket", "server.mjs", "--port", "0"]
            + ["--latency", str(latency)],
            cwd=SERVER,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("READY"):
            self.proc.kill()
            raise SystemExit(f"Medplum test server did not start ({line!r}); run scripts/setup.d")
        self.origin = f"http://127.0.0.1:{line.split()[1]}"
        self.call("/__seed", seed)

    def call(self, path: str, body: Any = None) -> Any:
        """GET (no body) or POST JSON to the server's admin routes."""
        data = None if body is None else json.dumps(body).encode()
        method = "GET" if data is None else "POST"
        request = urllib.request.Request(self.origin + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 - local
            return json.loads(response.read())

    def stop(self) -> None:
        """Stop the server by its PID."""
        self.proc.terminate()
        self.proc.wait(timeout=10)


def patient_criteria(patient: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Four criteria over three searches of one real patient (expected values from the data)."""
    ref = f"Patient/{patient['id']}"
    return [
        {
            "id": f"p{n}-family",
            "assertion": {
                "assert": "fhir-resource-state",
                "resource_type": "Patient",
                "search": {"_id": patient["id"]},
                "fields": [{"path": "name.0.family", "expected": patient["name"][0]["family"]}],
            },
        },
        {
            "id": f"p{n}-gender",
            "assertion": {
                "assert": "fhir-resource-state",
                "resource_type": "Patient",
                "search": {"_id": patient["id"]},
                "fields": [{"path": "gender", "expected": patient.get("gender")}],
            },
        },
        {
            "id": f"p{n}-allergies",
            "assertion": {
                "assert": "fhir-resource-state",
                "resource_type": "AllergyIntolerance",
                "search": {"patient": ref},
                "count": {"op": "gte", "expected": 0},
            },
        },
        {
            "id": f"p{n}-loinc",
            "assertion": {
                "assert": "fhir-resource-state",
                "resource_type": "Observation",
                "search": {"patient": ref},
                "match": "any",
                "fields": [{"path": "code.coding.0.system", "expected": "http://loinc.org"}],
            },
        },
    ]


def project(
    root: Path, origin: str, patients: list[dict[str, Any]], tasks: int, concurrency: int
) -> Path:
    """A benchmark of ``tasks`` tasks of 40 criteria (10 patients each, rotating)."""
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    bench_tasks = []
    for t in range(tasks):
        crits = []
        for k in range(10):
            crits += patient_criteria(patients[(t + k) % len(patients)], k)
        bench_tasks.append({"id": f"task{t:02d}", "criteria": crits})
        (root / "run" / f"task{t:02d}").mkdir(parents=True)
    bench = {"benchmark": "live-bench", "version": 1, "tasks": bench_tasks}
    (root / "live.verial.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    fhir = {"base_url": f"{origin}/fhir/R4", "concurrency": concurrency, "timeout": 60}
    (root / "run" / "run.yaml").write_text(
        yaml.safe_dump({"sources": {"fhir": {**fhir, "deadline": 600}}}), encoding="utf-8"
    )
    return root


def score(root: Path, workers: int, server: Server) -> dict[str, Any]:
    """Run the child pytest; its wall time, the server's log and every criterion's result."""
    server.call("/__reset", {})
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    command += ["-q", "-n", str(workers), "--verial-run", "run", "--verial-report", "r.json"]
    clock = time.perf_counter()
    proc = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - clock
    if proc.returncode not in (0, 1):
        raise SystemExit(proc.stdout[-3000:] + proc.stderr[-3000:])
    log = server.call("/__requests")
    report = json.loads((root / "r.json").read_text(encoding="utf-8"))
    results = {
        c["nodeid"]: (c["status"], c["score"], c["details"])
        for r in report["benchmark_runs"]
        for t in r["task_runs"]
        for c in t["criterion_runs"]
    }
    errors = [k for k, v in results.items() if v[0] == "error"]
    if errors:
        raise SystemExit(f"criterion errors, e.g. {errors[0]}: {results[errors[0]][2]}")
    urls = sorted(r["url"] for r in log["requests"])
    starts = [r["start"] for r in log["requests"]]
    ends = [r["end"] for r in log["requests"] if r["end"] is not None]
    return {
        "seconds": seconds,
        # first FHIR request in to last answer out: the part concurrency can shorten
        "window": (max(ends) - min(starts)) / 1000 if starts and ends else 0.0,
        "requests": log["count"],
        "max_inflight": log["max_inflight"],
        "urls": urls,
        "results": results,
    }


def same(runs: list[dict[str, Any]]) -> bool:
    """Whether runs scored every criterion alike and sent the same requests."""
    return all(r["results"] == runs[0]["results"] and r["urls"] == runs[0]["urls"] for r in runs)


def one_task(server: Server, patients: list[dict[str, Any]], rounds: int) -> dict[str, Any]:
    """(a): one task of 40 criteria, pool of 1 vs 8, alternating; medians."""
    runs: dict[int, list[dict[str, Any]]] = {1: [], 8: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for concurrency in (1, 8):
                root = project(
                    Path(tmp) / f"a{r}-{concurrency}", server.origin, patients, 1, concurrency
                )
                runs[concurrency].append(score(root, 0, server))
    seq, con = (statistics.median(x["seconds"] for x in runs[c]) for c in (1, 8))
    wseq, wcon = (statistics.median(x["window"] for x in runs[c]) for c in (1, 8))
    return {
        "window": (wseq, wcon),
        "criteria": len(runs[1][0]["results"]),
        "requests": runs[1][0]["requests"],
        "sequential_s": seq,
        "concurrent_s": con,
        "speedup": seq / con,
        "max_inflight": (runs[1][0]["max_inflight"], runs[8][0]["max_inflight"]),
        "identical": same(runs[1] + runs[8]),
    }


def forty_tasks(
    server: Server, patients: list[dict[str, Any]], workers: int, tasks: int = 40
) -> dict[str, Any]:
    """(b): ``tasks`` tasks at -n 0 and -n ``workers``, concurrency 1 and 8."""
    out: dict[str, Any] = {}
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for concurrency in (1, 8):
            for n in (0, workers):
                root = project(
                    Path(tmp) / f"b{concurrency}-{n}", server.origin, patients, tasks, concurrency
                )
                run = score(root, n, server)
                runs.append(run)
                out[f"c{concurrency}_n{n}"] = run["seconds"]
                out[f"c{concurrency}_n{n}_inflight"] = run["max_inflight"]
    out["criteria"] = len(runs[0]["results"])
    out["requests"] = runs[0]["requests"]
    out["identical"] = same(runs)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=int, action="append", help="ms per answer (repeatable)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of (a), alternating")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=40, help="tasks of (b)")
    parser.add_argument("--only", choices=["a", "b"])
    args = parser.parse_args()
    seed = resources()
    patients = sorted((r for r in seed if r["resourceType"] == "Patient"), key=lambda p: p["id"])
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {len(seed)} resources seeded")
    for latency in args.latency or [50, 0]:
        server = Server(latency, seed)
        try:
            if args.only in (None, "a"):
                a = one_task(server, patients, args.rounds)
                print(
                    f"\n(a) latency {latency} ms: one task, {a['criteria']} criteria, "
                    f"{a['requests']} requests, identical results: {a['identical']}"
                )
                print(
                    f"    concurrency 1: {a['sequential_s']:.2f} s   concurrency 8: "
                    f"{a['concurrent_s']:.2f} s   speed-up {a['speedup']:.2f}x   "
                    f"max in flight {a['max_inflight'][0]} vs {a['max_inflight'][1]}"
                )
                ws, wc = a["window"]
                print(
                    f"    first request to last answer: {ws:.2f} s vs {wc:.2f} s ({ws / wc:.2f}x)"
                )
            if args.only in (None, "b"):
                b = forty_tasks(server, patients, args.workers, args.tasks)
                w = args.workers
                print(
                    f"\n(b) latency {latency} ms: {args.tasks} tasks, {b['criteria']} criteria, "
                    f"{b['requests']} requests, identical results: {b['identical']}"
                )
                for c in (1, 8):
                    n0, nw = b[f"c{c}_n0"], b[f"c{c}_n{w}"]
                    print(
                        f"    concurrency {c}: -n 0 {n0:.2f} s   -n {w} {nw:.2f} s   "
                        f"speed-up {n0 / nw:.2f}x   (max in flight "
                        f"{b[f'c{c}_n0_inflight']} / {b[f'c{c}_n{w}_inflight']})"
                    )
                print(
                    f"    concurrency 8 at -n {w} vs concurrency 1 at -n 0: "
                    f"{b['c1_n0'] / b[f'c8_n{w}']:.2f}x"
                )
        finally:
            server.stop()
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
