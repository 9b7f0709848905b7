"""Wire tests against a real OpenAI-compatible server: llama.cpp's (xllamacpp) serving SmolLM2-135M.

The tiny model's ratings are not judged for quality: these tests check the request the client
sends is accepted, the reply is parsed, malformed output is retried then reported as an error,
the disk cache makes a second run free, and a server-side error is an error, never a pass.
The server (``llama_server`` in conftest.py) is started once per test process on 127.0.0.1 and
stopped by PID.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from local_model import MODEL_ALIAS, SERVER_SCRIPT

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.judge._client import JudgeClient, JudgeError, Judgement
from pytest_verial.judge._prompt import build_messages
from pytest_verial.judge._settings import build_settings

#: the CPU-bound tests run one after another on one xdist worker (scripts/test runs
#: --dist loadgroup): two local model servers, or one beside the kill -9 load, starve each other
pytestmark = pytest.mark.xdist_group("cpu-heavy")

PRINCIPLES = [
    "The letter states why the lumbar MRI is medically necessary.",
    "The letter names the CPT code of the requested service.",
]
LETTER = (
    "To Aetna utilization review: Maria Chen has had left L5 radiculopathy for 9 weeks "
    "despite 6 weeks of physical therapy and NSAIDs. We request an MRI of the lumbar "
    "spine without contrast, CPT 72148, to evaluate for disc herniation before referral."
)
#: six principles: more than the tiny model can rate in 48 tokens of prose
MANY = [
    *PRINCIPLES,
    "It gives the ICD-10 code.",
    "It names the ordering physician.",
    "It lists the dates of therapy.",
    "It is addressed to the payer.",
]
#: the PA letter as an agent's output.md (its sections criterion looks for the heading)
PA_OUTPUT = f"# PA\n## Medical necessity\n{LETTER}\n"
#: the request of the tests below that are not about its content: one prompt text, which the
#: model server evaluates once and keeps (llama.cpp's prompt cache), so each later request
#: pays only for its reply
MESSAGES = build_messages(PRINCIPLES, LETTER, task="Write the PA letter")


@dataclass(frozen=True)
class FirstRating:
    """A rating the local model gave (to ``MESSAGES``) and the folder of its disk cache."""

    result: Judgement
    folder: Path


def client(base: str, tmp_path: Path, **options: object) -> JudgeClient:
    opts = {
        "judge_model": MODEL_ALIAS,
        "judge_base_url": base,
        "judge_backoff": 0,
        "judge_cache_dir": str(tmp_path / "cache"),
        "judge_response_format": "json_object_schema",
        "judge_timeout": 60,
        **options,
    }
    return JudgeClient(build_settings(opts))


@pytest.fixture(scope="module")
def first_rating(llama_server: str, tmp_path_factory: pytest.TempPathFactory) -> FirstRating:
    """One whole prompt on the local model, its reply written to a disk cache: what the
    next two tests read (the reply's parsing, then a second run served from that cache).
    Each prompt costs 10-30 s of the model's CPU here; asking it twice proved nothing more."""
    folder = tmp_path_factory.mktemp("first-rating")
    return FirstRating(client(llama_server, folder).rate(PRINCIPLES, MESSAGES), folder)


def test_real_server_reply_is_parsed_and_costed(first_rating: FirstRating) -> None:
    result = first_rating.result
    assert [r.principle for r in result.ratings.ratings] == [1, 2]
    assert all(1 <= r.rating <= 5 for r in result.ratings.ratings)
    assert result.prompt_tokens > 100 and result.completion_tokens > 0  # usage from the server
    assert result.calls >= 1 and not result.cached
    assert len(result.prompt_hash) == 64


def test_openai_json_schema_spelling_is_enforced(llama_server, tmp_path):
    """``json_schema`` (OpenAI's spelling, the one docs/judge.md shows) constrains llama.cpp's
    reply to the rating schema as ``json_object_schema`` does: the tiny model's reply parses."""
    judge = client(llama_server, tmp_path, judge_response_format="json_schema", judge_retries=0)
    result = judge.rate(PRINCIPLES, MESSAGES)
    assert [r.principle for r in result.ratings.ratings] == [1, 2] and result.calls == 1


def test_plain_json_object_format_is_accepted(llama_server, tmp_path):
    """``json_object`` (the default) is a request the server takes: the outcome is a reply or
    a malformed-reply error from the tiny model, never an HTTP refusal of the request."""
    judge = client(
        llama_server,
        tmp_path,
        judge_response_format="json_object",
        judge_retries=0,
        judge_max_tokens=48,
    )
    try:
        judge.rate(PRINCIPLES, MESSAGES)
    except JudgeError as exc:
        assert "HTTP" not in str(exc) and "malformed reply" in str(exc)
    assert judge.calls == 1


def test_model_server_without_a_model_exits_with_one_line(tmp_path):
    """The server script refuses a missing model file with status 2 and one line, no traceback."""
    command = [sys.executable, str(SERVER_SCRIPT), "--model", str(tmp_path / "no.gguf")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "model_server:" in done.stderr


def test_second_run_makes_zero_calls(llama_server: str, first_rating: FirstRating) -> None:
    """A new client on the first run's cache folder: the same request is never sent again."""
    first = first_rating.result
    assert first.calls >= 1 and not first.cached
    rerun = client(llama_server, first_rating.folder)
    second = rerun.rate(PRINCIPLES, MESSAGES)
    assert rerun.calls == 0 and second.cached and second.calls == 0
    assert [r.rating for r in second.ratings.ratings] == [r.rating for r in first.ratings.ratings]


def test_unconstrained_prose_is_retried_then_an_error(llama_server, tmp_path):
    """Without the schema and with a 48-token reply cap, the tiny model cannot give ratings in
    our shape for 6 principles: every attempt is malformed, each is retried, and the result is
    an error, not a score. (The request is the one verify_task sends in the last test: the
    model server evaluates the prompt once for both.)"""
    judge = client(
        llama_server, tmp_path, judge_response_format="none", judge_retries=2, judge_max_tokens=48
    )
    messages = build_messages(MANY, PA_OUTPUT, target="the agent's final output (output.md)")
    with pytest.raises(JudgeError, match=r"in 3 attempt\(s\).*malformed reply") as caught:
        judge.rate(MANY, messages)
    assert caught.value.reason == "judge answered unparseably"  # not evaluated, for this reason
    assert judge.calls == 3
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_server_error_is_an_error(llama_server, tmp_path):
    """A prompt longer than the server's context window: the server refuses it."""
    long_output = "The patient reports persistent pain. " * 1500
    judge = client(llama_server, tmp_path, judge_retries=0)
    with pytest.raises(JudgeError, match="HTTP 4|HTTP 5") as caught:
        judge.rate(PRINCIPLES, build_messages(PRINCIPLES, long_output, limit=100_000))
    assert caught.value.reason.startswith(("judge refused the request", "judge unavailable"))
    assert llama_server not in str(caught.value)  # no message names the judge's URL


def test_a_real_judge_that_cannot_rate_leaves_verify_task_unverified(llama_server, tmp_path):
    """What a coordinator gets when the judge answers, but never in the rating format: the
    criterion is not evaluated (no score, not failed), the task's verdict is unknown, its
    confidence lowered, and the feedback has nothing for the agent."""
    from pytest_verial import verify_task

    box = tmp_path / "run" / "pa-letter"
    box.mkdir(parents=True)
    (box / "output.md").write_text(PA_OUTPUT, encoding="utf-8")
    task = {
        "id": "pa-letter",
        "criteria": [
            {"id": "sections", "assertion": {"assert": "output-sections", "sections": ["PA"]}},
            {"id": "judged", "assertion": {"assert": "llm-rubric", "principles": MANY}},
        ],
    }
    config = {
        "judge_model": MODEL_ALIAS,
        "judge_base_url": llama_server,
        "judge_backoff": 0,
        "judge_retries": 1,
        "judge_response_format": "none",
        "judge_max_tokens": 48,
        "judge_cache_dir": str(tmp_path / "cache"),
        "cost": 1.0,
    }
    run = verify_task(task, box, config).to_dict()
    sections, judged = run["criterion_runs"]
    assert sections["status"] == "passed"
    assert judged["status"] == "error" and judged["score"] is None and not judged["passed"]
    assert judged["not_evaluated"] == "judge answered unparseably"
    assert run["verification"] == "incomplete" and run["verdict"] is None
    assert run["confidence"] == 0.5 and run["feedback"] is None
    assert llama_server not in str(run)
