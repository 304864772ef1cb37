"""Rule 2 inside a reasoning block: a code marker right after a special token that the
visible text would lose (`<|begin_of_solution|>`) is judged as if the token were gone, as
it is outside a block, so a block rolled back to text reads its code as normalizing the
result again will read it."""

from __future__ import annotations

import pytest

from thinkfix import Policy, StreamNormalizer, normalize

CODE = Policy(protect_code=True)

# text, visible, finding kinds: each once hid its answer (or lost its idempotence)
CASES = [
    # the exact report: pass 1 kept the block as text, pass 2 removed it
    ("<answer><think>\n<|begin_of_solution|>```\n```</think>", "<answer>", ["block"]),
    ("<answer><think>\n<|end_of_solution|>```\n```</think>", "<answer>", ["block"]),
    (
        "<answer><think>\n<|begin_of_solution|><|end_of_solution|>```\n```</think>",
        "<answer>",
        ["block"],
    ),
    ("<answer><think>\n  <|begin_of_solution|> ```\n```</think>", "<answer>", ["block"]),
    ("Intro:<think>\n<|begin_of_solution|>~~~\n~~~</think>A", "Intro:A", ["block"]),
    # a leading block reads the same way
    ("<think>\n<|begin_of_solution|>```\n```</think>Answer", "Answer", ["block"]),
    # text before the marker on its line: the run is no fence, in or out of a block, and
    # the next line's run opens one (`</think>` its info string) that never closes
    (
        "<answer><think>\nx<|begin_of_solution|>```\n```</think>",
        "<answer><think>\nx```\n```</think>",
        ["unclosed_inline", "marker"],
    ),
]


@pytest.mark.parametrize(("text", "visible", "kinds"), CASES)
def test_code_after_a_marker_in_a_block_reads_as_the_visible_text(
    text: str, visible: str, kinds: list[str]
) -> None:
    once = normalize(text, policy=CODE)
    assert once.visible == visible
    assert [f.kind.value for f in once.findings] == kinds
    twice = normalize(once.visible, policy=CODE)
    assert twice.visible == once.visible
    assert all(not f.kind.changes_text for f in twice.findings)


@pytest.mark.parametrize(("text", "visible", "kinds"), CASES)
@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_code_after_a_marker_in_a_block_streams_as_normalize_reads_it(
    text: str, visible: str, kinds: list[str], size: int
) -> None:
    for shortcuts in (True, False):
        s = StreamNormalizer(policy=CODE, shortcuts=shortcuts)
        parts = [s.feed(text[i : i + size]) for i in range(0, len(text), size)]
        parts.append(s.finish())
        assert "".join(d.visible for d in parts) == visible
        assert [f.kind.value for f in s.findings] == kinds
