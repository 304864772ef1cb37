"""Shared helpers for the normalizer tests."""

from __future__ import annotations

from thinkfix import Policy, StreamNormalizer, normalize


def stream(chunks: list[str], **kwargs: object) -> tuple[str, str]:
    """Feed chunks through a StreamNormalizer; the visible and thinking text it released."""
    s = StreamNormalizer(**kwargs)  # type: ignore[arg-type]
    visible, thinking = [], []
    for chunk in chunks:
        d = s.feed(chunk)
        visible.append(d.visible)
        thinking.append(d.thinking)
    d = s.finish()
    return "".join(visible) + d.visible, "".join(thinking) + d.thinking


def batch_pair(
    text: str,
    policy: Policy | None = None,
    native: str | None = None,
    start_in_reasoning: bool = False,
) -> tuple[str, str]:
    r = normalize(
        text,
        policy=policy or Policy(),
        native_reasoning=native,
        start_in_reasoning=start_in_reasoning,
    )
    return r.visible, "\n\n".join(r.extracted)
