"""A Markdown shell-session runner: README.md's shell samples, run as printed.

Every fenced shell block of the README (``console``, ``bash``, ``sh``, ``shell``) is either
run or marked as not meant to run; HTML comments just before a block say which (they are not
shown on a rendered page):

- ``<!-- readme: session NAME -->``: the blocks from here on run in session NAME, a fresh
  folder of its own (a session named in ``SETUPS`` of the test is prepared first, as the
  README says, e.g. ``./scripts/demo``'s runs);
- ``<!-- readme: file PATH -->``: the next block is written to PATH in the session's folder
  (the README's "Create benchmarks/pa.verial.yaml:" steps);
- ``<!-- readme: not run: REASON -->``: the next block is left alone (it starts a server,
  needs a model, installs a package...).

A ``console`` block is a shell session: each ``$ command`` (continued by a trailing ``\\``) runs
in ``bash`` in the session's folder, and its output (stdout and stderr, as a terminal shows
them) must match the lines under it. A ``bash`` / ``sh`` block that is not marked is an error:
every shell sample is either checked or says why not.

Matching: ids (``br_…``, ``ses_…``), times, durations, git commits and the session's folder are
masked on both sides, runs of spaces count as one, blank lines and pytest's separator widths
are ignored; an expected line ``...`` stands for any number of lines and ``...`` inside a line
for any text. So a changed command, option or output fails the test, and updating a sample
is pasting the new output.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

#: where a session's folder is shown in the README's samples (the runner's folder is masked
#: to it)
PROJECT = "/home/you/project"
SHELLS = ("console", "bash", "sh", "shell")
_MARKER = re.compile(r"<!--\s*readme:\s*(session|file|not run)\s*:?\s*(.*?)\s*-->")
_FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)\s*$")


@dataclass
class Block:
    """A fenced block of the README and the runner's markers before it."""

    line: int
    lang: str
    text: str
    session: str | None
    file: str | None = None
    not_run: str | None = None


@dataclass
class Command:
    """One ``$ command`` of a console block and the output printed under it."""

    line: int
    command: str
    expected: list[str] = field(default_factory=list)


def blocks(markdown: str) -> list[Block]:
    """The fenced blocks in order, each with its session and markers."""
    out: list[Block] = []
    session: str | None = None
    pending: dict[str, str] = {}
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        for kind, value in _MARKER.findall(line):
            if kind == "session":
                session = value
            else:
                pending[kind] = value
        fence = _FENCE.match(line)
        if not fence:
            index += 1
            continue
        indent, ticks, lang = fence.groups()
        body: list[str] = []
        index += 1
        while index < len(lines) and not lines[index].strip().startswith(ticks):
            text = lines[index]
            body.append(text[len(indent) :] if text.startswith(indent) else text.lstrip())
            index += 1
        out.append(
            Block(
                line=index - len(body),
                lang=lang,
                text="\n".join(body) + "\n",
                session=session,
                file=pending.pop("file", None),
                not_run=pending.pop("not run", None),
            )
        )
        pending.clear()
        index += 1
    return out


def commands(block: Block) -> list[Command]:
    """The ``$ command`` lines of a console block, each with the output lines under it."""
    out: list[Command] = []
    lines = block.text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("$ "):
            text = line[2:]
            start = block.line + index
            while text.endswith("\\") and index + 1 < len(lines):
                index += 1
                text = text[:-1] + " " + lines[index].strip()
            out.append(Command(start, text))
        elif out:
            out[-1].expected.append(line)
        index += 1
    return out


# -- matching ---------------------------------------------------------------------------------
_MASKS = (
    (re.compile(r"\b(br|ses|tr|cr|jc|key)_[0-9A-Z]{26}\b"), r"\1_<id>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)?s( \(\d+:\d{2}:\d{2}\))?(?=\s|$|\W)"), "<secs>"),
    (re.compile(r"(?<![\w.])[0-9a-f]{10}(?![\w.])"), "<commit>"),
    (re.compile(r"^([=_-])\1{2,} (.*?) \1{2,}$"), r"\1\1 \2 \1\1"),
    (re.compile(r"^([=_-])\1{5,}$"), r"\1\1"),
)


def normalize(line: str, folder: Path | None = None) -> str:
    """A line with what differs between two runs masked and its spacing made one."""
    if folder is not None:
        line = line.replace(str(folder), PROJECT)
    line = " ".join(line.split())
    for pattern, replacement in _MASKS:
        line = pattern.sub(replacement, line)
    return line


def _pattern(expected: str) -> re.Pattern[str]:
    parts = expected.split("...")
    return re.compile(".*".join(re.escape(p) for p in parts) + r"\Z", re.DOTALL)


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` (normalized lines) fits ``expected`` (``...`` wildcards)."""
    want = [e for e in expected if e]
    have = [a for a in actual if a]
    patterns = [None if e == "..." else _pattern(e) for e in want]
    # reach[i][j]: the first i expected lines match the first j actual lines
    reach = [[False] * (len(have) + 1) for _ in range(len(want) + 1)]
    reach[0][0] = True
    for i, pattern in enumerate(patterns, start=1):
        for j in range(len(have) + 1):
            if pattern is None:
                reach[i][j] = reach[i - 1][j] or (j > 0 and reach[i][j - 1])
            else:
                reach[i][j] = j > 0 and reach[i - 1][j - 1] and bool(pattern.match(have[j - 1]))
    return reach[len(want)][len(have)]


#: ``verial ARGS``, maybe followed by the README's ``; echo "exit status $?"``
_VERIAL = re.compile(r'^verial (?P<args>.+?)(?P<status>; echo "exit status \$\?")?$')
#: a word the shell passes on as it is (no quoting, expansion, glob, redirection or sequencing)
_PLAIN_WORD = re.compile(r"[\w@.,:/=+-][\w@.,:/=+~-]*")


def run(command: Command, folder: Path, env: dict[str, str], timeout: float = 300) -> str:
    """The command's output (stdout and stderr interleaved, as on a terminal).

    A ``verial`` command whose words the shell passes on unchanged runs in this process
    (``verial_inprocess``): what the README's sample shows is the command's output, not the
    console script's start-up, and a child's start-up (Python, pytest_verial, SQLAlchemy) cost
    about 1.1 s of CPU each (11 of the README's commands). Anything else runs in ``bash``."""
    verial = _VERIAL.match(command.command)
    if verial and all(_PLAIN_WORD.fullmatch(w) for w in verial["args"].split(" ") if w):
        code, output = verial_inprocess(verial["args"].split(), folder, env)
        return output + (f"exit status {code}\n" if verial["status"] else "")
    done = subprocess.run(
        ["bash", "-c", command.command],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.stdout


def verial_inprocess(args: list[str], folder: Path, env: dict[str, str]) -> tuple[int, str]:
    """``verial ARGS`` run by the console script's own entry point in this process, as ``bash``
    would run it: ``env`` the whole environment, ``folder`` the working directory, stdout and
    stderr into one text in the order written, an argument error's ``SystemExit`` its exit
    status, and the warnings a child's Python would print (its default filters) after it. An
    exception escaping the entry point fails the test, where the script would print a
    traceback."""
    import contextlib
    import io
    import warnings
    from importlib.metadata import entry_points

    import pytest

    (script,) = entry_points(group="console_scripts", name="verial")
    main = script.load()
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        for name in [n for n in os.environ if n not in env]:
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        patch.chdir(folder)
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(out),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("default")
            for quiet in (DeprecationWarning, PendingDeprecationWarning, ImportWarning):
                warnings.simplefilter("ignore", quiet)  # as Python's defaults outside __main__
            warnings.simplefilter("ignore", ResourceWarning)
            try:
                code = main(args)
            except SystemExit as exc:  # argparse: usage errors, --help
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
                if isinstance(exc.code, str):
                    print(exc.code, file=out)
    for w in caught:
        out.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))
    return int(code), out.getvalue()


def shell_env(bin_dir: Path, home: Path, base: dict[str, str]) -> dict[str, str]:
    """The environment commands run in: this interpreter's ``pytest`` and ``verial`` first on
    PATH, a home folder of their own, a wide terminal (pytest's summary unwrapped), no
    colours."""
    env = dict(base)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env["COLUMNS"] = "200"
    env["PY_COLORS"] = "0"
    env["NO_COLOR"] = "1"
    return env
