"""The ``judge`` source: judge settings resolved for one task run, and the shared client.

The fixture ``verial_judge`` returns a :class:`JudgeSource`. Override the fixture in a
``conftest.py`` to point criteria at another judge (or at a fake in tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._config.options import JUDGE_OFF_KEY
from .._errors import CheckError
from .._not_evaluated import TURNED_OFF
from ._client import JudgeClient, JudgeError, shared_client
from ._models import self_grading
from ._settings import JudgeSettings, build_settings

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox
    from .._sandbox_io.limits import Reads


class JudgeSource:
    """Judge settings, the task run's run.yaml facts, and its sandbox directory."""

    def __init__(
        self,
        settings: JudgeSettings,
        meta: Any = None,
        sandbox_path: Path | None = None,
        client: JudgeClient | None = None,
        reads: Reads | None = None,
    ) -> None:
        self.settings = settings
        self.meta = meta
        self.sandbox_path = sandbox_path
        #: the task run's bounded reads, for a file the judge is shown (``target: file``)
        self.reads = reads
        self._client = client

    def client(self) -> JudgeClient:
        """The client to call; refuses to judge with the executor's own model."""
        problem = self_grading(self.settings.model, self.settings.executor_model)
        if problem is not None:
            raise CheckError(problem)
        if self._client is None:
            self._client = shared_client(self.settings)
        return self._client


class JudgeOff(JudgeSource):
    """The judge of a session that left it out (``ctx.options[JUDGE_OFF_KEY]`` says why): gating and
    bypass rules apply as usual, and a criterion that would call the judge is an error with
    that reason, as when no judge model is configured."""

    def __init__(
        self,
        reason: str,
        settings: JudgeSettings,
        meta: Any,
        path: Path,
        reads: Reads | None = None,
    ) -> None:
        super().__init__(settings, meta, path, reads=reads)
        self.reason = reason

    def client(self) -> Any:
        """A client whose every rating is a JudgeError with the reason (no request made)."""
        return self

    def rate(self, principles: list[str], messages: list[dict[str, str]], sample: int = 0) -> Any:
        """Never rates: the judge is off."""
        raise JudgeError(self.reason, reason=TURNED_OFF)


def settings_for(options: Mapping[str, Any], run_config: Any = None) -> JudgeSettings:
    """Judge settings from options and a run.yaml config (either may be empty)."""
    judge_config: Mapping[str, Any] = {}
    executor = None
    if run_config is not None:
        judge_config = dict(getattr(run_config, "sources", {}).get("judge", {}) or {})
        executor = getattr(run_config, "executor_model", None)
    return build_settings(options, executor, judge_config)


def from_sandbox(sandbox: Sandbox) -> JudgeSource:
    """The judge source of a sandbox (options from the plugin, settings from run.yaml)."""
    options = getattr(sandbox, "options", {}) or {}
    settings = settings_for(options, sandbox.run.config)
    reads = getattr(sandbox, "reads", None)
    if options.get(JUDGE_OFF_KEY):
        return JudgeOff(str(options[JUDGE_OFF_KEY]), settings, sandbox.meta, sandbox.path, reads)
    return JudgeSource(settings, sandbox.meta, sandbox.path, reads=reads)
