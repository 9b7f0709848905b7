"""The judge's calibration figures on the example label set (issue 22, BENCHMARKS.md
## judge calibration).

Runs ``verial judge calibrate example_benchmarks/healthbench/labels.jsonl --perturb`` against
llama.cpp's server (xllamacpp wheel) with SmolLM2-135M, started as the wire tests start it
(tests/judge/model_server.py) and stopped by PID, with the reply schema enforced by the server
(``json_object_schema``) and priced as gpt-4o-mini to project cost. A 135M-parameter model
checks the wire and the arithmetic, not judging quality: its figures are no measure of a judge.

Run: ``.venv/bin/python bench/calibrate.py [OUT.json]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from judge_server import MODEL_ALIAS, model_judge, server_missing  # noqa: E402

from pytest_verial.cli import main  # noqa: E402

LABELS = ROOT / "example_benchmarks" / "healthbench" / "labels.jsonl"


def run(out: Path) -> int:
    """Start the model server, calibrate on the example labels, stop the server."""
    missing = server_missing()
    if missing:
        print(f"bench/calibrate.py: {missing}", file=sys.stderr)
        return 2
    with model_judge() as base:
        started = time.perf_counter()
        prices = out.with_suffix(".prices.json")
        prices.write_text(json.dumps({MODEL_ALIAS: {"input": 0.15, "output": 0.60}}))
        code = main(
            [
                "judge",
                "calibrate",
                str(LABELS),
                "--perturb",
                "--verial-judge-model",
                MODEL_ALIAS,
                "--verial-judge-base-url",
                base,
                "--verial-judge-cache-dir",
                "off",
                "--verial-judge-response-format",
                "json_object_schema",
                "--verial-judge-retries",
                "0",
                "--verial-judge-prices",
                str(prices),
                "--json",
                str(out),
            ]
        )
        print(f"wall time {time.perf_counter() - started:.1f} s, exit status {code}")
    return 0


if __name__ == "__main__":
    target = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(tempfile.mkdtemp(prefix="calibrate-")) / "figures.json"
    )
    sys.exit(run(target))
