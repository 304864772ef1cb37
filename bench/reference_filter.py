"""The character-at-a-time streaming filter of seed 001, in Python: the benchmark's yardstick.

It is the common design in agent runtimes (buffer a `<`, classify the pending
prefix, emit or swallow), so thinkfix's normalizer is measured against it.
"""

from __future__ import annotations

TAGS = ("think", "thinking", "thought", "reasoning", "reflection")
OPEN_TAGS = tuple(f"<{t}>" for t in TAGS)
CLOSE_TAGS = tuple(f"</{t}>" for t in TAGS)


def _canonical(buf: str) -> str:
    out = [buf[0].lower()]
    rest = buf[1:]
    i = 0
    while i < len(rest) and rest[i].isspace():
        i += 1
    if i < len(rest) and rest[i] == "/":
        out.append("/")
        i += 1
    out.extend(ch.lower() for ch in rest[i:] if not ch.isspace())
    return "".join(out)


def _classify(buf: str, closing: bool) -> str:
    lower = _canonical(buf)
    for full in CLOSE_TAGS if closing else OPEN_TAGS:
        if lower == full:
            return "complete"
        if full.startswith(lower):
            return "possible"
    return "no"


class ReferenceFilter:
    def __init__(self) -> None:
        self.inside = False
        self.pending = ""
        self.thought: list[str] = []

    def feed(self, delta: str) -> str:
        out: list[str] = []
        for ch in delta:
            if self.inside:
                self._inside(ch)
            else:
                self._outside(ch, out)
        return "".join(out)

    def flush(self) -> str:
        out = "" if self.inside else self.pending
        self.pending, self.inside = "", False
        return out

    def _outside(self, ch: str, out: list[str]) -> None:
        if not self.pending:
            if ch == "<":
                self.pending = ch
            else:
                out.append(ch)
            return
        self.pending += ch
        verdict = _classify(self.pending, closing=False)
        if verdict == "complete":
            self.inside, self.pending = True, ""
        elif verdict == "no":
            out.append(self.pending)
            self.pending = ""

    def _inside(self, ch: str) -> None:
        if not self.pending:
            if ch == "<":
                self.pending = ch
            else:
                self.thought.append(ch)
            return
        self.pending += ch
        verdict = _classify(self.pending, closing=True)
        if verdict == "complete":
            self.inside, self.pending = False, ""
        elif verdict == "no":
            self.thought.append(self.pending)
            self.pending = ""
