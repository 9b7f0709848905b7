"""FHIR figures for BENCHMARKS.md, measured in one run (issue 3).

1. Requests: a task with 50 ``fhir-resource-state`` criteria over 8 distinct searches, run by
   pytest against the Medplum test server (``tests/servers/medplum``); the server counts the
   FHIR requests it receives. Target: the number of distinct searches.
2. Snapshot: 100,000 resources (the Synthea-like corpus of the tests, scaled) in NDJSON,
   loaded and indexed in a fresh process: load time (and, side by side, the time to merely
   ``json.loads`` every line, the floor), first search on a parameter (its values extracted
   once), a repeated search, and peak RSS above the process's start (after that json pass).
3. FHIRPath: per-criterion time of the check with FHIRPath field paths, compiled once and
   cached (the product) against fhirpathpy's ``evaluate`` that re-parses each call.

   The corpus's Encounters refer to their practitioners as Synthea does
   (``Practitioner?identifier=<npi system>|<npi>``); a reference search on them is timed too
   (the conditional references are resolved on first use).

    python bench/fhir.py [--resources 100000] [--criteria 2000] [--only snapshot]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fhir"))

from corpus import make_corpus  # noqa: E402

SERVER = ROOT / "tests" / "servers" / "medplum"

SEARCHES = [
    "{patient: Patient/john-smith, status: booked}",
    "{status: booked}",
    "{status: proposed}",
    "{practitioner: Practitioner/rivera}",
    "{status: cancelled}",
    "{date: ge2026-06-01}",
    "{service-type: '72148'}",
    "{patient.family: smith}",
]


def _server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        ["node", "--experimental-websocket", str(SERVER / "server.mjs"), "--port", "0"],
        cwd=SERVER,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        proc.kill()
        raise SystemExit(f"Medplum test server did not start ({line!r}); run scripts/setup.d")
    return proc, f"http://127.0.0.1:{line.split()[1]}"


def _call(origin: str, path: str, body: object = None) -> dict[str, object]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(origin + path, data=data, method="GET" if data is None else "POST")
    with urllib.request.urlopen(req, timeout=60) as response:  # noqa: S310 - local server
        result: dict[str, object] = json.loads(response.read())
        return result


def requests_per_task(criteria: int = 50) -> dict[str, object]:
    """Requests the live source sends for one task of ``criteria`` FHIR criteria."""
    proc, origin = _server()
    try:
        _call(origin, "/__seed", make_corpus())
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            lines = "\n".join(
                f"      - id: c{i}\n        assertion:\n          assert: fhir-resource-state\n"
                f"          resource_type: Appointment\n"
                f"          search: {SEARCHES[i % len(SEARCHES)]}\n"
                f"          fields: [{{path: status, expected: booked}}]"
                for i in range(criteria)
            )
            (root / "bench.verial.yaml").write_text(
                f"benchmark: fhir-bench\nversion: 1\ntasks:\n  - id: t\n    criteria:\n{lines}\n"
            )
            (root / "run" / "t").mkdir(parents=True)
            (root / "run" / "run.yaml").write_text(
                f"sources:\n  fhir: {{base_url: '{origin}/fhir/R4'}}\n"
            )
            _call(origin, "/__reset", {})
            started = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "--verial-run",
                    str(root / "run"),
                    str(root),
                ],
                cwd=root,
                capture_output=True,
                check=False,
            )
            wall = time.perf_counter() - started
            sent = _call(origin, "/__requests")["count"]
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    return {
        "criteria": criteria,
        "distinct_searches": len(SEARCHES),
        "requests": sent,
        "pytest_wall_s": round(wall, 2),
    }


SNAPSHOT_PROBE = r"""
import json, resource, sys, time
from pathlib import Path
from pytest_verial.fhir._query import build_query
from pytest_verial.fhir._snapshot import FhirSnapshot

def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

import pytest_verial.fhir._index, pytest_verial.fhir._fhirpath, fhirpathpy  # imports first
from pytest_verial.fhir._fhirpath import compiled
compiled("Patient.name")
p0 = time.perf_counter()
with open(Path(sys.argv[1]) / "export.ndjson", encoding="utf-8") as handle:
    parsed = sum(1 for line in handle if json.loads(line))
parse_only = time.perf_counter() - p0
before = rss_mb()
t0 = time.perf_counter()
snapshot = FhirSnapshot(Path(sys.argv[1]))
index = snapshot.index
t1 = time.perf_counter()
q = build_query("Observation", {"code": "http://loinc.org|8867-4", "date": "ge2025-06-01"})
first = snapshot.search(q)
t2 = time.perf_counter()
again = snapshot.search(build_query("Observation", {"code": "2339-0", "date": "lt2023-03-01"}))
t3 = time.perf_counter()
by_doctor = snapshot.search(build_query("Encounter", {"practitioner": "Practitioner/pr1"}))
t4 = time.perf_counter()
print(json.dumps({"resources": len(index), "load_index_s": round(t1 - t0, 2),
                  "json_parse_only_s": round(parse_only, 2),
                  "load_over_parse": round((t1 - t0) / parse_only, 2),
                  "first_search_s": round(t2 - t1, 2),
                  "repeat_search_ms": round((t3 - t2) * 1000, 1),
                  "conditional_reference_search_s": round(t4 - t3, 2),
                  "found_by_practitioner": by_doctor.total,
                  "peak_rss_mb": round(rss_mb() - before, 1), "found": first.total}))
"""


def _conditional(line: str, npi: dict[str, str]) -> str:
    """Encounter practitioners as Synthea writes them: ``Practitioner?identifier=npi|...``."""
    if '"resourceType": "Encounter"' not in line:
        return line
    return re.sub(
        r'"Practitioner/(pr\d+)"',
        lambda m: f'"Practitioner?identifier=http://hl7.org/fhir/sid/us-npi|{npi[m.group(1)]}"',
        line,
    )


def snapshot_index(resources: int) -> dict[str, object]:
    """Load and index ``resources`` resources from NDJSON in a fresh process."""
    fixed = len(make_corpus(0))
    per_patient = (len(make_corpus(40)) - fixed) / 40
    corpus = make_corpus(patients=int((resources - fixed) / per_patient * 1.05) + 1)[:resources]
    with tempfile.TemporaryDirectory() as tmp:
        fhir = Path(tmp) / "fhir"
        fhir.mkdir()
        npi = {
            r["id"]: r["identifier"][0]["value"]
            for r in corpus
            if r["resourceType"] == "Practitioner" and r.get("identifier")
        }
        with (fhir / "export.ndjson").open("w", encoding="utf-8") as handle:
            for r in corpus:
                handle.write(_conditional(json.dumps(r), npi) + "\n")
        size = (fhir / "export.ndjson").stat().st_size
        del corpus
        out = subprocess.run(
            [sys.executable, "-c", SNAPSHOT_PROBE, str(fhir)],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, object] = json.loads(out.stdout)
    result["ndjson_mb"] = round(size / 1e6, 1)
    return result


def fhirpath_per_criterion(criteria: int) -> dict[str, object]:
    """Mean time of one criterion with FHIRPath fields: compiled+cached vs re-parsed."""
    from fhirpathpy import evaluate as reparsed

    import pytest_verial.checks._fhir as check_module
    from pytest_verial.fhir._fhirpath import _model, evaluate

    def evaluate_uncompiled(expression: str, resource: Any) -> list[Any]:
        """fhirpathpy parsing the expression every time: what the cache saves."""
        return list(reparsed(resource, expression, {}, _model()))

    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.fhir._index import SearchResult

    appointments = [r for r in make_corpus() if r["resourceType"] == "Appointment"]

    class Source:
        kind = "snapshot"

        def search(self, query: object, need_all: bool = True) -> SearchResult:
            return SearchResult(appointments[:1], 1)

    sys.path.insert(0, str(ROOT / "tests" / "fhir"))
    from helpers import run

    assertion = {
        "resource_type": "Appointment",
        "search": {"status": "booked"},
        "fields": [
            {
                "path": "participant.actor.where(reference.startsWith('Practitioner')).display",
                "expected": "Dr. Rivera",
            },
            {"path": "participant.where(status = 'accepted').count()", "expected": 2},
        ],
    }
    dotted = {
        "resource_type": "Appointment",
        "search": {"status": "booked"},
        "fields": [
            {"path": "participant.0.actor.display", "expected": "Dr. Rivera"},
            {"path": "participant.1.status", "expected": "accepted"},
        ],
    }
    rounds: dict[str, list[float]] = {"compiled": [], "uncompiled": [], "dotted": []}
    for _ in range(3):  # alternate, keep the median: the machine is shared
        for label, function, spec in (
            ("compiled", evaluate, assertion),
            ("uncompiled", evaluate_uncompiled, assertion),
            ("dotted", evaluate, dotted),
        ):
            check_module.evaluate = function  # type: ignore[assignment]
            run(Source(), spec)  # warm up (compiles once in the product)
            started = time.perf_counter()
            for _ in range(criteria):
                run(Source(), spec)
            rounds[label].append((time.perf_counter() - started) / criteria * 1e6)
    timings = {label: sorted(values)[1] for label, values in rounds.items()}
    check_module.evaluate = evaluate  # type: ignore[assignment]
    return {
        "criteria": criteria,
        "compiled_us": round(timings["compiled"], 1),
        "uncompiled_us": round(timings["uncompiled"], 1),
        "dotted_paths_us": round(timings["dotted"], 1),
        "speedup": round(timings["uncompiled"] / timings["compiled"], 1),
    }


def main() -> None:
    """Run the three measurements and print them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resources", type=int, default=100_000)
    parser.add_argument("--criteria", type=int, default=1000)
    parser.add_argument("--only", choices=["requests", "snapshot", "fhirpath"])
    args = parser.parse_args()
    parts = {
        "requests": lambda: requests_per_task(50),
        "snapshot": lambda: snapshot_index(args.resources),
        "fhirpath": lambda: fhirpath_per_criterion(args.criteria),
    }
    results = {name: run() for name, run in parts.items() if args.only in (None, name)}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
