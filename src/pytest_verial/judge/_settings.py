"""Judge settings: where they come from, and the price table.

Precedence, most specific first (README, "Options"): pytest options (``ctx.options`` /
``--verial-judge-*``, already resolved from the command line and the ini file, see
:mod:`pytest_verial._config.options`), then ``run.yaml`` (``executor_model`` at the top, everything
else under ``sources.judge``), then the defaults of the options table. The API key is never a
value anywhere: ``api_key_env`` names the environment variable that holds it.

Prices are USD per million tokens, ``{model: {input: x, output: y}}``; ``run.yaml``
``sources.judge.prices`` or the ``judge_prices`` option (a mapping, or a YAML/JSON file) add to
or override :data:`DEFAULT_PRICES`. A model without a price costs 0 with ``cost_known: false``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .._config import options as table
from .._errors import RunConfigError
from ._models import normalise_model_id

#: USD per 1M tokens (input, output); public list prices, 2025. Override in config.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o4-mini": (1.10, 4.40),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
}

# The defaults of the judge's options are the options table's (pytest_verial._config.options).
DEFAULT_BASE_URL: str = table.option("verial_judge_base_url").default
DEFAULT_API_KEY_ENV: str = table.option("verial_judge_api_key_env").default
DEFAULT_CACHE_DIR: str = table.option("verial_judge_cache_dir").default
DEFAULT_BYPASS_COST: float = table.option("verial_bypass_cost").default
DEFAULT_BUDGET: float = table.option("verial_verification_budget").default
DEFAULT_TIMEOUT: float = table.option("verial_judge_timeout").default
DEFAULT_RETRIES: int = table.option("verial_judge_retries").default
DEFAULT_SAMPLES: int = table.option("verial_judge_samples").default
DEFAULT_RESPONSE_FORMAT: str = table.option("verial_judge_response_format").default
#: judge criteria of one task run scored at once (``judge_concurrency``); 1: one after another
DEFAULT_CONCURRENCY: int = table.option("verial_judge_concurrency").default
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class JudgeSettings:
    """Everything the judge client and the ``llm-rubric`` check need to know."""

    model: str | None = None
    base_url: str = DEFAULT_BASE_URL
    api_key_env: str = DEFAULT_API_KEY_ENV
    executor_model: str | None = None
    temperature: float = 0.0
    seed: int | None = 0
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = 0.5
    response_format: str = DEFAULT_RESPONSE_FORMAT
    #: reply token cap; None: 200 + 160 per principle
    max_tokens: int | None = None
    #: times each rubric is asked (its score the mean, its spread the confidence)
    samples: int = DEFAULT_SAMPLES
    cache_dir: Path | None = Path(DEFAULT_CACHE_DIR)
    bypass_cost: float = DEFAULT_BYPASS_COST
    budget: float = DEFAULT_BUDGET
    max_target_chars: int = 24_000
    prices: Mapping[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price(self, model: str | None = None) -> tuple[float, float] | None:
        """(input, output) USD per 1M tokens for ``model`` (default: the judge), or None."""
        wanted = normalise_model_id(model or self.model or "")
        for name, price in self.prices.items():
            if normalise_model_id(name) == wanted:
                return price
        return None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
        """USD for one call's tokens, and whether the price was known."""
        price = self.price()
        if price is None:
            return 0.0, False
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000, True


_JUDGE_KEY = "sources.judge."
#: setting -> (its ``ctx.options`` key, its run.yaml ``sources.judge`` key): those of the
#: options table, then the settings that only run.yaml and inline config give
_KEYS: dict[str, tuple[str, str]] = {
    **{
        each.run_yaml.removeprefix(_JUDGE_KEY): (each.key, each.run_yaml.removeprefix(_JUDGE_KEY))
        for each in table.of_plugin(table.JUDGE_PLUGIN)
        if each.run_yaml is not None
        and each.run_yaml.startswith(_JUDGE_KEY)
        and each.run_yaml != _JUDGE_KEY + "prices"  # a table merged into the built-in one
    },
    # a pytest session's cache is under its rootdir (the option's default); run.yaml's key
    # serves verify_task and the service
    "cache_dir": ("judge_cache_dir", "cache_dir"),
    **{name: (f"judge_{name}", name) for name in ("temperature", "seed", "backoff", "max_tokens")},
}
#: run.yaml ``sources.judge`` keys
RUN_YAML = frozenset({key for _, key in _KEYS.values()} | {"prices", "executor_model"})
_NUMBERS = {
    "temperature": float,
    "timeout": float,
    "retries": int,
    "backoff": float,
    "max_tokens": int,
    "samples": int,
    "bypass_cost": float,
    "budget": float,
    "concurrency": int,
}


_FORMATS = ("json_object", "json_schema", "json_object_schema", "none")
#: the smallest value each number may take, and whether it may equal it
_LOWER = {
    "temperature": (0.0, True),
    "timeout": (0.0, False),
    "retries": (0, True),
    "backoff": (0.0, True),
    "max_tokens": (1, True),
    "samples": (1, True),
    "bypass_cost": (0.0, True),
    "budget": (0.0, True),
    "concurrency": (1, True),
}


class SettingError(RunConfigError):
    """A judge setting that cannot be used; ``option`` is its ``ctx.options`` key."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


def _number(name: str, option: str, key: str, value: Any) -> float | int:
    """A judge number, finite and in range; SettingError naming the setting otherwise."""
    kind = _NUMBERS[name]
    try:
        if isinstance(value, bool) or (kind is int and isinstance(value, float)):
            raise ValueError
        number: float | int = kind(value)
    except (TypeError, ValueError, OverflowError):
        what = "a whole number" if kind is int else "a number"
        raise SettingError(
            option, f"judge setting {key!r}: expected {what}, got {value!r}"
        ) from None
    low, inclusive = _LOWER[name]
    if not math.isfinite(number) or number < low or (number == low and not inclusive):
        bound = f">= {low}" if inclusive else f"> {low}"
        raise SettingError(option, f"judge setting {key!r}: must be {bound}, got {value!r}")
    return number


def concurrency(options: Mapping[str, Any]) -> int:
    """How many judge criteria of one task run are scored at once (``judge_concurrency``:
    ``--verial-judge-concurrency``, ini ``verial_judge_concurrency``, inline ``config``):
    a whole number from 1 to :data:`MAX_CONCURRENCY`, default :data:`DEFAULT_CONCURRENCY`.
    A process-wide setting, so not a run.yaml key. SettingError naming it otherwise."""
    value = options.get("judge_concurrency")
    if value is None:
        return DEFAULT_CONCURRENCY
    number = int(_number("concurrency", "judge_concurrency", "concurrency", value))
    if number > MAX_CONCURRENCY:
        raise SettingError(
            "judge_concurrency",
            f"judge setting 'concurrency': must be <= {MAX_CONCURRENCY}, got {value!r}",
        )
    return number


def load_prices(value: Any) -> dict[str, tuple[float, float]]:
    """A price table from a mapping or a YAML/JSON file path: ``{model: {input, output}}``."""
    if isinstance(value, (str, Path)):
        from .._safeparse import DataError, load_yaml

        path = Path(value)
        try:
            value = load_yaml(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError, DataError) as exc:
            raise RunConfigError(f"judge price table {path}: cannot read: {exc}") from None
    if not isinstance(value, Mapping):
        raise RunConfigError("judge prices: expected a mapping {model: {input: x, output: y}}")
    table: dict[str, tuple[float, float]] = {}
    for model, entry in value.items():
        try:
            if isinstance(entry, Mapping):
                table[str(model)] = (float(entry["input"]), float(entry["output"]))
            else:
                low, high = entry
                table[str(model)] = (float(low), float(high))
        except (KeyError, TypeError, ValueError):
            raise RunConfigError(
                f"judge prices: model {model!r} needs {{input: <USD/1M>, output: <USD/1M>}}"
            ) from None
    return table


def build_settings(
    options: Mapping[str, Any],
    executor_model: str | None = None,
    judge_config: Mapping[str, Any] | None = None,
) -> JudgeSettings:
    """Settings from options (first), run.yaml's ``sources.judge`` (second), defaults (last)."""
    judge_config = judge_config or {}
    unknown = set(judge_config) - RUN_YAML
    if unknown:
        raise RunConfigError(
            f"run.yaml sources.judge: unknown key(s) {', '.join(sorted(unknown))}; known: "
            + ", ".join(sorted({k for _, k in _KEYS.values()} | {"prices"}))
        )
    values: dict[str, Any] = {}
    for name, (option, key) in _KEYS.items():
        value = options.get(option)
        if value is None:
            value = judge_config.get(key)
        if value is None:
            continue
        if name in _NUMBERS:
            value = _number(name, option, key, value)
        values[name] = value
    fmt = values.get("response_format", DEFAULT_RESPONSE_FORMAT)
    if fmt not in _FORMATS:
        raise SettingError(
            "judge_response_format",
            f"judge response_format {fmt!r}: use one of {', '.join(_FORMATS)}",
        )
    cache = values.get("cache_dir", DEFAULT_CACHE_DIR)
    off = str(cache).lower() in ("", "none", "off", "false")
    values["cache_dir"] = None if off else Path(cache)
    prices = dict(DEFAULT_PRICES)
    for extra in (judge_config.get("prices"), options.get("judge_prices")):
        if extra:
            try:
                prices.update(load_prices(extra))
            except SettingError:
                raise
            except RunConfigError as exc:
                raise SettingError("judge_prices", str(exc)) from None
    values["prices"] = prices
    executor = options.get("executor_model") or executor_model or judge_config.get("executor_model")
    values["executor_model"] = executor
    return JudgeSettings(**values)


@dataclass(frozen=True)
class JudgeOptions:
    """The judge's options as a pytest session gives them (command line, ini), checked, by
    their ``ctx.options`` key. None: not given; run.yaml, then the default, decide per run."""

    judge_model: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str | None = None
    executor_model: str | None = None
    judge_cache_dir: str | None = None
    judge_timeout: float | None = None
    judge_samples: int | None = None
    judge_concurrency: int | None = None
    judge_retries: int | None = None
    judge_response_format: str | None = None
    judge_prices: str | None = None
    bypass_cost: float | None = None
    verification_budget: float | None = None

    @classmethod
    def checked(cls, values: Mapping[str, Any]) -> JudgeOptions:
        """Options from values by key (numbers may be text); SettingError naming the first
        unusable one, as :func:`build_settings` words it."""
        settings = build_settings(values)
        limit = concurrency(values)  # a session setting, not a JudgeSettings one
        names = {option: name for name, (option, _) in _KEYS.items()}
        typed = {
            key: getattr(settings, names[key]) if names.get(key) in _NUMBERS else value
            for key, value in values.items()
            if value is not None
        }
        if "judge_concurrency" in typed:
            typed["judge_concurrency"] = limit
        return cls(**typed)

    def to_options(self) -> dict[str, Any]:
        """The ``ctx.options`` of judge criteria: the options given, by key."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }
