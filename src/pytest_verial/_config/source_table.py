"""The sources of a sandbox, declared once: their names, their factories and the run.yaml keys
each reads (README, "Run directories" and "Extending").

This module imports nothing of the package, so the run.yaml reader (:mod:`.run_folder`) can check
``sources.<name>.<key>`` against it and :mod:`..sources` can build sources from it, without the
two importing each other. Factories and key sets are named by import path and imported only
when used, so ``--collect-only`` never pays for a FHIR, GCS or HL7 library.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any, Literal, get_args

#: the name of a built-in source, as criteria, fixtures (``verial_<name>``) and run.yaml write it
SourceName = Literal["portal", "voice", "output", "fhir", "hl7", "files", "x12", "judge"]

#: Every source: name -> ("module:factory", "module:SETTINGS" or None). The factory takes the
#: Sandbox and returns the source; SETTINGS is the set of run.yaml keys
#: (``sources.<name>.<key>``) the source reads, declared where it reads them.
SOURCES: dict[str, tuple[str, str | None]] = {
    "portal": (
        "pytest_verial.sources._portal:from_sandbox",
        "pytest_verial.sources._portal:SETTINGS",
    ),
    "voice": ("pytest_verial.sources._voice:from_sandbox", None),
    "output": ("pytest_verial.sources._output:from_sandbox", None),
    "fhir": ("pytest_verial.sources._fhir:from_sandbox", "pytest_verial.fhir._settings:KNOWN"),
    "hl7": ("pytest_verial.sources._hl7:from_sandbox", "pytest_verial.sources._hl7:SETTINGS"),
    "files": ("pytest_verial.sources._files:from_sandbox", "pytest_verial.sources._files:SETTINGS"),
    "x12": ("pytest_verial.sources._x12:from_sandbox", "pytest_verial.sources._x12:SETTINGS"),
    "judge": ("pytest_verial.judge._source:from_sandbox", "pytest_verial.judge._settings:RUN_YAML"),
}
if tuple(SOURCES) != get_args(SourceName):  # the two spellings above disagree: a bug of ours
    raise RuntimeError(f"SOURCES {tuple(SOURCES)} != SourceName {get_args(SourceName)}")
SOURCE_FACTORIES: dict[str, str] = {name: factory for name, (factory, _) in SOURCES.items()}
SOURCE_NAMES: tuple[str, ...] = tuple(SOURCES)


def load(target: str) -> Any:
    """The object named ``module:attribute``, its module imported on first use."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def unknown_setting(sources: Any) -> str | None:
    """The first run.yaml key no built-in source reads (``sources.<name>.<key>``), with what is
    known and the nearest name, or None. Checked when run.yaml is read, so a typo is one error
    before anything runs, whichever source it is under. A source name that is not built in
    is left to conftest checks (``sandbox.settings(name)``); :func:`unknown_sources` names them
    for the report's warnings."""
    if not isinstance(sources, dict):
        return None
    for name, settings in sources.items():
        if name not in SOURCES or not isinstance(settings, dict):
            continue
        target = SOURCES[name][1]
        known = frozenset(load(target)) if target else frozenset()
        for key in settings:
            if key not in known:
                listed = ", ".join(sorted(known)) or f"none: {name} is read from the task folder"
                return f"sources.{name}.{key}: unknown key{_nearest(key, known)}; known: {listed}"
    return None


def unknown_sources(sources: Any) -> list[str]:
    """Warnings for run.yaml source names that are not built in (a typo, or a conftest's)."""
    if not isinstance(sources, dict):
        return []
    return [
        f"sources.{name}: not a built-in source{_nearest(name, SOURCES)}; only a conftest "
        "check that reads it uses it"
        for name in sources
        if name not in SOURCES
    ]


def _nearest(word: str, known: Any) -> str:
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
