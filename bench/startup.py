"""Start-up of the plugin: what importing it costs, and what a session pays before its first
criterion with the results store off and on (issue 33).

Every pytest process in an environment with pytest-verial imports the plugin (its pytest11
entry point, ``pytest_verial.plugin``): each xdist worker, each child session of a test suite,
each ``verial`` command that runs pytest. This script measures, in fresh processes, R times
each, medians:

- ``import``: ``python -X importtime -c "import pytest_verial.plugin"``, the cumulative
  microseconds Python reports for the module (wall time), beside ``import pytest`` alone (which
  the plugin imports first); and the CPU time of ``python -c "import ..."`` of both, which a
  loaded machine moves less;
- ``session``: the CPU time (user + system) of a whole ``pytest`` session scoring one
  portal-state-match criterion, with ``--verial-store none`` and with the default SQLite
  store, and whether the session imported SQLAlchemy (a conftest lists the packages in
  ``sys.modules`` at the session's end).

    python bench/startup.py [--repeat 7] [--src PATH ...]

``--src`` also measures another source tree of the package (``PYTHONPATH``), alternately with
the installed one, e.g. the commit before a change: ``git archive <commit> src | tar -x -C
/tmp/before`` then ``--src /tmp/before/src``.

``--co N`` measures instead what ``pytest --co`` of ``bench/overhead.py``'s benchmark of N
criteria (tasks of 50 one-field criteria) costs against a bare full run of its plain pytest
file (the same N comparisons, no plugin loaded): per round, ``--co`` once with each source,
then the bare run; CPU seconds (user + system), medians, and the ratio (issue 33: at most
0.35 at 2,000 criteria)::

    python bench/startup.py --co 2000 --repeat 7 --src /tmp/before/src
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARK = """\
tasks:
- id: pa
  criteria:
  - id: submitted
    assertion:
      assert: portal-state-match
      correlate_by: {resource: prior_auth_requests}
      assertions: [{path: status, expected: submitted}]
"""

PACKAGES = """
import json, sys

def pytest_sessionfinish(session):
    with open("packages.json", "w") as out:
        json.dump(sorted({m.partition(".")[0] for m in sys.modules}), out)
"""


def environment(src: Path | None) -> dict[str, str]:
    """Only the plugins measured (as a user's install without test extras would have), with
    bytecode caches written as a user's install has them."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def import_us(module: str, env: dict[str, str]) -> int:
    """The cumulative import time of ``module`` in a fresh interpreter, in microseconds."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    pattern = re.compile(r"import time:\s+\d+ \|\s+(\d+) \|\s*" + re.escape(module) + r"$")
    for line in done.stderr.splitlines():
        found = pattern.match(line)
        if found:
            return int(found.group(1))
    raise SystemExit(f"no import time line for {module}:\n{done.stderr[-2000:]}")


def import_cpu(module: str, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of a fresh interpreter importing ``module``: unlike
    ``-X importtime``'s wall figures, little moved by other processes on the machine."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", f"import {module}"], env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def session_cpu(root: Path, env: dict[str, str], *args: str) -> tuple[float, list[str]]:
    """CPU seconds of one pytest session in ``root``, and the packages it imported."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "pytest_verial.plugin", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the session failed ({done.returncode}):\n{done.stdout[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    packages = json.loads((root / "packages.json").read_text(encoding="utf-8"))
    return cpu, packages


def measure(root: Path, env: dict[str, str], times: dict[str, list[float]]) -> dict[str, bool]:
    """One round of every measure for one source tree; whether each session used SQLAlchemy."""
    imported = {}
    times.setdefault("pytest", []).append(import_us("pytest", env) / 1000)
    times.setdefault("plugin", []).append(import_us("pytest_verial.plugin", env) / 1000)
    times.setdefault("pytest cpu", []).append(import_cpu("pytest", env) * 1000)
    times.setdefault("plugin cpu", []).append(import_cpu("pytest_verial.plugin", env) * 1000)
    for store, args in (("none", ("--verial-store", "none")), ("sqlite", ())):
        cpu, packages = session_cpu(root, env, *args)
        times.setdefault(store, []).append(cpu)
        imported[store] = "sqlalchemy" in packages
    return imported


def collect_only(criteria: int, sources: list[Path | None], repeat: int) -> None:
    """``--co``: pytest --co of the benchmark with each source, then a bare full run, per
    round; medians of CPU seconds and ratios."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from overhead import BARE, build

    def cpu(root: Path, env: dict[str, str], *args: str) -> float:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-2000:]}")
        return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    co = ("-p", "pytest_verial.plugin", "--co", "load.verial.json", "--verial-run", "sandbox")
    times: dict[str, list[float]] = {str(src or "installed"): [] for src in sources}
    bare: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, criteria, max(criteria // 50, 1), 1)
        for src in sources:  # bytecode caches written
            cpu(root, environment(src), *co)
        cpu(root, environment(None), "test_plain.py", *BARE)
        for _ in range(repeat):
            for src in sources:
                times[str(src or "installed")].append(cpu(root, environment(src), *co))
            bare.append(cpu(root, environment(None), "test_plain.py", *BARE))
    base = statistics.median(bare)
    print(f"{criteria:,} criteria, CPU seconds (user + system), medians of {repeat}")
    print(f"  bare pytest, full run:  {base:6.3f} s  {bare}")
    for label, values in times.items():
        median = statistics.median(values)
        print(f"  --co, {label}: {median:6.3f} s, ratio {median / base:.3f}  {values}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--co", type=int, default=None, metavar="N", help="pytest --co of N criteria instead"
    )
    parser.add_argument(
        "--src",
        type=Path,
        action="append",
        default=[],
        help="another source tree of the package, measured alternately with the installed one",
    )
    opts = parser.parse_args()
    sources: list[Path | None] = [None, *(path.resolve() for path in opts.src)]
    if opts.co:
        collect_only(opts.co, sources, opts.repeat)
        return
    times: dict[Path | None, dict[str, list[float]]] = {src: {} for src in sources}
    imported: dict[Path | None, dict[str, bool]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources:
            root = Path(tmp) / str(len(imported))
            portal = root / "sandbox" / "pa" / "portal"
            portal.mkdir(parents=True)
            (portal / "prior_auth_requests.json").write_text('[{"status": "submitted"}]')
            (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
            (root / "conftest.py").write_text(PACKAGES, encoding="utf-8")
            (root / "pa.verial.yaml").write_text(BENCHMARK, encoding="utf-8")
            imported[src] = measure(root, environment(src), {})  # bytecode caches written
        for _ in range(opts.repeat):  # alternating, so a change in the machine's load hits all
            for index, src in enumerate(sources):
                imported[src] = measure(Path(tmp) / str(index), environment(src), times[src])
    for src in sources:
        median = {name: statistics.median(values) for name, values in times[src].items()}
        print(f"source: {src or 'installed'} (medians of {opts.repeat})")
        for kind, unit in (("", "-X importtime, wall"), (" cpu", "process CPU")):
            pytest_ms, plugin_ms = median["pytest" + kind], median["plugin" + kind]
            print(f"  import pytest:                {pytest_ms:7.1f} ms ({unit})")
            print(
                f"  import pytest_verial.plugin:  {plugin_ms:7.1f} ms ({unit}; "
                f"{plugin_ms - pytest_ms:.1f} ms beyond pytest)"
            )
        for store in ("none", "sqlite"):
            print(
                f"  session, store {store:6}:        {median[store]:7.3f} s CPU "
                f"(SQLAlchemy imported: {'yes' if imported[src][store] else 'no'})"
            )


if __name__ == "__main__":
    main()
