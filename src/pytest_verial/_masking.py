"""Secrets out of pytest's own output: terminal, ``-rA`` summaries and ``--junitxml``.

The engine masks each criterion run's details and evidence, and the report writers mask the
JSON report and the task JUnit file (:mod:`pytest_verial._secrets`). What pytest itself prints or
writes comes from its report objects: the failure text (a traceback of an unexpected exception
may quote a key), captured stdout/stderr and logs, skip reasons, user properties, collection
errors and warnings. :class:`SecretMasking` masks those as the first hook to see them, in every
process: on an xdist worker before a report is sent to the controller, and again on the
controller (which registered the run's secrets at start) before the terminal and
``--junitxml`` read it. docs: README "Run directories".
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pytest

from ._secrets import redact, redact_json, registered

#: handlers of pytest's logging plugin: live log, --log-file, caplog and the report sections
_LOG_HANDLERS = ("log_cli_handler", "log_file_handler", "caplog_handler", "report_handler")


class MaskingFilter(logging.Filter):
    """Masks secrets in a log record's message before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if registered():
            try:
                message = record.getMessage()
            except Exception:  # a bad format string: logging reports it itself
                return True
            masked = redact(message)
            if masked != message:
                record.msg, record.args = masked, ()
        return True


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
    record = getattr(report, "verial", None)
    if isinstance(record, dict):  # the criterion run (journal, report): masked once more here
        setattr(report, "verial", redact_json(record))  # noqa: B010 - not a declared attribute
    properties = getattr(report, "user_properties", None)
    if properties:
        report.user_properties = [  # type: ignore[union-attr]
            (name, redact(value) if isinstance(value, str) else value) for name, value in properties
        ]


class SecretMasking:
    """First to see every test and collection report and every warning: masks secrets."""

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        plugin = session.config.pluginmanager.get_plugin("logging-plugin")
        for name in _LOG_HANDLERS:
            handler = getattr(plugin, name, None)
            if isinstance(handler, logging.Handler):
                handler.addFilter(MaskingFilter())

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
