"""Readers and writers of the report formats (README, "Reports").

No public names (README, "Public API"): the plugin, the ``verial`` commands and the service
are their only users, through the private modules (``_json_report.py``, ``_junit.py``,
``_html.py``, ``_markdown.py``, ``_diff.py``, ...); a report is read as the JSON its schema
describes (README, "The JSON report"). The scoring rules every report applies (README,
"Scoring") are pure functions in ``pytest_verial._scoring``.
"""

from __future__ import annotations

__all__: list[str] = []
