"""Cross-task consistency: benchmark-level entries join their anchor task and compare outputs."""

from __future__ import annotations

import json

import pytest
from judge_support import completion, ratings

BENCH = """
benchmark: verify-consistency
tasks:
  - id: verify-letter
    criteria:
      - id: has-cpt
        assertion: {assert: output-match, contains: ["72148"]}
  - id: verify-summary
    criteria:
      - id: is-json
        assertion: {assert: output-format, format: json}
consistency:
  - id: letter-and-summary-agree
    tasks: [verify-letter, verify-summary]
    axis: consistency
    weight: 2
"""


def make_run(pytester, summary: str):
    pytester.makefile(".verial.yaml", bench=BENCH)
    run = pytester.path / "run"
    for task, name, text in (
        ("verify-letter", "output.md", "# Letter\nCPT 72148 requested."),
        ("verify-summary", "output.json", summary),
    ):
        (run / task).mkdir(parents=True)
        (run / task / name).write_text(text)
    (run / "run.yaml").write_text("executor_model: claude-sonnet-4-5\n")
    return run


def run_args(run, stub, path):
    return [
        "--verial-run",
        str(run),
        "--verial-report",
        str(path / "r.json"),
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub.url,
        "--verial-judge-cache-dir",
        "off",
        "-p",
        "no:cacheprovider",
    ]


def test_consistency_compares_both_outputs(pytester, stub_judge):
    stub_judge.reply((200, completion(ratings(2, 3))))
    run = make_run(pytester, '{"cpt_code": "72149"}')
    pytester.runpytest(*run_args(run, stub_judge, pytester.path))
    report = json.loads((pytester.path / "r.json").read_text())["benchmark_runs"][0]
    summary = next(t for t in report["task_runs"] if t["task_key"] == "verify-summary")
    crit = next(
        c for c in summary["criterion_runs"] if c["criterion_id"] == "letter-and-summary-agree"
    )
    assert crit["assert"] == "output-consistency" and crit["axis"] == "consistency"
    assert crit["status"] == "failed" and crit["score"] == 0.375
    prompt = stub_judge.requests[0]["messages"][1]["content"]
    assert "=== task verify-summary (output.json) ===" in prompt
    assert "=== task verify-letter (output.md) ===\n# Letter\nCPT 72148 requested." in prompt
    assert "do not contradict each other" in prompt


def test_consistency_without_related_output_makes_no_call(pytester, stub_judge):
    stub_judge.reply((200, completion(ratings(5, 5))))
    run = make_run(pytester, '{"cpt_code": "72148"}')
    (run / "verify-letter" / "output.md").unlink()
    pytester.runpytest(*run_args(run, stub_judge, pytester.path), "-k", "verify-summary")
    report = json.loads((pytester.path / "r.json").read_text())["benchmark_runs"][0]
    crit = report["task_runs"][0]["criterion_runs"][-1]
    assert crit["score"] == 0.0 and "task verify-letter wrote no output" in crit["details"]
    assert stub_judge.requests == []


def test_bad_consistency_entry_is_a_collection_error(pytester):
    pytester.makefile(
        ".verial.yaml",
        bench=BENCH.replace("[verify-letter, verify-summary]", "[verify-letter, verify-sumary]"),
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*unknown task(s) verify-sumary*"])
    assert result.ret != pytest.ExitCode.OK  # a collection error fails the session
