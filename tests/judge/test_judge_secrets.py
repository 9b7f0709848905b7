"""The judge's API key is masked before any cache lookup and never stored (issue 9, item 4).

A judge that quotes the key in its reply: the first run masks it; the cache must store the
masked reply; a second run, served from the cache without any request, must not write the key
into the JSON report or either JUnit file. Each run is a fresh process, as a CI re-run is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from judge_support import completion

KEY = "sk-judge-Wq8/Zp3+Lm5=Tt"
BENCH = """
benchmark: judged
version: 1
tasks:
  - id: letter
    criteria:
      - id: judged
        assertion:
          assert: llm-rubric
          principles: [The letter states why the MRI is medically necessary.]
"""


def _reply() -> bytes:
    reasoning = f"the key you sent ({KEY}) works; also {json.dumps(KEY)} and {KEY[:12]}..."
    return completion(
        json.dumps(
            {
                "ratings": [{"principle": 1, "rating": 2, "reasoning": reasoning}],
                "confidence": 0.9,
            }
        )
    )


def _run(path: Path, url: str, workers: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["JUDGE_KEY_9"] = KEY + "\n"
    env["PYTEST_ADDOPTS"] = (
        "-p no:hypothesispytest -p no:schemathesis -p no:anyio"  # 0.8 s of import per process
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-n",
            workers,
            "-rA",
            "--verial-judge-model",
            "gpt-4o-mini",
            "--verial-judge-base-url",
            url,
            "--verial-judge-api-key-env",
            "JUDGE_KEY_9",
            "--verial-judge-cache-dir",
            "cache",
            "--verial-report",
            "report.json",
            "--verial-junit",
            "j.xml",
            "--junitxml",
            "p.xml",
        ],
        cwd=path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc.stdout + proc.stderr


def _leaks(path: Path, output: str) -> list[str]:
    texts = {"terminal": output}
    for name in ("report.json", "j.xml", "p.xml"):
        texts[name] = (path / name).read_text(encoding="utf-8")
    for entry in sorted((path / "cache").rglob("*.json")):
        texts[f"cache {entry.name}"] = entry.read_text(encoding="utf-8")
    return [where for where, text in texts.items() if KEY[:8] in text or KEY[-8:] in text]


#: xdist: the judge is asked on a worker, the report and JUnit files are written by the
#: controller. One task goes whole to one worker, so -n 1 is the -n 2 session without a second
#: worker that would only start and idle (its two child processes: 4 of the test's 19 s of CPU)
@pytest.mark.parametrize("workers", ["0", "1"])
def test_a_cached_rerun_never_writes_the_echoed_key(
    pytester: pytest.Pytester, stub_judge, workers: str
) -> None:
    stub_judge.reply((200, _reply()))
    pytester.makefile(".verial.yaml", bench=BENCH)
    (pytester.path / "sandbox" / "letter").mkdir(parents=True)
    (pytester.path / "sandbox" / "letter" / "output.md").write_text("The MRI is needed.\n")
    (pytester.path / "sandbox" / "run.yaml").write_text(
        "executor_model: claude-sonnet-4-5\ntasks: {letter: {cost: 1.0}}\n"
    )
    first = _run(pytester.path, stub_judge.url, workers)
    assert len(stub_judge.requests) == 1, first[-3000:]
    assert stub_judge.headers[0]["Authorization"] == f"Bearer {KEY}"
    assert _leaks(pytester.path, first) == []
    assert list((pytester.path / "cache").rglob("*.json")), "the reply was cached"
    stub_judge.reply((500, b"must not be called"))
    second = _run(pytester.path, stub_judge.url, workers)
    assert stub_judge.requests == [], "served from the cache"
    assert _leaks(pytester.path, second) == []
    report = json.loads((pytester.path / "report.json").read_text())
    run = [t for r in report["benchmark_runs"] for t in r["task_runs"]][0]["criterion_runs"][0]
    assert "***" in json.dumps(run["evidence"]), run["evidence"]
