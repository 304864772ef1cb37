"""Whole-string normalization: `normalize(text) -> Result`."""

from __future__ import annotations

from thinkfix.normalizer.grammar import DETOK_OPEN, grammar_for
from thinkfix.normalizer.kinds import Label
from thinkfix.normalizer.pipeline import Pipeline
from thinkfix.normalizer.policy import DEFAULT, NativeMode, Policy, harmony_model
from thinkfix.normalizer.shapes import settle
from thinkfix.normalizer.spans import Result, Span

#: Characters fed to the pipeline at a time. Fed whole, a text's raw spans and pieces (one
#: per token, each with its text) all lived until the end: ~14x a text of many tokens, a
#: 64 MB one 1.46 GB (#22 item 9). Fed in chunks, its pieces merge into spans as they come.
CHUNK = 1 << 16


def normalize(
    text: str,
    *,
    native_reasoning: str | None = None,
    policy: Policy = DEFAULT,
    start_in_reasoning: bool = False,
    followed_by_tool_call: bool = False,
    model: str | None = None,
) -> Result:
    """Split stored assistant text into visible answer and leaked reasoning, losing nothing.

    The result's spans tile `text`; `visible`, `thinking` and `findings` derive from them.
    `followed_by_tool_call` says a tool call follows the text in its message (the format
    knows, the text cannot): rule 4's evidence, so an orphan close that ends the text
    still splits. `model`, the model the record names, is evidence too: detokenised Harmony
    (`analysis...assistantfinal`) is read only from a gpt-oss model.
    """
    native = clean_native(native_reasoning, policy) if native_reasoning else ""
    if not policy.enabled or (not start_in_reasoning and _clean(text, policy, model)):
        spans = (Span(0, len(text), Label.VISIBLE),) if text else ()
        return Result(text, spans, (), native)
    if not native and not start_in_reasoning and len(text) <= CHUNK:
        shaped = settle(text, policy, followed_by_tool_call, model)
        if shaped is not None:
            return shaped  # a common leak shape, without the scanner (`shapes`)
    pipeline = Pipeline(
        policy,
        native=native,
        start_in_reasoning=start_in_reasoning,
        followed_by_tool_call=followed_by_tool_call,
        model=model,
    )
    last = max(0, len(text) - 1) // CHUNK * CHUNK
    for at in range(0, last, CHUNK):
        pipeline.keep(pipeline.feed(text[at : at + CHUNK]))
    pipeline.keep(pipeline.finish(text[last:]))
    return pipeline.result(text)


def _clean(text: str, policy: Policy, model: str | None) -> bool:
    """True when no delimiter can be in `text`: one C-level search, no Python loop."""
    if grammar_for(policy).probes.maybe_delimited(text):
        return False
    return not (policy.harmony and text.lstrip().startswith(DETOK_OPEN) and harmony_model(model))


def clean_native(native: str | None, policy: Policy) -> str:
    """Rule 9: native reasoning with any delimiters stripped, trimmed.

    Here, not in `pipeline`, because it is itself a whole-string normalize: the pipeline
    only receives the cleaned text, so it never needs to call back up into batch.
    """
    if not native:
        return ""
    inner = normalize(native, policy=policy.with_changes(native=NativeMode.MERGE))
    parts = [*inner.extracted, inner.visible.strip()]
    return "\n\n".join(p for p in parts if p)
