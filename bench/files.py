"""Benchmark: requests and time for 200 sftp-file-present criteria over 5,000 objects.

Runs the same criteria, in one process, against:

- the GCS source on a real gcp-storage-emulator (seeded with the tree): one source per task
  run, shared by all criteria (the plugin's behaviour);
- the same GCS setup with a fresh source per criterion (the naive alternative: one listing per
  criterion), on a sample of the criteria, to show what sharing saves;
- the tree on disk (``DirectoryFiles``).

Usage::

    .venv/bin/python bench/files.py [--objects 5000] [--criteria 200] [--naive-sample 20]

Prints a table of HTTP requests (counted at the transport), listings, downloads and wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from files.conftest import run_check  # noqa: E402
from files.emulator import Emulator  # noqa: E402

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import CriterionError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.sources._files import DirectoryFiles, GCSFiles

BUCKET = "bench-sftp"
TASK = "sftp-bench-task"


def build(root: Path, objects: int) -> int:
    """Claims (40 %), referrals (40 %), eligibility responses and CSV batches (20 %)."""
    base = root / TASK
    count = 0
    for n in range(objects):
        kind = n % 5
        if kind in (0, 1):
            path = base / "outbound" / "claims" / f"batch-{n:05d}.json"
            body = json.dumps(
                {
                    "batch_id": f"B{n}",
                    "payer": "Aetna" if n % 2 else "Cigna",
                    "claims": [{"claim_id": f"CLM-{n}-{k}", "amount": 100 + k} for k in range(5)],
                }
            )
        elif kind in (2, 3):
            path = base / "outbound" / "referrals" / f"{2020 + n % 7}" / f"referral-{n:05d}.txt"
            body = f"REFERRAL {n}\nPatient: Maria Chen\nReason: lumbar MRI\nNPI: {1000 + n}\n"
        elif n % 50 == 4:
            path = base / "outbound" / "csv" / f"claims-{n:05d}.csv"
            body = "claim_id,amount\n" + "".join(f"C{n}-{k},{k * 10}\n" for k in range(20))
        else:
            path = base / "inbox" / "eligibility" / f"response-{n:05d}.ndjson"
            body = "\n".join(
                json.dumps({"member_id": f"M{n}", "active": k % 2 == 0}) for k in range(3)
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        count += 1
    return count


def criteria(objects: int, total: int) -> list[dict[str, Any]]:
    """A realistic mix: presence, JSON fields, text phrases, CSV rows, wide patterns, misses."""
    claims = [n for n in range(objects) if n % 5 in (0, 1)]
    referrals = [n for n in range(objects) if n % 5 in (2, 3)]
    csvs = [n for n in range(objects) if n % 5 == 4 and n % 50 == 4]
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < total:
        c, r = claims[i * 7 % len(claims)], referrals[i * 11 % len(referrals)]
        v = csvs[i % len(csvs)]
        out += [
            {"pattern": f"outbound/claims/batch-{c:05d}.json"},
            {
                "pattern": f"outbound/claims/batch-{c:05d}.json",
                "parse": "json",
                "fields": [
                    {"path": "claims.4.claim_id", "expected": f"CLM-{c}-4"},
                    {"path": "payer", "op": "in", "expected": ["Aetna", "Cigna"]},
                ],
            },
            {
                "pattern": f"outbound/referrals/*/referral-{r:05d}.txt",
                "contains": ["Maria Chen"],
                "regex": r"NPI: \d+",
            },
            {
                "pattern": f"outbound/csv/claims-{v:05d}.csv",
                "parse": "csv",
                "fields": [{"path": "19.amount", "expected": 190}],
            },
            {"pattern": "outbound/**/*.json", "min_count": 1},
            {
                "pattern": f"outbound/claims/batch-{c // 100:03d}??.json",
                "parse": "json",
                "fields": [{"path": "batch_id", "expected": "never"}],
            },
            {"pattern": "outbound/referrals/2026/*.txt", "min_count": 1},
            {"pattern": "inbox/eligibility/*.ndjson", "min_count": 10, "max_count": 10},
        ]
        i += 1
    return out[:total]


def score_all(source: Any, specs: list[dict[str, Any]]) -> list[float]:
    scores = []
    for spec in specs:
        try:
            scores.append(run_check(spec, source).score)
        except CriterionError:
            scores.append(-1.0)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--criteria", type=int, default=200)
    parser.add_argument("--naive-sample", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        made = build(root / "tree", args.objects)
        specs = criteria(args.objects, args.criteria)
        emulator = Emulator(root / "emulator")
        emulator.seed(BUCKET, root / "tree")
        emulator.start()
        try:
            rows = []
            shared = GCSFiles(BUCKET, TASK, endpoint=emulator.endpoint)
            shared.client()  # build the client outside the timing (once per process anyway)
            t0 = time.perf_counter()
            shared.entries()
            t_list = time.perf_counter() - t0
            gcs_scores = score_all(shared, specs)
            t_shared = time.perf_counter() - t0
            rows.append(
                (
                    "GCS emulator, shared source",
                    len(specs),
                    shared.requests,
                    shared.list_calls,
                    shared.downloads,
                    t_shared,
                )
            )
            sample = specs[: args.naive_sample]
            naive_requests = naive_lists = naive_downloads = 0
            t0 = time.perf_counter()
            for spec in sample:
                fresh = GCSFiles(BUCKET, TASK, endpoint=emulator.endpoint)
                score_all(fresh, [spec])
                naive_requests += fresh.requests
                naive_lists += fresh.list_calls
                naive_downloads += fresh.downloads
            t_naive = time.perf_counter() - t0
            rows.append(
                (
                    "GCS emulator, source per criterion",
                    len(sample),
                    naive_requests,
                    naive_lists,
                    naive_downloads,
                    t_naive,
                )
            )
            disk = DirectoryFiles(root / "tree" / TASK)
            t0 = time.perf_counter()
            disk_scores = score_all(disk, specs)
            t_disk = time.perf_counter() - t0
            rows.append(("sftp/ on disk", len(specs), 0, disk.list_calls, disk.downloads, t_disk))
        finally:
            emulator.stop()
    assert gcs_scores == disk_scores, "GCS and disk disagree"
    print(
        f"{made} objects, {len(specs)} criteria "
        f"(passed {sum(s == 1.0 for s in gcs_scores)}, errors {sum(s < 0 for s in gcs_scores)})"
    )
    print(
        f"{'setup':38} {'criteria':>8} {'requests':>8} {'listings':>8} {'reads':>6} "
        f"{'total s':>8} {'ms/criterion':>12}"
    )
    for name, n, req, lists, reads, seconds in rows:
        print(
            f"{name:38} {n:8d} {req:8d} {lists:8d} {reads:6d} {seconds:8.2f} "
            f"{1000 * seconds / n:12.2f}"
        )
    print(
        f"of which the one listing of {made} objects: {t_list:.2f} s "
        f"(the emulator returns one page; GCS would page it in {-(-made // 1000)} requests)"
    )
    per_shared = t_shared / len(specs)
    per_naive = t_naive / len(sample)
    print(
        f"per-criterion time, source per criterion / shared: {per_naive / per_shared:.1f}x; "
        f"requests per criterion: {naive_requests / len(sample):.2f} vs "
        f"{rows[0][2] / len(specs):.2f}"
    )


if __name__ == "__main__":
    main()
