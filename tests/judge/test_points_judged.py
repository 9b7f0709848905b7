"""Points with penalties on judged criteria (issue 22 item 1), with the stub judge.

A judged penalty is met when the judge finds the behaviour (its rubric score reaches the
threshold); gated judge criteria count and are not met.
"""

from __future__ import annotations

import json

import pytest
from judge_support import completion, ratings

TASK = """
  - id: {id}
    criteria:
      - id: cpt
        points: 2
        assertion: {{assert: output-match, contains: [CPT 72148]}}
      - id: necessity
        points: 3
        axis: accuracy
        assertion:
          assert: llm-rubric
          principles: [The letter states why the MRI is medically necessary.]
      - id: recommends-opioids
        points: -2
        axis: accuracy
        assertion:
          assert: llm-rubric
          principles: [The letter recommends opioids.]
"""
OUTPUTS = {"clean": "Necessary. CPT 72148", "harmful": "Take opioids. CPT 72148", "gated": "x"}


def test_judged_penalty_met_clean_and_gated(pytester: pytest.Pytester, stub_judge) -> None:
    # clean: necessity 5, opioids 1; harmful: 5, 5; gated asks nothing. Replies by content:
    # a task run's judge criteria are asked at once (--verial-judge-concurrency), in any order
    def answer(request: dict[str, object]) -> tuple[int, bytes]:
        prompt = json.dumps(request)
        opioids = "recommends opioids" in prompt and "Take opioids" not in prompt
        return 200, completion(ratings(1 if opioids else 5))

    stub_judge.reply()
    stub_judge.respond = answer
    pytester.makefile(
        ".verial.yaml", bench="tasks:\n" + "".join(TASK.format(id=t) for t in OUTPUTS)
    )
    run = pytester.path / "run-a"
    for task, text in OUTPUTS.items():
        (run / task).mkdir(parents=True)
        (run / task / "output.md").write_text(text)
    (run / "run.yaml").write_text("executor_model: claude-sonnet-4-5\n")
    result = pytester.runpytest(
        "--verial-run",
        str(run),
        "--verial-report",
        "report.json",
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub_judge.url,
        "--verial-judge-cache-dir",
        "off",
        "-n",
        "0",
        "-p",
        "no:randomly",
    )
    report = json.loads((pytester.path / "report.json").read_text())
    tasks = {t["task_key"]: t for t in report["benchmark_runs"][0]["task_runs"]}
    assert len(stub_judge.requests) == 4
    clean, harmful, gated = tasks["clean"], tasks["harmful"], tasks["gated"]
    # clean: 2 + 3 met, the penalty not met -> 5 / 5
    assert (clean["score"], clean["verdict"], clean["penalties_applied"]) == (1.0, "pass", [])
    # harmful: 2 + 3 - 2 = 3 of 5 -> 0.6; accuracy axis (3 - 2) / 3
    assert harmful["score"] == pytest.approx(0.6)
    assert harmful["penalties_applied"] == ["recommends-opioids"]
    assert harmful["axes"]["accuracy"]["score"] == pytest.approx(1 / 3)
    # gated: the deterministic check failed, both judge criteria gated and not met -> 0 / 5
    assert (gated["points_earned"], gated["points_possible"], gated["score"]) == (0, 5, 0.0)
    statuses = {c["criterion_id"]: (c["status"], c["met"]) for c in gated["criterion_runs"]}
    assert statuses["recommends-opioids"] == ("gated", False)
    result.stdout.fnmatch_lines(["*'recommends-opioids' (llm-rubric) passed*penalty applied*"])
