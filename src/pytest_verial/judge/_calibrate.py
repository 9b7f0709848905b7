"""``verial judge calibrate LABELS``: how well the configured judge agrees with human labels.

LABELS is JSONL, one labelled criterion run a line (README "Calibrating the judge")::

    {"id": "pa-1", "principles": ["The letter states the medical necessity."],
     "output": "...the agent's output...", "task": "optional task text",
     "label": "met",            # or "not met" / true / false; or "rating": 1-5 (Likert)
     "axis": "accuracy", "tags": ["theme:referrals"], "pass_threshold": 0.75,
     "output_file": "output.md"}   # optional: the file the output was read from

Each item is put to the judge exactly as an ``llm-rubric`` criterion would be (same prompt,
same client, same settings): the prompt names the output as the criterion's does, "the
agent's final output (output.md)", so a labelled criterion run that the scoring session judged
is the same request, and with the judge cache on the same cached reply. Its verdict is met
when the mean of (rating - 1) / 4 reaches the item's ``pass_threshold`` (default
``--threshold``, 0.75: a 4 or 5 of 5), and the verdicts are compared with the human ones:
agreement, Cohen's kappa, macro F1 over met / not met
(HealthBench's measure of its grader against physicians), the confusion matrix, the same per
axis and per tag, replies that could not be parsed (excluded and counted), cost and tokens.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._display import escape
from .._nodeids import criterion_nodeid
from .._scoring import passed
from ..sources._output import OUTPUT_NAMES
from ._reply import rating_score

DEFAULT_THRESHOLD = 0.75


class LabelError(ValueError):
    """A labels line that cannot be used."""


@dataclass(frozen=True)
class Item:
    """One labelled criterion run."""

    id: str
    principles: list[str]
    output: str
    human_met: bool
    task: str | None = None
    axis: str | None = None
    tags: tuple[str, ...] = ()
    threshold: float = DEFAULT_THRESHOLD
    human_rating: int | None = None
    #: the output's file name, which the prompt names as a criterion's prompt does
    output_file: str = "output.md"


@dataclass
class Figures:
    """Agreement figures of one group of items (judge verdicts vs human ones)."""

    n: int = 0
    #: [human][judge] counts, True = met
    matrix: dict[tuple[bool, bool], int] = field(default_factory=dict)

    def add(self, human: bool, judge: bool) -> None:
        self.n += 1
        self.matrix[(human, judge)] = self.matrix.get((human, judge), 0) + 1

    def count(self, human: bool, judge: bool) -> int:
        return self.matrix.get((human, judge), 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "agreement": agreement(self),
            "kappa": kappa(self),
            "macro_f1": macro_f1(self),
            "confusion": {
                "human_met": {
                    "judge_met": self.count(True, True),
                    "judge_not_met": self.count(True, False),
                },
                "human_not_met": {
                    "judge_met": self.count(False, True),
                    "judge_not_met": self.count(False, False),
                },
            },
        }


def agreement(f: Figures) -> float | None:
    """Share of items where the judge's verdict is the human's."""
    if not f.n:
        return None
    return (f.count(True, True) + f.count(False, False)) / f.n


def kappa(f: Figures) -> float | None:
    """Cohen's kappa: (observed - chance agreement) / (1 - chance agreement).

    None when it is undefined: no items, or chance agreement 1 (both raters gave one and the
    same verdict to every item).
    """
    if not f.n:
        return None
    observed = (f.count(True, True) + f.count(False, False)) / f.n
    human_met = (f.count(True, True) + f.count(True, False)) / f.n
    judge_met = (f.count(True, True) + f.count(False, True)) / f.n
    chance = human_met * judge_met + (1 - human_met) * (1 - judge_met)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1 - chance)


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0


def macro_f1(f: Figures) -> float | None:
    """The mean of the F1 of "met" and the F1 of "not met" (each class taken in turn as the
    positive one), over the classes either rater used."""
    if not f.n:
        return None
    scores = []
    for cls in (True, False):
        tp = f.count(cls, cls)
        fp = f.count(not cls, cls)
        fn = f.count(cls, not cls)
        if tp + fp + fn:
            scores.append(_f1(tp, fp, fn))
    return sum(scores) / len(scores)


# -- labels ---------------------------------------------------------------------------------


def _label(data: dict[str, Any], threshold: float) -> tuple[bool, int | None]:
    if "rating" in data:
        rating = data["rating"]
        if isinstance(rating, bool) or not isinstance(rating, int) or not 1 <= rating <= 5:
            raise LabelError("field 'rating': a Likert rating is an integer from 1 to 5")
        return passed(rating_score(rating), threshold), rating
    if "label" not in data:
        raise LabelError("needs 'label' (met / not met) or 'rating' (1-5)")
    label = data["label"]
    if isinstance(label, bool):
        return label, None
    if isinstance(label, str) and label.strip().lower().replace("_", " ") in ("met", "not met"):
        return label.strip().lower() == "met", None
    raise LabelError("field 'label': use met, not met, true or false")


def parse_item(data: Any, line: int, threshold: float) -> Item:
    """One labels line as an :class:`Item`; raises :class:`LabelError`."""
    if not isinstance(data, dict):
        raise LabelError(f"expected a JSON object, found {type(data).__name__}")
    principles = data.get("principles")
    if principles is None and isinstance(data.get("criterion"), str):
        principles = [data["criterion"]]
    if (
        not isinstance(principles, list)
        or not principles
        or not all(isinstance(p, str) and p.strip() for p in principles)
    ):
        raise LabelError("field 'principles': a non-empty list of non-empty strings")
    output = data.get("output")
    if not isinstance(output, str):
        raise LabelError("field 'output': the agent's output, a string")
    own = data.get("pass_threshold", threshold)
    if isinstance(own, bool) or not isinstance(own, (int, float)) or not 0 <= own <= 1:
        raise LabelError("field 'pass_threshold': a number from 0 to 1")
    met, rating = _label(data, float(own))
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise LabelError("field 'tags': a list of strings")
    axis = data.get("axis")
    task = data.get("task")
    output_file = data.get("output_file", "output.md")
    if output_file not in OUTPUT_NAMES:
        raise LabelError("field 'output_file': " + ", ".join(OUTPUT_NAMES) + " or left out")
    return Item(
        id=str(data.get("id") or f"line-{line}"),
        principles=[p.strip() for p in principles],
        output=output,
        human_met=met,
        task=task if isinstance(task, str) else None,
        axis=axis if isinstance(axis, str) else None,
        tags=tuple(tags),
        threshold=float(own),
        human_rating=rating,
        output_file=output_file,
    )


def read_labels(path: Path, threshold: float) -> tuple[list[Item], list[str]]:
    """The usable items of a labels file and one message per refused line."""
    items: list[Item] = []
    problems: list[str] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                problems.append(f"{path}:{number}: not UTF-8 text")
                continue
            if not text.strip():
                continue
            try:
                items.append(parse_item(json.loads(text), number, threshold))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{number}: not a JSON object ({exc.msg})")
            except LabelError as exc:
                problems.append(escape(f"{path}:{number}: {exc}"))
    return items, problems


def _from_report(report: Any, run: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The judge criterion runs of a report by (task_key, criterion_id): principles, axis,
    tags, task text and the output read from the run folder, the task text as the scoring
    session gave it to the judge (``checks._llm_rubric._task_text``)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for bench in report.benchmark_runs:
        for task in bench.task_runs:
            snapshot = task.snapshot or {}
            item = snapshot.get("task_item") or {}
            output = None
            output_file = OUTPUT_NAMES[0]
            for name in OUTPUT_NAMES:
                candidate = run / task.task_key / name
                if candidate.is_file():
                    output = candidate.read_text(encoding="utf-8", errors="replace")
                    output_file = name
                    break
            parts = (
                [str(item[k]) for k in ("instruction", "patient", "trigger") if item.get(k)]
                if isinstance(item, dict)
                else []
            )
            if not parts and task.name:
                parts.append(task.name)
            for c in task.criterion_runs:
                evidence = c.evidence.model_dump() if c.evidence is not None else {}
                principles = evidence.get("principles") or [
                    r.get("principle") for r in evidence.get("rubric_results") or []
                ]
                found[(task.task_key, c.criterion_id)] = {
                    "principles": principles,
                    "output": output,
                    "output_file": output_file,
                    "task": " | ".join(parts) or None,
                    "axis": c.axis,
                    "tags": snapshot.get("tags") or [],
                }
    return found


def read_report_labels(
    path: Path, report: Any, run: Path, threshold: float
) -> tuple[list[Item], list[str]]:
    """Items from a labels file of ``{"task_key", "criterion_id", "label" | "rating"}`` lines,
    the rest read from the report and the run folder; one message per refused line."""
    runs = _from_report(report, run)
    items: list[Item] = []
    problems: list[str] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            text = raw.decode("utf-8", errors="replace")
            if not text.strip():
                continue
            try:
                data = json.loads(text)
                if not isinstance(data, dict):
                    raise LabelError(f"expected a JSON object, found {type(data).__name__}")
                key = (data.get("task_key"), data.get("criterion_id"))
                if not all(isinstance(k, str) for k in key):
                    raise LabelError("needs 'task_key' and 'criterion_id', strings")
                known = runs.get((str(key[0]), str(key[1])))
                name = criterion_nodeid(str(key[0]), str(key[1]))  # task_key::criterion_id
                if known is None:
                    raise LabelError(f"no criterion run {name} in the report")
                if not known["principles"]:
                    raise LabelError(f"{name} is not a judge criterion")
                if known["output"] is None:
                    raise LabelError(
                        f"no output.md, output.txt or output.json in {run / str(key[0])}"
                    )
                merged = {**known, **{k: v for k, v in data.items() if k in ("label", "rating")}}
                merged["id"] = name
                if "pass_threshold" in data:
                    merged["pass_threshold"] = data["pass_threshold"]
                items.append(parse_item(merged, number, threshold))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{number}: not a JSON object ({exc.msg})")
            except LabelError as exc:
                problems.append(escape(f"{path}:{number}: {exc}"))
    return items, problems


# -- asking the judge -----------------------------------------------------------------------


@dataclass
class Asked:
    """The judge's answer on one item: its verdict, or why there is none."""

    item: Item
    judge_met: bool | None
    score: float | None = None
    unparseable: bool = False
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    calls: int = 0


def ask(client: Any, item: Item, limit: int) -> Asked:
    """Rate one item as an ``llm-rubric`` criterion would be rated."""
    from ._client import JudgeError
    from ._prompt import build_messages

    messages = build_messages(
        item.principles,
        item.output,
        task=item.task,
        target=f"the agent's final output ({item.output_file})",
        limit=limit,
    )
    try:
        judgement = client.rate(item.principles, messages)
    except JudgeError as exc:
        text = str(exc)
        return Asked(
            item,
            None,
            unparseable="malformed reply" in text or "not a chat completion" in text,
            error=text,
            prompt_tokens=exc.tokens[0],
            completion_tokens=exc.tokens[1],
            cost=exc.cost,
            calls=exc.calls,
        )
    score = judgement.ratings.score
    return Asked(
        item,
        passed(score, item.threshold),
        score,
        prompt_tokens=judgement.prompt_tokens,
        completion_tokens=judgement.completion_tokens,
        cost=judgement.cost,
        calls=judgement.calls,
    )


def figures(asked: Sequence[Asked]) -> dict[str, Any]:
    """Overall, per-axis and per-tag figures of the answered items, with counts and cost."""
    overall = Figures()
    by_axis: dict[str, Figures] = {}
    by_tag: dict[str, Figures] = {}
    for a in asked:
        if a.judge_met is None:
            continue
        overall.add(a.item.human_met, a.judge_met)
        by_axis.setdefault(a.item.axis or "__default__", Figures()).add(
            a.item.human_met, a.judge_met
        )
        for tag in a.item.tags:
            by_tag.setdefault(tag, Figures()).add(a.item.human_met, a.judge_met)
    return {
        "items": len(asked),
        **overall.to_json(),
        "unparseable": sum(1 for a in asked if a.unparseable),
        "errors": sum(1 for a in asked if a.judge_met is None and not a.unparseable),
        "axes": {name: f.to_json() for name, f in sorted(by_axis.items())},
        "tags": {name: f.to_json() for name, f in sorted(by_tag.items())},
        "calls": sum(a.calls for a in asked),
        "tokens": {
            "prompt": sum(a.prompt_tokens for a in asked),
            "completion": sum(a.completion_tokens for a in asked),
        },
        "cost": round(sum(a.cost for a in asked), 6),
    }


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def summary(result: dict[str, Any]) -> list[str]:
    """The figures as terminal lines."""
    c = result["confusion"]
    lines = [
        f"judge {result['judge']['model']}: {result['n']} of {result['items']} items judged "
        f"({result['unparseable']} unparseable, {result['errors']} errors: excluded)",
        f"agreement {_fmt(result['agreement'])}  kappa {_fmt(result['kappa'])}  "
        f"macro F1 {_fmt(result['macro_f1'])}",
        "confusion (rows human, columns judge):   met  not met",
        f"  met      {c['human_met']['judge_met']:>27}  {c['human_met']['judge_not_met']:>7}",
        f"  not met  {c['human_not_met']['judge_met']:>27}  "
        f"{c['human_not_met']['judge_not_met']:>7}",
    ]
    for kind in ("axes", "tags"):
        for name, f in result[kind].items():
            lines.append(
                f"{kind[:-1] if kind == 'tags' else 'axis'} {name}: n {f['n']}, agreement "
                f"{_fmt(f['agreement'])}, kappa {_fmt(f['kappa'])}, macro F1 {_fmt(f['macro_f1'])}"
            )
    for kind, p in (result.get("perturbations") or {}).items():
        lines.append(
            f"perturbation {kind}: flip rate {_fmt(p['flip_rate'])} ({p['flips']} of "
            f"{p['compared']} verdicts changed; {p['not_applicable']} not applicable, "
            f"{p['unusable']} unusable replies)"
        )
    tokens = result["tokens"]
    lines.append(
        f"{result['calls']} call(s), {tokens['prompt']} prompt + {tokens['completion']} "
        f"completion tokens, cost ${result['cost']:.4f}"
    )
    return [escape(line) for line in lines]


def calibrate(items: Iterable[Item], client: Any, limit: int) -> list[Asked]:
    """Ask the judge about every item, in order."""
    return [ask(client, item, limit) for item in items]


# -- perturbations (--perturb): is the judge stable? ------------------------------------------

#: irrelevant text appended to the output: a verbose answer should not rate higher
PADDING = (
    "\n\nAdditional context: this response was prepared carefully and thoroughly. It is "
    "important to always consult appropriate resources, to keep records up to date, and to "
    "communicate clearly with everyone involved. Thank you for your attention to this matter; "
    "please do not hesitate to reach out with any further questions or concerns.\n"
)
PERTURBATIONS = ("rubric_order", "padding", "section_order")


def shuffled_rubric(principles: Sequence[str], seed: int) -> list[str] | None:
    """The principles in another order (a rotation when shuffling gives the same one); None
    for a single principle (nothing to reorder)."""
    import random

    if len(principles) < 2:
        return None
    order = list(principles)
    random.Random(seed).shuffle(order)
    if order == list(principles):
        order = order[1:] + order[:1]
    return order


def padded(output: str) -> str:
    """The output with :data:`PADDING` appended."""
    return output.rstrip("\n") + PADDING


def sections(output: str) -> list[str]:
    """The output's sections: markdown headings start one; without headings, paragraphs
    (blank-line separated); a single paragraph's lines; a single line is one section."""
    lines = output.strip("\n").split("\n")
    if any(line.startswith("#") for line in lines[1:]):
        parts: list[list[str]] = []
        for line in lines:
            if line.startswith("#") or not parts:
                parts.append([])
            parts[-1].append(line)
        return ["\n".join(p).strip("\n") for p in parts if "\n".join(p).strip()]
    paragraphs = [p.strip("\n") for p in output.strip("\n").split("\n\n") if p.strip()]
    if len(paragraphs) > 1:
        return paragraphs
    return [line for line in lines if line.strip()]


def reordered(output: str) -> str | None:
    """The output's sections in reverse order; None when it has one section."""
    parts = sections(output)
    if len(parts) < 2:
        return None
    joiner = "\n\n" if "\n\n" in output.strip("\n") or output.lstrip().startswith("#") else "\n"
    return joiner.join(reversed(parts)) + "\n"


def perturbed(item: Item, kind: str, seed: int = 0) -> Item | None:
    """``item`` under one perturbation, or None when it does not apply to the item."""
    from dataclasses import replace

    if kind == "rubric_order":
        order = shuffled_rubric(item.principles, seed)
        return None if order is None else replace(item, principles=order)
    if kind == "padding":
        return replace(item, output=padded(item.output))
    if kind == "section_order":
        text = reordered(item.output)
        return None if text is None else replace(item, output=text)
    raise ValueError(kind)


def flip_rates(
    base: Sequence[Asked], client: Any, limit: int, seed: int = 0
) -> tuple[dict[str, Any], list[Asked]]:
    """Re-ask each item under each perturbation; a flip is a met verdict that changed. Items
    whose base or perturbed reply is unusable, and items a perturbation does not apply to, are
    left out (and counted)."""
    result: dict[str, Any] = {}
    asked_all: list[Asked] = []
    for kind in PERTURBATIONS:
        compared = flips = not_applicable = unusable = 0
        for a in base:
            item = perturbed(a.item, kind, seed)
            if item is None:
                not_applicable += 1
                continue
            again = ask(client, item, limit)
            asked_all.append(again)
            if a.judge_met is None or again.judge_met is None:
                unusable += 1
                continue
            compared += 1
            flips += again.judge_met != a.judge_met
        result[kind] = {
            "compared": compared,
            "flips": flips,
            "flip_rate": flips / compared if compared else None,
            "not_applicable": not_applicable,
            "unusable": unusable,
        }
    return result, asked_all
