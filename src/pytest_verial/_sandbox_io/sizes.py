"""Sizes and the read limits of a sandbox, with no import of the package (the run folder and
the session's settings, low in the import graph, hold them): :mod:`.limits` enforces them."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIB = 1024 * 1024
#: the plugin's defaults (a 1M-resource FHIR export is about 460 MB in one file)
DEFAULT_MAX_FILE_SIZE = 1024 * MIB
DEFAULT_MAX_SANDBOX_SIZE = 4096 * MIB
#: the service's defaults (its archives unpack to at most 64 MiB)
SERVE_MAX_FILE_SIZE = 64 * MIB
SERVE_MAX_SANDBOX_SIZE = 256 * MIB

_UNITS = {"": 1, "b": 1, "k": 1024, "m": MIB, "g": 1024 * MIB, "t": 1024 * 1024 * MIB}
_SIZE = re.compile(r"\s*(\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def parse_size(value: Any) -> int:
    """A size in bytes from ``1048576``, ``64MiB``, ``64M``, ``1 GiB`` (binary units); a
    ValueError saying what is expected otherwise (a fraction, a negative or non-finite number,
    zero)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size such as 64MiB or 1048576, got {value!r}")
    if isinstance(value, int):
        number = value
    else:
        match = _SIZE.fullmatch(str(value))
        if match is None:
            raise ValueError(f"expected a size such as 64MiB or 1048576, got {value!r}")
        number = int(match.group(1)) * _UNITS[match.group(2).lower()]
    if number <= 0:
        raise ValueError(f"expected a size above 0, got {value!r}")
    return number


def shown_size(size: int) -> str:
    """``64 MiB``, ``1.5 GiB``, ``512 bytes``: a limit as a reader reads it."""
    for unit, scale in (("GiB", 1024 * MIB), ("MiB", MIB), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} bytes"


@dataclass(frozen=True)
class ReadLimits:
    """The per-file and per-sandbox limits, and how messages name the settings that set them."""

    max_file: int = DEFAULT_MAX_FILE_SIZE
    max_sandbox: int = DEFAULT_MAX_SANDBOX_SIZE
    file_setting: str = "max_file_size"
    sandbox_setting: str = "max_sandbox_size"

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ReadLimits:
        """``verify_task``'s config keys ``max_file_size`` and ``max_sandbox_size`` (sizes as
        :func:`parse_size` reads them); a ValueError naming the key."""
        sizes = []
        for key, default in (
            ("max_file_size", DEFAULT_MAX_FILE_SIZE),
            ("max_sandbox_size", DEFAULT_MAX_SANDBOX_SIZE),
        ):
            try:
                sizes.append(default if config.get(key) is None else parse_size(config[key]))
            except ValueError as exc:
                raise ValueError(f"config {key}: {exc}") from None
        return cls(sizes[0], sizes[1])


def over_file_limit(name: str, size: int, limits: ReadLimits) -> str | None:
    """The one line refusing a file of ``size`` bytes named ``name``, or None when it fits."""
    if size <= limits.max_file:
        return None
    return (
        f"{name}: {size:,} bytes, over the per-file limit of {shown_size(limits.max_file)} "
        f"({limits.file_setting}); not read"
    )


__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "DEFAULT_MAX_SANDBOX_SIZE",
    "SERVE_MAX_FILE_SIZE",
    "SERVE_MAX_SANDBOX_SIZE",
    "ReadLimits",
    "over_file_limit",
    "parse_size",
    "shown_size",
]
