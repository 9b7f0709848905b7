"""Why the verifier could not evaluate a criterion (its ``not_evaluated``), and what to do.

The reasons are short and name no URL, path, key or setting: they reach the coordinator of
the agent (``verify_task``, the service). The advice names the options and is for whoever runs
pytest: the terminal shows it, no report holds it.
"""

from __future__ import annotations

#: why a judge criterion was not evaluated (``not_evaluated``): short, and naming no URL, path,
#: key or setting, since it reaches the coordinator of the agent
NOT_CONFIGURED = "judge not configured"
NOT_INSTALLED = "judge client not installed"
TURNED_OFF = "judge turned off"
UNREACHABLE = "judge unreachable"
TIMED_OUT = "judge timed out"
UNPARSEABLE = "judge answered unparseably"
UNAVAILABLE = "judge unavailable"  # + " (HTTP 503)"
REFUSED = "judge refused the request"  # + " (HTTP 401)"
REASONS = (
    NOT_CONFIGURED,
    NOT_INSTALLED,
    TURNED_OFF,
    UNREACHABLE,
    TIMED_OUT,
    UNPARSEABLE,
    UNAVAILABLE,
    REFUSED,
)

#: what whoever runs pytest can do about a reason (never in a report: only on the terminal)
ADVICE = {
    NOT_CONFIGURED: "set --verial-judge-model (ini verial_judge_model, run.yaml "
    "sources.judge.model)",
    NOT_INSTALLED: "pip install 'pytest-verial[live]' (the judge client needs httpx)",
    TURNED_OFF: "the verial-judge plugin is off (-p no:verial-judge)",
    UNREACHABLE: "check --verial-judge-base-url and that the judge server is up",
    TIMED_OUT: "the judge did not answer within --verial-judge-timeout",
    UNPARSEABLE: "the judge model does not follow the rating format "
    "(--verial-judge-response-format, or another model)",
    UNAVAILABLE: "the judge server answered an error; try again later",
    REFUSED: "check the judge model name and the key in --verial-judge-api-key-env",
}


def advice(reason: str) -> str | None:
    """What to do about a reason a criterion was not evaluated (for the terminal)."""
    for known, text in ADVICE.items():
        if reason.startswith(known):
            return text
    return None


__all__ = ["ADVICE", "REASONS", "advice"]
