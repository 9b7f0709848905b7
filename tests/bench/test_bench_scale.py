"""``bench/scale.py`` (issue 12, scale figures) at its smallest size: the table and the plot.

No time is asserted: the figures themselves go in BENCHMARKS.md.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "scale.py"


def _has_matplotlib() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


@pytest.fixture
def scale(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The script as a module; the ``sys.path`` entries it adds are undone after the test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location("verial_bench_scale", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_smallest_run_prints_the_table_and_draws_the_plot(tmp_path: Path) -> None:
    png = tmp_path / "docs" / "scale.png"
    args = ["--criteria", "20", "--tasks", "2", "--tasks-criteria", "20", "--resources", "200"]
    # the bench's child pytest runs as the suite's: nothing of the outer session, and without
    # the test extras' plugins (hypothesis, schemathesis, anyio: 3 s of CPU in each child)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *sys.path])
    env["PYTEST_ADDOPTS"] = "-p no:hypothesispytest -p no:schemathesis -p no:anyio"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args, "--png", str(png)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| axis | criteria | tasks | FHIR resources |")
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows[1:]]
    # axis, criteria, tasks, resources, input MB, -n, wall s, CPU s, ms / criterion, peak RSS MB
    assert [c[:4] for c in cells] == [
        ["criteria", "20", "1", "0"],
        ["tasks", "20", "2", "0"],
        ["fhir", "10", "1", "200"],
    ]
    assert all(float(c[6]) > 0 and float(c[7]) > 0 and float(c[9]) > 0 for c in cells)
    if _has_matplotlib():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "no plot: matplotlib is not installed" in proc.stderr
        assert not png.exists()


def test_without_matplotlib_one_line_says_so(
    scale: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    point = scale.Point("criteria", 20, 0, 20, 1, 0, 1.5, 1.4, 60.0, 0.1)
    problem = scale.plot([point], tmp_path / "scale.png")
    assert problem is not None and "\n" not in problem
    assert problem.startswith("matplotlib is not installed: pip install")
    assert not (tmp_path / "scale.png").exists()


def test_plot_has_a_column_per_axis_measured(scale: ModuleType, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    points = [
        scale.Point("criteria", n, w, n, n // 50, 0, n / 500, n / 400, 60 + n / 100, n / 1e4)
        for n in (1000, 3000)
        for w in (0, 2)
    ] + [
        scale.Point("fhir", n, 0, 10, 1, n, 2 + n / 1e4, 2 + n / 1e4, 60 + n / 1e3, n / 2e3)
        for n in (1000,)
    ]
    assert scale.plot(points, tmp_path / "out" / "scale.png") is None
    from PIL import Image

    with Image.open(tmp_path / "out" / "scale.png") as image:
        width, height = image.size
    assert width > height  # two columns side by side, two rows
    assert "| criteria | 1,000 | 20 | 0 | 0.1 | 2 |" in scale.table(points)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--criteria", "ten"], "argument --criteria: expected counts >= 1"),
        (["--resources", "0"], "argument --resources: expected counts >= 1"),
        (["--workers", "two"], "argument --workers: expected -n values >= 0"),
        (["--tasks", "100", "--tasks-criteria", "10"], "--tasks 100 exceeds --tasks-criteria 10"),
    ],
)
def test_bad_sizes_are_one_line_errors(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr
