"""``--verial-baseline BASE.json``: the changes from a saved report, after the verial summary.

The baseline is read when the session is configured (a path that is not a usable report is a
usage error, one line); at the end the session's report (the recorder's) is compared with it
as ``verial compare BASE.json <this session>`` would (:mod:`._diff`), and the deltas are
printed in a short section, regressions first, criteria only with ``-v``. The section informs:
it does not change the exit status (``verial compare`` is the gate; README, "Compare and
gate").
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .._display import escape

if TYPE_CHECKING:
    from .._results import Report
    from ._scores import ReportScores


def baseline_path(config: pytest.Config) -> Path | None:
    """The option, else the ini value (relative to the working directory, or to rootdir): the
    session's settings (:mod:`pytest_verial._config.settings`)."""
    from .._config.stash import SETTINGS

    return config.stash[SETTINGS].baseline


class BaselineDeltas:
    """Prints the deltas from the baseline report after the verial summary."""

    def __init__(self, config: pytest.Config, path: Path, baseline: ReportScores) -> None:
        self.config = config
        self.path = path
        self.baseline = baseline

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        recorder = self.config.pluginmanager.get_plugin("verial-recorder")
        report: Report | None = getattr(recorder, "report", None)
        if report is None:
            return
        from ._comparison import comparison_lines
        from ._diff import compare_reports

        comparison = compare_reports(self.baseline, report, names=(str(self.path), "session"))
        terminalreporter.write_sep("-", f"verial changes from baseline {self.path}")
        criteria = self.config.get_verbosity() > 0
        for text, colour in comparison_lines(comparison, criteria=criteria):
            terminalreporter.write_line(escape(text), **({colour: True} if colour else {}))


def register(config: pytest.Config) -> None:
    """Register :class:`BaselineDeltas` when ``--verial-baseline`` is given (the controller).

    Raises ``pytest.UsageError`` (one line) when the baseline is not a usable report.
    """
    path = baseline_path(config)
    if path is None or hasattr(config, "workerinput"):
        return
    from ._scores import load_scores  # only with --verial-baseline

    try:
        baseline = load_scores(path)
    except (ValueError, RecursionError) as exc:
        raise pytest.UsageError(f"--verial-baseline: {escape(str(exc).splitlines()[0])}") from None
    config.pluginmanager.register(BaselineDeltas(config, path, baseline), "verial-baseline")
