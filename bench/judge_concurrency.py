"""Judge criteria of one task run at once (issue 21; BENCHMARKS.md, "judge criteria at once").

Scores one task of 10 ``llm-rubric`` criteria (one principle each, on the same PA letter) and
one deterministic criterion against the local model server (llama.cpp from the xllamacpp wheel
serving SmolLM2-135M, started as the wire tests start it: tests/judge/model_server.py), with
``--verial-judge-concurrency`` 1, 4 and 10 side by side, each a real pytest session (cache off,
JSON report). Twice: against the server as the tests start it (one slot: it answers one
request at a time), and with 4 slots (continuous batching: requests decoded together).

Per session, from the JSON report: the judge phase (first judge criterion started to last one
completed), the slowest single judge criterion (one call each, cache off), the sum of the
judge criteria's durations, the most judge criteria in flight at once (from their start and
end times), and whether the criterion runs equal those of concurrency 1 on the same server
apart from timings (a judge that decodes requests together may answer differently). Also the
session's wall time. Run: ``.venv/bin/python bench/judge_concurrency.py``.

``--stub-latency SECONDS`` replaces the model by a stub that answers after SECONDS of sleep
(no CPU): a judge whose time is spent waiting, as a remote API's is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_server import MODEL_ALIAS, Answer, model_judge, server_missing, stub_judge  # noqa: E402

LIMITS = (1, 4, 10)
SLOTS = (1, 4)
LETTER = (
    "To Aetna utilization review: Maria Chen (DOB 1971-03-02, member W123456789) has had left "
    "L5 radiculopathy for 9 weeks despite 6 weeks of physical therapy and NSAIDs. Straight-leg "
    "raise is positive on the left; ankle reflex is reduced. We request an MRI of the lumbar "
    "spine without contrast, CPT 72148, ICD-10 M54.16, to evaluate for disc herniation before "
    "referral to spine surgery. Dr. Ana Rivera, NPI 1234567890.\n"
)
PRINCIPLES = [
    "The letter states why the lumbar MRI is medically necessary.",
    "The letter names the CPT code of the requested service.",
    "The letter names the failed conservative therapy and its duration.",
    "The letter gives the diagnosis code.",
    "The letter identifies the patient by name and date of birth.",
    "The letter names the ordering physician.",
    "The letter cites objective examination findings.",
    "The letter is addressed to the payer.",
    "The letter does not invent findings.",
    "The letter states what the imaging result will change.",
]


def project(root: Path) -> None:
    """The benchmark (one task: a deterministic criterion and 10 judge criteria) and its run."""
    criteria: list[dict[str, Any]] = [
        {"id": "cpt", "assertion": {"assert": "output-match", "contains": ["CPT 72148"]}}
    ]
    criteria += [
        {"id": f"j{i:02d}", "assertion": {"assert": "llm-rubric", "principles": [p]}}
        for i, p in enumerate(PRINCIPLES, start=1)
    ]
    bench = {
        "benchmark": "judge-at-once",
        "version": 1,
        "tasks": [{"id": "letter", "criteria": criteria}],
    }
    (root / "bench.verial.yaml").write_text(yaml.safe_dump(bench), encoding="utf-8")
    (root / "run" / "letter").mkdir(parents=True)
    (root / "run" / "letter" / "output.md").write_text(LETTER, encoding="utf-8")
    run_yaml = {"executor_model": "claude-sonnet-4-5"}
    (root / "run" / "run.yaml").write_text(yaml.safe_dump(run_yaml), encoding="utf-8")


def score(root: Path, base: str, limit: int, name: str) -> tuple[dict[str, Any], float]:
    """One pytest session at ``--verial-judge-concurrency limit``: its report and wall time."""
    report = root / f"{name}.json"
    cmd = [
        sys.executable, "-m", "pytest", "-q", "--tb=no", "-p", "no:cacheprovider",
        "-p", "no:randomly", "-n", "0", "--verial-store", "none",
        "--verial-run", "run", "--verial-report", str(report),
        "--verial-judge-model", MODEL_ALIAS, "--verial-judge-base-url", base,
        "--verial-judge-cache-dir", "off", "--verial-judge-timeout", "300",
        "--verial-judge-response-format", "json_object_schema",
        "--verial-judge-concurrency", str(limit),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest -p no:schemathesis -p no:anyio"
    clock = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - clock
    return json.loads(report.read_text(encoding="utf-8")), wall


def judge_runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c
        for r in report["benchmark_runs"]
        for t in r["task_runs"]
        for c in t["criterion_runs"]
        if c["judge"]
    ]


def _time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """Judge phase, slowest criterion, sum of durations, most in flight, statuses."""
    runs = judge_runs(report)
    spans = [(_time(c["started_at"]), _time(c["completed_at"])) for c in runs]
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    flying = most = 0
    for _, step in edges:  # an end before a start at the same millisecond
        flying += step
        most = max(most, flying)
    return {
        "phase": max(e for _, e in spans) - min(s for s, _ in spans),
        "slowest": max(c["duration"] for c in runs),
        "total": sum(c["duration"] for c in runs),
        "most": most,
        "statuses": sorted({c["status"] for c in runs}),
        "calls": report["session"]["verification"]["judge_calls"],
    }


def comparable(report: dict[str, Any]) -> list[dict[str, Any]]:
    drop = ("started_at", "completed_at", "duration")
    return [{k: v for k, v in c.items() if k not in drop} for c in judge_runs(report)]


def answer_after(latency: float) -> Answer:
    """A stub judge's answer after ``latency`` seconds (sleeping: no CPU), every principle
    rated 5, as a remote API whose time is spent waiting."""

    def answer(body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        time.sleep(latency)
        content = json.dumps(
            {"ratings": [{"principle": 1, "rating": 5, "reasoning": "ok"}], "confidence": 0.7}
        )
        return content, {"prompt_tokens": 450, "completion_tokens": 40}

    return answer


def sessions(root: Path, base: str, label: str) -> list[tuple[Any, ...]]:
    """A warm-up session, then one per limit: (judge, limit, wall, figures, same as N=1)."""
    rows = []
    score(root, base, 1, f"warm-{label}")  # the model's first replies are slower
    first: list[dict[str, Any]] | None = None
    for limit in LIMITS:
        report, wall = score(root, base, limit, f"{label}-n{limit}")
        same = first is None or comparable(report) == first
        first = first if first is not None else comparable(report)
        rows.append((label, limit, wall, figures(report), same))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--stub-latency",
        type=float,
        metavar="SECONDS",
        help="a stub judge answering after SECONDS (sleeping) instead of the local model",
    )
    args = parser.parse_args(argv)
    missing = None if args.stub_latency is not None else server_missing()
    if missing:
        print(
            f"bench/judge_concurrency.py needs the local model server: {missing}", file=sys.stderr
        )
        return 2
    print(f"load average before: {os.getloadavg()[0]:.2f}; cores: {os.cpu_count()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project(root)
        if args.stub_latency is not None:
            with stub_judge(answer_after(args.stub_latency)) as base:
                rows += sessions(root, base, f"stub {args.stub_latency * 1000:.0f} ms")
        for slots in () if args.stub_latency is not None else SLOTS:
            with model_judge(parallel=slots) as base:
                rows += sessions(root, base, f"llama.cpp {slots} slot{'s' if slots > 1 else ''}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print(
        f"{'judge':<18} {'concurrency':>11} {'judge phase s':>13} {'slowest call s':>14} "
        f"{'sum of calls s':>14} {'in flight':>9} {'session s':>9} {'calls':>5}  same as N=1"
    )
    for label, limit, wall, f, same in rows:
        print(
            f"{label:<18} {limit:>11} {f['phase']:>13.2f} {f['slowest']:>14.2f} "
            f"{f['total']:>14.2f} {f['most']:>9} {wall:>9.2f} {f['calls']:>5}  "
            f"{'yes' if same else 'no'} {','.join(f['statuses'])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
