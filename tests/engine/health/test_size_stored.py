"""`size`: inlined images, images stored again and thinking signatures stored again (#28).

The issue's bloat list names "re-inlined images" and "redundant signatures"; the `size`
check reported only records and files over a size and bytes by record type, so a session
that kept the same screenshot four times (Claude Code's Read result holds it in its
`tool_result` and again in `toolUseResult.file`; a Codex compaction stores the prompt's image
and the encrypted reasoning again) showed nothing. The data under
`tests/data/health/*/images/` holds them in each runtime's own shape; `expected.json` lists
every finding.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkfix.engine.health.model import HealthOptions
from thinkfix.engine.health.run import check_bytes, check_file
from thinkfix.engine.health.size import SIGNATURE_MIN, stored_blobs
from thinkfix.engine.report.checks import Check
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.formats import registry

DATA = Path(__file__).resolve().parents[2] / "data" / "health"
SIZE = (Check.SIZE,)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
GIF = "R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=="
SIG = "EqQBCkYIBRgCKkB" + "x" * 160  # the start of an Anthropic signature, made long


def _one(rel: str, problem: Problem) -> list[HealthFinding]:
    path = next((DATA / rel).iterdir())
    fmt = registry.detect_file(str(path))
    return [f for f in check_file(str(path), fmt, SIZE).findings if f.problem is problem]


def _stored(rel: str) -> str:
    """The base64 of the first PNG in a data file (each file inlines one PNG again)."""
    text = next((DATA / rel).iterdir()).read_text()
    found = re.search(r"iVBORw0KGgo[A-Za-z0-9+/=]*", text)  # a PNG's base64 starts so
    assert found is not None
    return found.group()


def test_claude_code_a_screenshot_read_back_is_stored_three_times() -> None:
    png = len(_stored("claude-code/images"))
    (inlined,) = _one("claude-code/images", Problem.INLINED_IMAGES)
    assert (inlined.line, inlined.json_path, inlined.detail) == (
        1,
        "message.content[1].source",
        "gif,png",
    )
    assert inlined.size == 3 * png + len(GIF)
    assert inlined.message == (
        f"4 images inlined as base64, {3 * png + len(GIF):,} bytes (png 3: {3 * png:,}; gif 1: 60)"
    )
    (again,) = _one("claude-code/images", Problem.REPEATED_IMAGE)
    # the tool_result's copy; toolUseResult.file on the same line is the third
    assert (again.line, again.json_path) == (3, "message.content[0].content[0].source")
    assert again.size == 2 * png
    assert f"stored 3 times (first on line 1): {2 * png:,} bytes wasted" in again.message


def test_pi_an_image_read_back_by_the_read_tool() -> None:
    png = len(_stored("pi/images"))
    (inlined,) = _one("pi/images", Problem.INLINED_IMAGES)
    assert (inlined.line, inlined.json_path, inlined.size) == (3, "message.content[1]", 2 * png)
    (again,) = _one("pi/images", Problem.REPEATED_IMAGE)
    assert (again.line, again.json_path, again.size) == (5, "message.content[1]", png)


def test_codex_a_compaction_stores_the_image_and_the_reasoning_again() -> None:
    png = len(_stored("codex/images"))
    (inlined,) = _one("codex/images", Problem.INLINED_IMAGES)
    assert (inlined.line, inlined.json_path) == (3, "payload.content[1].image_url")
    (again,) = _one("codex/images", Problem.REPEATED_IMAGE)
    assert (again.line, again.size) == (6, png)
    assert again.json_path == "payload.replacement_history[0].content[1].image_url"
    (sig,) = _one("codex/images", Problem.REPEATED_SIGNATURE)
    assert (sig.line, sig.json_path) == (6, "payload.replacement_history[1].encrypted_content")
    encrypted = json.loads(next((DATA / "codex/images").iterdir()).read_text().splitlines()[3])
    assert sig.size == len(encrypted["payload"]["encrypted_content"])


def test_every_runtime_shape_of_an_image_and_a_signature() -> None:
    url = "data:image/png;base64," + PNG
    record = {
        "a": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
        ],
        "b": {"type": "image", "file": {"base64": PNG, "type": "image/png"}},  # Claude Code Read
        "c": {"type": "image", "data": GIF, "mimeType": "image/gif"},  # pi, Goose
        "d": {"type": "input_image", "image_url": url},  # Codex
        "e": {"type": "image_url", "image_url": {"url": url}},  # OpenAI chat
        "f": {"inlineData": {"mimeType": "image/png", "data": PNG}},  # Gemini
        "g": {"type": "file", "mime": "image/png", "url": url},  # OpenCode
        "h": {"type": "thinking", "thinking": "t", "signature": SIG},
        "i": {"type": "redacted_thinking", "data": SIG},
        "j": {"type": "reasoning", "encrypted_content": SIG},
        "k": {"text": "t", "thoughtSignature": SIG},
    }
    assert [(b.kind, b.path, b.format, b.data) for b in stored_blobs(record)] == [
        ("image", "a[0].source", "png", PNG),
        ("image", "b.file", "png", PNG),
        ("image", "c", "gif", GIF),
        ("image", "d.image_url", "png", PNG),
        ("image", "e.image_url.url", "png", PNG),
        ("image", "f.inlineData", "png", PNG),
        ("image", "g.url", "png", PNG),
        ("signature", "h.signature", "", SIG),
        ("signature", "i.data", "", SIG),
        ("signature", "j.encrypted_content", "", SIG),
        ("signature", "k.thoughtSignature", "", SIG),
    ]


def test_what_is_neither_an_image_nor_a_signature() -> None:
    record = {
        "input": {"signature": SIG, "data": PNG},  # a tool's arguments, not a thinking block
        "pi": {"type": "thinking", "thinkingSignature": "reasoning_content"},  # a field name
        "url": {"type": "image", "source": {"type": "url", "url": "https://x.test/a.png"}},
        "text": "data:image/png;base64, in prose",
        "doc": {"type": "document", "source": {"media_type": "application/pdf", "data": PNG}},
    }
    assert len("reasoning_content") < SIGNATURE_MIN
    assert list(stored_blobs(record)) == []


def test_a_record_nested_past_the_recursion_limit_is_walked() -> None:
    deep: object = {"type": "image", "data": PNG, "mimeType": "image/png"}
    for _ in range(5000):
        deep = [deep]
    (blob,) = stored_blobs(deep)
    assert (blob.kind, blob.data, blob.path) == ("image", PNG, "[0]" * 5000)


def _session(blobs: list[str]) -> bytes:
    """A Claude Code session: a user prompt per image (`i` or `g`), then a signed thinking
    block per `s`, in the order given."""
    lines = []
    for n, which in enumerate(blobs, 1):
        common = {
            "parentUuid": None,
            "sessionId": "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
            "uuid": f"00000000-0000-4000-8000-{n:012d}",
            "timestamp": "2026-03-06T11:00:00.000Z",
        }
        if which == "s":
            content = [
                {"type": "thinking", "thinking": "Plan.", "signature": SIG},
                {"type": "text", "text": "Done."},
            ]
            rec = {
                **common,
                "type": "assistant",
                "message": {"role": "assistant", "content": content},
            }
        else:
            data, mime = (PNG, "image/png") if which == "i" else (GIF, "image/gif")
            image = {
                "type": "image",
                "source": {"type": "base64", "media_type": mime, "data": data},
            }
            rec = {**common, "type": "user", "message": {"role": "user", "content": [image]}}
        lines.append(json.dumps(rec, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("igs"), max_size=12))
def test_inlining_an_image_k_times_reports_k_minus_1_copies_wasted(order: list[str]) -> None:
    found = check_bytes(
        _session(order), registry.get("claude-code"), SIZE, "s.jsonl", HealthOptions()
    ).findings
    by = {p: [f for f in found if f.problem is p] for p in Problem}
    k, g, s = order.count("i"), order.count("g"), order.count("s")
    repeats = {f.detail: f for f in by[Problem.REPEATED_IMAGE]}
    assert len(repeats) == (k > 1) + (g > 1)
    for size, times in ((len(PNG), k), (len(GIF), g)):
        hits = [f for f in repeats.values() if f.size == (times - 1) * size]
        if times > 1:
            (hit,) = hits
            assert f"stored {times} times" in hit.message
            assert hit.line == [n for n, w in enumerate(order, 1) if w == "ig"[size == len(GIF)]][1]
    inlined = by[Problem.INLINED_IMAGES]
    assert [f.size for f in inlined] == ([k * len(PNG) + g * len(GIF)] if k + g else [])
    signatures = by[Problem.REPEATED_SIGNATURE]
    assert [f.size for f in signatures] == ([(s - 1) * len(SIG)] if s > 1 else [])
    if s > 1:
        assert signatures[0].line == [n for n, w in enumerate(order, 1) if w == "s"][1]
        assert signatures[0].message.startswith(f"{s - 1} extra cop")
