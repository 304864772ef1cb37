"""Cline and its fork Roo Code: `tasks/<id>/api_conversation_history.json` per task.

The history is a one-line JSON array of Anthropic `MessageParam`s with the
runtime's own fields beside `role` and `content`: Cline adds `modelInfo`
(`modelId`, `providerId`, `mode`), `metrics` and `ts`
(cline/cline `src/shared/messages/content.ts`, `ClineStorageMessage`); Roo Code
adds `ts`, `isSummary`, condense ids, and standalone `{type: "reasoning"}` items
(RooCodeInc/Roo-Code `src/core/task-persistence/apiMessages.ts`, `ApiMessage`).
Beside it sit `ui_messages.json` (what the task view shows, read by `cline_ui`: the same
format, another document) and `task_metadata.json` (recognised, no message).

Placement: the history is what both runtimes send back to the provider on every
request, Anthropic included, where an unsigned thinking block is a 400; so the
visible text is repaired and the reasoning stays in the repair manifest only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from thinkfix.formats import cline_ui
from thinkfix.formats.anthropic import Anthropic
from thinkfix.formats.base import Message
from thinkfix.formats.common import as_str, block_reasoning, content_slots, join_texts
from thinkfix.formats.detection import base_name, sample
from thinkfix.formats.locations import editor_users
from thinkfix.formats.records import Record
from thinkfix.formats.strangers import ASSISTANT
from thinkfix.formats.turns import Turn

if TYPE_CHECKING:
    from thinkfix.formats.planner import Draft, Plan

HISTORY = "api_conversation_history.json"
METADATA = "task_metadata.json"
#: VS Code extension ids as they appear in globalStorage paths.
_ROO_PATH = re.compile(r"roo-?(?:cline|code)|rooveterinaryinc", re.IGNORECASE)
_CLINE_PATH = re.compile(r"claude-dev|saoudrizwan|[\\/]\.cline[\\/]", re.IGNORECASE)
#: Kilo Code's extension id (publisher `kilocode`, name `kilo-code`); looser, its name anywhere
#: (the old CLI's ~/.kilocode/cli/global), asked only after the other runtimes' ids.
_KILO_ID = re.compile(r"kilocode\.kilo-code", re.IGNORECASE)
_KILO_PATH = re.compile(r"kilo-?code", re.IGNORECASE)
_HISTORY_OPENER = re.compile(rb'^\s*\[\s*\{\s*"(?:role|ts|type|id)"\s*:')
_ROO_KEYS = (b'"isSummary"', b'"condenseId"', b'"condenseParent"', b'"truncationParent"')


def _item(m: Any) -> bool:
    """A history entry: a message param, or Roo's standalone reasoning item."""
    return isinstance(m, dict) and (
        (m.get("role") in ("user", "assistant") and "content" in m) or m.get("type") == "reasoning"
    )


def editor_storage(env: Mapping[str, str], home: FsPath, extension: str) -> list[FsPath]:
    """`<editor user folder>/globalStorage/<extension>/tasks` for each editor and OS layout."""
    return [user / "globalStorage" / extension / "tasks" for user in editor_users(env, home)]


def _runtime(head: bytes, path: str) -> tuple[str, float] | None:
    """(`cline`, `roo-code` or `kilo-code`, confidence), or None when the file is no task history (or
    companion). The storage path or a runtime's own keys decide with 0.95; a history that
    shows neither reads as Cline's (the original) with 0.9."""
    name = base_name(path)
    s = sample(head)
    doc = s.doc
    if cline_ui.detects(doc, head, name):
        # the task view's messages, by their shape (any name) or, cut off, their opening bytes
        return _by_path(path) or "cline", 0.95
    if isinstance(doc, list):
        if not doc or not all(_item(m) for m in doc[:200]):
            return None
        extras = any(isinstance(m, dict) and ("ts" in m or "modelInfo" in m) for m in doc)
        if name != HISTORY and not extras:
            return None
    elif isinstance(doc, dict):
        if name == METADATA and ("files_in_context" in doc or "model_usage" in doc):
            return _by_path(path) or "cline", 0.95
        return None
    elif name != HISTORY or not _HISTORY_OPENER.match(head):
        return None
    by_path = _by_path(path)
    if by_path:
        return by_path, 0.95
    if any(key in head for key in _ROO_KEYS) or (
        isinstance(doc, list)
        and any(
            isinstance(m, dict) and m.get("type") == "reasoning" and "role" not in m for m in doc
        )
    ):
        return "roo-code", 0.95
    return "cline", 0.95 if b'"modelInfo"' in head else 0.9


_PATHS = (
    ("kilo-code", _KILO_ID),
    ("roo-code", _ROO_PATH),
    ("cline", _CLINE_PATH),
    ("kilo-code", _KILO_PATH),
)


def _by_path(path: str) -> str | None:
    for runtime, pattern in _PATHS:
        if pattern.search(path or ""):
            return runtime
    return None


def _native(m: dict[str, Any]) -> str | None:
    """Thinking blocks, Roo's reasoning blocks and OpenRouter-style reasoning_details."""
    content = m.get("content")
    details = m.get("reasoning_details")
    return join_texts(
        [
            block_reasoning(content),
            block_reasoning(content, types=("reasoning",), key="text"),
            join_texts(d.get("text") for d in details if isinstance(d, dict))
            if isinstance(details, list)
            else None,
        ]
    )


class Cline(Anthropic):
    id = "cline"
    description = (
        "Cline task histories: tasks/<id>/api_conversation_history.json (Anthropic "
        "MessageParams with modelInfo, metrics, ts) and the task view's ui_messages.json "
        "(ClineMessages: say text and completion_result are the answers)"
    )
    detection = (
        "the file name api_conversation_history.json or history entries carrying "
        "ts/modelInfo, and the saoudrizwan.claude-dev storage path; ui_messages.json by "
        "its {ts, type: ask|say} messages; task_metadata.json is recognised, no message"
    )
    placement = (
        "history: the repair manifest only (replayed to the provider on every request, "
        "Anthropic included, where an unsigned thinking block is rejected); "
        "ui_messages.json: a say: reasoning message before the answer, as the runtime "
        "writes one"
    )
    locations_source = (
        "VS Code globalStorage/saoudrizwan.claude-dev/tasks/<id>/ "
        "(cline/cline src/core/storage/disk.ts, GlobalFileNames."
        "apiConversationHistory); the CLI keeps ~/.cline/data/tasks"
    )

    #: The extension's id: its globalStorage folder name.
    extension = "saoudrizwan.claude-dev"

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        out = editor_storage(env, home, self.extension)
        if self.id == "cline":  # the standalone CLI keeps its tasks in ~/.cline
            out.append(home / ".cline" / "data" / "tasks")
        return out

    def detect(self, head: bytes, path: str = "") -> float:
        found = _runtime(head, path)
        return found[1] if found is not None and found[0] == self.id else 0.0

    # A task folder's two documents share no assistant marker (the history's role word, the
    # task view's `"say"`), so neither a line reader's jump nor the marker test may skip one.
    @property
    def line_records(self) -> bool:
        return False

    def may_contain_assistant(self, raw: bytes) -> bool:
        return ASSISTANT in raw or cline_ui.MARKER in raw

    def _messages(self, record: Record, texts: bool = False) -> list[Message]:
        if cline_ui.MARKER in record.raw and record.error is None and record.data is not None:
            return self.checked_messages(record, texts=texts)
        return super()._messages(record, texts)

    def messages(self, record: Record) -> Iterator[Message]:
        value = record.data
        if not isinstance(value, list):
            return
        if cline_ui.is_ui(value):
            yield from cline_ui.messages(value)
            return
        for j, m in enumerate(value):
            if isinstance(m, dict) and m.get("role") == "assistant" and "content" in m:
                info = m.get("modelInfo")
                model = info.get("modelId") if isinstance(info, dict) else None
                yield Message(
                    (j,),
                    j,
                    partial(content_slots, m, (j,)),
                    native=partial(_native, m),
                    message_id=as_str(m.get("id")),
                    model=as_str(model),
                )

    def plan_repair(self, plan: Plan, draft: Draft) -> None:
        if cline_ui.is_ui(plan.records[draft.site.record_index].data):
            cline_ui.plan_repair(plan, draft)
        else:
            super().plan_repair(plan, draft)

    def plan_emptied(self, plan: Plan, draft: Draft) -> None:
        if cline_ui.is_ui(plan.records[draft.site.record_index].data):
            cline_ui.plan_emptied(plan, draft)
        else:
            super().plan_emptied(plan, draft)

    def turns(self, record: Record) -> Iterator[Turn]:
        if cline_ui.is_ui(record.data):
            return cline_ui.turns(record)
        return super().turns(record)


class RooCode(Cline):
    id = "roo-code"
    extension = "rooveterinaryinc.roo-cline"
    description = (
        "Roo Code task histories: tasks/<id>/api_conversation_history.json "
        "(Anthropic MessageParams with ts, isSummary, reasoning items)"
    )
    detection = (
        "as Cline, told apart by the rooveterinaryinc.roo-cline storage path or "
        "Roo's own keys (isSummary, condenseId, standalone reasoning items)"
    )
    locations_source = (
        "VS Code globalStorage/rooveterinaryinc.roo-cline/tasks/<id>/ "
        "(RooCodeInc/Roo-Code src/core/task-persistence/apiMessages.ts, "
        "GlobalFileNames.apiConversationHistory)"
    )


class KiloCode(RooCode):
    id = "kilo-code"
    extension = "kilocode.kilo-code"
    description = (
        "Kilo Code (VS Code extension up to 5.x) task histories: "
        "tasks/<id>/api_conversation_history.json, Roo Code's layout"
    )
    detection = (
        "as Roo Code, told apart by the kilocode.kilo-code storage path (or the old CLI's "
        "~/.kilocode/cli/global); without it the content reads as Roo Code's or Cline's"
    )
    locations_source = (
        "VS Code globalStorage/kilocode.kilo-code/tasks/<id>/ (Kilo-Org/kilocode "
        "src/package.json publisher kilocode, name kilo-code; src/shared/globalFileNames.ts "
        "GlobalFileNames.apiConversationHistory); the old CLI's ~/.kilocode/cli/global/tasks"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [
            *editor_storage(env, home, self.extension),
            home / ".kilocode" / "cli" / "global" / "tasks",
        ]
