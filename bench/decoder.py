"""A structured decoder's bound: what a scan built on msgspec's `decode_lines` could reach.

bench/bound.py measures the issue's plan (one native pass, Python for what it finds), which
parses no clean line and so cannot see a broken one. This measures another design, on the
same corpus and in one run: each file decoded whole by msgspec (`Decoder.decode_lines`) into narrow structs
that hold only what the count reads (the record's type and stamp, the message's role,
model and stamp, Codex's turn model), the assistant messages counted by model and day
from them, and one hyperscan pass for the delimiters. Every line is parsed, so a line a
parser refuses fails its block (the fast paths' one known blind spot, docs/performance.md
"Which lines are counted from their bytes", closes), and fields the structs do not name
are skipped by C code without Python objects. msgspec does not check the UTF-8 of a string
it skips (`{"a":"\xff"}` decodes), and orjson refuses such a line, so every file's bytes are
also decoded as UTF-8 (`utf8`, skipped for an ASCII file): the least an exact scan pays.

It checks its counts against thinkfix's own report (by day and model) before printing a
time: a design that counts differently has no bound. The suspects (parse, normalize,
snippet) are bound.py's measurement, inside a real scan. Needs msgspec and hyperscan
(`pip install msgspec '.[fast]'`); the three formats of the dense corpus only.

    python bench/decoder.py                       # the dense corpus (bench/dense.py)
    python bench/decoder.py /path/to/dense/corpus
"""

from __future__ import annotations

import datetime as dt
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import hyperscan
import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bound import _best, corpus, floor, print_rows, suspect_seconds

from thinkfix.engine.scan.options import ScanOptions
from thinkfix.engine.scan.prefilter import delimiter_sources
from thinkfix.engine.scan.runner import scan
from thinkfix.normalizer.policy import DEFAULT
from thinkfix.reporters.json import JsonReporter


class ClaudeMessage(msgspec.Struct):
    model: str | None = None


class ClaudeLine(msgspec.Struct):
    type: str | None = None
    timestamp: str | None = None
    message: ClaudeMessage | str | None = None


class PiMessage(msgspec.Struct):
    role: str | None = None
    model: str | None = None
    timestamp: int | float | str | None = None


class PiLine(msgspec.Struct):
    type: str | None = None
    message: PiMessage | str | None = None


class CodexPayload(msgspec.Struct):
    type: str | None = None
    role: str | None = None
    model: str | None = None


class CodexLine(msgspec.Struct):
    timestamp: str | None = None
    type: str | None = None
    payload: CodexPayload | str | None = None


DECODERS: dict[str, Any] = {
    "claude": msgspec.json.Decoder(ClaudeLine),
    "pi": msgspec.json.Decoder(PiLine),
    "codex": msgspec.json.Decoder(CodexLine),
}
Key = tuple[str | None, str]


def _day_of_ms(ms: Any) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).date().isoformat()


def count(kind: str, rows: list[Any], out: Counter[Key]) -> None:
    """Add one file's assistant messages to `out` by (model, day), as the dense corpus's
    runtimes write them (the corpus's shapes only: not the readers' every rule)."""
    if kind == "claude":
        out.update(
            (r.message.model, r.timestamp[:10])
            for r in rows
            if r.type == "assistant" and type(r.message) is ClaudeMessage
        )
    elif kind == "pi":
        out.update(
            (r.message.model, _day_of_ms(r.message.timestamp))
            for r in rows
            if r.type == "message"
            and type(r.message) is PiMessage
            and r.message.role == "assistant"
        )
    else:
        model = None
        for r in rows:
            payload = r.payload
            if r.type == "turn_context":
                model = payload.model
            elif (
                r.type == "response_item"
                and type(payload) is CodexPayload
                and payload.type == "message"
                and payload.role == "assistant"
            ):
                out[(model, r.timestamp[:10])] += 1


def utf8(data: bytes, step: int = 1 << 15) -> None:
    """Raise unless `data` is UTF-8: decoded in pieces of ~32 KB cut after a newline (a newline
    is ASCII, so no sequence is cut), as `io.textcheck` decodes a block's gaps. One decode of a
    whole 1 MB file costs ~2.5x as much here: a fresh 1-2 MB string a file, not one in cache."""
    if data.isascii():
        return
    view, lo, end, find = memoryview(data), 0, len(data), data.find
    while lo < end:
        hi = find(b"\n", lo + step) + 1 or end
        str(view[lo:hi], "utf-8")
        lo = hi


def main(argv: list[str]) -> int:
    root = corpus(argv)
    by_day = ScanOptions(by_day=True)
    files = sorted(root.rglob("*.jsonl"))
    size = sum(f.stat().st_size for f in files) / 1e6
    sources = list(delimiter_sources(DEFAULT))
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=sources, ids=list(range(len(sources))), elements=len(sources))
    counted: Counter[Key] = Counter()
    hits = [0]

    def on(pattern: int, start: int, stop: int, flags: int, context: object) -> None:
        hits[0] += 1

    def decode_all() -> None:
        counted.clear()
        hits[0] = 0
        for f in files:
            data = f.read_bytes()
            utf8(data)
            count(f.parent.name, DECODERS[f.parent.name].decode_lines(data), counted)
            db.scan(data, match_event_handler=on)

    summary = orjson.loads(JsonReporter().render_bytes(scan([str(root)], by_day, jobs=1)))
    theirs = Counter(
        {
            (model, day): row["assistant_messages"]
            for day, models in summary["summary"]["by_day"].items()
            for model, row in models["by_model"].items()
        }
    )
    decode_all()
    if counted != theirs:
        print("the decoder's counts differ from thinkfix's report: no bound")
        return 1
    suspects, made = suspect_seconds(root)
    best_floor = _best(3, lambda: floor(files))
    best_decoder = _best(3, decode_all)
    bound = best_decoder + suspects

    print(f"{root}: {size:.1f} MB, {len(files)} files, {sum(counted.values()):,} messages")
    print_rows(
        size,
        [
            ("orjson floor (read and parse every line)", best_floor),
            (
                f"decode_lines, UTF-8, count by model and day, delimiters ({hits[0]:,} hits)",
                best_decoder,
            ),
            (f"suspects: _FileScan._record x {made:,}, inside a scan", suspects),
            ("sum: a structured decoder's bound in CPython", bound),
        ],
    )
    print(f"best ratio such a scan reaches: {best_floor / bound:.2f}x the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
