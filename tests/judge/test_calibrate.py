"""``verial judge calibrate`` (issue 22 item 3): figures against values computed by hand,
the command with the stub judge (unparseable replies, gates, JSON), and the real local model
server for the wire."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from judge_support import completion, healthbench_project, ratings
from local_model import MODEL_ALIAS

from pytest_verial.cli import main

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.judge._calibrate import Figures, agreement, kappa, macro_f1

#: the CPU-bound tests run one after another on one xdist worker (scripts/test runs
#: --dist loadgroup): two local model servers, or one beside the kill -9 load, starve each other
pytestmark = pytest.mark.xdist_group("cpu-heavy")

EXAMPLE_LABELS = Path(__file__).resolve().parents[2] / "example_benchmarks/healthbench/labels.jsonl"


def _figures(human: list[bool], judge: list[bool]) -> Figures:
    f = Figures()
    for h, j in zip(human, judge, strict=True):
        f.add(h, j)
    return f


HUMAN = [True, True, False, False]


@pytest.mark.parametrize(
    ("judge", "expected"),
    [
        # perfect: po 1, chance 0.5 -> kappa 1; F1 of each class 1
        ([True, True, False, False], (1.0, 1.0, 1.0)),
        # inverted: po 0, chance 0.5 -> kappa -1; F1 of each class 0
        ([False, False, True, True], (0.0, -1.0, 0.0)),
        # chance level: po 0.5, chance 0.5 -> kappa 0; F1 met 2/4, not met 2/4
        ([True, False, True, False], (0.5, 0.0, 0.5)),
    ],
)
def test_perfect_inverted_and_chance_level_judges(
    judge: list[bool], expected: tuple[float, float, float]
) -> None:
    f = _figures(HUMAN, judge)
    assert (agreement(f), kappa(f), macro_f1(f)) == pytest.approx(expected)


def test_skewed_labels_by_hand() -> None:
    # human met met met not; judge met met not not
    # po 3/4; human met 3/4, judge met 1/2: chance 3/8 + 1/8 = 1/2 -> kappa 1/2
    # F1 met: tp 2 fp 0 fn 1 -> 4/5; F1 not met: tp 1 fp 1 fn 0 -> 2/3
    f = _figures([True, True, True, False], [True, True, False, False])
    assert agreement(f) == pytest.approx(0.75)
    assert kappa(f) == pytest.approx(0.5)
    assert macro_f1(f) == pytest.approx((4 / 5 + 2 / 3) / 2)


def test_kappa_is_undefined_when_both_raters_say_one_thing() -> None:
    f = _figures([True, True], [True, True])
    assert (agreement(f), kappa(f), macro_f1(f)) == (1.0, None, 1.0)
    assert (agreement(Figures()), kappa(Figures()), macro_f1(Figures())) == (None, None, None)


def _labels(path: Path, rows: list[dict[str, object] | str]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


ROWS: list[dict[str, object] | str] = [
    {"id": "a", "principles": ["Names the CPT code."], "output": "CPT 72148", "label": "met",
     "axis": "accuracy", "tags": ["t1"]},
    {"id": "b", "criterion": "Is polite.", "output": "Thanks!", "label": True, "axis": "tone"},
    {"id": "c", "principles": ["Recommends aspirin."], "output": "No aspirin.", "rating": 2,
     "axis": "accuracy", "tags": ["t1"]},
    {"id": "d", "principles": ["Is short."], "output": "ok", "label": "not met"},
    {"id": "e", "principles": ["Is kind."], "output": "...", "label": "met"},
]  # fmt: skip
#: judge ratings for a..e; e's reply is not JSON: unparseable, excluded
REPLIES = [
    (200, completion(ratings(5))),
    (200, completion(ratings(4))),
    (200, completion(ratings(5))),
    (200, completion(ratings(1))),
    (200, completion("I think it is fine.")),
]


def _cli(stub_url: str, labels: Path, *extra: str) -> int:
    return main(
        [
            "judge",
            "calibrate",
            str(labels),
            "--verial-judge-model",
            "gpt-4o-mini",
            "--verial-judge-base-url",
            stub_url,
            "--verial-judge-cache-dir",
            "off",
            "--verial-judge-retries",
            "0",
            *extra,
        ]
    )


def test_calibrate_with_scripted_replies(
    tmp_path: Path, stub_judge, capsys: pytest.CaptureFixture[str]
) -> None:
    stub_judge.reply(*REPLIES)
    labels = _labels(tmp_path / "labels.jsonl", ROWS)
    out = tmp_path / "figures.json"
    assert _cli(stub_judge.url, labels, "--json", str(out)) == 0
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    # a: met/met, b: met/met, c: not (rating 2 -> 0.25)/met, d: not/not -> as in the skewed
    # case transposed: po 3/4, human met 1/2, judge met 3/4 -> chance 1/2, kappa 1/2
    assert (result["n"], result["items"], result["unparseable"], result["errors"]) == (4, 5, 1, 0)
    assert result["agreement"] == pytest.approx(0.75)
    assert result["kappa"] == pytest.approx(0.5)
    assert result["macro_f1"] == pytest.approx((4 / 5 + 2 / 3) / 2)
    assert result["confusion"] == {
        "human_met": {"judge_met": 2, "judge_not_met": 0},
        "human_not_met": {"judge_met": 1, "judge_not_met": 1},
    }
    # accuracy: a met/met, c not/met -> agreement 1/2; tone: b only
    assert result["axes"]["accuracy"]["agreement"] == pytest.approx(0.5)
    assert result["axes"]["tone"]["n"] == 1
    assert result["tags"]["t1"]["n"] == 2
    # every call counts, the unparseable one included: 5 x (900 + 120) tokens
    assert result["calls"] == 5
    assert result["tokens"] == {"prompt": 4500, "completion": 600}
    assert result["cost"] == pytest.approx(5 * (900 * 0.15 + 120 * 0.60) / 1e6)
    assert "agreement 0.750  kappa 0.500  macro F1 0.733" in printed
    assert "4 of 5 items judged (1 unparseable, 0 errors: excluded)" in printed
    # the judge saw the item as an llm-rubric criterion: principle and quoted output
    assert "Names the CPT code." in json.dumps(stub_judge.requests[0])


def test_gates_exit_one_below_the_floor(
    tmp_path: Path, stub_judge, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = _labels(tmp_path / "labels.jsonl", ROWS)
    stub_judge.reply(*REPLIES)
    assert _cli(stub_judge.url, labels, "--min-kappa", "0.6") == 1
    assert "gate failed: kappa 0.500 is below 0.6" in capsys.readouterr().err
    stub_judge.reply(*REPLIES)
    assert _cli(stub_judge.url, labels, "--min-kappa", "0.5", "--min-f1", "0.7") == 0


def test_bad_label_lines_are_refused_naming_line_and_field(
    tmp_path: Path, stub_judge, capsys: pytest.CaptureFixture[str]
) -> None:
    stub_judge.reply((200, completion(ratings(5))))
    rows: list[dict[str, object] | str] = [
        ROWS[0],
        "{not json",
        {"principles": ["x"], "output": "y"},
        {"principles": ["x"], "output": "y", "rating": 7},
        {"principles": [], "output": "y", "label": "met"},
        {"principles": ["x"], "output": 3, "label": "met"},
        {"principles": ["x"], "output": "y", "label": "maybe"},
    ]
    labels = _labels(tmp_path / "labels.jsonl", rows)
    assert _cli(stub_judge.url, labels) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"verial judge calibrate: {labels}:2: not a JSON object (Expecting property name "
        "enclosed in double quotes)",
        f"verial judge calibrate: {labels}:3: needs 'label' (met / not met) or 'rating' (1-5)",
        f"verial judge calibrate: {labels}:4: field 'rating': a Likert rating is an integer "
        "from 1 to 5",
        f"verial judge calibrate: {labels}:5: field 'principles': a non-empty list of "
        "non-empty strings",
        f"verial judge calibrate: {labels}:6: field 'output': the agent's output, a string",
        f"verial judge calibrate: {labels}:7: field 'label': use met, not met, true or false",
    ]


def test_no_judge_model_is_one_line_and_status_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = _labels(tmp_path / "labels.jsonl", ROWS)
    assert main(["judge", "calibrate", str(labels)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no judge model" in err


# -- the wire: the real local model server (llama.cpp + SmolLM2-135M, conftest.py) -----------


def _local(base: str, tmp_path: Path, labels: Path, *extra: str) -> dict[str, object]:
    out = tmp_path / "figures.json"
    code = main(
        [
            "judge",
            "calibrate",
            str(labels),
            "--verial-judge-model",
            MODEL_ALIAS,
            "--verial-judge-base-url",
            base,
            "--verial-judge-cache-dir",
            "off",
            "--json",
            str(out),
            *extra,
        ]
    )
    assert code == 0
    result: dict[str, object] = json.loads(out.read_text())
    return result


# -- --perturb: the prompts each perturbation produces, and flip rates on scripted replies ----


def test_each_perturbation_produces_the_stated_prompt() -> None:
    # private: internals with no public face (issue 32: a test is not a user)
    from pytest_verial.judge._calibrate import PADDING, Item, perturbed
    from pytest_verial.judge._prompt import build_messages

    output = "# Summary\nLow back pain.\n\n# Plan\nMRI, CPT 72148.\n"
    item = Item("x", ["First principle.", "Second principle.", "Third."], output, True)
    rubric = perturbed(item, "rubric_order", seed=0)
    assert rubric is not None and sorted(rubric.principles) == sorted(item.principles)
    assert rubric.principles != item.principles and rubric.output == output
    text = build_messages(rubric.principles, rubric.output)[1]["content"]
    assert "\n".join(f"{i}. {p}" for i, p in enumerate(rubric.principles, 1)) in text
    padding = perturbed(item, "padding")
    assert padding is not None and padding.output == output.rstrip("\n") + PADDING
    assert PADDING.strip() in build_messages(padding.principles, padding.output)[1]["content"]
    sections = perturbed(item, "section_order")
    assert sections is not None
    assert sections.output == "# Plan\nMRI, CPT 72148.\n\n# Summary\nLow back pain.\n"
    # paragraphs are sections when there are no headings; one paragraph: not applicable
    plain = Item("y", ["Only one."], "First.\n\nSecond.", True)
    assert perturbed(plain, "section_order").output == "Second.\n\nFirst.\n"  # type: ignore[union-attr]
    assert perturbed(plain, "rubric_order") is None
    assert perturbed(Item("z", ["p"], "one line", True), "section_order") is None
    lines = perturbed(Item("w", ["p"], "Call 911.\nChew aspirin.\n", True), "section_order")
    assert lines is not None and lines.output == "Chew aspirin.\nCall 911.\n"


def test_flip_rates_on_scripted_replies(
    tmp_path: Path, stub_judge, capsys: pytest.CaptureFixture[str]
) -> None:
    rows: list[dict[str, object] | str] = [
        {"id": "a", "principles": ["P1.", "P2."], "output": "One.\n\nTwo.", "label": "met"},
        {"id": "b", "principles": ["Q."], "output": "Three.\n\nFour.", "label": "not met"},
    ]
    labels = _labels(tmp_path / "labels.jsonl", rows)
    # base: a met (5, 5), b not met (1)
    # rubric_order: a only (b has one principle) -> still met: 0 flips of 1
    # padding: a flips to not met (1, 1), b flips to met (5) -> 2 of 2
    # section_order: a met, b unparseable -> 0 of 1, 1 unusable
    stub_judge.reply(
        (200, completion(ratings(5, 5))),
        (200, completion(ratings(1))),
        (200, completion(ratings(5, 5))),
        (200, completion(ratings(1, 1))),
        (200, completion(ratings(5))),
        (200, completion(ratings(5, 5))),
        (200, completion("no ratings here")),
    )
    out = tmp_path / "f.json"
    assert _cli(stub_judge.url, labels, "--perturb", "--json", str(out)) == 0
    result = json.loads(out.read_text())
    assert result["perturbations"] == {
        "rubric_order": {
            "compared": 1, "flips": 0, "flip_rate": 0.0, "not_applicable": 1, "unusable": 0
        },
        "padding": {
            "compared": 2, "flips": 2, "flip_rate": 1.0, "not_applicable": 0, "unusable": 0
        },
        "section_order": {
            "compared": 1, "flips": 0, "flip_rate": 0.0, "not_applicable": 0, "unusable": 1
        },
    }  # fmt: skip
    assert result["calls"] == 7 and len(stub_judge.requests) == 7
    assert result["n"] == 2 and result["agreement"] == 1.0  # the base figures only
    assert "perturbation padding: flip rate 1.000 (2 of 2 verdicts changed" in (
        capsys.readouterr().out
    )


def test_readme_flow_on_the_local_model(
    llama_server: str, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """README "HealthBench rubrics" then "Calibrating the judge", end to end on the local model:
    convert the example file, score its captured run by points, calibrate (its figures checked
    against the items). The README command's ``--perturb`` pass is
    test_flip_rates_on_scripted_replies: on the local model each re-ask is another whole
    prompt on two cores (20 more calls). The judge cache is on, as the README's commands have
    it: the 9 labelled criterion runs the scoring step judged are the same requests to
    calibrate (test_calibration_asks_what_the_scoring_session_asked), so their verdicts are the
    scoring step's, and the 3 whole-reply items go to the model."""
    healthbench_project(pytester.path)
    judge = [
        "--verial-judge-model",
        MODEL_ALIAS,
        "--verial-judge-base-url",
        llama_server,
        "--verial-judge-cache-dir",
        str(pytester.path / "judge-cache"),
        "--verial-judge-response-format",
        "json_object_schema",
    ]
    pytester.runpytest(
        "hb.verial.yaml", "--verial-run", "run", "--verial-report", "r.json", "-n", "0", *judge
    )
    report = json.loads((pytester.path / "r.json").read_text())
    tasks = report["benchmark_runs"][0]["task_runs"]
    assert len(tasks) == 3
    for t in tasks:  # whatever the tiny model rated, the points arithmetic holds
        runs = t["criterion_runs"]
        assert t["points_possible"] == sum(c["points"] for c in runs if c["points"] > 0)
        counted = [c for c in runs if c["status"] in ("passed", "failed", "error", "gated")]
        assert t["points_earned"] == sum(c["points"] for c in counted if c["met"])
        assert t["score"] == pytest.approx(
            min(1.0, max(0.0, t["points_earned"] / t["points_possible"]))
        )
    out = pytester.path / "figures.json"
    code = main(["judge", "calibrate", str(EXAMPLE_LABELS), "--json", str(out), *judge])
    assert code == 0
    result = json.loads(out.read_text())
    # the figures of the 12 items (the tiny model's say nothing of judging quality: the wire
    # and the arithmetic)
    assert result["items"] == 12
    assert result["n"] + result["unparseable"] + result["errors"] == 12
    assert result["errors"] == 0 and result["n"] > 0
    assert result["tokens"]["prompt"] > 12 * 100 and result["tokens"]["completion"] > 0
    judged = [p for p in result["per_item"] if p["judge_met"] is not None]
    agree = sum(p["judge_met"] == p["human_met"] for p in judged) / len(judged)
    assert result["agreement"] == pytest.approx(agree)
    assert f"judge {MODEL_ALIAS}: " in capsys.readouterr().out
    # a criterion the scoring step judged has the scoring step's verdict (its cached reply)
    scored = {
        f"{t['task_key']}/{c['criterion_id']}": c["score"]
        for t in tasks
        for c in t["criterion_runs"]
        if c["status"] in ("passed", "failed")
    }
    reused = {p["id"]: p["judge_score"] for p in result["per_item"] if p["id"] in scored}
    assert reused and reused == {k: scored[k] for k in reused}


def test_local_model_unparseable_replies_are_counted_and_excluded(
    llama_server: str, tmp_path: Path
) -> None:
    """A 3-token cap cuts every reply short of a rating: all unparseable, no figures. The
    items are the example's 3 whole-reply ones, which the README flow above has asked the
    same model in the same words: the model server evaluated their prompts then and keeps
    them (llama.cpp's prompt cache), so here each call costs its 3 tokens of reply rather
    than a whole prompt (~180-580 tokens, 5-20 s of CPU here)."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(EXAMPLE_LABELS.read_text().splitlines(keepends=True)[-3:]))
    result = _local(
        llama_server,
        tmp_path,
        labels,
        "--verial-judge-response-format",
        "none",
        "--verial-judge-retries",
        "0",
        "--verial-judge-max-tokens",
        "3",
    )
    assert (result["items"], result["unparseable"], result["n"]) == (3, 3, 0)
    assert (result["agreement"], result["kappa"], result["macro_f1"]) == (None, None, None)
    assert result["calls"] == 3  # the unparseable replies were asked for, and cost tokens
    assert result["tokens"]["completion"] > 0  # type: ignore[index]


def test_calibration_asks_what_the_scoring_session_asked(
    stub_judge, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    """Calibrate puts a labelled criterion run to the judge exactly as the scoring session did
    (README "Calibrating the judge"): the same request, so with the judge cache on its reply is
    the cached one. The example labels hold the 9 criterion runs of the example run (and 3
    whole-reply items scoring never asks): in the labels' own form 3 requests are new, in the
    report form none. Calibrate used to tell the judge it evaluated "the agent's final output"
    where every criterion's prompt says "the agent's final output (output.md)": it measured a
    prompt that scoring never sends."""
    import re

    def respond(request: dict[str, object]) -> tuple[int, bytes]:
        count = int(re.findall(r"Rubric \((\d+) principles\)", json.dumps(request))[0])
        return 200, completion(ratings(*[5] * count))

    stub_judge.respond = respond
    healthbench_project(pytester.path)
    judge = [
        "--verial-judge-model",
        "gpt-4o-mini",
        "--verial-judge-base-url",
        stub_judge.url,
        "--verial-judge-cache-dir",
        str(pytester.path / "cache"),
    ]
    pytester.runpytest("hb.verial.yaml", "--verial-run", "run", "--verial-report", "r.json", *judge)
    assert len(stub_judge.requests) == 9  # the example run's 9 judged criteria
    assert "the agent's final output (output.md)" in json.dumps(stub_judge.requests[0])

    stub_judge.requests.clear()
    out = pytester.path / "figures.json"
    assert main(["judge", "calibrate", str(EXAMPLE_LABELS), "--json", str(out), *judge]) == 0
    result = json.loads(out.read_text())
    assert result["n"] == 12
    assert len(stub_judge.requests) == 3  # the 3 whole-reply items only
    assert all("Rubric (1 principles)" not in json.dumps(r) for r in stub_judge.requests)
    assert result["calls"] == 3

    stub_judge.requests.clear()
    labels = pytester.path / "runs.jsonl"
    rows = [json.loads(line) for line in EXAMPLE_LABELS.read_text().splitlines()]
    _labels(
        labels,
        [
            {"task_key": r["id"].split("/")[0], "criterion_id": r["id"].split("/")[1],
             "label": r["label"]}
            for r in rows
            if "rubric-" in r["id"]
        ],
    )  # fmt: skip
    report = ["--report", str(pytester.path / "r.json"), "--run", str(pytester.path / "run")]
    assert main(["judge", "calibrate", str(labels), "--json", str(out), *report, *judge]) == 0
    assert json.loads(out.read_text())["n"] == 9
    assert stub_judge.requests == []  # all 9 were the scoring session's requests
    capsys.readouterr()


def test_the_output_file_is_named_to_the_judge_as_a_criterion_names_it(
    tmp_path: Path, stub_judge, capsys: pytest.CaptureFixture[str]
) -> None:
    stub_judge.reply((200, completion(ratings(5))))
    row = {"principles": ["Is short."], "output": "ok", "label": "met"}
    labels = _labels(
        tmp_path / "labels.jsonl",
        [row, {**row, "output_file": "output.txt"}, {**row, "output_file": "notes.md"}],
    )
    assert _cli(stub_judge.url, labels) == 1  # a refused line
    told = [json.dumps(r) for r in stub_judge.requests]
    assert len(told) == 2
    assert "What is evaluated: the agent's final output (output.md)." in told[0]
    assert "What is evaluated: the agent's final output (output.txt)." in told[1]
    assert capsys.readouterr().err == (
        f"verial judge calibrate: {labels}:3: field 'output_file': output.md, output.txt, "
        "output.json or left out\n"
    )
