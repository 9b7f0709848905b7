"""Call transcripts: ``voice/turns.json``, a list of ``{speaker, text, started_at?}`` turns.

``{"turns": [...]}`` is accepted too, and so is ``voice/turns.jsonl``. A missing file is an
empty transcript (no call happened).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from .._errors import SourceError
from .._sandbox_io.confine import is_file, task_root
from .._sandbox_io.jsonfiles import iter_jsonl, read_json
from .._sandbox_io.limits import Reads

if TYPE_CHECKING:
    from .._contracts.sandbox import Sandbox


class Turn(BaseModel):
    """One transcribed turn of a call."""

    model_config = ConfigDict(frozen=True, extra="allow")

    speaker: str
    text: str
    started_at: str | None = None


@runtime_checkable
class VoiceSource(Protocol):
    """What ``voice-transcript`` needs: the turns of the call, in order."""

    def turns(self) -> list[Turn]:
        """Every turn, in the order spoken."""
        ...


class VoiceSnapshot:
    """Turns captured in ``voice/``; parsed once on first use."""

    def __init__(self, directory: Path, reads: Reads | None = None) -> None:
        self.directory = directory
        self.reads = reads or Reads(directory.parent)
        self._turns: list[Turn] | None = None

    def turns(self) -> list[Turn]:
        if self._turns is None:
            self._turns = self._load()
        return self._turns

    def _load(self) -> list[Turn]:
        json_file, jsonl_file = self.directory / "turns.json", self.directory / "turns.jsonl"
        root = task_root(self.directory.parent)
        if is_file(json_file, root):
            data: Any = read_json(json_file, self.reads)
            source = json_file
            if isinstance(data, dict) and "turns" in data:
                data = data["turns"]
        elif is_file(jsonl_file, root):
            data, source = list(iter_jsonl(jsonl_file, self.reads)), jsonl_file
        else:
            return []
        if not isinstance(data, list):
            raise SourceError(f"{source}: expected a list of turns, found {type(data).__name__}")
        turns = []
        for index, item in enumerate(data):
            try:
                turns.append(Turn.model_validate(item))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "turn"
                raise SourceError(f"{source}: turn {index}: {where}: {first['msg']}") from None
        return turns


def from_sandbox(sandbox: Sandbox) -> VoiceSnapshot:
    """The voice source of a sandbox."""
    return VoiceSnapshot(sandbox.path / "voice", getattr(sandbox, "reads", None))
