"""Cost of masking secrets (:mod:`pytest_verial._secrets`) on the strings of a large report.

Builds a report-like JSON value of N task runs (each a few short strings, evidence rows and a
1 KB details text), registers K random keys (the judge key and run.yaml keys), and times
:func:`redact_json` on it with the memo cleared (the first write of a report), then again
(a checkpoint: memoised); also one 1 MB text that holds a key (the slow path: decode, match,
map back). Prints one line per figure.

    .venv/bin/python bench/redact.py --tasks 20000 --keys 3
"""

from __future__ import annotations

import argparse
import random
import string
import time
from typing import Any

from pytest_verial import _secrets as secrets


def _report(tasks: int, rng: random.Random) -> dict[str, Any]:
    words = ["patient", "order", "prior-auth", "status", "final", "MRI", "lumbar", "www.x.org"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    return {
        "task_runs": [
            {
                "id": f"b.verial.yaml::task-{i}",
                "feedback": text(20),
                "criterion_runs": [
                    {
                        "criterion_id": f"c{j}",
                        "label": text(6),
                        "details": text(150),
                        "evidence": {
                            "fieldResults": [
                                {"path": "a.b", "expected": text(2), "actual": text(3)}
                            ]
                        },
                    }
                    for j in range(3)
                ],
            }
            for i in range(tasks)
        ]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20000)
    parser.add_argument("--keys", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    data = _report(args.tasks, rng)
    keys = [
        "sk_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
        for _ in range(args.keys)
    ]
    for key in keys:
        secrets.register(key)
    started = time.perf_counter()
    secrets.redact_json(data)
    first = time.perf_counter() - started
    started = time.perf_counter()
    secrets.redact_json(data)
    again = time.perf_counter() - started
    strings = args.tasks * (2 + 3 * 5)
    print(f"{args.tasks} task runs, {strings} strings, {args.keys} keys registered")
    print(f"redact_json, first write:      {first:.2f} s ({first / strings * 1e6:.1f} us/string)")
    print(f"redact_json, checkpoint again: {again:.2f} s")
    doc = "lorem ipsum dolor sit amet " * 40000 + keys[0].upper() + " tail" * 1000
    started = time.perf_counter()
    masked = secrets.redact(doc)
    print(
        f"one {len(doc) / 1e6:.1f} MB text holding a key in upper case: "
        f"{time.perf_counter() - started:.2f} s, masked: {'***' in masked}"
    )


if __name__ == "__main__":
    main()
