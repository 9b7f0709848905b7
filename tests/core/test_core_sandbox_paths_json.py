"""Paths rewritten in a check's evidence, however the folder is written (issue 33, wave 7).

The engine rewrites every string of a criterion run's evidence that names the task folder (or
its run folder) into a path relative to the task folder (README, "Paths in evidence"). To keep
that cheap it looks for the folders in the evidence's JSON text once, and walks the evidence
only when one is named. A folder whose name holds a character JSON escapes (a quote, a
backslash, a control character) cannot be found that way: it must still be rewritten.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

# private: the rewriter has no public face (the engine applies it to every criterion run)
from pytest_verial._safeparse import strict_json_value
from pytest_verial._sandbox_paths import SandboxPaths


def _evidence(task: str, run: str) -> dict[str, Any]:
    return {
        "fieldResults": [
            {"path": "status", "expected": "booked", "actual": f"read {task}/a.json"},
            {"path": "x", "expected": [1, 2.5, None, True], "actual": f"{run}/other/b.json"},
        ],
        f"{task}/key.json": {"nested": [[f"at {task}"]]},
        "source": task,
        "count": 3,
    }


REWRITTEN = {
    "fieldResults": [
        {"path": "status", "expected": "booked", "actual": "read a.json"},
        {"path": "x", "expected": [1, 2.5, None, True], "actual": "../other/b.json"},
    ],
    "key.json": {"nested": [["at ."]]},
    "source": ".",
    "count": 3,
}


@pytest.mark.parametrize(
    "name", ["task", 'a "quoted" task', "back\\slash", "tab\there", "bell\x07", "é-ü"]
)
def test_every_string_naming_the_folder_is_rewritten(tmp_path: Path, name: str) -> None:
    run = tmp_path / f"run {name}"
    task = run / name
    task.mkdir(parents=True)
    paths = SandboxPaths(task, run)
    assert paths.json(strict_json_value(_evidence(str(task), str(run)))) == REWRITTEN


def test_evidence_naming_no_folder_is_kept_whole(tmp_path: Path) -> None:
    paths = SandboxPaths(tmp_path / "run" / "task", tmp_path / "run")
    evidence = strict_json_value(
        {"rows": [{"a": "x", "b": math.nan, 3: (1, 2)}], "note": "another/place/task"}
    )
    assert paths.json(evidence) == {
        "rows": [{"a": "x", "b": "NaN", "3": [1, 2]}],
        "note": "another/place/task",
    }


def test_a_value_json_cannot_write_is_still_walked(tmp_path: Path) -> None:
    """Anything a conftest check returns that JSON cannot write (an object, a huge int) is
    walked string by string, as before."""
    task = tmp_path / "run" / "task"
    paths = SandboxPaths(task, tmp_path / "run")
    marker = object()
    huge = 10**5000
    value = {"file": f"{task}/x.txt", "other": marker, "n": huge}
    assert paths.json(value) == {"file": "x.txt", "other": marker, "n": huge}
