"""Small pure helpers on parsed JSON values and texts: paths into a record, squashed text.

Below both the planner and the shared format code, so neither imports the other
for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: a scan loads no transcript model
    from thinkfix.formats.turns import Path


def fmt_path(path: Path) -> str:
    """`("message", "content", 1, "text")` -> `message.content[1].text`."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(("." if out else "") + part)
    return "".join(out)


def get_path(data: Any, path: Path, default: Any = None) -> Any:
    """The value at `path`, or `default` when any step is missing."""
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return default
    return data
