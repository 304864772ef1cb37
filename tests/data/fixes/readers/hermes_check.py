"""Hermes's own converter (`agent/anthropic_adapter.py`, `convert_messages_to_anthropic`, which
strips a `tool_use` with no adjacent `tool_result`) over a session snapshot.

`pip download hermes-agent==0.19.0 --no-deps`, unzip the wheel into HERMES_DIR:
`python hermes_check.py HERMES_DIR SESSION_JSON`.
"""

import json
import sys

sys.path.insert(0, sys.argv[1])
from agent.anthropic_adapter import convert_messages_to_anthropic  # type: ignore[import-not-found]

with open(sys.argv[2]) as fp:
    doc = json.load(fp)
_, out = convert_messages_to_anthropic(doc["messages"], model="claude-sonnet-4")
blocks = [b for m in out if isinstance(m["content"], list) for b in m["content"]]
uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
results = [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
print("tool_use:", uses, "tool_result:", results)
