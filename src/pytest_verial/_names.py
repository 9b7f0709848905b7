"""Names as every surface shows them: a benchmark run's one name, the axis of criteria that
have none, and the details of an unsupported assertion.

A benchmark run goes by one name on every surface (``verial runs``, ``compare``, ``show``,
the terminal summary, the HTML and Markdown reports).

A run folder's name is the ``agent`` its ``run.yaml`` names, else the folder's label (its
name, as ``--verial-run`` gives it): ``front-office-v7`` for ``example_benchmarks/runs/
good-agent/``, ``sandbox`` for a benchmark's default ``sandbox/`` folder. A benchmark run of
several run folders (trials) is named by the distinct names of its folders, joined by ``, ``:
trials of one agent read as that agent once. ``verial runs --agent NAME`` matches this name
or any run folder label (README, "The results store").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class _RunFolder(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def agent(self) -> str | None: ...


def folder_name(label: str, agent: str | None) -> str:
    """One run folder's name: its run.yaml's agent, else its label."""
    return agent or label


def run_name(runs: Iterable[_RunFolder]) -> str:
    """A benchmark run's name: its folders' names, each once, in order (``-`` for none)."""
    names = dict.fromkeys(folder_name(r.label, r.agent) for r in runs)
    return ", ".join(names) or "-"


#: how every surface shows the axis of criteria that have none (the report's key is
#: :data:`pytest_verial._scoring.DEFAULT_AXIS`, ``__default__``)
NO_AXIS = "(no axis)"


def axis_name(name: str) -> str:
    """An axis as a reader names it: ``(no axis)`` for the report's ``__default__``."""
    from ._scoring import DEFAULT_AXIS

    return NO_AXIS if name == DEFAULT_AXIS else name


#: the details of a criterion whose ``assert`` no check knows (Verial's rule: it fails with
#: score 0); the terminal summary counts these apart from the agent's failures
UNSUPPORTED = "unsupported assertion: "
