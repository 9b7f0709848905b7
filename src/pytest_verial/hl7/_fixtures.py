"""pytest fixture for a live MLLP capture server (``verial_hl7_capture``).

Register with ``pytest_plugins = ["pytest_verial.hl7._fixtures"]`` (the plugin does this when it
wires the HL7 source). The fixture yields a started
:class:`~pytest_verial.hl7._capture.CaptureProcess` (``verial hl7-capture`` as a child process,
stopped by its PID at teardown) on 127.0.0.1 and a free port, writing to
``<tmp_path>/hl7_outbound/events.jsonl`` (so the test's ``tmp_path`` can serve as a sandbox
directory); it is stopped at teardown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._capture import CaptureProcess


@pytest.fixture
def verial_hl7_capture(tmp_path: Path) -> Iterator[CaptureProcess]:
    """A running MLLP capture server: ``.host``, ``.port``, ``.out_path``, ``.events()``."""
    from ._capture import CaptureProcess  # loaded by the tests that use it, not at start-up

    server = CaptureProcess(tmp_path / "hl7_outbound" / "events.jsonl").start()
    try:
        yield server
    finally:
        server.stop()
