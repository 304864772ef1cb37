"""Kimi CLI's own loader (`kimi_cli.soul.context.Context.restore`) over a context.jsonl: the
history `--continue` replays, and which calls it answers.

Needs Python 3.12+ with `pip install kimi-cli==1.52.0`: `python kimi_check.py CONTEXT_JSONL`.
"""

import asyncio
import sys
from pathlib import Path

from kimi_cli.soul.context import Context  # type: ignore[import-not-found]


async def main() -> None:
    ctx = Context(Path(sys.argv[1]))
    await ctx.restore()
    calls = [c.id for m in ctx.history for c in (m.tool_calls or [])]
    results = [m.tool_call_id for m in ctx.history if m.role == "tool"]
    print("messages:", len(ctx.history), "calls:", calls, "results:", results)


asyncio.run(main())
