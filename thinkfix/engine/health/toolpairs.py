"""`tool-pairs`: tool calls without a result and results without a call.

An API that takes a conversation back refuses a call nothing answers and an answer to no
call (Anthropic: every `tool_use` needs its `tool_result`; OpenAI: every `tool_calls` id
its `tool` message). Calls and results pair by id within the file, or within each record
where a record is a whole request (`ToolShape.per_record`). The ids of open calls and
unmatched results are held, never the records.
"""

from __future__ import annotations

from collections.abc import Iterator

from thinkfix.engine.health.shapes import TOOL_SHAPES
from thinkfix.engine.health.where import Where
from thinkfix.engine.report import HealthFinding, Problem
from thinkfix.formats.base import Record


class ToolPairCheck:
    """The `tool-pairs` visitor."""

    def __init__(self, where: Where) -> None:
        self.where = where
        self.shape = TOOL_SHAPES.get(where.format)
        self.calls: dict[str, tuple[Record, str]] = {}
        self.results: dict[str, tuple[Record, str]] = {}
        self.answered: set[str] = set()
        self.found: list[HealthFinding] = []

    def feed(self, record: Record, offset: int) -> None:
        if self.shape is None or record.error is not None or record.data is None:
            return
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
        if self.shape.per_record:
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
                        f"tool result for {call_id}, a call that is not in the session",
                        json_path=path,
                        detail=call_id,
                        content=b"",
                    )
                )
        self.calls, self.results, self.answered = {}, {}, set()

    def finish(self) -> Iterator[HealthFinding]:
        self._close()
        return iter(sorted(self.found, key=lambda f: (f.record_index, f.json_path)))
