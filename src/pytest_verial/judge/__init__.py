"""The LLM judge of PRD-103: rubric prompt, OpenAI-compatible client, gating and cost.

No public names (README, "Public API"): the judge is used through the ``llm-rubric`` check,
``verial judge calibrate`` and the inline API, all of which import its private modules
(``_client.py``, ``_prompt.py``, ``_gating.py``, ``_settings.py``, ``_calibrate.py``, ...);
httpx is imported when a client is made. The judge's pytest wiring is the separate plugin
:mod:`pytest_verial.judge_plugin`.
"""

from __future__ import annotations

__all__: list[str] = []
