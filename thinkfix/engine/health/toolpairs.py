"""`tool-pairs`: tool calls without a result and results without a call.

An API that takes a conversation back refuses a call nothing answers and an answer to no
call (Anthropic: every `tool_use` needs its `tool_result`; OpenAI: every `tool_calls` id
its `tool` message). Calls and results pair by id within the file, or within each record
where a record is a whole request (`ToolShape.per_record`). Where the runtime sends back
less than the file holds (Gemini CLI's rewinds and rewritten messages, Crush's and
Continue's summaries) or pairs a call only with a result in the same message (Zed,
Continue, Copilot Chat, Cursor), `engine/health/loaded.py` says what it loads and the
pairs are made over that alone. The ids of open calls and unmatched results are held,
never the records.
"""

from __future__ import annotations

from collections.abc import Iterator

from thinkfix.engine.health.loaded import LOADED_SHAPES
from thinkfix.engine.health.shapes import TOOL_SHAPES, Loaded, ToolEvent
from thinkfix.engine.health.where import Where
from thinkfix.engine.report.health import HealthFinding, Problem
from thinkfix.formats.records import Record

#: Formats whose runtime loads one branch of a tree of records, the chain of parents from
#: the newest message: (id key, parent key, the record types a branch ends on; empty: any).
#: Claude Code resumes along `parentUuid` (results written as siblings of one another drop
#: off the branch it loads), Qwen Code the same, pi along `parentId` from its leaf entry.
TREES: dict[str, tuple[str, str, frozenset[str]]] = {
    "claude-code": ("uuid", "parentUuid", frozenset({"user", "assistant"})),
    "qwen-code": ("uuid", "parentUuid", frozenset({"user", "assistant", "tool_result"})),
    "pi": ("id", "parentId", frozenset()),
}


class _Tree:
    """The records' parent links and where each call and result sits, to find the calls
    the loaded branch holds while their results sit on another branch."""

    def __init__(self, keys: tuple[str, str, frozenset[str]]) -> None:
        self.id_key, self.parent_key, self.ends = keys
        self.parent: dict[str, str | None] = {}
        self.leaf: str | None = None
        self.calls: dict[str, tuple[str, Record, str]] = {}
        self.results: dict[str, list[tuple[str, int]]] = {}

    def node(self, record: Record) -> str | None:
        obj = record.obj
        node = obj.get(self.id_key) if obj is not None else None
        if obj is None or not isinstance(node, str):
            return None
        parent = obj.get(self.parent_key)
        self.parent[node] = parent if isinstance(parent, str) else None
        if not obj.get("isSidechain") and (not self.ends or obj.get("type") in self.ends):
            self.leaf = node
        return node

    def branch(self) -> set[str]:
        on: set[str] = set()
        node = self.leaf
        while node is not None and node not in on:
            on.add(node)
            node = self.parent.get(node)
        return on

    def off_branch(self, answered: set[str]) -> Iterator[tuple[str, Record, str, int]]:
        """(call id, its record, its path, a result's line) for each call on the loaded
        branch answered only off it."""
        on = self.branch()
        for call_id, (node, record, path) in self.calls.items():
            results = self.results.get(call_id, [])
            if call_id in answered and node in on and not any(n in on for n, _ in results):
                yield call_id, record, path, results[0][1]


class ToolPairCheck:
    """The `tool-pairs` visitor."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.shape = LOADED_SHAPES.get(where.format) or TOOL_SHAPES.get(where.format)
        self.within = self.shape.within if self.shape is not None else "the session"
        #: The messages the runtime keeps so far, in its order: key -> (scope, record, events).
        self.loaded: dict[str, tuple[str, Record, tuple[ToolEvent, ...]]] = {}
        self.calls: dict[str, tuple[Record, str]] = {}
        self.results: dict[str, tuple[Record, str]] = {}
        self.answered: set[str] = set()
        self.found: list[HealthFinding] = []
        keys = TREES.get(where.format)
        self.tree = _Tree(keys) if keys is not None and self.shape is not None else None

    def feed(self, record: Record, offset: int) -> None:
        if self.shape is None or record.error is not None or record.data is None:
            return
        if self.shape.loads is not None:
            self._load(record, self.shape.loads(record.data))
            return
        node = self.tree.node(record) if self.tree is not None else None
        events = list(self.shape.events(record.data))
        if not events:
            return
        light = Record(record.index, record.line, b"", ctx=record.ctx)  # its place, no bytes
        for is_call, call_id, path in events:
            if is_call:
                self.calls.setdefault(call_id, (light, path))
            else:
                self.answered.add(call_id)
                self.results.setdefault(call_id, (light, path))
            if self.tree is not None and node is not None:
                if is_call:
                    self.tree.calls.setdefault(call_id, (node, light, path))
                else:
                    self.tree.results.setdefault(call_id, []).append((node, record.line))
        if self.shape.per_record:
            self._close()

    def _load(self, record: Record, steps: Iterator[Loaded]) -> None:
        light = Record(record.index, record.line, b"", ctx=record.ctx)
        for n, step in enumerate(steps):
            if step.clear is not None:
                for key in [k for k in self.loaded if k.startswith(step.clear)]:
                    del self.loaded[key]
            if step.cut is not None:
                keys = list(self.loaded)
                if step.cut in self.loaded:
                    for key in keys[keys.index(step.cut) :]:
                        del self.loaded[key]
                elif step.cut_all:
                    self.loaded.clear()
            if step.key or step.events:  # a set keeps the place of the key it replaces
                key = step.key or f"\0{record.index}.{n}"
                self.loaded[key] = (step.scope, light, step.events)

    def _pair_loaded(self) -> None:
        """Pair what the runtime loads, each scope on its own."""
        scopes: dict[str, list[tuple[Record, tuple[ToolEvent, ...]]]] = {}
        for scope, record, events in self.loaded.values():
            scopes.setdefault(scope, []).append((record, events))
        for messages in scopes.values():
            for record, events in messages:
                for is_call, call_id, path in events:
                    if is_call:
                        self.calls.setdefault(call_id, (record, path))
                    else:
                        self.answered.add(call_id)
                        self.results.setdefault(call_id, (record, path))
            self._close()

    def _close(self) -> None:
        for call_id, (record, path) in self.calls.items():
            if call_id not in self.answered:
                self.found.append(
                    self.where.finding(
                        record,
                        Problem.CALL_WITHOUT_RESULT,
                        f"tool call {call_id} has no result",
                        json_path=path,
                        detail=call_id,
                        content=b"",
                    )
                )
        for call_id, (record, path) in self.results.items():
            if call_id not in self.calls:
                self.found.append(
                    self.where.finding(
                        record,
                        Problem.RESULT_WITHOUT_CALL,
                        f"tool result for {call_id}, a call that is not in {self.within}",
                        json_path=path,
                        detail=call_id,
                        content=b"",
                    )
                )
        self.calls, self.results, self.answered = {}, {}, set()

    def finish(self) -> Iterator[HealthFinding]:
        if self.tree is not None:
            for call_id, record, path, line in self.tree.off_branch(self.answered):
                self.found.append(
                    self.where.finding(
                        record,
                        Problem.CALL_WITHOUT_RESULT,
                        f"tool call {call_id} has no result on the branch the runtime loads "
                        f"(its result, line {line}, hangs on another branch of the parent "
                        "links)",
                        json_path=path,
                        detail=call_id,
                        content=b"",
                    )
                )
        self._pair_loaded()
        self._close()
        return iter(sorted(self.found, key=lambda f: (f.record_index, f.json_path)))
