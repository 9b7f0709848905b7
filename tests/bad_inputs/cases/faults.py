"""Bad output paths and leftovers of crashed sessions (issue 9, item 7).

Output paths that can never be written are refused before anything runs (usage errors), so a
long run is not lost at its end; a journal left by a session that died is recovered or, when
damaged, moved aside with one warning line. ``verial report --recover`` on damaged journals
is tested in ``tests/core/test_core_faults.py`` (a command, not a pytest session).
"""

from __future__ import annotations

from bad_input_case import Case

BENCHMARK = """\
tasks:
- id: t
  criteria:
  - id: says-hi
    assertion: {assert: voice-transcript, contains: [hello there]}
"""
BASE = {"b.verial.yaml": BENCHMARK, "sandbox/t/.keep": ""}
#: a conftest that makes ``out.pipe`` (a FIFO) beside itself before the plugin checks paths
MAKE_PIPE = """\
import os
from pathlib import Path

pipe = Path(__file__).parent / "out.pipe"
if not pipe.exists():
    os.mkfifo(pipe)
"""


def _usage(
    case_id: str,
    says: str,
    args: tuple[str, ...],
    extra: dict[str, str] | None = None,
    **files: str,
) -> Case:
    return Case(
        id=case_id,
        kind="output-paths",
        files={**BASE, **{k.replace("__", "/"): v for k, v in files.items()}, **(extra or {})},
        says=says,
        where="usage",
        args=args,
    )


def _leftover(case_id: str, journal: str | bytes, says: str) -> Case:
    """A journal a crashed session left beside the report: one warning, then a normal run."""
    return Case(
        id=case_id,
        kind="journal",
        files={**BASE, "report.json.journal.jsonl": journal},
        says=says,
        where="output",  # the criterion fails (no voice transcript), so the exit is non-zero
        args=("--verial-report", "report.json"),
    )


CASES: list[Case] = [
    _usage(
        "report-parent-is-a-file",
        "blocker is a file, not a directory",
        ("--verial-report", "blocker/report.json"),
        blocker="not a folder",
    ),
    _usage(
        "report-grandparent-is-a-file",
        "blocker is a file, not a directory",
        ("--verial-report", "blocker/deeper/still/report.json"),
        blocker="not a folder",
    ),
    _usage(
        "report-is-a-directory",
        "outdir is a directory, not a file",
        ("--verial-report", "outdir"),
        outdir__keep="",
    ),
    _usage(
        "junit-is-a-directory",
        "outdir is a directory, not a file",
        ("--verial-junit", "outdir"),
        outdir__keep="",
    ),
    # A named pipe made in the case folder stands for any device: refusing /dev/null itself
    # is the same code path, and a regression would then replace the machine's /dev/null.
    _usage(
        "report-is-a-pipe",
        "out.pipe is not a regular file",
        ("--verial-report", "out.pipe"),
        extra={"conftest.py": MAKE_PIPE},
    ),
    _usage(
        "junit-is-a-pipe",
        "out.pipe is not a regular file",
        ("--verial-junit", "out.pipe"),
        extra={"conftest.py": MAKE_PIPE},
    ),
    _usage(
        "report-in-a-virtual-folder",
        "cannot write in /proc",
        ("--verial-report", "/proc/report.json"),
    ),
    _usage(
        "report-in-a-missing-virtual-folder",
        "cannot write in /proc",
        ("--verial-report", "/proc/verial/out/report.json"),
    ),
    _usage(
        "report-and-junit-same-file",
        "--verial-report and --verial-junit name the same file",
        ("--verial-junit", "report.json"),
    ),
    _usage(
        "junit-and-junitxml-same-file",
        "--verial-junit and --junitxml name the same file",
        ("--verial-junit", "pytest-junit.xml"),
    ),
    _usage(
        "junit-is-the-journal",
        "--verial-junit and the journal of --verial-report name the same file",
        ("--verial-junit", "report.json.journal.jsonl"),
    ),
    _leftover("journal-not-json", "garbage\n", ":1: damaged line (not JSON)"),
    _leftover("journal-torn-header", '{"journal": "pytest-verial/jou', "cut before its header"),
    _leftover("journal-foreign-json", '{"hello": "world"}\n', ":1: not a pytest-verial journal"),
    _leftover(
        "journal-header-without-files",
        '{"journal": "pytest-verial/journal/v2", "report": "r.json"}\n',
        "header field 'files' missing",
    ),
    _leftover(
        "journal-deeply-nested",
        lambda: "[" * 100_000 + "\n",  # type: ignore[arg-type]
        ":1: damaged line (not JSON)",
    ),
    _leftover(
        "journal-binary",
        b"\xff\xfe\x00\x01 not text\n",
        ":1: damaged line (not JSON)",
    ),
]
