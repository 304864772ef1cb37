"""Screenshot the scan and diff HTML pages, on the fixtures and on ~3,000 generated changes.

    python bench/screenshot_html.py [OUT_DIR]   # needs `chromium` on PATH (apt-get install chromium)

Writes scan-*.html, diff-*.html and a .png of each to OUT_DIR (default /tmp/thinkfix-shots), so
a person can look at what an auditor will see at the scale the cap and the folding are for.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("deepseek-r1", "qwen3-32b", "glm-4.6", "kimi-k2-thinking")


def _line(i: int, day: int, leak: bool) -> bytes:
    text = (
        f"<think>step {i}: check the request first</think>Answer {i}."
        if leak
        else f"Answer {i}, nothing leaked."
    )
    return (
        orjson.dumps(
            {
                "parentUuid": None,
                "type": "assistant",
                "uuid": f"u-{i}",
                "sessionId": f"s-{i // 30}",
                "timestamp": f"2026-03-{day:02d}T10:00:00.000Z",
                "message": {
                    "id": f"msg_{i}",
                    "type": "message",
                    "role": "assistant",
                    "model": MODELS[i % len(MODELS)],
                    "content": [{"type": "text", "text": text}],
                },
            }
        )
        + b"\n"
    )


def corpus(folder: Path, changes: int = 3000, per_file: int = 30) -> Path:
    """`changes` leaking messages (and a clean one per file) over 100 Claude Code sessions."""
    for f in range(changes // per_file):
        lines = [_line(f * per_file + k, 1 + f % 28, True) for k in range(per_file)]
        lines.append(_line(10**6 + f, 1 + f % 28, False))
        path = folder / f"project-{f % 10}" / f"session-{f:03d}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(lines))
    return folder


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/thinkfix-shots")
    out.mkdir(parents=True, exist_ok=True)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    inputs = {"fixtures": ROOT / "fixtures", "corpus3000": corpus(out / "corpus")}
    for name, src in inputs.items():
        for command in ("scan", "diff"):
            page = out / f"{command}-{name}.html"
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "from thinkfix.cli import main; main()",
                    command,
                    str(src),
                    "--output-format",
                    "html",
                    "-o",
                    str(page),
                ],
                check=False,
            )
            if browser:
                subprocess.run(
                    [
                        browser,
                        "--headless",
                        "--no-sandbox",
                        "--disable-gpu",
                        "--hide-scrollbars",
                        f"--screenshot={page.with_suffix('.png')}",
                        "--window-size=1280,2400",
                        page.as_uri(),
                    ],
                    check=True,
                    capture_output=True,
                )
    print(f"wrote {out}" + ("" if browser else " (no chromium: pages only)"))


if __name__ == "__main__":
    main()
