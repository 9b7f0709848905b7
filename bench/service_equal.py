"""verify-task's answers and stored rows, written out so two versions of the code can be
compared (issue 33): every task of every example benchmark on the good and the flawed agent's
run, scored and not, plus ``serve-10`` twice, through an in-process TestClient on a new SQLite
store; then ``GET /task-runs/{id}`` of each task run made; then every row of every table but
``api_keys`` in insertion order. Ids, times, durations and digests are masked (ids by order of
first appearance, so which row points at which is still compared); everything else is
compared as it is, answers as the JSON text sent.

    python bench/service_equal.py OUT.json                      # this code
    PYTHONPATH=/tmp/old/src python bench/service_equal.py OLD.json
    python bench/service_equal.py --compare OLD.json OUT.json
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import service as bench  # noqa: E402  (bench/service.py: the serve-10 benchmark, its body)

EXAMPLES = bench.ROOT / "example_benchmarks"
ID = re.compile(r"\b(ses|br|tr|cr|jc|key|run|job|rtk)_[0-9A-HJKMNP-TV-Z]{26}\b")
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?")
DURATION = re.compile(r'"duration": ?[-0-9.e+]+')
TIMED = {"duration", "started_at", "completed_at", "created_at", "report_digest", "request_hash"}


def bodies() -> list[dict[str, Any]]:
    out = []
    for path in sorted(EXAMPLES.glob("*.verial.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for task in data["tasks"]:
            for run in ("good-agent", "flawed-agent"):
                for scored in (False, True):
                    out.append(
                        {
                            "benchmark": data["benchmark"],
                            "task_id": task["id"],
                            "sandbox": {"run_dir": run},
                            "scored": scored,
                        }
                    )
    return out + [bench.body(), bench.body()]


class Mask:
    """Ids by order of first appearance, times and durations as placeholders."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def text(self, value: str) -> str:
        value = ID.sub(lambda m: self.ids.setdefault(m.group(0), f"<id{len(self.ids)}>"), value)
        return DURATION.sub('"duration":"<timed>"', TIME.sub("<time>", value))

    def __call__(self, value: Any, key: str = "") -> Any:
        if key in TIMED and value is not None:
            return "<timed>"
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, str):
            if value[:1] in "{[":
                try:
                    return json.dumps(self(json.loads(value)), ensure_ascii=False)
                except ValueError:
                    pass
            return self.text(value)
        return value


def record(out: Path) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fastapi.testclient import TestClient

    import pytest_verial
    from pytest_verial.service import create_app
    from pytest_verial.service._keys import create_key

    tmp = Path(tempfile.mkdtemp(prefix="verial-equal-"))
    serve10 = bench.write_benchmarks(tmp)[0]
    db = tmp / "equal.db"
    app = create_app(f"sqlite:///{db}", [EXAMPLES, serve10], bench.RUNS)
    _, key = create_key(app.state.store, "org")
    auth = {"Authorization": f"Bearer {key}"}
    mask = Mask()
    answers = []
    with TestClient(app) as client:
        for body in bodies():
            made = client.post("/v1/verify-task", json=body, headers=auth)
            seen = {k: v for k, v in made.headers.items() if k != "content-length"}
            answers.append([made.status_code, mask(seen), mask.text(made.text)])
            if made.status_code == 201:
                read = client.get(f"/task-runs/{made.json()['task_run_id']}", headers=auth)
                answers.append([read.status_code, None, mask.text(read.text)])
    app.state.store.close()
    rows: dict[str, list[Any]] = {}
    with sqlite3.connect(db) as conn:
        tables = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        ]
        for table in tables:
            if table in ("api_keys", "alembic_version") or table.startswith("sqlite_"):
                continue
            cursor = conn.execute(f"SELECT * FROM {table} ORDER BY rowid")  # noqa: S608
            names = [d[0] for d in cursor.description]
            rows[table] = [mask(dict(zip(names, r, strict=True))) for r in cursor]
    out.write_text(json.dumps({"answers": answers, "rows": rows}, ensure_ascii=False, indent=1))
    scored = sum(1 for a in answers if a[0] == 201)
    print(f"code: {Path(pytest_verial.__file__).parent}")
    print(f"{len(answers)} answers ({scored} verify-tasks stored), rows: ", end="")
    print(", ".join(f"{t} {len(r)}" for t, r in rows.items()))
    return 0


def compare(old: Path, new: Path) -> int:
    a, b = json.loads(old.read_text()), json.loads(new.read_text())
    bad = 0
    for i, (x, y) in enumerate(zip(a["answers"], b["answers"], strict=True)):
        if x != y:
            bad += 1
            print(f"answer {i} differs: {x[0]} / {y[0]}")
    for table in sorted(set(a["rows"]) | set(b["rows"])):
        x, y = a["rows"].get(table), b["rows"].get(table)
        if x != y:
            bad += 1
            print(f"table {table} differs ({len(x or [])} / {len(y or [])} rows)")
    total = sum(len(r) for r in a["rows"].values())
    print(f"{len(a['answers'])} answers, {total} rows: {'equal' if not bad else f'{bad} differ'}")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    return record(args.out)


if __name__ == "__main__":
    raise SystemExit(main())
