"""Copilot Chat's tool-call rounds: the model's text of each agent round, as Copilot replays it.

Copilot (microsoft/vscode-copilot-chat) keeps each round of an agent turn in the request's
`result.metadata.toolCallRounds[]`: `IToolCallRound {id, response: string, toolCalls,
toolInputRetry, thinking?: ThinkingData}` (`src/extension/prompt/common/intents.ts`;
`ToolCallRound`, `toolCallRound.ts`). For an earlier turn its prompt sends each round as an
assistant message, `<AssistantMessage>{round.response}</AssistantMessage>`, and the round's
`thinking` only when the turn is not historical (`src/extension/prompts/node/panel/
toolCalling.tsx`, `ChatToolCallRound`; `agentConversationHistory.tsx` passes
`metadata.toolCallRounds`). `ThinkingData {id, text: string | string[], metadata?,
encrypted?}` (`src/platform/thinking/common/thinking.ts`): `encrypted` is the provider's
signature (`messagesApi.ts` sends it as an Anthropic thinking block's `signature`).

A round's text usually repeats a markdown part of the response VS Code shows (streamed to
both); where it does, the markdown part is the message and the round its mirror. A round no
markdown of its request holds is read on its own, and its reasoning goes into its own
`thinking`, the runtime's place for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

from thinkfix.formats.base import Message
from thinkfix.formats.common import as_str
from thinkfix.formats.jsonedit import SetKey, SetValue
from thinkfix.formats.planner import Draft, Plan
from thinkfix.formats.records import Record
from thinkfix.formats.repairs import TextSlot
from thinkfix.formats.turns import Path
from thinkfix.formats.values import UnexpectedShape, fmt_path, get_path

#: The characters the default grammar's delimiters begin with (`<think>`, `[THINK]`,
#: `◁think▷`): a text with none of them holds no leak, so it is neither kept as a twin nor
#: read as a round.
DELIMITER_CHARS = ("<", "[", "◁")
#: Where a request's rounds are, from its `result`.
ROUNDS: Path = ("metadata", "toolCallRounds")
MARKER = b'"toolCallRounds"'
#: Context key: how many requests the session has after a record (log entries index them).
COUNT = "copilot-chat:requests"
#: Context key: request index -> its modelId (a log line that pushes parts does not say).
MODELS = "copilot-chat:models"
#: Context key: the last request earlier records wrote to, and the `mark`s of its texts in
#: markdown parts or rounds (a round they hold is not read again). Only the last: the log
#: writes a request's parts and then its result before the next request, and a dict of
#: every request's marks would be copied at each line (a result set again later, once
#: newer requests exist, has its rounds read again: counted twice, never lost).
SEEN = "copilot-chat:seen"
#: Request index -> the `mark`s of the markdown texts of its response in a record.
Marks = Callable[[Record], dict[int, list[str | int]]]
Seen = tuple[int, tuple[str | int, ...]] | None


def may_delimit(text: str) -> bool:
    return "<" in text or "[" in text or "◁" in text  # DELIMITER_CHARS, unrolled: per part


def is_request(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("message"), dict)
        and ("requestId" in value or "response" in value)
    )


def requests_of(o: dict[str, Any], count: int) -> Iterator[tuple[Path, dict[str, Any], int]]:
    """(path, request, its index in the session) for each whole request a record holds: the
    flat file's, the log's first entry's, a pushed or set request list's, one set request's.
    `count` is how many requests the session had before the record (a push appends)."""
    if "kind" not in o and isinstance(o.get("requests"), list):
        yield from _listed(o["requests"], ("requests",), 0)
        return
    kind, k, v = o.get("kind"), o.get("k"), o.get("v")
    if kind == 0 and isinstance(v, dict) and isinstance(v.get("requests"), list):
        yield from _listed(v["requests"], ("v", "requests"), 0)
    elif kind in (1, 2) and isinstance(k, list) and k[:1] == ["requests"]:
        if len(k) == 1 and isinstance(v, list):
            start = o.get("i") if kind == 2 and isinstance(o.get("i"), int) else None
            yield from _listed(v, ("v",), (0 if kind == 1 else count) if start is None else start)
        elif len(k) == 2 and isinstance(k[1], int) and kind == 1 and is_request(v):
            yield ("v",), cast(dict[str, Any], v), k[1]


def _listed(requests: list[Any], base: Path, start: int) -> Iterator[tuple[Path, Any, int]]:
    for j, r in enumerate(requests):
        if is_request(r):
            yield (*base, j), r, start + j


def _results(o: dict[str, Any], count: int) -> Iterator[tuple[Path, Any, int | None]]:
    """(path, value, request index) of each request `result` a record holds."""
    k = o.get("k")
    if o.get("kind") == 1 and isinstance(k, list) and k[-1:] == ["result"] and "v" in o:
        yield ("v",), o["v"], k[1] if len(k) == 3 and isinstance(k[1], int) else None
        return
    for path, request, index in requests_of(o, count):
        if "result" in request:
            yield (*path, "result"), request["result"], index


def rounds(o: dict[str, Any], count: int) -> Iterator[tuple[Path, dict[str, Any], int | None]]:
    """(path, round, request index) of every round a record holds. A round of a shape Copilot
    never writes raises `UnexpectedShape`: its leak would be counted clean."""
    for at, result, index in _results(o, count):
        metadata = result.get("metadata") if isinstance(result, dict) else None
        if not isinstance(metadata, dict) or "toolCallRounds" not in metadata:
            continue
        listed = metadata["toolCallRounds"]
        where = (*at, *ROUNDS)
        if not isinstance(listed, list):
            raise UnexpectedShape(where, listed, "a list of tool-call rounds")
        for r, round_ in enumerate(listed):
            yield (*where, r), _checked(round_, (*where, r)), index


def _checked(round_: Any, where: Path) -> dict[str, Any]:
    """The round, if of `IToolCallRound`'s shape where text may hide."""
    if not isinstance(round_, dict):
        raise UnexpectedShape(where, round_, "a tool-call round object")
    if not isinstance(round_.get("response"), str):
        raise UnexpectedShape((*where, "response"), round_.get("response"), "a string")
    if not isinstance(round_.get("toolCalls", []), list):
        raise UnexpectedShape((*where, "toolCalls"), round_["toolCalls"], "a list")
    if "thinking" in round_:
        thinking = round_["thinking"]
        text = thinking.get("text", "") if isinstance(thinking, dict) else None
        if not (isinstance(text, str) or (isinstance(text, list) and _strings(text))):
            raise UnexpectedShape((*where, "thinking"), thinking, "ThinkingData {id, text}")
    return round_


def _strings(items: list[Any]) -> bool:
    return all(isinstance(t, str) for t in items)


def thinking_text(round_: dict[str, Any]) -> str | None:
    """A round's reasoning as Copilot joins it (`toolCallingLoop.ts`: `text.join('')`)."""
    thinking = round_.get("thinking")
    text = thinking.get("text") if isinstance(thinking, dict) else None
    return "".join(text) if isinstance(text, list) else text


def mark(text: str) -> str | int:
    """How a text is kept to tell a round's twin: whole when it may hold a delimiter (a round
    may contain it), else its hash (only the same text matters), so a session's clean text is
    not held in memory."""
    return text if may_delimit(text) else hash(text)


def covered(text: str, seen: Sequence[str | int]) -> bool:
    """Does markdown of the round's request (or a copy of the round read before) hold the
    round's text: the same text, or texts it contains with nothing between them that may
    hold a delimiter (Copilot's linkifier splits a response's markdown at each file anchor,
    `inlineReference` parts, while the round keeps the whole text)."""
    if mark(text) in seen:
        return True
    rest, cut = text, False
    for twin in seen:
        if isinstance(twin, str) and twin.strip() and twin in rest:
            rest, cut = rest.replace(twin, "\x00"), True
    return cut and not _maybe_delimited(rest)


def _maybe_delimited(text: str) -> bool:
    from thinkfix.normalizer.grammar import grammar_for  # compiled on first use only
    from thinkfix.normalizer.policy import DEFAULT

    return may_delimit(text) and grammar_for(DEFAULT).probes.maybe_delimited(text)


def own_rounds(
    o: dict[str, Any], count: int, seen: Seen, local: dict[int, list[str | int]]
) -> Iterator[tuple[Path, dict[str, Any], int | None]]:
    """The rounds of a record read on their own: those with text that no markdown of their
    request (`local`: this record's, `seen`: earlier records') holds. Each one read joins
    `local`, so the same text is never read twice."""
    for path, round_, index in rounds(o, count):
        text = round_["response"]
        if not text.strip():
            continue  # a round of tool calls alone
        mine = local.setdefault(index if index is not None else -1, [])
        earlier = seen[1] if seen is not None and seen[0] == index else ()
        if covered(text, [*earlier, *mine]):
            continue
        mine.append(mark(text))
        yield path, round_, index


def place_in_round(data: Any, draft: Draft) -> tuple[str, Path] | None:
    """Put a repaired round's reasoning into its own `thinking` (appended to an unsigned one,
    a new `ThinkingData {id, text}` else). None when `encrypted` signs the round's thinking:
    the reasoning then stays in the manifest."""
    site = draft.site
    at = site.path[:-1]
    round_ = get_path(data, at)
    new = "\n\n".join(draft.segments)
    thinking = round_.get("thinking")
    field = (*at, "thinking", "text")
    if thinking is None:
        value = {"id": f"thinkfix_{round_.get('id', 'round')}", "text": new}
        # `ToolCallRound`'s constructor order: ..., id, statefulMarker, thinking, timestamp
        after = next((k for k in ("statefulMarker", "id") if k in round_), None)
        draft.edit(site.record_index, SetKey(at, "thinking", value, after=after))
        return f"a new {fmt_path((*at, 'thinking'))}", field
    if thinking.get("encrypted"):
        return None
    text = thinking.get("text", "")
    joined = "".join(text) if isinstance(text, list) else text
    if isinstance(text, list):
        value_: Any = [*text, f"\n\n{new}" if joined.strip() else new]
    else:
        value_ = f"{text}\n\n{new}" if joined.strip() else new
    if "text" in thinking:
        draft.edit(site.record_index, SetValue(field, value_))
    else:
        draft.edit(site.record_index, SetKey((*at, "thinking"), "text", value_))
    return f"appended to {fmt_path(field)}", field


def round_messages(record: Record, marks: Marks) -> Iterator[Message]:
    """Each round of the record no markdown holds, as the assistant message Copilot replays."""
    o, extra = record.obj or {}, record.ctx.extra
    count = extra.get(COUNT, 0)
    for at, round_, index in own_rounds(o, count, extra.get(SEEN), marks(record)):
        calls = bool(round_.get("toolCalls"))
        # the request's own modelId where the record holds the request, else an earlier one's
        local = {i: r.get("modelId") for _, r, i in requests_of(o, count) if i == index}
        model = local.get(index) if index in local else extra.get(MODELS, {}).get(index)
        yield Message(
            at,
            index if index is not None else record.index,
            [TextSlot((*at, "response"), round_["response"], tool_after=calls)],
            native=thinking_text(round_),
            message_id=as_str(round_.get("id")),
            model=as_str(model) if index is not None else None,
        )


def seen_after(record: Record, extra: Mapping[str, Any], found: dict[int, list[str | int]]) -> Seen:
    """The last request's texts seen once the record is read (`SEEN`), given the context
    before it and the `mark`s of its markdown texts."""
    seen: Seen = extra.get(SEEN)
    if MARKER in record.raw and record.obj is not None:
        try:
            for _, round_, index in rounds(record.obj, extra.get(COUNT, 0)):
                if index is not None and round_["response"].strip():
                    found.setdefault(index, []).append(mark(round_["response"]))
        except UnexpectedShape:
            pass  # `messages` reports the record
    if not found:
        return seen
    last = max(found)
    return last, (*(seen[1] if seen is not None and seen[0] == last else ()), *found[last])


def mirror_rounds(plan: Plan, draft: Draft, own: set[tuple[int, Path]]) -> None:
    """The same leak fixed in each round that repeats the repaired markdown text, but those
    read on their own (`own`: repaired as their own sites)."""
    old = draft.site.text
    if not old.strip():
        return
    for record in plan.records_with(MARKER):
        if record.error is not None or record.obj is None:
            continue
        try:  # a round's path does not depend on the request count
            found = [(p, r["response"]) for p, r, _ in rounds(record.obj, 0)]
        except UnexpectedShape:
            continue
        copies = [(p, text) for p, text in found if (record.index, p) not in own]
        for at, text in copies:
            if old in text:
                path = (*at, "response")

                def build(drafts: list[Draft], text: str = text, path: Path = path) -> SetValue:
                    for d in drafts:
                        text = text.replace(d.site.text, d.repair.visible, 1)
                    return SetValue(path, text)

                plan.shared_edit(draft, record.index, ("rounds", *path), build)
                draft.mirrors.append((record.index, path))
