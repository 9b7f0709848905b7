"""The LLM judge of PRD-103: rubric prompt, OpenAI-compatible client, gating and cost.

Public API: the names in ``__all__``, each loaded from its private module on first use; httpx
is imported when a client is made. The judge's pytest wiring is the separate plugin
:mod:`pytest_verial.judge_plugin`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy as lazy

if TYPE_CHECKING:
    from ._calibrate import (
        PADDING,
        PERTURBATIONS,
        Figures,
        Item,
        agreement,
        kappa,
        macro_f1,
        perturbed,
    )
    from ._client import JudgeClient, JudgeError, Judgement, close_clients, shared_client
    from ._gating import Decision, decide
    from ._models import normalise_model_id, same_model, self_grading
    from ._prompt import build_messages, prompt_hash
    from ._reply import MalformedReply, Rating, Ratings, parse_reply
    from ._report import task_feedback, verification_lines, verification_summary
    from ._settings import DEFAULT_PRICES, JudgeSettings, build_settings
    from ._source import JudgeSource, from_sandbox, settings_for

__getattr__, __dir__ = lazy.exports(
    __name__,
    {
        **dict.fromkeys(
            [
                "PADDING",
                "PERTURBATIONS",
                "Figures",
                "Item",
                "agreement",
                "kappa",
                "macro_f1",
                "perturbed",
            ],
            "_calibrate",
        ),
        **dict.fromkeys(
            ["JudgeClient", "JudgeError", "Judgement", "close_clients", "shared_client"], "_client"
        ),
        **dict.fromkeys(["Decision", "decide"], "_gating"),
        **dict.fromkeys(["normalise_model_id", "same_model", "self_grading"], "_models"),
        **dict.fromkeys(["task_feedback", "verification_lines", "verification_summary"], "_report"),
        **dict.fromkeys(["build_messages", "prompt_hash"], "_prompt"),
        **dict.fromkeys(["MalformedReply", "Rating", "Ratings", "parse_reply"], "_reply"),
        **dict.fromkeys(["DEFAULT_PRICES", "JudgeSettings", "build_settings"], "_settings"),
        **dict.fromkeys(["JudgeSource", "from_sandbox", "settings_for"], "_source"),
    },
)

__all__ = [
    "DEFAULT_PRICES",
    "PADDING",
    "PERTURBATIONS",
    "Decision",
    "Figures",
    "Item",
    "JudgeClient",
    "JudgeError",
    "JudgeSettings",
    "JudgeSource",
    "Judgement",
    "MalformedReply",
    "Rating",
    "Ratings",
    "agreement",
    "build_messages",
    "build_settings",
    "close_clients",
    "decide",
    "from_sandbox",
    "kappa",
    "macro_f1",
    "normalise_model_id",
    "parse_reply",
    "perturbed",
    "prompt_hash",
    "same_model",
    "self_grading",
    "settings_for",
    "shared_client",
    "task_feedback",
    "verification_lines",
    "verification_summary",
]
