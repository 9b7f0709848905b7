"""``llm-rubric``: principles the output must satisfy, each rated 1-5 by an LLM judge.

::

    assert: llm-rubric
    principles:
      - The letter states the medical necessity of the lumbar MRI with the failed conservative
        therapy and its duration.
      - The letter does not invent clinical findings absent from the chart.
    target: output            # output (default) | voice | file (with path: relative to sandbox)
    pass_threshold: 0.75      # optional

Score = mean over principles of (rating - 1) / 4. ``passed`` = score >= the threshold: the
assertion's ``pass_threshold``, else the criterion's threshold as the engine resolves it for a
judge criterion (criterion > task > benchmark > ini/CLI > 0.9).

Before calling the judge the check applies the bypass rules and the deterministic-first gate
(:mod:`pytest_verial.judge._gating`): a bypassed criterion is ``skipped`` (left out of the task's
weighted mean), a gated one scores 0 with the reason. The judge never runs with the executor's
model. A judge that cannot be used (not configured, unreachable, timed out, unparseable after
its retries) leaves the criterion *not evaluated*: an error with ``not_evaluated`` its reason,
out of the weighted mean, never a failed criterion nor a pass.

Evidence: ``rubric_results[{principle, rating, reasoning, score}]`` and ``judge``
(model, temperature, seed, prompt hash, tokens, cost, cached, calls), ``confidence``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from .. import _scoring as scoring
from .._contracts.check import AssertionSpec, CheckContext, CheckOutcome, CheckSpec
from .._errors import CheckError
from .._scoring import clamp

if TYPE_CHECKING:
    from ..judge._client import JudgeError, Judgement
    from ..judge._settings import JudgeSettings


class LlmRubric(AssertionSpec):
    """The ``llm-rubric`` assertion."""

    kind: Literal["llm-rubric"] = Field(alias="assert")
    principles: list[str] = Field(min_length=1, max_length=20)
    target: Literal["output", "voice", "file"] = "output"
    path: str | None = Field(default=None, description="file target, relative to the sandbox")
    pass_threshold: float | None = Field(default=None, ge=0, le=1)

    @field_validator("principles")
    @classmethod
    def _non_empty(cls, value: list[str]) -> list[str]:
        if any(not p.strip() for p in value):
            raise ValueError("a principle cannot be empty")
        return [p.strip() for p in value]

    @model_validator(mode="after")
    def _path_for_file(self) -> LlmRubric:
        if (self.target == "file") != (self.path is not None):
            raise ValueError("target 'file' needs 'path' (and 'path' needs target 'file')")
        relative = Path(self.path) if self.path is not None else None
        if relative is not None and (relative.is_absolute() or ".." in relative.parts):
            raise ValueError("path must be relative to the sandbox, without '..'")
        return self


def target_text(spec: LlmRubric, ctx: CheckContext) -> tuple[str | None, str]:
    """The text to judge, and how to describe it to the judge (None: nothing to judge)."""
    if spec.target == "voice":
        turns = ctx.source("voice").turns()
        if not turns:
            return None, "the call transcript"
        return "\n".join(f"{t.speaker}: {t.text}" for t in turns), "the call transcript"
    if spec.target == "file":
        from .._sandbox_io.confine import inside, task_root
        from .._sandbox_io.jsonfiles import read_text

        root = ctx.source("judge").sandbox_path
        if root is None:
            raise CheckError("target 'file' needs the sandbox directory, which is unknown here")
        named = Path(root) / str(spec.path)
        if not os.path.lexists(named):
            return None, f"the file {spec.path}"
        file = inside(named, task_root(Path(root)))  # a link out of the task folder: an error
        if not file.is_file():
            return None, f"the file {spec.path}"
        reads = getattr(ctx.source("judge"), "reads", None)  # the task run's bounded reads
        return read_text(named, reads), f"the file {spec.path}"
    output = ctx.source("output")
    text = output.text()
    path = getattr(output, "path", None)  # a conftest's own output source may not say
    name = path.name if path else "output"
    return text, f"the agent's final output ({name})"


def judge_threshold(own: float | None, ctx: CheckContext) -> float:
    """A judge criterion's threshold: its assertion's ``pass_threshold``, else the criterion's
    as the engine resolved it (:func:`.scoring.resolve_threshold`, most specific first)."""
    return scoring.resolve_threshold(own, default=ctx.pass_threshold)


def _task_text(ctx: CheckContext) -> str | None:
    item = ctx.task.task_item or {}
    parts = [str(item[k]) for k in ("instruction", "patient", "trigger") if item.get(k)]
    if not parts and ctx.task.name:
        parts.append(ctx.task.name)
    return " | ".join(parts) or None


def judge_principles(
    ctx: CheckContext,
    principles: list[str],
    read_target: Callable[[], tuple[str | None, str]],
    threshold: float,
) -> CheckOutcome:
    """Gate or bypass, else read the target and ask the judge to rate each principle.

    Shared by ``llm-rubric`` and ``output-consistency``; ``read_target`` runs only when the
    judge is actually going to be called.
    """
    from ..judge._client import JudgeError
    from ..judge._gating import decide
    from ..judge._prompt import build_messages

    judge = ctx.source("judge")
    settings = judge.settings
    models: dict[str, JsonValue] = {
        "model": settings.model,
        "executor_model": settings.executor_model,
    }
    principles_evidence: list[JsonValue] = list(principles)
    decision = decide(
        task=ctx.task,
        entity=ctx.entity,
        meta=judge.meta,
        prior=ctx.prior,
        bypass_cost=settings.bypass_cost,
        deterministic_ids=ctx.deterministic,
    )
    if decision is not None:
        evidence: dict[str, JsonValue] = {
            "rubric_results": [],
            "principles": principles_evidence,
            "judge": {**models, "called": False, "rule": decision.rule, "calls": 0, "cost": 0.0},
        }
        return CheckOutcome(0.0, decision.reason, evidence, passed=False, status=decision.status)
    text, described = read_target()
    if text is None or not text.strip():
        return CheckOutcome(
            0.0,
            f"nothing to judge: {described} is missing or empty",
            {
                "rubric_results": [],
                "principles": principles_evidence,
                "judge": {**models, "called": False, "calls": 0, "cost": 0.0},
            },
        )
    messages = build_messages(
        principles, text, task=_task_text(ctx), target=described, limit=settings.max_target_chars
    )
    draws = []
    try:
        client = judge.client()
        for sample in range(max(1, settings.samples)):
            draws.append(client.rate(principles, messages, sample=sample))
    except JudgeError as exc:  # not evaluated; the evidence still says what the calls cost
        return _not_evaluated(exc, draws, models, principles_evidence)
    return _rated(draws, principles, described, threshold, settings, models)


def _not_evaluated(
    exc: JudgeError,
    draws: list[Judgement],
    models: dict[str, JsonValue],
    principles: list[JsonValue],
) -> CheckOutcome:
    """The outcome of a judge that gave up (:class:`~pytest_verial.judge._client.JudgeError`):
    not evaluated, its evidence saying what the calls (``draws`` before it too) cost."""
    calls = exc.calls + sum(d.calls for d in draws)
    spent: dict[str, JsonValue] = {
        **models,
        "called": calls > 0,
        "calls": calls,
        "cost": round(exc.cost + sum(d.cost for d in draws), 8),
        "tokens": {
            "prompt": exc.tokens[0] + sum(d.prompt_tokens for d in draws),
            "completion": exc.tokens[1] + sum(d.completion_tokens for d in draws),
        },
        "problems": list[JsonValue](exc.problems[-5:]),
    }
    attempts = f" ({calls} attempt{'s' if calls != 1 else ''})" if calls else ""
    return CheckOutcome(
        0.0,
        f"not evaluated: {exc.reason}{attempts}",
        {
            "error": "JudgeError",
            "rubric_results": [],
            "principles": principles,
            "judge": spent,
        },
        passed=False,
        status="error",
        not_evaluated=exc.reason,
    )


def _rated(
    draws: list[Judgement],
    principles: list[str],
    described: str,
    threshold: float,
    settings: JudgeSettings,
    models: dict[str, JsonValue],
) -> CheckOutcome:
    """The outcome of the judge's ratings: the first sample's rows, the mean score of all."""
    result = draws[0]
    rows: list[JsonValue] = [
        {
            "principle": principles[r.principle - 1],
            "rating": r.rating,
            "reasoning": r.reasoning,
            "score": r.score,
        }
        for r in result.ratings.ratings
    ]
    scores = [clamp(d.ratings.score) for d in draws]
    score = clamp(sum(scores) / len(scores))
    passed = scoring.passed(score, threshold)
    low = [f"{r.principle} ({r.rating}/5)" for r in result.ratings.ratings if r.rating < 4]
    details = (
        f"judge {result.model} rated {len(rows)} principle(s): mean score {score:.2f} "
        f"(threshold {threshold:.2f})" + ("; cached" if all(d.cached for d in draws) else "")
    )
    if len(draws) > 1:
        details += f"; {len(draws)} samples, spread {_spread(scores):.2f}"
    if low:
        details += "; weakest: principle " + ", ".join(low)
    judge_evidence: dict[str, Any] = {
        **models,
        "called": not all(d.cached for d in draws),
        "temperature": settings.temperature,
        "seed": settings.seed,
        "prompt_hash": result.prompt_hash,
        # every sample counts
        "tokens": {
            "prompt": sum(d.prompt_tokens for d in draws),
            "completion": sum(d.completion_tokens for d in draws),
        },
        "cost": round(sum(d.cost for d in draws), 8),
        "cost_known": all(d.cost_known for d in draws),
        "cached": all(d.cached for d in draws),
        "calls": sum(d.calls for d in draws),
        "retried": [p for d in draws for p in d.problems],
    }
    if len(draws) > 1:
        judge_evidence["samples"] = {
            "n": len(draws),
            "scores": scores,
            "mean": score,
            # the criterion's confidence: the population standard deviation of the scores
            "spread": _spread(scores),
            "cache_keys": [d.prompt_hash for d in draws],
        }
    evidence = {
        "rubric_results": rows,
        "confidence": result.ratings.confidence,
        "target": described,
        "threshold": threshold,
        "judge": judge_evidence,
    }
    return CheckOutcome(score, details, evidence, passed=passed)


def _spread(scores: list[float]) -> float:
    """The population standard deviation of the sample scores (0 for one sample)."""
    mean = sum(scores) / len(scores)
    return float((sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5)


def check(spec: LlmRubric, ctx: CheckContext) -> CheckOutcome:
    """Rate ``spec.principles`` on the target."""
    return judge_principles(
        ctx,
        spec.principles,
        lambda: target_text(spec, ctx),
        judge_threshold(spec.pass_threshold, ctx),
    )


CHECK = CheckSpec(
    name="llm-rubric", model=LlmRubric, run=check, sources=("output", "voice", "judge"), judge=True
)
