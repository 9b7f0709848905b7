"""Model ids: normalisation, so "the judge is not the executor" cannot be dodged by spelling.

``normalise_model_id`` lower-cases an id, drops provider prefixes (``openai/``,
``openrouter/anthropic/``, ``openai:``, Bedrock's ``anthropic.``), dated or version suffixes
(``-2024-07-18``, ``-20241022``, ``@20241022``, ``-v1:0``, ``-latest``) and a ``.gguf``
extension. ``gpt-4o`` and ``gpt-4o-mini`` stay different models; so do ``gpt-4o`` and ``gpt-4``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PROVIDER_COLON = re.compile(r"^[a-z0-9_-]+:(?!\d)")
_BEDROCK_VENDOR = re.compile(r"^(?:[a-z]{2}\.)?(anthropic|meta|mistral|amazon|cohere|ai21)\.")
_SUFFIXES = (
    re.compile(r"-v\d+(?::\d+)?$"),  # Bedrock -v1:0, -v2
    re.compile(r"@\d{8}$|@latest$"),  # Vertex @20241022
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # OpenAI -2024-07-18
    re.compile(r"-\d{8}$"),  # Anthropic -20241022
    re.compile(r"-\d{4}$"),  # OpenAI -0613, -1106
    re.compile(r"-latest$"),
)


def normalise_model_id(model: str) -> str:
    """A canonical id for comparing models: ``OpenAI/GPT-4o-mini-2024-07-18`` -> ``gpt-4o-mini``."""
    text = model.strip().lower()
    if text.endswith(".gguf"):
        text = text[: -len(".gguf")]
    text = text.rsplit("/", 1)[-1]
    text = _PROVIDER_COLON.sub("", text)
    text = _BEDROCK_VENDOR.sub("", text)
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            stripped = suffix.sub("", text)
            if stripped != text and stripped:
                text, changed = stripped, True
    return text


def same_model(a: str | None, b: str | None) -> bool:
    """True when both ids are given and name the same model after normalisation."""
    if not a or not b:
        return False
    return normalise_model_id(a) == normalise_model_id(b)


def self_grading(judge: str | None, executor: str | None, where: str = "") -> str | None:
    """The one message for a judge that is the executor's own model (``where`` names the run),
    or None when they differ. Every place that checks it (options, run.yaml, inline, the
    judge source) says it in these words."""
    if not same_model(judge, executor):
        return None
    return (
        f"the judge model {judge!r} is the executor model {executor!r}{where} (both normalise "
        f"to {normalise_model_id(str(judge))!r}); an LLM must not grade its own output: "
        "choose a different --verial-judge-model"
    )


def run_self_grading(options: Mapping[str, Any], run: Any, where: str = "") -> str | None:
    """:func:`self_grading` for one run folder: the judge and the executor as that run sees
    them (``options`` from the command line or the caller win over its run.yaml)."""
    judge_cfg = run.config.sources.get("judge", {}) or {}
    judge = options.get("judge_model") or judge_cfg.get("model")
    executor = options.get("executor_model") or run.config.executor_model
    return self_grading(judge, executor, where)
