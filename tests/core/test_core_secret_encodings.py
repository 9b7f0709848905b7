"""A registered secret is masked in every reversible common encoding (issue 18, class 3).

A hypothesis property on :func:`pytest_verial._secrets.redact`: random keys, several registered
at once, each written whole in one encoding (case changes, ``_`` as ``-``, percent-encoding per
byte in either case, JSON ``\\uXXXX``, Python ``\\xNN`` and ``\\_``-style escapes, HTML
references, hex, base64 and base64url at 3 offsets with and without padding), or with every
character encoded its own way. Then one real session in which the agent wrote every encoded
form of the judge key and of a run.yaml key into its sandbox: no form survives in any artifact.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from core_support import Project, run_subprocess
from hypothesis import given, settings
from hypothesis import strategies as st

# private module: unit test of secret masking (register, reset, MASK)
from pytest_verial import _secrets as secrets


def _b64(offset: int, url: bool, pad: bool) -> Callable[[str], str]:
    def encode(key: str) -> str:
        raw = b"ab"[:offset] + key.encode()
        text = (base64.urlsafe_b64encode if url else base64.b64encode)(raw).decode()
        return text if pad else text.rstrip("=")

    return encode


ENCODINGS: dict[str, Callable[[str], str]] = {
    "verbatim": lambda k: k,
    "upper": str.upper,
    "lower": str.lower,
    "swapcase": str.swapcase,
    "underscore as dash": lambda k: k.replace("_", "-"),
    "dashes, upper": lambda k: k.replace("_", "-").upper(),
    "percent, upper hex": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "percent, lower hex": lambda k: "".join(f"%{b:02x}" for b in k.encode()),
    "json \\u": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "json \\u, upper hex": lambda k: "".join(f"\\u{ord(c):04X}" for c in k),
    "python \\x": lambda k: "".join(f"\\x{b:02x}" for b in k.encode()),
    "bytes repr": lambda k: repr(k.encode())[2:-1],
    "backslash escapes": lambda k: "".join("\\" + c if not c.isalnum() else c for c in k),
    "json dumps": lambda k: json.dumps(k)[1:-1],
    "html references": lambda k: "".join(f"&#{ord(c)};" for c in k),
    "hex": lambda k: k.encode().hex(),
    "HEX": lambda k: k.encode().hex().upper(),
    **{
        f"base64{'url' if url else ''} +{offset}{'' if pad else ' unpadded'}": _b64(
            offset, url, pad
        )
        for offset in range(3)
        for url in (False, True)
        for pad in (False, True)
    },
}
#: one character, encoded its own way (a partly encoded key)
CHAR_WAYS: list[Callable[[str], str]] = [
    lambda c: c,
    str.upper,
    str.lower,
    lambda c: "".join(f"%{b:02X}" for b in c.encode()),
    lambda c: "".join(f"%{b:02x}" for b in c.encode()),
    lambda c: f"\\u{ord(c):04x}",
    lambda c: "".join(f"\\x{b:02x}" for b in c.encode()),
    lambda c: "\\" + c if not c.isalnum() else c,
    lambda c: "-" if c == "_" else c,
    lambda c: f"&#x{ord(c):x};",
]

KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:~"
keys = st.text(alphabet=KEY_ALPHABET, min_size=16, max_size=48).filter(lambda k: len(set(k)) >= 8)
#: text around a key: words that are not a key's fragment
words = st.text(alphabet="xyz ,;!", max_size=12)


@contextmanager
def registered(*values: str) -> Iterator[None]:
    """Only ``values`` registered (the registry is process-wide: restored after)."""
    saved = set(secrets._SECRETS)
    secrets.reset()
    try:
        for value in values:
            secrets.register(value)
        yield
    finally:
        secrets.reset()
        for value in saved:
            secrets.register(value)


def _survivors(encoded: str, masked: str) -> list[str]:
    """Runs of 8 characters of ``encoded`` still in ``masked``."""
    return [encoded[i : i + 8] for i in range(len(encoded) - 7) if encoded[i : i + 8] in masked]


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(keys, min_size=1, max_size=4, unique_by=str.lower),
    before=words,
    after=words,
)
def test_every_encoding_of_every_registered_key_is_masked(
    keys: list[str], before: str, after: str
) -> None:
    with registered(*keys):
        for key in keys:
            for name, encode in ENCODINGS.items():
                encoded = encode(key)
                masked = secrets.redact(f"{before}<{encoded}>{after}")
                assert "***" in masked, (name, key, encoded)
                assert _survivors(encoded, masked) == [], (name, key, masked)
                if not name.startswith("base64"):  # base64 edges depend on the neighbours
                    assert f"<{secrets.MASK}>" in masked, (name, key, masked)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), key=keys)
def test_a_key_with_each_character_encoded_its_own_way_is_masked(
    data: st.DataObject, key: str
) -> None:
    ways = data.draw(st.lists(st.sampled_from(CHAR_WAYS), min_size=len(key), max_size=len(key)))
    encoded = "".join(way(c) for way, c in zip(ways, key, strict=True))
    with registered(key):
        masked = secrets.redact(f"row: <{encoded}> end")
    assert masked == "row: <***> end", (key, encoded)


@pytest.mark.parametrize(
    "text",
    [
        "plain words, nothing secret here at all",
        "%41%42 \\u0041 \\x41 &#65; &amp; \\_ 4142434445464748",
        "aGVsbG8gd29ybGQ= ordinary base64 of hello world",
    ],
)
def test_text_without_a_key_is_unchanged(text: str) -> None:
    with registered("sk_live_9fK2mQ7pX4vB8nR1"):
        assert secrets.redact(text) == text


JUDGE_KEY = "sk_judge_Zq81_Lm0Pw7Ty5Rc"
PARTNER_KEY = "pk-partner_Hv6Nb3_Xw9Ds2Kf"


def _artifact_texts(root: Path) -> dict[str, str]:
    texts = {}
    kinds = {".json", ".xml", ".md", ".html", ".txt", ".jsonl"}
    for path in sorted(root.rglob("*")):
        # the agent's own files in its sandbox hold the key, of course
        if path.is_file() and path.suffix in kinds and "sandbox" not in path.parts:
            texts[str(path.relative_to(root))] = path.read_text(encoding="utf-8")
    db = root / ".verial" / "results.db"
    assert db.exists()
    with sqlite3.connect(db) as conn:
        texts["store"] = "\n".join(conn.iterdump())
    return texts


def test_no_encoded_key_reaches_any_artifact_of_a_session(tmp_path: Path) -> None:
    """The agent wrote each form of both keys into its output; every criterion shows it."""
    forms = {
        f"{who} {name}": encode(key)
        for who, key in (("judge", JUDGE_KEY), ("partner", PARTNER_KEY))
        for name, encode in ENCODINGS.items()
    }
    project = Project(tmp_path)
    fields = [{"path": f"rows.{i}", "expected": "redacted"} for i in range(len(forms))]
    project.benchmark(
        "b",
        {
            "benchmark": "keys",
            "tasks": [
                {
                    "id": "t",
                    "criteria": [
                        {
                            "id": "rows",
                            "assertion": {"assert": "output-match", "fields": fields},
                        },
                        {"id": "says", "assertion": {"assert": "output-match", "contains": ["x"]}},
                    ],
                }
            ],
        },
    )
    project.sandbox("t", {"output.json": json.dumps({"rows": list(forms.values())})})
    project.run_yaml({"agent": "a", "sources": {"partner": {"api_key_env": "PARTNER_KEY_7"}}})
    code, output = run_subprocess(
        tmp_path,
        "-n",
        "0",
        "-vv",
        "-rA",
        "--verial-report",
        "report.json",
        "--verial-junit",
        "task.xml",
        "--junitxml",
        "pytest.xml",
        "--verial-markdown",
        "summary.md",
        "--verial-html",
        "page.html",
        env={
            "OPENAI_API_KEY": JUDGE_KEY + "\n",
            "PARTNER_KEY_7": PARTNER_KEY,
            "GITHUB_STEP_SUMMARY": str(tmp_path / "step.md"),
        },
    )
    assert code == 1, output[-3000:]
    texts = {"terminal": output, **_artifact_texts(tmp_path)}
    assert {"report.json", "task.xml", "pytest.xml", "summary.md", "step.md", "page.html"} <= set(
        texts
    )
    report = json.loads(texts["report.json"])
    rows = report["benchmark_runs"][0]["task_runs"][0]["criterion_runs"][0]["evidence"]
    actual = [r["actual"] for r in rows["field_results"]]
    assert actual.count("***") >= len(forms) // 2, actual  # the rows reached the report, masked
    leaks = {
        where: [name for name, encoded in forms.items() if _survivors(encoded, text)]
        for where, text in texts.items()
    }
    assert leaks == {where: [] for where in texts}


def test_the_mask_lands_on_the_key_whatever_is_around_it() -> None:
    """Characters whose lower case is longer (U+0130), escapes and breaks around or inside the
    key: the mask covers the key's span in the original text, nothing else."""
    key = "sk_live_9fK2mQ7pX4vB8nR1"
    with registered(key):
        assert secrets.redact(f"\u0130\u0130 {key} \u0130") == "\u0130\u0130 *** \u0130"
        assert secrets.redact(f"%41 \\u0042 {key[:10]}\\n   {key[10:]} &amp;") == (
            "%41 \\u0042 *** &amp;"
        )
        assert secrets.redact(f"a-b {key.upper().replace('_', '-')}-tail") == "a-b ***-tail"
