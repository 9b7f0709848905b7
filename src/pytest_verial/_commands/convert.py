"""``verial convert healthbench FILE.jsonl -o BENCH.verial.yaml``: HealthBench-style examples
into a benchmark scored by points (README "HealthBench rubrics").

One JSON object a line, as HealthBench publishes them::

    {"prompt_id": "...", "prompt": [{"role": "user", "content": "..."}, ...],
     "rubrics": [{"criterion": "...", "points": 5, "tags": ["axis:accuracy", ...]}, ...],
     "example_tags": ["theme:emergency_referrals", ...]}

Each example becomes a task (id: ``prompt_id``, else ``example-<line>``) whose ``task_item``
holds the conversation, and each rubric item a judged criterion (``llm-rubric`` with the item as
its one principle) with its points: negative items are penalties. An ``axis:<name>`` tag gives
the criterion's axis; ``example_tags`` become task tags (pytest markers, ``:`` and other
characters a marker cannot hold written ``_``). The model's reply is read from the run folder
like any output: ``<run>/<task id>/output.md``.

A line that is not a usable example is refused with one line naming it (and its field); the
other lines are still converted, and the exit status is 1 when any line was refused.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from .._display import escape, unsafe_id_char

#: roles of a conversation turn
ROLES = ("system", "developer", "user", "assistant")
#: the rating from which a HealthBench criterion counts as met: 4 or 5 of 5 ((4 - 1) / 4)
MET_THRESHOLD = 0.75


class LineError(ValueError):
    """One refused line: the field concerned and why."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


def marker_name(tag: str) -> str:
    """A tag as a pytest marker name: letters, digits, ``_`` and ``-`` (others become ``_``)."""
    name = re.sub(r"[^\w\-]", "_", tag.strip())
    return name if re.match(r"[A-Za-z]", name) else f"tag_{name}"


def _points(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LineError(where, f"points must be a non-zero integer, found {type(value).__name__}")
    if isinstance(value, float) and not value.is_integer():
        raise LineError(where, f"points must be a non-zero integer, found {value!r}")
    if value == 0:
        raise LineError(where, "points must be a non-zero integer, found 0")
    return int(value)


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        found = "an empty string" if isinstance(value, str) else type(value).__name__
        raise LineError(where, f"expected non-empty text, found {found}")
    return value


def _tags(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise LineError(where, "expected a list of strings")
    return [t for t in value if t.strip()]


def _conversation(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list) or not value:
        raise LineError("prompt", "expected a non-empty list of {role, content} turns")
    turns = []
    for i, turn in enumerate(value):
        if not isinstance(turn, dict):
            raise LineError(f"prompt[{i}]", "expected an object with role and content")
        role = turn.get("role")
        if role not in ROLES:
            raise LineError(f"prompt[{i}].role", f"expected one of {', '.join(ROLES)}")
        turns.append({"role": str(role), "content": _text(turn.get("content"), f"prompt[{i}]")})
    return turns


def _criterion(item: Any, i: int) -> dict[str, Any]:
    where = f"rubrics[{i}]"
    if not isinstance(item, dict):
        raise LineError(where, "expected an object with criterion, points and tags")
    text = _text(item.get("criterion"), f"{where}.criterion").strip()
    if "points" not in item:
        raise LineError(f"{where}.points", "required field is missing")
    points = _points(item["points"], f"{where}.points")
    tags = _tags(item.get("tags"), f"{where}.tags")
    crit: dict[str, Any] = {"id": f"rubric-{i + 1}", "label": text, "points": points}
    axes = [t.split(":", 1)[1].strip() for t in tags if t.startswith("axis:")]
    if axes and axes[0]:
        crit["axis"] = axes[0]
    crit["assertion"] = {
        "assert": "llm-rubric",
        "principles": [text],
        "pass_threshold": MET_THRESHOLD,
    }
    return crit


def example_to_task(data: Any, line: int) -> dict[str, Any]:
    """One HealthBench example as a task; raises :class:`LineError`."""
    if not isinstance(data, dict):
        raise LineError(None, f"expected a JSON object, found {type(data).__name__}")
    task_id = data.get("prompt_id", f"example-{line}")
    if not isinstance(task_id, str) or not task_id.strip():
        raise LineError("prompt_id", "expected non-empty text")
    if task_id.strip() in (".", "..") or (why := unsafe_id_char(task_id)) is not None:
        raise LineError("prompt_id", f"a task id {why or 'cannot be . or ..'}")
    turns = _conversation(data.get("prompt"))
    rubrics = data.get("rubrics")
    if not isinstance(rubrics, list) or not rubrics:
        raise LineError("rubrics", "expected a non-empty list of rubric items")
    criteria = [_criterion(item, i) for i, item in enumerate(rubrics)]
    last_user = next((t["content"] for t in reversed(turns) if t["role"] == "user"), "")
    task: dict[str, Any] = {"id": task_id}
    name = " ".join(last_user.split())
    if name:
        task["name"] = name if len(name) <= 80 else name[:77] + "..."
    task["task_item"] = {
        "instruction": "\n\n".join(f"{t['role']}: {t['content']}" for t in turns),
        "conversation": turns,
    }
    tags = [marker_name(t) for t in _tags(data.get("example_tags"), "example_tags")]
    if tags:
        task["tags"] = list(dict.fromkeys(tags))
    task["criteria"] = criteria
    return task


def convert(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The benchmark of a JSONL file's good lines, and one message per refused line."""
    tasks: list[dict[str, Any]] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                problems.append(f"{where}: not UTF-8 text (invalid byte at offset {exc.start})")
                continue
            if not text.strip():
                continue
            try:
                data = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as exc:
                message = getattr(exc, "msg", "nested too deeply")
                problems.append(f"{where}: not a JSON object ({message})")
                continue
            try:
                task = example_to_task(data, number)
            except LineError as exc:
                field = f" field '{exc.field}':" if exc.field else ""
                problems.append(escape(f"{where}:{field} {exc}"))
                continue
            if task["id"] in seen:
                problems.append(
                    escape(
                        f"{where}: field 'prompt_id': {task['id']!r} is also on line "
                        f"{seen[task['id']]} (task ids are unique)"
                    )
                )
                continue
            seen[task["id"]] = number
            tasks.append(task)
    slug = re.sub(r"[^a-z0-9]+", "-", path.name.split(".")[0].lower()).strip("-") or "healthbench"
    benchmark = {
        "benchmark": slug,
        "name": f"HealthBench-style rubrics from {path.name}",
        "tasks": tasks,
    }
    return benchmark, problems


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``verial convert``."""
    parser.add_argument("format", choices=["healthbench"], help="the input format")
    parser.add_argument("file", help="a JSONL file of HealthBench-style examples")
    parser.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="the benchmark file to write"
    )


def run(args: argparse.Namespace) -> int:
    """Convert; 0 when every line converted, 1 when any was refused, 2 on a usage error."""
    from ..reporting._json_report import write_atomic

    source, output = Path(args.file), Path(args.output)
    if not source.is_file():
        print(f"verial convert: {args.file}: not a readable file", file=sys.stderr)
        return 2
    if output.exists() and output.resolve() == source.resolve():
        print(
            f"verial convert: {args.output} is the input file: refusing to overwrite it",
            file=sys.stderr,
        )
        return 2
    if output.is_dir():
        print(f"verial convert: {args.output} is a directory, not a file", file=sys.stderr)
        return 2
    if not output.name.endswith((".verial.yaml", ".verial.yml")):
        print(
            f"verial convert: {args.output}: name it *.verial.yaml so pytest collects it",
            file=sys.stderr,
        )
        return 2
    try:
        benchmark, problems = convert(source)
    except OSError as exc:
        print(f"verial convert: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"verial convert: {problem}", file=sys.stderr)
    tasks = benchmark["tasks"]
    if not tasks:
        print(f"verial convert: no example of {args.file} could be converted", file=sys.stderr)
        return 1
    header = (
        f"# Converted by `verial convert healthbench {source.name}`: one task per example, one\n"
        "# judged criterion per rubric item (negative points: a penalty). The model's reply\n"
        "# is read from <run>/<task id>/output.md.\n"
    )
    text = header + yaml.safe_dump(benchmark, sort_keys=False, allow_unicode=True, width=100)
    try:
        write_atomic(output, text)
    except OSError as exc:
        print(f"verial convert: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    criteria = sum(len(t["criteria"]) for t in tasks)
    print(
        f"converted {len(tasks)} example(s), {criteria} criteria, to {args.output}"
        + (f"; {len(problems)} line(s) refused" if problems else ""),
        file=sys.stderr,
    )
    return 1 if problems else 0
