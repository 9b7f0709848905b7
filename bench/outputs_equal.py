"""Outputs before and after a change to the write path are equal (issue 33).

Scores the example benchmarks (``example_benchmarks/``) on each of their run folders twice,
once with the pytest-verial source of ``--before`` (a ``src`` folder, e.g. from ``git archive
83798a5 src | tar -x -C /tmp/before``) and once with ``--after`` (default: this checkout's),
each session writing the JSON report, ``--verial-junit`` and a fresh SQLite store. Then it
compares, apart from timings, seals, digests over them, and the ids the store makes:

- the JSON reports;
- the JUnit files (every element and attribute but ``time`` and ``timestamp``);
- every row of the stores' tables, and the report ``verial export`` reads back from each store
  (what the service's API answers are made of).

    python bench/outputs_equal.py --before /tmp/before/src [--after src] [--corpus]

``--corpus`` also scores a benchmark made from the real third-party corpus
(``../shared/corpus/``) and the suite's HL7 and X12 corpora (valid and malformed), copied into a
temporary run folder (:mod:`_corpus_bench`): every HL7, X12 and FHIR sample is a task whose
criteria pass, fail or cannot be evaluated on it.

Prints one line per compared output and exits 1 on the first difference (with its path).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import _corpus_bench

ROOT = Path(__file__).resolve().parent.parent

#: keys whose values are times, seals or digests over them, the store's ids, the process
VOLATILE = {
    "duration",
    "started_at",
    "completed_at",
    "created_at",
    "at",
    "seal",
    "report_digest",
    "digest",
    "command_line",
    "pid",
    "id_store",
    "session_id",
    "benchmark_run_id",
    "task_run_id",
    "criterion_run_id",
    "updated_at",
    "store_session",
}


def normal(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: normal(v, k) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str) and value.startswith(("ses_", "br_", "tr_", "cr_", "jc_")):
        return "<store id>"
    return value


def run_side(src: Path, run: Path, out: Path, benchmarks: Path) -> None:
    out.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(src)}
    store = f"sqlite:///{out / 'results.db'}"
    subprocess.run(
        [sys.executable, "-m", "pytest", str(benchmarks), "-p", "no:cacheprovider"]
        + ["-p", "no:randomly", "-q", "-n", "0", "--verial-run", str(run)]
        + ["--verial-report", str(out / "report.json"), "--verial-junit", str(out / "junit.xml")]
        + ["--verial-store", store],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=False,
        timeout=900,
    )
    subprocess.run(
        [sys.executable, "-m", "pytest_verial.cli", "export", "latest", "--store", store]
        + ["-o", str(out / "exported.json")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
        timeout=300,
    )


def junit(path: Path) -> Any:
    def walk(node: ET.Element) -> Any:
        attrs = {k: v for k, v in node.attrib.items() if k not in ("time", "timestamp")}
        return [node.tag, attrs, (node.text or "").strip(), [walk(c) for c in node]]

    return walk(ET.parse(path).getroot())


def _schema_change(before: Path, after: Path) -> str:
    """A newer schema on the after side: its revision and the tables it adds (empty ones only:
    a new table holding rows is a difference 'store rows' shows)."""
    a, b = sqlite3.connect(before), sqlite3.connect(after)
    old = a.execute("select version_num from alembic_version").fetchall()
    new = b.execute("select version_num from alembic_version").fetchall()
    tables = {t for (t,) in a.execute("select name from sqlite_master where type = 'table'")}
    added = [
        t
        for (t,) in b.execute("select name from sqlite_master where type = 'table'")
        if t not in tables and not b.execute(f'select 1 from "{t}" limit 1').fetchall()  # noqa: S608
    ]
    IGNORED.clear()
    if old == new and not added:
        return ""
    IGNORED.update(["alembic_version", *added])
    return f"revision {old[0][0]} -> {new[0][0]}, new empty tables: {', '.join(added) or 'none'}"


#: tables 'store rows' leaves out: the schema revision and new empty tables (printed)
IGNORED: set[str] = set()


def rows(path: Path) -> dict[str, Any]:
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    out = {}
    for (table,) in db.execute("select name from sqlite_master where type = 'table'"):
        if table in IGNORED:
            continue
        found = []
        for row in db.execute(f'select * from "{table}"'):  # noqa: S608 (the file's own names)
            one = {}
            for key in row.keys():  # noqa: SIM118 (sqlite3.Row)
                if key == "id" or key in VOLATILE:
                    continue
                value = row[key]
                if isinstance(value, str) and value[:1] in "{[":
                    with contextlib.suppress(ValueError):
                        value = json.loads(value)
                one[key] = normal(value)
            found.append(json.dumps(one, sort_keys=True, default=str))
        out[table] = sorted(found)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the old source's src folder")
    parser.add_argument("--after", type=Path, default=ROOT / "src")
    parser.add_argument(
        "--corpus", action="store_true", help="also a benchmark over the real corpus (../shared)"
    )
    args = parser.parse_args()
    different = False
    with tempfile.TemporaryDirectory() as tmp:
        examples = ROOT / "example_benchmarks"
        cases = [(examples, run) for run in sorted((examples / "runs").iterdir())]
        if args.corpus:
            made = _corpus_bench.build(Path(tmp) / "corpus")
            if made is None:
                sys.exit(f"--corpus: {_corpus_bench.SHARED} is absent")
            cases.append(made)
        for benchmarks, run in cases:
            sides = {}
            for side, src in (("before", args.before), ("after", args.after)):
                out = Path(tmp) / run.name / side
                run_side(src.resolve(), run, out, benchmarks)
                sides[side] = out
            before, after = sides["before"], sides["after"]
            checks = {
                "JSON report": lambda p: normal(json.loads((p / "report.json").read_text())),
                "JUnit": lambda p: junit(p / "junit.xml"),
                "store rows": lambda p: rows(p / "results.db"),
                "store export": lambda p: normal(json.loads((p / "exported.json").read_text())),
            }
            schema = _schema_change(before / "results.db", after / "results.db")
            if schema:
                print(f"{run.name}: store schema: {schema} (left out of 'store rows')")
            for label, read in checks.items():
                same = read(before) == read(after)
                different |= not same
                print(f"{run.name}: {label}: {'equal' if same else 'DIFFERENT'}")
                if not same:
                    a, b = read(before), read(after)
                    (Path.cwd() / f"outputs-{run.name}-{label.replace(' ', '-')}.json").write_text(
                        json.dumps({"before": a, "after": b}, indent=1, default=str)
                    )
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
