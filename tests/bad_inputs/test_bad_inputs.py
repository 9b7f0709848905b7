"""The bad-input corpus: every case in ``cases/`` gives one clear line, never a crash or a pass.

Each case (see ``bad_input_case.py``) is written into a folder of its own and scored by a child
pytest. The cases of one module share a session (a broken case must not hurt its neighbours),
and so do the cases of one environment, and the collection-error cases of one flag naming no
path (``SHARED_ARGS``); other cases with their own arguments run alone. A usage error
stops its session before anything runs, so those cases run in this process instead (pytester's
``runpytest_inprocess``, same arguments, same folder layout), one session each: a child pytest
would cost ~2 s of CPU to print one line. For every session: it ends before its deadline, no
traceback or INTERNALERROR reaches the output, the JSON report is strict JSON (no NaN), and both
JUnit files are well-formed XML. For every case: the line it names is there, on one line.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bad_input_case import Case

#: one xdist worker runs the corpus (scripts/test: --dist loadgroup): the cases of a module
#: are consecutive and share one child session, built under a lock by the first worker to ask
#: (``_session``), so with the cases dealt to both workers the second one sat idle waiting for
#: each shared session the first was building, a core doing nothing on two
pytestmark = pytest.mark.xdist_group("bad-inputs")

HERE = Path(__file__).resolve().parent
SOLO_WORKERS = "0"


def _load_cases() -> dict[str, list[Case]]:
    """``CASES`` of every module in ``cases/``, by module name."""
    modules: dict[str, list[Case]] = {}
    for path in sorted((HERE / "cases").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"bad_input_cases_{path.stem}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem] = list(module.CASES)
    return modules


CASES_BY_MODULE = _load_cases()
ALL_CASES = [case for cases in CASES_BY_MODULE.values() for case in cases]
MODULE_OF = {case.id: name for name, cases in CASES_BY_MODULE.items() for case in cases}


def test_the_corpus_is_large_and_varied() -> None:
    """At least 150 distinct cases over every format the plugin reads (issue 9)."""
    ids = Counter(case.id for case in ALL_CASES)
    assert not [i for i, n in ids.items() if n > 1], "duplicate case ids"
    assert len(ALL_CASES) >= 150, len(ALL_CASES)
    kinds = {case.kind for case in ALL_CASES}
    wanted = {"benchmark", "run.yaml", "fhir", "hl7", "x12", "portal", "voice", "files", "output"}
    assert wanted <= kinds, sorted(wanted - kinds)


# -- running the sessions -----------------------------------------------------------------


@dataclass
class Session:
    """What one child pytest session left behind."""

    code: int | None
    output: str
    path: Path

    @property
    def lines(self) -> list[str]:
        return self.output.splitlines()

    def report(self) -> dict[str, Any] | None:
        path = self.path / "report.json"
        if not path.exists():
            return None
        return json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"the JSON report holds {name}: not strict JSON")


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_case(case: Case, folder: Path) -> None:
    for rel, content in case.files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content() if callable(content) else content
        if isinstance(data, str):
            target.write_text(data, encoding="utf-8", newline="")
        else:
            target.write_bytes(data)


#: plugins of this suite's environment that no session of the corpus loads
CHILD_PLUGINS_OFF = ("-p", "no:hypothesispytest", "-p", "no:schemathesis", "-p", "no:anyio")


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.update(PYTHONDONTWRITEBYTECODE="1", COLUMNS="200", **extra)
    env["PYTEST_ADDOPTS"] = " ".join(CHILD_PLUGINS_OFF)
    return env


#: the arguments of every session, child or in-process
SESSION_ARGS = (
    "-p", "no:cacheprovider", "-rA",
    "--verial-report", "report.json", "--verial-junit", "junit.xml",
    "--junitxml", "pytest-junit.xml",
)  # fmt: skip


def _run(path: Path, args: tuple[str, ...], env: dict[str, str], timeout: float) -> Session:
    command = [sys.executable, "-m", "pytest", *SESSION_ARGS, *args]
    try:
        proc = subprocess.run(
            command,
            cwd=path,
            env=_child_env(env),
            capture_output=True,
            text=True,
            errors="backslashreplace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "backslashreplace") if exc.stdout else ""
        return Session(None, out, path)
    return Session(proc.returncode, proc.stdout + proc.stderr, path)


def _session(
    base: Path,
    key: str,
    cases: list[Case],
    solo: bool,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Session:
    """One child session over ``cases``, run once however many xdist workers ask for it."""
    path = base / key
    with _locked(base / f"{key}.lock"):
        cache = path / ".session.json"
        if cache.exists():
            code, output = json.loads(cache.read_text(encoding="utf-8"))
            return Session(code, output, path / cases[0].id if solo else path)
        path.mkdir(parents=True, exist_ok=True)
        for case in cases:
            _write_case(case, path / case.id)
        if solo:  # a case of its own runs in its folder, so its arguments read relative to it
            (case,) = cases
            # ... and node ids stay relative to the session folder: ``<case id>/file::...``
            args = ("--rootdir", str(path), *case.args)
            session = _run(path / case.id, args, dict(case.env), case.timeout)
        else:
            session = _run(path, args, env or {}, sum(case.timeout for case in cases))
        cache.write_text(json.dumps([session.code, session.output]), encoding="utf-8")
        return session


@pytest.fixture(scope="session")
def corpus_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of this session sees (xdist's documented recipe)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    return base / "bad-inputs"


def _env_key(case: Case) -> str:
    return hashlib.sha256(json.dumps(sorted(case.env.items())).encode()).hexdigest()[:12]


def _shares_by_env(case: Case) -> bool:
    """A case alone only for its environment (no arguments, not a usage error, checked on its
    own criterion run or collection error) shares one session with every case of the same
    environment: each is in its own folder and checked there, as a module's cases are."""
    return not case.args and case.where in ("criterion", "collect") and bool(case.env)


#: arguments that name no path (so they read alike from any folder) and that several
#: collection-error cases share: those cases share one session
SHARED_ARGS = {("--verial-scored",): "scored"}


def _shares_by_args(case: Case) -> bool:
    """A case alone only for a flag of ``SHARED_ARGS``, checked on its own collection error
    (the section of its own folder, as a module's cases are): one session for all of them."""
    return case.where == "collect" and not case.env and case.args in SHARED_ARGS


def session_for(case: Case, base: Path) -> Session:
    """The session that scored ``case``: its module's shared one, one shared by the cases of
    its environment or of its arguments, or its own."""
    if _shares_by_env(case):
        key = _env_key(case)
        shared = [c for c in ALL_CASES if _shares_by_env(c) and _env_key(c) == key]
        return _session(base, f"env-{key}", shared, solo=False, env=dict(case.env))
    if _shares_by_args(case):
        shared = [c for c in ALL_CASES if _shares_by_args(c) and c.args == case.args]
        key = SHARED_ARGS[case.args]
        return _session(base, f"args-{key}", shared, solo=False, args=case.args)
    if case.solo:
        return _session(base, f"solo-{case.id}", [case], solo=True)
    module = MODULE_OF[case.id]
    shared = [c for c in CASES_BY_MODULE[module] if not c.solo]
    return _session(base, f"module-{module}", shared, solo=False)


def runs_in_process(case: Case) -> bool:
    """A usage error without an environment of its own: its session stops while pytest
    configures or collects, before any test runs, so it runs in this process. Under xdist
    (``-n``) it stays a child session: in-process, the workers would be started from here."""
    return case.where == "usage" and not case.env and "-n" not in case.args


def inline_session(
    case: Case, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> Session:
    """``case`` scored in this process, laid out as a session of its own: the case in its
    folder, the working directory, and ``--rootdir`` the folder above (node ids
    ``<case id>/file::...``). pytester restores ``sys.modules``, ``sys.path`` and the
    environment afterwards; an exception escaping pytest is printed with its traceback into the
    output, which the sanity check refuses as it does a child's."""
    folder = pytester.path / case.id
    _write_case(case, folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("COLUMNS", "200")
    result = pytester.runpytest_inprocess(
        *CHILD_PLUGINS_OFF, *SESSION_ARGS, "--rootdir", str(pytester.path), *case.args
    )
    output = "\n".join([*result.outlines, *result.errlines])
    return Session(int(result.ret), output, folder)


# -- the checks ---------------------------------------------------------------------------


def _criterion_runs(value: Any) -> Iterator[dict[str, Any]]:
    """Every criterion run anywhere in a report (whatever its top-level layout)."""
    if isinstance(value, dict):
        yield from value.get("criterion_runs") or ()
        for child in value.values():
            if isinstance(child, dict | list):
                yield from _criterion_runs(child)
    elif isinstance(value, list):
        for child in value:
            yield from _criterion_runs(child)


def _assert_session_sane(session: Session) -> None:
    tail = session.output[-4000:]
    assert session.code is not None, f"the session did not end before its deadline:\n{tail}"
    assert session.code in (0, 1, 2, 3, 4), f"exit status {session.code}:\n{tail}"
    for marker in ("Traceback (most recent call last)", "INTERNALERROR", "Fatal Python error"):
        assert marker not in session.output, f"{marker!r} in the output:\n{tail}"
    if session.code != 4:
        report = session.report()
        assert report is not None, f"no JSON report written:\n{tail}"
        for name in ("junit.xml", "pytest-junit.xml"):
            ET.parse(session.path / name)  # well-formed XML 1.0, or ParseError


def _collection_error(session: Session, case_id: str) -> list[str]:
    """The lines of pytest's ``ERROR collecting <case_id>/...`` sections (not a neighbour's)."""
    lines: list[str] = []
    inside = False
    for line in session.lines:
        if line.startswith(("___", "===")):
            inside = f"ERROR collecting {case_id}/" in line
        elif inside:
            lines.append(line)
    return lines


def _line_with(session: Session, text: str) -> str | None:
    return next((line for line in session.lines if text in line), None)


@pytest.mark.parametrize("case", ALL_CASES, ids=[case.id for case in ALL_CASES])
def test_bad_input_gives_one_clear_line(
    case: Case, corpus_base: Path, request: pytest.FixtureRequest
) -> None:
    if runs_in_process(case):
        pytester = request.getfixturevalue("pytester")
        session = inline_session(case, pytester, request.getfixturevalue("monkeypatch"))
    else:
        session = session_for(case, corpus_base)
    _assert_session_sane(session)
    if case.where == "usage":
        assert session.code == 4, session.output[-3000:]
        assert _line_with(session, case.says), session.output[-3000:]
        return
    if case.where == "collect":
        assert session.code not in (0, None), session.output[-3000:]
        section = _collection_error(session, case.id)
        assert section, f"no collection error in {case.id}/:\n{session.output[-3000:]}"
        assert any(case.says in line for line in section), (case.says, section)
        return
    if case.where == "output":
        assert session.code not in (0, None), session.output[-3000:]
        assert _line_with(session, case.says), (case.says, session.output[-3000:])
        return
    report = session.report()
    assert report is not None
    runs = [
        run
        for run in _criterion_runs(report)
        if str(run.get("nodeid", "")).startswith(f"{case.id}/")
        and (case.criterion is None or str(run["nodeid"]).endswith(f"::{case.criterion}"))
    ]
    assert len(runs) == 1, (
        f"{len(runs)} criterion runs match {case.id}/...::{case.criterion or '*'}:\n"
        + session.output[-3000:]
    )
    (run,) = runs
    assert run["status"] in ("error", "failed"), run
    assert not run["passed"], run
    assert math.isclose(run["score"], case.score, abs_tol=1e-9), run
    details = run.get("details") or ""
    assert "\n" not in details, f"details span several lines: {details!r}"
    assert case.says in details, (case.says, details)


def test_the_shared_cases_score_alike_under_xdist(corpus_base: Path) -> None:
    """All shared cases in one ``-n 2`` session: no worker crashes, and every criterion case
    ends as it did at ``-n 0`` (a segfaulting parser would take whole workers down)."""
    shared = [case for case in ALL_CASES if not case.solo]
    if not shared:
        pytest.skip("no case shares a session yet")
    session = _session(corpus_base, "all-n2", shared, solo=False, args=("-n", "2"))
    _assert_session_sane(session)
    assert "crashed" not in session.output.lower(), session.output[-3000:]
    report = session.report()
    assert report is not None
    by_node = {run["nodeid"]: run for run in _criterion_runs(report)}
    for case in shared:
        if case.where != "criterion":
            continue
        alone = session_for(case, corpus_base)
        report = alone.report()
        assert report is not None
        for run in _criterion_runs(report):
            if str(run["nodeid"]).startswith(f"{case.id}/"):
                twin = by_node.get(run["nodeid"])
                assert twin is not None, run["nodeid"]
                here = str(twin["details"]).replace(str(session.path), "<base>")
                there = str(run["details"]).replace(str(alone.path), "<base>")
                assert (twin["status"], here) == (run["status"], there)
