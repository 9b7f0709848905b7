"""``--verial-judge-samples N`` (issue 22 item 5) with the stub judge: the score is the mean of
N samples, the spread is reported, every sample is costed, each has its own cache key."""

from __future__ import annotations

import json
import math

import pytest
from judge_support import completion, ratings

BENCH = """
tasks:
  - id: letter
    criteria:
      - id: necessity
        assertion:
          assert: llm-rubric
          principles: [The letter states why the MRI is medically necessary.]
"""


def _run(pytester: pytest.Pytester, stub, *extra: str) -> dict[str, object]:
    pytester.makefile(".verial.yaml", bench=BENCH)
    run = pytester.path / "run"
    (run / "letter").mkdir(parents=True, exist_ok=True)
    (run / "letter" / "output.md").write_text("The MRI is necessary after 6 weeks of PT.")
    (run / "run.yaml").write_text("executor_model: claude-sonnet-4-5\n")
    pytester.runpytest(
        "--verial-run",
        str(run),
        "--verial-report",
        "report.json",
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub.url,
        "-n",
        "0",
        "-p",
        "no:randomly",
        *extra,
    )
    report = json.loads((pytester.path / "report.json").read_text())
    crit: dict[str, object] = report["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][0]
    return crit


def test_three_samples_mean_spread_cost_and_cache_keys(pytester: pytest.Pytester, stub_judge):
    # ratings 5, 3, 1 -> scores 1.0, 0.5, 0.0: mean 0.5, population sd sqrt(1/6)
    stub_judge.reply(
        (200, completion(ratings(5))), (200, completion(ratings(3))), (200, completion(ratings(1)))
    )
    cache = pytester.path / "cache"
    crit = _run(
        pytester, stub_judge, "--verial-judge-samples", "3", "--verial-judge-cache-dir", str(cache)
    )
    assert crit["score"] == pytest.approx(0.5)
    judge = crit["evidence"]["judge"]  # type: ignore[index]
    samples = judge["samples"]
    assert samples["n"] == 3 and samples["scores"] == [1.0, 0.5, 0.0]
    assert samples["spread"] == pytest.approx(math.sqrt(1 / 6))
    assert len(set(samples["cache_keys"])) == 3
    assert judge["calls"] == 3
    assert judge["tokens"] == {"prompt": 2700, "completion": 360}
    assert judge["cost"] == pytest.approx(3 * (900 * 0.15 + 120 * 0.60) / 1e6)
    assert [r["seed"] for r in stub_judge.requests] == [0, 1, 2]
    assert "3 samples, spread 0.41" in str(crit["details"])
    # a re-run reads every sample from the cache: no call, the same mean
    stub_judge.reply((200, completion(ratings(2))))
    again = _run(
        pytester, stub_judge, "--verial-judge-samples", "3", "--verial-judge-cache-dir", str(cache)
    )
    assert len(stub_judge.requests) == 0 and again["score"] == pytest.approx(0.5)


def test_one_sample_is_the_default_and_bad_counts_are_refused(
    pytester: pytest.Pytester, stub_judge
) -> None:
    stub_judge.reply((200, completion(ratings(4))))
    crit = _run(pytester, stub_judge, "--verial-judge-cache-dir", "off")
    assert "samples" not in crit["evidence"]["judge"]  # type: ignore[index]
    assert crit["score"] == pytest.approx(0.75) and len(stub_judge.requests) == 1
    result = pytester.runpytest("--verial-run", "run", "--verial-judge-samples", "0")
    assert result.ret != 0
    assert "judge setting 'samples': must be >= 1, got '0'" in result.stdout.str() + (
        result.stderr.str()
    )
