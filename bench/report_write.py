"""Time of writing one JSON report, as the plugin does (final write and every checkpoint).

Scores ``bench/overhead.py``'s benchmark (N criteria) once with ``--verial-report``, then, side
by side in one process, times: the old way (``indent=2``, which forces json's pure-Python
encoder, after a full strict-JSON walk) and the new way (compact JSON through the C encoder,
the walk only when a NaN is found), and the typed round trip (``Report.from_json`` and
``to_json``) the recorder and ``verial show/compare/merge`` do.

    .venv/bin/python bench/report_write.py --criteria 5000
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import overhead  # noqa: E402

from pytest_verial import Report  # noqa: E402
from pytest_verial._safeparse import strict_json_value  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--criteria", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        overhead.build(root, args.criteria, max(args.criteria // 50, 1))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "load.verial.json",
                "--verial-report",
                "r.json",
            ],
            cwd=root,
            capture_output=True,
            check=False,
        )
        data = json.loads((root / "r.json").read_text())
    old = timed(lambda: json.dumps(strict_json_value(data), indent=2, default=str), args.repeat)
    new = timed(lambda: json.dumps(data, default=str, allow_nan=False), args.repeat)
    typed = timed(lambda: Report.from_json(data).to_json(), args.repeat)
    size = len(json.dumps(data))
    print(f"report of {args.criteria} criteria: {size / 1e6:.1f} MB compact")
    print(f"old write (strict walk + indent=2): {old:.3f} s")
    print(f"new write (compact, C encoder):     {new:.3f} s")
    print(f"ratio old/new:                      {old / new:.1f}")
    print(f"typed round trip (from_json+to_json): {typed:.3f} s")


if __name__ == "__main__":
    main()
