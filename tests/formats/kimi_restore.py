"""Run with Kimi CLI's own interpreter: restore each context file as `kimi --continue` does
(kimi_cli.soul.context.Context.restore) and print what it replays, as JSON."""

import asyncio
import json
import sys
from pathlib import Path

from kimi_cli.soul.context import Context
from kosong.chat_provider.kimi import _convert_message


async def main() -> None:
    out = []
    for name in sys.argv[1:]:
        context = Context(Path(name))
        await context.restore()
        out.append(
            {
                "token_count": context.token_count,
                "checkpoints": context.n_checkpoints,
                "system_prompt": context.system_prompt,
                "messages": [_convert_message(m) for m in context.history],
            }
        )
    print(json.dumps(out))


asyncio.run(main())
