"""Scale out (issue 10): ``--verial-shard K/N`` + ``verial merge``, and ``--verial-resume``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from core_support import REPO, Project, run_subprocess, strip_timing, voice_criterion, write_sealed

from pytest_verial.cli import main

EXAMPLES = REPO / "example_benchmarks"
FLAWED = EXAMPLES / "runs" / "flawed-agent"


def _normalised(report: dict[str, Any]) -> Any:
    """A report without timings and the blocks that say how it was made."""
    session = {
        k: v
        for k, v in report["session"].items()
        if k not in ("shard", "resumed", "recovered", "exit_status")
    }
    return strip_timing({**report, "session": session})


def _score(tmp: Path, name: str, *args: str) -> tuple[int, str, dict[str, Any]]:
    out = tmp / f"{name}.json"
    code, output = run_subprocess(
        REPO,
        str(EXAMPLES),
        "-p",
        "no:cacheprovider",
        "--tb=no",
        "--verial-run",
        str(FLAWED),
        "--verial-report",
        str(out),
        *args,
    )
    assert code in (0, 1), output[-3000:]
    return code, output, json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _score(tmp_path_factory.mktemp("full"), "full")[2]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_three_shards_merge_into_the_unsharded_report(
    tmp_path: Path, unsharded: dict[str, Any], workers: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shards = []
    for k in (1, 2, 3):
        _, output, report = _score(tmp_path, f"s{k}", "-n", workers, "--verial-shard", f"{k}/3")
        assert report["session"]["shard"]["index"] == k
        shards.append(str(tmp_path / f"s{k}.json"))
    # every task run in exactly one shard, none "incomplete"
    ids = [
        t for s in shards for t in json.loads(Path(s).read_text())["session"]["shard"]["task_runs"]
    ]
    assert len(ids) == len(set(ids)) == 20
    merged = tmp_path / "merged.json"
    assert main(["merge", "-o", str(merged), *shards]) == 0
    assert "merged 3 shards: 5 benchmark runs, 20 task runs" in capsys.readouterr().err
    assert _normalised(json.loads(merged.read_text())) == _normalised(unsharded)


def test_merge_refuses_a_missing_shard_and_an_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for k in (1, 2):
        _score(tmp_path, f"s{k}", "--verial-shard", f"{k}/3")
    s1, s2 = tmp_path / "s1.json", tmp_path / "s2.json"
    assert main(["merge", "-o", str(tmp_path / "m.json"), str(s1), str(s2)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "shard 3/3 missing: give all 3 shards" in err
    # shard 1 relabelled as shard 3: its task runs overlap shard 1's
    fake = json.loads(s1.read_text())
    fake["session"]["shard"]["index"] = 3
    s3 = tmp_path / "s3.json"
    write_sealed(s3, fake)
    assert main(["merge", "-o", str(tmp_path / "m.json"), str(s1), str(s2), str(s3)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is in two shards" in err
    assert main(["merge", "-o", str(tmp_path / "m.json"), str(s1), str(s1)]) == 2
    assert "given twice" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_merge_refuses_mismatched_shards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _score(tmp_path, "s1", "--verial-shard", "1/3")
    _score(tmp_path, "s2", "--verial-shard", "2/3", "--verial-pass-threshold", "0.5")
    s1, s2 = tmp_path / "s1.json", tmp_path / "s2.json"

    def refused(shard: dict[str, Any]) -> str:
        path = tmp_path / "edited.json"
        path.write_text(json.dumps(shard))  # edited, its seal left as it was: refused first
        assert main(["merge", "-o", str(tmp_path / "m.json"), str(s1), str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "edited since it was written" in err, err
        write_sealed(path, shard)  # sealed anew: what the merge checks behind the seal see
        assert main(["merge", "-o", str(tmp_path / "m.json"), str(s1), str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1, err
        return err

    assert main(["merge", "-o", str(tmp_path / "m.json"), str(s1), str(s2)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "its pass threshold (0.5) differs from" in err
    good = json.loads(s2.read_text())
    good["session"]["shard"]["setup"]["pass_threshold"] = None
    other_n = json.loads(json.dumps(good))
    other_n["session"]["shard"]["count"] = 4
    assert "a shard of another run" in refused(other_n)
    scored = json.loads(json.dumps(good))
    scored["session"]["shard"]["setup"]["scored"] = True
    assert "its scored flag (True) differs" in refused(scored)
    bumped = json.loads(json.dumps(good))
    benchmarks = bumped["session"]["shard"]["setup"]["benchmarks"]
    file = sorted(benchmarks)[0]
    benchmarks[file][1] = 99
    assert f"benchmark file {file} is {benchmarks[file][0]}@99" in refused(bumped)
    broken = json.loads(json.dumps(good))
    broken["session"]["shard"]["count"] = "three"
    assert "edited.json: session.shard.count: " in refused(broken)
    assert not (tmp_path / "m.json").exists()


def test_merge_refuses_a_report_that_is_not_a_shard(
    tmp_path: Path, unsharded: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_sealed(tmp_path / "full.json", unsharded)
    assert main(["merge", "-o", str(tmp_path / "m.json"), str(path)]) == 2
    assert "not a shard (written without --verial-shard)" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0/3", "4/3", "x", "1/0", "2"])
def test_a_bad_shard_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    Project(pytester.path).benchmark("b", {"tasks": [{"id": "t", "criteria": []}]})
    result = pytester.runpytest("--verial-shard", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--verial-shard: *"])


def test_assignment_is_stable_and_balanced(pytester: pytest.Pytester) -> None:
    """Task runs of 1 to 7 criteria in 4 shards: each shard's criteria within one task run's
    worth of the others', and the same shards when the file lists the tasks the other way."""
    project = Project(pytester.path)
    counts = {f"t{i}": (i % 7) + 1 for i in range(24)}
    tasks = [
        {"id": t, "criteria": [voice_criterion(f"c{k}", contains=["hello"]) for k in range(n)]}
        for t, n in counts.items()
    ]
    for task in counts:
        project.sandbox(task, {"voice/turns.json": [{"speaker": "agent", "text": "hello"}]})

    def shards() -> list[set[str]]:
        found = []
        for k in (1, 2, 3, 4):
            shard = f" {k}/4 "  # spaces around K/N are allowed
            result = pytester.runpytest(
                "-p", "no:randomly", "--verial-shard", shard, "--verial-report", "s.json"
            )  # fmt: skip
            assert result.ret == 0, result.outlines[-20:]
            info = json.loads((pytester.path / "s.json").read_text())["session"]["shard"]
            assert (info["index"], info["count"]) == (k, 4)
            found.append({t.rpartition("::")[2] for t in info["task_runs"]})
        return found

    project.benchmark("b", {"tasks": tasks})
    first = shards()
    assert sorted(t for shard in first for t in shard) == sorted(counts)  # each in one shard
    loads = [sum(counts[t] for t in shard) for shard in first]
    assert max(loads) - min(loads) <= max(counts.values())
    project.benchmark("b", {"tasks": tasks[::-1]})
    assert shards() == first  # the order tasks are listed in does not matter


def test_merge_refuses_shards_of_other_run_folders_or_benchmark_content(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two halves scored on two agents' run folders, or on two contents of one benchmark
    file (its version unchanged), are not one run: each merge is refused in one line."""
    project = Project(tmp_path)
    spec = [
        {"id": f"t{i}", "criteria": [voice_criterion("c1", contains=["hello"])]} for i in range(4)
    ]
    bench = project.benchmark("greet", {"benchmark": "greet", "version": 1, "tasks": spec})
    for run in ("agent-a", "agent-b"):
        for i in range(4):
            turns = [{"speaker": "agent", "text": "hello"}]
            project.sandbox(f"t{i}", {"voice/turns.json": turns}, run=run)

    def shard(k: int, run: str) -> str:
        out = tmp_path / f"{run}-{k}.json"
        code, output = run_subprocess(
            tmp_path, str(bench), "--verial-run", str(tmp_path / run), "--verial-shard",
            f"{k}/2", "--verial-report", str(out), "--verial-store", "none", "-p", "no:randomly",
        )  # fmt: skip
        assert code == 0, output[-2000:]
        return str(out)

    a1, b2 = shard(1, "agent-a"), shard(2, "agent-b")
    assert main(["merge", "-o", str(tmp_path / "m.json"), a1, b2]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scored on other run folders there (agent-b)" in err, err
    a2_before = shard(2, "agent-a")
    assert main(["merge", "-o", str(tmp_path / "m.json"), a1, a2_before]) == 0
    capsys.readouterr()
    bench.write_text(bench.read_text() + "\n# reworded, version unchanged\n")
    a2 = shard(2, "agent-a")
    assert main(["merge", "-o", str(tmp_path / "m2.json"), a1, a2]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "shards of different benchmark versions" in err, err
    assert not (tmp_path / "m2.json").exists()
