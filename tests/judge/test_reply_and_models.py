"""Strict reply parsing, model-id normalisation, settings and prices: plain units."""

from __future__ import annotations

import json

import pytest

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial._errors import RunConfigError

# private: internals with no public face (issue 32: a test is not a user)
from pytest_verial.judge._models import normalise_model_id, same_model
from pytest_verial.judge._reply import MalformedReply, parse_reply
from pytest_verial.judge._settings import build_settings


def test_valid_reply_in_a_code_fence():
    content = (
        "```json\n"
        + json.dumps(
            {
                "ratings": [
                    {"principle": 2, "rating": 3, "reasoning": "b"},
                    {"principle": 1, "rating": 5, "reasoning": "a"},
                ],
                "confidence": 0.7,
            }
        )
        + "\n```"
    )
    parsed = parse_reply(content, 2)
    assert [(r.principle, r.rating) for r in parsed.ratings] == [(1, 5), (2, 3)]
    assert parsed.confidence == 0.7


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "empty reply"),
        ("The output is great, 5/5.", "not JSON"),
        ('{"score": 5}', "no 'ratings' list"),
        ('{"ratings": [{"principle": 1, "rating": 0, "reasoning": "x"}]}', "rating 0 is not"),
        ('{"ratings": [{"principle": 1, "rating": 9, "reasoning": "x"}]}', "rating 9 is not"),
        ('{"ratings": [{"principle": 1, "rating": 4.5, "reasoning": "x"}]}', "rating 4.5"),
        ('{"ratings": [{"principle": 1, "rating": true, "reasoning": "x"}]}', "rating True"),
        ('{"ratings": [{"principle": 1, "rating": 4}]}', "'reasoning' is missing"),
        (
            '{"ratings": [{"principle": 3, "rating": 4, "reasoning": "x"}]}',
            "not a principle number",
        ),
        (
            '{"ratings": [{"principle": 1, "rating": 4, "reasoning": "x"},'
            ' {"principle": 1, "rating": 5, "reasoning": "y"}]}',
            "rated twice",
        ),
    ],
)
def test_malformed_replies_are_errors(content, message):
    with pytest.raises(MalformedReply, match=message):
        parse_reply(content, 1)


def test_missing_principle_is_an_error_not_a_default():
    content = json.dumps({"ratings": [{"principle": 1, "rating": 5, "reasoning": "x"}]})
    with pytest.raises(MalformedReply, match=r"principle\(s\) 2, 3 not rated"):
        parse_reply(content, 3)


@pytest.mark.parametrize(
    "a, b",
    [
        ("gpt-4o-mini", "openai/GPT-4o-mini-2024-07-18"),
        ("claude-3-5-haiku-20241022", "anthropic.claude-3-5-haiku-20241022-v1:0"),
        ("claude-3-5-haiku@20241022", "Anthropic/claude-3-5-haiku-latest"),
        ("openai:gpt-4.1-mini", "openrouter/openai/gpt-4.1-mini"),
        ("gpt-4-0613", "GPT-4"),
    ],
)
def test_same_model_after_normalisation(a, b):
    assert same_model(a, b)


@pytest.mark.parametrize(
    "a, b",
    [
        ("gpt-4o", "gpt-4o-mini"),
        ("gpt-4o", "gpt-4"),
        ("claude-3-5-haiku", "claude-3-5-sonnet"),
        ("gpt-4o", None),
    ],
)
def test_different_models(a, b):
    assert not same_model(a, b)


def test_normalise_keeps_version_numbers():
    assert normalise_model_id("gemini-2.0-flash") == "gemini-2.0-flash"


def test_settings_precedence_options_over_run_yaml():
    settings = build_settings(
        {"judge_model": "gpt-4.1-mini", "bypass_cost": None, "judge_cache_dir": "off"},
        executor_model="claude-sonnet-4-5",
        judge_config={
            "model": "gpt-4o-mini",
            "base_url": "http://127.0.0.1:9/v1",
            "bypass_cost": 0.1,
            "prices": {"gpt-4.1-mini": {"input": 1, "output": 2}},
        },
    )
    assert settings.model == "gpt-4.1-mini"
    assert settings.base_url == "http://127.0.0.1:9/v1"
    assert settings.bypass_cost == 0.1
    assert settings.cache_dir is None
    assert settings.executor_model == "claude-sonnet-4-5"
    assert settings.cost(1_000_000, 500_000) == (2.0, True)


def test_unknown_model_costs_zero_and_says_so():
    settings = build_settings({"judge_model": "smollm2-135m"})
    assert settings.cost(1000, 100) == (0.0, False)


@pytest.mark.parametrize(
    "config, message",
    [
        ({"modle": "x"}, "unknown key"),
        ({"timeout": "soon"}, "expected a number"),
        ({"prices": {"m": {"input": 1}}}, "needs {input"),
    ],
)
def test_bad_judge_config_is_a_clear_error(config, message):
    with pytest.raises(RunConfigError, match=message):
        build_settings({}, judge_config=config)
