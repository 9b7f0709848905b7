"""What a loaded benchmark plan keeps per criterion, by tracemalloc (issue 33).

Builds ``bench/overhead.py``'s benchmark of N criteria (``--shape large``: tasks of 50
one-field criteria; ``small``: tasks of 10 three-field criteria), loads it once to import its
check and build its models, then loads it again under ``tracemalloc`` and reports the bytes
still allocated after a garbage collection, with the plan alive: what a pytest session keeps
per criterion for its whole length (the pytest items on top are pytest's). ``--top K`` prints
the K largest allocation sites (the package's deepest line, and the line that allocated).

    python bench/plan_memory.py [--criteria 20000] [--shape large|small] [--top 6]
        [--src PATH ...]

``--src`` measures other source trees of the package too (each in a fresh process, with
``PYTHONPATH``), e.g. the commit before a change: ``git archive <commit> src | tar -x -C
/tmp/before`` then ``--src /tmp/before/src``.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from overhead import build  # noqa: E402


def measure(criteria: int, shape: str, top: int) -> None:
    """Load the benchmark twice; print what the second load keeps."""
    from pytest_verial._loader import load_benchmark
    from pytest_verial.checks import default_registry

    per_task, fields = (10, 3) if shape == "small" else (50, 1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        build(root, criteria, max(criteria // per_task, 1), fields)
        registry = default_registry()
        path = root / "load.verial.json"
        load_benchmark(path, registry)  # imports the check, builds its models
        gc.collect()
        tracemalloc.start(25)
        before = tracemalloc.take_snapshot()
        plan = load_benchmark(path, registry)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
    ours = [tracemalloc.Filter(False, tracemalloc.__file__)]
    diff = after.filter_traces(ours).compare_to(before.filter_traces(ours), "traceback")
    kept = sum(stat.size_diff for stat in diff)
    source = sys.modules["pytest_verial"].__file__
    print(f"source: {Path(source or '').parent.parent}")
    print(
        f"  {shape} shape, {criteria:,} criteria in {len(plan.tasks):,} task runs: "
        f"{kept:,} bytes kept, {kept / criteria:,.0f} per criterion"
    )
    for stat in diff[:top]:
        # the deepest frame of the package, and the line that allocated
        frames = [f for f in stat.traceback if "pytest_verial" in f.filename]
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
        made = stat.traceback[-1]
        print(
            f"    {stat.size_diff / criteria:7,.0f} B/criterion  {where} "
            f"(allocated at {Path(made.filename).name}:{made.lineno})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--criteria", type=int, default=20000)
    parser.add_argument("--shape", choices=["small", "large"], default="large")
    parser.add_argument("--top", type=int, default=6)
    parser.add_argument("--src", type=Path, action="append", default=[])
    parser.add_argument("--here", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.here:
        measure(opts.criteria, opts.shape, opts.top)
        return
    for src in [None, *opts.src]:
        env = dict(os.environ)
        if src is not None:
            env["PYTHONPATH"] = str(src.resolve())
        args = ["--criteria", str(opts.criteria), "--shape", opts.shape, "--top", str(opts.top)]
        subprocess.run([sys.executable, __file__, "--here", *args], env=env, check=True)


if __name__ == "__main__":
    main()
