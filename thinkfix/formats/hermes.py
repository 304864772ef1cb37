"""Hermes Agent (Nous Research) session snapshots: `$HERMES_HOME/sessions/session_<id>.json`.

Hermes writes a pretty-printed (indent 2) object per session: `session_id`, `model`,
`base_url`, `platform`, `session_start`, `last_updated`, `system_prompt`, `tools`,
`message_count`, then `messages`, a list of OpenAI chat messages whose assistant
entries carry their native reasoning in a `reasoning` field (run_agent.py,
`AIAgent._save_session_log`). The system prompt and tool schemas come first, so
`messages` often starts 90 KB or more into the file.

MiniMax models write their reasoning twice: in `reasoning` and again as
`<think>...</think>` in `content`. The second copy is a `duplicate` finding
(DESIGN rule 9) and goes; new reasoning is appended to `reasoning`, the field
Hermes itself fills and keeps out of the replayed `content`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from thinkfix.formats.detection import has_keys, sample
from thinkfix.formats.locations import env_dir
from thinkfix.formats.openai_chat import OpenAIChat, is_chat_message

if TYPE_CHECKING:
    from pathlib import Path as FsPath  # annotations only: pathlib costs start-up

#: Keys of the snapshot object that no other chat log has together.
_SNAPSHOT_KEYS = ("session_id", "system_prompt", "session_start")
_SNAPSHOT_OPENER = re.compile(rb'^\s*\{\s*"session_id"\s*:\s*"')


def _is_snapshot(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("messages"), list)
        and all(k in doc for k in _SNAPSHOT_KEYS)
        and all(is_chat_message(m) for m in doc["messages"][:200])
    )


class Hermes(OpenAIChat):
    id = "hermes"
    description = (
        "Hermes Agent session snapshots: $HERMES_HOME/sessions/session_<id>.json "
        "(session_id, model, system_prompt, tools, messages[])"
    )
    detection = (
        "a JSON object with session_id, system_prompt, session_start and messages[] "
        "of OpenAI chat messages; decided on the whole document, or on its leading "
        "keys when messages start past the sampled head"
    )
    placement = (
        "the assistant message's `reasoning` field (appended when present), which "
        "Hermes fills itself and keeps out of the replayed content"
    )
    #: Hermes names its native field `reasoning`; a new one is created under that name.
    default_field = "reasoning"
    #: Hermes stores `content: ""` beside tool calls (run_agent.py builds the assistant
    #: message with `assistant_message.content or ""`).
    no_content: str | None = ""
    session_key = "session_id"
    locations_source = (
        "hermes_constants.get_hermes_home() ($HERMES_HOME, else ~/.hermes); "
        "run_agent.py AIAgent._save_session_log writes "
        "sessions/session_{session_id}.json"
    )

    def default_locations(self, env: Mapping[str, str], home: FsPath) -> list[FsPath]:
        return [env_dir(env, ("HERMES_HOME",), home, ".hermes") / "sessions"]

    def detect(self, head: bytes, path: str = "") -> float:
        s = sample(head)
        if s.doc is not None:
            return 0.95 if _is_snapshot(s.doc) else 0.0
        if s.pretty and _SNAPSHOT_OPENER.match(head) and has_keys(head, *_SNAPSHOT_KEYS):
            return 0.9
        return 0.0
