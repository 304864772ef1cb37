"""A repaired record keeps its file's escaping and separators (Go, Python, Node styles)."""

from __future__ import annotations

from tests.formats.support import DATA, read, repair, sites
from thinkfix.formats.registry import get
from thinkfix.formats.repairs import ApplyOptions, Repair

GO = (DATA / "claude_code_go_escaped.jsonl").read_bytes()
PY = (DATA / "openai_chat_python_ascii.jsonl").read_bytes()


def test_style_go_html_escapes_survive_a_repair() -> None:
    fmt = get("claude-code")
    (site,) = sites(fmt, read(fmt, GO))
    out = repair(
        fmt,
        GO,
        [
            Repair(
                site,
                "Both comparisons hold: a < b and c > d.",
                ("Check operator precedence & types.",),
            )
        ],
        ApplyOptions(claude_code_mode="archive"),
    )
    line = out.after[1].raw
    assert b"<" not in line and b">" not in line and b"&" not in line
    assert (
        b'"content":[{"type":"thinking","thinking":"Check operator precedence \\u0026 types."},'
        b'{"type":"text","text":"Both comparisons hold: a \\u003c b and c \\u003e d."}]'
    ) in line
    assert out.after[0].raw == read(fmt, GO)[0].raw


def test_style_python_ascii_and_spaced_separators_survive_a_repair() -> None:
    fmt = get("openai-chat")
    (site,) = sites(fmt, read(fmt, PY))
    out = repair(
        fmt, PY, [Repair(site, "No tengo acceso a un reloj.", ("El usuario pregunta la hora.",))]
    )
    assert out.after[1].raw == (
        b'{"role": "assistant", "content": "No tengo acceso a un reloj.", '
        b'"reasoning_content": "El usuario pregunta la hora."}'
    )
    assert out.after[1].raw.isascii()
