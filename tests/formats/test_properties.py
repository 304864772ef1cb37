"""Per format: random valid sessions survive read/write unchanged, and a repair of a random
site changes that site only (every other record byte-identical, ids and numbers kept)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.support import dump_like, read, repair, sites, write
from thinkfix.formats.planner import new_segments
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import ApplyOptions, PlacementKind, Repair

TEXT = st.text(st.characters(codec="utf-8"), max_size=20) | st.sampled_from(
    [
        "<think>plan</think>answer",
        'quote " and \\ back',
        "tab\tnew\nline\r",
        "\x00\x1f\x7f",
        "日志 😀 é",
        "\u2028",
        "lone \ud800 surrogate",
        "</think>",
        "a/b <b> & c",
    ]
)
NONEMPTY = TEXT.filter(lambda t: bool(t.strip()))
NUMBER = st.sampled_from(
    [
        "0",
        "-17",
        "1.0",
        "-0.0",
        "0.000005",
        "1e-7",
        "1.2E+3",
        "0.1",
        "9007199254740993",
        "123456789012345678901",
    ]
).map(lambda s: ("num", s))
SCALAR = st.one_of(TEXT, NUMBER, st.booleans(), st.none())
EXTRA_VALUE = st.recursive(
    SCALAR,
    lambda kids: (
        st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3)
    ),
    max_leaves=8,
)
EXTRA = st.dictionaries(st.text(max_size=6).map(lambda k: "x_" + k), EXTRA_VALUE, max_size=3)
OPTIONS = ApplyOptions(claude_code_mode="archive", codex_mode="insert")


def _lines(records: list[Any], **kw: Any) -> bytes:
    return "".join(dump_like(r, **kw) + "\n" for r in records).encode("utf-8")


@st.composite
def claude_code(draw: Any) -> bytes:
    entries = []
    for i in range(draw(st.integers(1, 4))):
        blocks = [{"type": "text", "text": t} for t in draw(st.lists(TEXT, min_size=1, max_size=2))]
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{i}",
                "name": "Bash",
                "input": {"command": draw(TEXT)},
            }
        )
        entries.append(
            {
                "type": "user",
                "message": {"role": "user", "content": draw(TEXT)},
                "uuid": f"u{i}",
                "parentUuid": f"a{i - 1}",
                "sessionId": "s",
            }
        )
        entries.append(
            {
                "parentUuid": f"u{i}",
                "type": "assistant",
                **draw(EXTRA),
                "message": {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "content": blocks,
                    "usage": {"input_tokens": draw(NUMBER), "output_tokens": draw(NUMBER)},
                    **draw(EXTRA),
                },
                "uuid": f"a{i}",
                "sessionId": "s",
            }
        )
    return _lines(entries)


@st.composite
def codex(draw: Any) -> bytes:
    lines: list[Any] = [
        {
            "timestamp": "t0",
            "type": "session_meta",
            "payload": {"id": "sess", "model_provider": "ollama", **draw(EXTRA)},
        }
    ]
    for i in range(draw(st.integers(1, 3))):
        text = draw(TEXT)
        lines += [
            {
                "timestamp": f"t{i}",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": draw(TEXT)}],
                },
            },
            {
                "timestamp": f"t{i}",
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text}],
                    **draw(EXTRA),
                },
            },
            {
                "timestamp": f"t{i}",
                "type": "event_msg",
                "payload": {"type": "agent_message", "message": text},
            },
            {
                "timestamp": f"t{i}",
                "type": "event_msg",
                "payload": {"type": "token_count", "info": {"total": draw(NUMBER)}, **draw(EXTRA)},
            },
        ]
    return _lines(lines)


@st.composite
def pi(draw: Any) -> bytes:
    lines: list[Any] = [
        {"type": "session", "version": 3, "id": "sess", "timestamp": "t", "cwd": "/w"}
    ]
    for i in range(draw(st.integers(1, 3))):
        lines.append(
            {
                "type": "message",
                "id": f"m{i}",
                "parentId": f"p{i}",
                "timestamp": "t",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": draw(TEXT)},
                        {
                            "type": "toolCall",
                            "id": f"call_{i}",
                            "name": "read",
                            "arguments": {"path": draw(TEXT)},
                        },
                    ],
                    "api": draw(st.sampled_from(["openai-completions", "anthropic-messages"])),
                    "provider": "openrouter",
                    "model": "m",
                    "usage": {"cost": {"input": draw(NUMBER), "total": draw(NUMBER)}},
                    "stopReason": "stop",
                    "timestamp": draw(NUMBER),
                    **draw(EXTRA),
                },
            }
        )
    return _lines(lines)


@st.composite
def claw_code(draw: Any) -> bytes:
    lines: list[Any] = [
        {
            "created_at_ms": 1,
            "model": "qwen3-32b",
            "session_id": "s",
            "type": "session_meta",
            "updated_at_ms": 2,
            "version": 1,
        }
    ]
    for _ in range(draw(st.integers(1, 3))):
        lines.append(
            {
                "message": {
                    "blocks": [{"text": draw(TEXT), "type": "text"}],
                    "role": "assistant",
                    "usage": {"input_tokens": draw(NUMBER)},
                },
                "type": "message",
            }
        )
    return _lines(lines, sort_keys=True)


@st.composite
def openai_chat(draw: Any) -> bytes:
    messages: list[Any] = [{"role": "system", "content": draw(TEXT)}]
    for _ in range(draw(st.integers(1, 3))):
        messages.append({"role": "user", "content": draw(TEXT)})
        messages.append({"role": "assistant", "content": draw(TEXT), **draw(EXTRA)})
    doc = {"model": "m", "temperature": draw(NUMBER), "messages": messages}
    indent = draw(st.sampled_from(["  ", "\t", "    "]))
    return (dump_like(doc, indent=indent, key_sep=": ") + draw(st.sampled_from(["", "\n"]))).encode(
        "utf-8"
    )


@st.composite
def anthropic(draw: Any) -> bytes:
    lines = [
        {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [
                {"type": "thinking", "thinking": draw(TEXT), "signature": "sig"},
                {"type": "text", "text": draw(TEXT)},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": draw(NUMBER)},
            **draw(EXTRA),
        }
        for i in range(draw(st.integers(1, 3)))
    ]
    return _lines(lines)


@st.composite
def gemini_cli(draw: Any) -> bytes:
    messages: list[Any] = []
    for i in range(draw(st.integers(1, 3))):
        messages.append({"id": f"u{i}", "timestamp": "t", "type": "user", "content": draw(TEXT)})
        messages.append(
            {
                "id": f"g{i}",
                "timestamp": "t",
                "type": "gemini",
                "content": draw(TEXT),
                "thoughts": draw(
                    st.sampled_from([[], [{"subject": "s", "description": "d", "timestamp": "t"}]])
                ),
                "tokens": {"input": draw(NUMBER)},
                "model": "gemini",
                **draw(EXTRA),
            }
        )
    doc = {
        "sessionId": "s",
        "projectHash": "p",
        "startTime": "t",
        "lastUpdated": "t",
        "messages": messages,
    }
    return dump_like(doc, indent="  ", key_sep=": ").encode("utf-8")


STRATEGIES: dict[str, Callable[[], Any]] = {
    "claude-code": claude_code,
    "codex": codex,
    "pi": pi,
    "claw-code": claw_code,
    "openai-chat": openai_chat,
    "anthropic": anthropic,
    "gemini-cli": gemini_cli,
}


def _check(name: str, data: bytes, pick: Any, visible: str, thinking: str) -> None:
    fmt = get(name)
    records = read(fmt, data)
    assert write(fmt, records) == data
    assert all(r.error is None for r in records)
    found = sites(fmt, records)
    assert found, "every generated session has assistant text"
    site = pick(found)
    rep = Repair(site, visible, (thinking,))
    out = repair(fmt, data, [rep], OPTIONS)
    placement = out.placements[0]
    if visible == site.text and not new_segments(rep):  # e.g. the thinking duplicates native
        assert placement.reason == "nothing to change" and out.data == data
    elif not visible.strip():  # never an empty text: dropped beside others, or refused
        if placement.applied:
            assert placement.text_path is None or placement.placeholder
        else:
            assert placement.kind is PlacementKind.REFUSED and out.data == data
    else:
        assert out.placements[0].applied, out.placements[0].reason


def _property(name: str) -> Any:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=STRATEGIES[name](), pick=st.data(), visible=TEXT, thinking=NONEMPTY)
    def run(data: bytes, pick: Any, visible: str, thinking: str) -> None:
        _check(name, data, lambda found: pick.draw(st.sampled_from(found)), visible, thinking)

    return run


test_properties_claude_code_round_trip_and_repair = _property("claude-code")
test_properties_codex_round_trip_and_repair = _property("codex")
test_properties_pi_round_trip_and_repair = _property("pi")
test_properties_claw_code_round_trip_and_repair = _property("claw-code")
test_properties_openai_chat_round_trip_and_repair = _property("openai-chat")
test_properties_anthropic_round_trip_and_repair = _property("anthropic")
test_properties_gemini_cli_round_trip_and_repair = _property("gemini-cli")
