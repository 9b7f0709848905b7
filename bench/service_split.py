"""Where verify-task's own CPU goes, in this process (issue 33): the route's parts timed with
``time.process_time`` around each (medians of ``--requests``), and inline ``verify_task`` on
the same task and folder, alternating. The key's check is the route's: a read of its own before
(``authenticate``), the kept key and its row read in the write transaction on this branch
(issue 33, wave 6). No HTTP, no threadpool: what the service adds on one
core. The old code's figures come from the same script with ``PYTHONPATH`` pointing at an
exported ``src`` (every part it times exists there too).

    python bench/service_split.py [--requests 300]
    PYTHONPATH=/tmp/old/src python bench/service_split.py
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import service as bench  # noqa: E402  (bench/service.py: the benchmark files, the body)


def _timed(spent: dict[str, list[float]], obj: Any, name: str, label: str) -> None:
    """Replace ``obj.name`` by a wrapper adding each call's CPU time to ``spent[label]``."""
    inner: Callable[..., Any] = getattr(obj, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label].append(time.process_time() - start)

    setattr(obj, name, timed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()

    import pytest_verial
    import pytest_verial.service._keys as keys
    import pytest_verial.service._routes.verify as route
    import pytest_verial.service._verifier as verifier_module
    import pytest_verial.store._repo_keys as repo_keys
    import pytest_verial.store._repo_reports as reports
    import pytest_verial.store._repo_runs as runs
    from pytest_verial import load_benchmark, verify_task
    from pytest_verial.checks import default_registry
    from pytest_verial.service import create_app
    from pytest_verial.service._keys import authenticate, create_key
    from pytest_verial.service._requests import VerifyTaskIn

    tmp = Path(tempfile.mkdtemp(prefix="verial-split-"))
    path = bench.write_benchmarks(tmp)[0]
    app = create_app(f"sqlite:///{tmp}/split.db", [path], bench.RUNS)
    store, verifier = app.state.store, app.state.verifier
    _, key = create_key(store, "org")
    task = load_benchmark(path, default_registry()).tasks[0]
    spent: dict[str, list[float]] = collections.defaultdict(list)
    _timed(spent, verifier_module, "verify_task", "  inline verify_task inside it")
    _timed(spent, verifier_module, "one_task_report", "  its one-task report")
    _timed(spent, runs, "insert_report", "  insert_report")
    _timed(spent, reports, "digest_of", "    the canonical digest")
    _timed(spent, reports, "_insert_runs", "    the run, task and criterion rows")
    # the answer: task_answer (projected, this branch) or task_out (validated, before)
    answer = "task_answer" if hasattr(route, "task_answer") else "task_out"
    _timed(spent, route, answer, f"  the answer ({answer})")
    kept = getattr(keys, "kept_key", None)  # a kept key checked in the write (this branch)
    authenticate(store, key)  # found once: kept by this process

    def check(owner: Any) -> Callable[..., None] | None:
        if kept is None:
            return None

        def then(conn: Any, _answer: Any) -> None:
            assert repo_keys.key_active_in(conn, owner.id)

        return then

    def one() -> None:
        start = time.process_time()
        found = kept(store, key) if kept is not None else (authenticate(store, key), "")
        spent["the key's check"].append(time.process_time() - start)
        assert found is not None and found[0] is not None
        owner = found[0]
        start = time.process_time()
        report = verifier.verify(VerifyTaskIn.model_validate(bench.body()))
        spent["scoring (Verifier.verify)"].append(time.process_time() - start)
        start = time.process_time()
        made = runs.store_verified(
            store, owner, report, route._stored(False), idem=None, digest="", then=check(owner)
        )
        spent["storing (store_verified)"].append(time.process_time() - start)
        start = time.process_time()
        route._made(made)
        spent["the response's JSON"].append(time.process_time() - start)

    for _ in range(30):
        one()
    spent.clear()
    served, inline = [], []
    for _ in range(args.requests):
        start = time.process_time()
        one()
        served.append(time.process_time() - start)
        start = time.process_time()
        verify_task(task, bench.RUNS / "good-agent" / bench.TASK, {})
        inline.append(time.process_time() - start)
    store.close()
    print(f"code: {Path(pytest_verial.__file__).parent}")
    for label, values in spent.items():
        print(f"{label:40s} {statistics.median(values) * 1000:6.2f} ms")
    a, b = statistics.median(served), statistics.median(inline)
    print(
        f"route CPU p50 {a * 1000:.2f} ms, inline p50 {b * 1000:.2f} ms, "
        f"added {(a - b) * 1000:.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
