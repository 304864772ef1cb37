"""Seed a store OpenCode created itself (`opencode session list` on an empty data folder)
with one session: a user message, then an assistant message whose bash call is still
`running`, as an interrupt leaves it. `python opencode_seed.py DATA/opencode/opencode.db`,
then `opencode export ses_6a1f0c2b8ffeZ3p9QkR1mW4tYs` before and after the fix."""

import json
import sqlite3
import sys
from typing import Any

T = 1775700000000
S = "ses_6a1f0c2b8ffeZ3p9QkR1mW4tYs"
USER, ASSISTANT = "msg_9a1f4e510001aA1bB2cC3dD4eE", "msg_9a1f4e510003aA1bB2cC3dD4eE"


def js(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


user = {
    "role": "user",
    "time": {"created": T},
    "agent": "build",
    "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
}
assistant = {
    "role": "assistant",
    "time": {"created": T + 1000},
    "parentID": USER,
    "modelID": "claude-sonnet-4-5",
    "providerID": "anthropic",
    "mode": "build",
    "agent": "build",
    "path": {"cwd": "/tmp", "root": "/"},
    "cost": 0,
    "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
}
running = {
    "type": "tool",
    "callID": "call_9",
    "tool": "bash",
    "state": {"status": "running", "input": {"command": "ls"}, "time": {"start": T + 1500}},
}
db = sqlite3.connect(sys.argv[1])
db.execute(
    "INSERT OR IGNORE INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    ("global", "/", None, T, T, "[]"),
)
db.execute(
    "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, "
    "time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    (S, "global", "calm-harbor", "/tmp", "List files", "1.18.34", T, T),
)
db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (USER, S, T, T, js(user)))
db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (ASSISTANT, S, T, T, js(assistant)))
text = js({"type": "text", "text": "list the files"})
db.execute(
    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
    ("prt_9a1f4e510002aA1bB2cC3dD4eE", USER, S, T, T, text),
)
db.execute(
    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
    ("prt_9a1f4e510005aA1bB2cC3dD4eE", ASSISTANT, S, T, T, js(running)),
)
db.commit()
