"""``verial convert healthbench`` (issue 22 item 2): the hand-made example file, malformed lines
refused one by one, and the converted benchmark scored by points with the stub judge."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from judge_support import completion, healthbench_project, ratings

from pytest_verial.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "example_benchmarks" / "healthbench"


def test_the_example_file_converts_to_a_valid_points_benchmark(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hb.verial.yaml"
    assert main(["convert", "healthbench", str(EXAMPLES / "examples.jsonl"), "-o", str(out)]) == 0
    assert "converted 3 example(s), 9 criteria" in capsys.readouterr().err
    bench = yaml.safe_load(out.read_text())
    tasks = {t["id"]: t for t in bench["tasks"]}
    assert list(tasks) == ["hb-chest-pain", "hb-toddler-fever", "hb-refill"]
    chest = tasks["hb-chest-pain"]
    assert chest["tags"] == ["theme_emergency_referrals", "physician_agreed_category_emergent"]
    assert [c["points"] for c in chest["criteria"]] == [10, 5, -8, 3]
    assert [c.get("axis") for c in chest["criteria"]] == [
        "accuracy",
        "completeness",
        "accuracy",
        "communication_quality",
    ]
    penalty = chest["criteria"][2]["assertion"]
    assert penalty == {
        "assert": "llm-rubric",
        "principles": ["Suggests waiting to see whether the pain goes away before seeking care."],
        "pass_threshold": 0.75,
    }
    fever = tasks["hb-toddler-fever"]["task_item"]["instruction"]
    assert fever.startswith("user: My 2 year old") and "\n\nassistant: That sounds" in fever
    assert main(["validate", str(out)]) == 0


BAD_LINES = [
    ("not json at all", "line 2: not a JSON object"),
    ("[1, 2]", "line 3: expected a JSON object, found list"),
    (
        {"prompt_id": "p4", "rubrics": [{"criterion": "x", "points": 1}]},
        "line 4: field 'prompt': expected a non-empty list",
    ),
    (
        {"prompt_id": "p5", "prompt": [{"role": "user", "content": "hi"}], "rubrics": []},
        "line 5: field 'rubrics': expected a non-empty list",
    ),
    (
        {
            "prompt_id": "p6",
            "prompt": [{"role": "user", "content": "hi"}],
            "rubrics": [{"criterion": "x", "points": 0}],
        },
        "line 6: field 'rubrics[0].points': points must be a non-zero integer, found 0",
    ),
    (
        {
            "prompt_id": "p7",
            "prompt": [{"role": "user", "content": "hi"}],
            "rubrics": [{"criterion": "x", "points": 2}, {"criterion": "y", "points": 1.5}],
        },
        "line 7: field 'rubrics[1].points': points must be a non-zero integer, found 1.5",
    ),
    (
        {
            "prompt_id": "p8",
            "prompt": [{"role": "user", "content": "hi"}],
            "rubrics": [{"criterion": "x", "points": True}],
        },
        "line 8: field 'rubrics[0].points': points must be a non-zero integer, found bool",
    ),
    (
        {
            "prompt_id": "p9",
            "prompt": [{"role": "robot", "content": "hi"}],
            "rubrics": [{"criterion": "x", "points": 1}],
        },
        "line 9: field 'prompt[0].role': expected one of",
    ),
    (
        {
            "prompt_id": "p10",
            "prompt": [{"role": "user", "content": "hi"}],
            "rubrics": [{"criterion": "", "points": 1}],
        },
        "line 10: field 'rubrics[0].criterion': expected non-empty text",
    ),
    (
        {
            "prompt_id": "bad\u202eid",
            "prompt": [{"role": "user", "content": "hi"}],
            "rubrics": [{"criterion": "x", "points": 1}],
        },
        "line 11: field 'prompt_id': a task id contains U+202E RIGHT-TO-LEFT OVERRIDE",
    ),
    (
        {
            "prompt_id": "good",
            "prompt": [{"role": "user", "content": "hi"}],
            "rubrics": [{"criterion": "x", "points": 1}],
        },
        "line 12: field 'prompt_id': 'good' is also on line 1",
    ),
]


def test_bad_lines_are_refused_one_by_one_and_good_lines_still_convert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = {
        "prompt_id": "good",
        "prompt": [{"role": "user", "content": "hi"}],
        "rubrics": [{"criterion": "Greets", "points": 2, "tags": ["axis:communication"]}],
    }
    lines = [json.dumps(good)]
    lines += [raw if isinstance(raw, str) else json.dumps(raw) for raw, _ in BAD_LINES]
    lines += ["", json.dumps({**good, "prompt_id": "also-good"})]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.verial.yaml"
    assert main(["convert", "healthbench", str(source), "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    refused = [line for line in err if line.startswith("verial convert: ")]
    assert len(refused) == len(BAD_LINES)
    for line, (_, expected) in zip(refused, BAD_LINES, strict=True):
        assert f"{source}:" in line and expected.split(": ", 1)[1] in line, line
        assert f":{expected.split(':')[0].split()[1]}:" in line, line
    assert "\u202e" not in "\n".join(err)
    assert err[-1] == f"converted 2 example(s), 2 criteria, to {out}; 11 line(s) refused"
    assert [t["id"] for t in yaml.safe_load(out.read_text())["tasks"]] == ["good", "also-good"]


def test_convert_never_overwrites_its_input_and_refuses_a_file_of_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.verial.yaml"  # named like a benchmark on purpose
    shutil.copy(EXAMPLES / "examples.jsonl", source)
    before = source.read_bytes()
    assert main(["convert", "healthbench", str(source), "-o", str(source)]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert source.read_bytes() == before
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\nnope\n")
    assert main(["convert", "healthbench", str(empty), "-o", str(tmp_path / "o.verial.yaml")]) == 1
    assert "no example of" in capsys.readouterr().err
    assert not (tmp_path / "o.verial.yaml").exists()


def test_converted_benchmark_scores_by_points_with_the_judge(
    pytester: pytest.Pytester, stub_judge
) -> None:
    """The example file and its captured run, judged by the stub (file order, -n 0, one
    judge criterion at a time: the stub's script answers in the order of the requests)."""
    # chest-pain: 911 yes, aspirin caveat yes, wait (penalty) no, calm yes -> 18/18
    # toddler-fever: dose yes, warning signs no, aspirin (penalty) yes -> (6 - 10)/13 -> 0
    # refill: opioid dose (penalty) no, declines yes -> 8/8
    stub_judge.reply(
        *[
            (200, completion(ratings(r)))
            for r in (5, 4, 1, 5) + (5, 2, 5) + (1, 5)  # ratings >= 4 are met (0.75)
        ]
    )
    healthbench_project(pytester.path)
    pytester.runpytest(
        "--verial-run",
        "run",
        "--verial-report",
        "report.json",
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub_judge.url,
        "--verial-judge-cache-dir",
        "off",
        "--verial-judge-concurrency",
        "1",
        "-n",
        "0",
        "-p",
        "no:randomly",
    )
    report = json.loads((pytester.path / "report.json").read_text())
    tasks = {t["task_key"]: t for t in report["benchmark_runs"][0]["task_runs"]}
    assert len(stub_judge.requests) == 9
    assert (tasks["hb-chest-pain"]["score"], tasks["hb-chest-pain"]["points_earned"]) == (1.0, 18)
    fever = tasks["hb-toddler-fever"]
    assert (fever["score"], fever["points_earned"], fever["points_possible"]) == (0.0, -4, 13)
    assert fever["penalties_applied"] == ["rubric-3"]
    assert tasks["hb-refill"]["score"] == 1.0
    # the judge saw the conversation and the model's reply
    asked = json.dumps(stub_judge.requests[4])
    assert "My 2 year old has a fever" in asked and "children's aspirin" in asked


def test_calibrate_from_a_report_and_a_labels_file(
    pytester: pytest.Pytester, stub_judge, capsys: pytest.CaptureFixture[str]
) -> None:
    """The second LABELS form: criterion runs named by task_key and criterion_id in a report,
    their principles from the report, their outputs from the run folder."""
    stub_judge.reply((200, completion(ratings(5))))
    healthbench_project(pytester.path)
    judge = [
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub_judge.url,
        "--verial-judge-cache-dir",
        "off",
    ]
    pytester.runpytest("--verial-run", "run", "--verial-report", "r.json", "-n", "0", *judge)
    labels = pytester.path / "labels.jsonl"
    rows = [
        {"task_key": "hb-chest-pain", "criterion_id": "rubric-1", "label": "met"},
        {"task_key": "hb-toddler-fever", "criterion_id": "rubric-2", "label": "not met"},
        {"task_key": "hb-refill", "criterion_id": "rubric-9", "label": "met"},
    ]
    labels.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    stub_judge.reply((200, completion(ratings(5))))
    out = pytester.path / "f.json"
    code = main(
        ["judge", "calibrate", str(labels), "--report", str(pytester.path / "r.json"),
         "--run", str(pytester.path / "run"), "--json", str(out), *judge]
    )  # fmt: skip
    assert code == 1  # the third line names no criterion run: refused
    err = capsys.readouterr().err
    assert f"{labels}:3: no criterion run hb-refill::rubric-9 in the report" in err
    result = json.loads(out.read_text())
    assert (result["n"], result["agreement"], result["refused_lines"]) == (2, 0.5, 1)
    assert result["axes"]["accuracy"]["n"] == 1 and result["axes"]["completeness"]["n"] == 1
    asked = json.dumps(stub_judge.requests[1])
    assert "Lists warning signs that need urgent care" in asked and "children's aspirin" in asked
