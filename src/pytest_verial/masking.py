"""Secrets out of pytest's own output: terminal, ``-rA`` summaries and ``--junitxml``.

The engine masks each criterion run's details and evidence, and the report writers mask the
JSON report and the task JUnit file (:mod:`pytest_verial.secrets`). What pytest itself prints or
writes comes from its report objects: the failure text (a traceback of an unexpected exception
may quote a key), captured stdout/stderr and logs, skip reasons, user properties, collection
errors and warnings. :class:`SecretMasking` masks those as the first hook to see them, in every
process: on an xdist worker before a report is sent to the controller, and again on the
controller (which registered the run's secrets at start) before the terminal and
``--junitxml`` read it. docs: README "Run directories".
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from .secrets import redact, registered


def mask_report(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Mask secrets in a report's failure text, sections and user properties, in place."""
    if not registered():
        return
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        path, line, reason = longrepr
        report.longrepr = (redact(str(path)), line, redact(str(reason)))
    elif longrepr is not None:
        text = str(longrepr)
        masked = redact(text)
        if masked != text:
            report.longrepr = masked
    report.sections = [(title, redact(content)) for title, content in report.sections]
    properties = getattr(report, "user_properties", None)
    if properties:
        report.user_properties = [
            (name, redact(value) if isinstance(value, str) else value)
            for name, value in properties
        ]


class SecretMasking:
    """First to see every test and collection report and every warning: masks secrets."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        mask_report(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        mask_report(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_warning_recorded(self, warning_message: warnings.WarningMessage) -> None:
        if not registered():
            return
        text = str(warning_message.message)
        masked = redact(text)
        if masked != text:
            category: Any = warning_message.category
            try:
                warning_message.message = category(masked)
            except Exception:  # a warning class with an unusual constructor
                warning_message.message = UserWarning(masked)
