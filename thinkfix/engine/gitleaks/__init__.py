"""gitleaks' maintained secret rules (vendored `gitleaks.toml`, MIT), run from Python.

A hand-kept list of credential shapes always lags the services that mint them; gitleaks'
rule file is maintained upstream with each rule's keywords, entropy floor and allowlists.
It is written for Go's RE2, so each regex is translated on load (`translate`); the few
rules that cannot apply to session text are skipped (`SKIPPED`, with the reason). Rules
and the prescreen are built on first use: a scan that masks nothing never loads them.

The version vendored is in `UPSTREAM` beside the TOML; `python -m thinkfix.engine.gitleaks
CHECKOUT` updates both from a gitleaks checkout (and the tests' examples, see `__main__`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RULES_FILE = HERE / "gitleaks.toml"

#: Rules not run, and why: each needs a file path (session text has none to test), or
#: has no regex at all. Filled in by `rules()`; the README's list comes from here.
SKIPPED: dict[str, str] = {}

#: POSIX classes RE2 accepts inside brackets, as Python ranges.
_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9a-fA-F",
    "lower": "a-z",
    "upper": "A-Z",
    "space": r"\t\n\v\f\r ",
    "word": "a-zA-Z0-9_",
    "punct": r"!-/:-@\[-`{-~",
}
_FLAGS = re.compile(r"\(\?([imsU-]+)\)")


def translate(go: str) -> str:
    """A Go RE2 pattern as Python `re` source with the same meaning.

    Differences handled: a flag group such as `(?i)` in mid-pattern (RE2 applies it to the
    rest of the enclosing group, every alternative included; Python accepts flags only at
    the start) becomes a scoped `(?i:...)` closed and reopened around each `|`; `\\z` is
    Python's `\\Z`; POSIX classes (`[[:alnum:]]`) become ranges. Everything else gitleaks
    uses means the same in both (run with `re.ASCII`, as RE2's `\\w`, `\\b`, `\\s` are ASCII).
    """
    out: list[str] = []
    # One entry per open group: the flag groups opened inside it, reopened after each `|`.
    levels: list[list[str]] = [[]]
    i, n = 0, len(go)
    while i < n:
        c = go[i]
        if c == "\\":
            pair = go[i : i + 2]
            out.append(r"\Z" if pair == r"\z" else pair)
            i += 2
            continue
        if c == "[":
            end, body = _bracket(go, i)
            out.append(body)
            i = end
            continue
        flags = _FLAGS.match(go, i)
        if flags and i > 0:
            out.append(f"(?{flags.group(1)}:")
            levels[-1].append(flags.group(1))
            i = flags.end()
            continue
        if c == "(":
            levels.append([])
        elif c == ")":
            out.append(")" * len(levels.pop()))
        elif c == "|" and levels[-1]:
            opened = levels[-1]
            out.append(")" * len(opened) + "|" + "".join(f"(?{f}:" for f in opened))
            i += 1
            continue
        out.append(c)
        i += 1
    out.append(")" * len(levels[0]))
    return "".join(out)


def _bracket(go: str, start: int) -> tuple[int, str]:
    """The character class opening at `start`: (index past its `]`, its Python source)."""
    out, i = ["["], start + 1
    if go[i : i + 1] == "^":
        out.append("^")
        i += 1
    if go[i : i + 1] == "]":  # a leading `]` is a literal
        out.append(r"\]")
        i += 1
    while i < len(go) and go[i] != "]":
        posix = re.match(r"\[:(\w+):\]", go[i:])
        if posix:
            out.append(_POSIX[posix.group(1)])
            i += posix.end()
        elif go[i] == "\\":
            out.append(go[i : i + 2])
            i += 2
        elif go[i] == "[":  # a literal `[` inside a class must be escaped for Python
            out.append(r"\[")
            i += 1
        else:
            out.append(go[i])
            i += 1
    out.append("]")
    return i + 1, "".join(out)


def _compile(go: str) -> re.Pattern[str]:
    return re.compile(translate(go), re.ASCII)


@dataclass(frozen=True)
class Allowlist:
    """What makes a match not a secret: a regex on the secret, the match or the line, or a
    stopword inside the secret; `AND` needs every one it names."""

    regexes: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]
    target: str  # "secret", "match" or "line"
    every: bool  # condition = "AND"

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = {"match": match, "line": line}.get(self.target, secret)
        checks = []
        if self.regexes:
            checks.append(any(r.search(target) for r in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(w in lowered for w in self.stopwords))
        return all(checks) if self.every else any(checks)


@dataclass(frozen=True, eq=False)
class Rule:
    """One gitleaks rule; its regex and allowlists are compiled the first time its keyword
    occurs (compiling all 217 costs ~190 ms, most runs need a handful)."""

    id: str
    source: str  # the Go regex
    keywords: tuple[str, ...]  # lower case; empty: always run
    entropy: float  # the secret must exceed it (0: no floor)
    secret_group: int  # 0: the first non-empty group, or the whole match
    raw_allowlists: tuple[dict[str, Any], ...]

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return _compile(self.source)

    @cached_property
    def allowlists(self) -> tuple[Allowlist, ...]:
        return tuple(a for a in map(_allowlist, self.raw_allowlists) if a is not None)

    def spans(self, text: str, found: list[tuple[int, int, str]]) -> None:
        """Append `(start, end, id)` of each secret this rule finds in `text`."""
        for m in self.pattern.finditer(text):
            start, end = _secret_span(m, self.secret_group)
            if start == end:
                continue
            secret = text[start:end]
            if self.entropy and entropy(secret) <= self.entropy:
                continue
            line = _line(text, m.start(), m.end())
            if any(a.allows(secret, m.group(0), line) for a in _global_allowlists()):
                continue
            if any(a.allows(secret, m.group(0), line) for a in self.allowlists):
                continue
            found.append((start, end, self.id))


def _secret_span(m: re.Match[str], group: int) -> tuple[int, int]:
    """gitleaks' secret: `secretGroup`, else the first group that matched text, else all."""
    if group:
        return m.span(group)
    for g in range(1, (m.re.groups or 0) + 1):
        if m.start(g) != m.end(g) and m.start(g) >= 0:
            return m.span(g)
    return m.span()


def _line(text: str, start: int, end: int) -> str:
    return text[text.rfind("\n", 0, start) + 1 : _end_of_line(text, end)]


def _end_of_line(text: str, end: int) -> int:
    stop = text.find("\n", end)
    return len(text) if stop < 0 else stop


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (gitleaks' `shannonEntropy`)."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


def _load() -> dict[str, Any]:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 with the tomli backport
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    with RULES_FILE.open("rb") as fp:
        return tomllib.load(fp)


def _allowlist(raw: dict[str, Any]) -> Allowlist | None:
    regexes = tuple(_compile(r) for r in raw.get("regexes", ()))
    stopwords = tuple(w.lower() for w in raw.get("stopwords", ()))
    every = raw.get("condition", "OR").upper() == "AND"
    if raw.get("paths") or raw.get("commits"):
        if every:  # needs a path or commit to hold: never true of session text
            return None
        if not regexes and not stopwords:
            return None
    if not regexes and not stopwords:
        return None
    return Allowlist(regexes, stopwords, raw.get("regexTarget", "secret"), every)


@cache
def _global_allowlists() -> tuple[Allowlist, ...]:
    raw = _load()
    lists = [raw.get("allowlist", {}), *raw.get("allowlists", ())]
    return tuple(a for a in map(_allowlist, lists) if a is not None)


@cache
def rules() -> tuple[Rule, ...]:
    """Every gitleaks rule that applies to text, translated and compiled, in file order."""
    out = []
    for raw in _load()["rules"]:
        rid = raw["id"]
        if "regex" not in raw:
            SKIPPED[rid] = "matches a file name only (no regex)"
            continue
        if "path" in raw:
            SKIPPED[rid] = f"only for files named like {raw['path']!r}: session text has none"
            continue
        out.append(
            Rule(
                id=rid,
                source=raw["regex"],
                keywords=tuple(k.lower() for k in raw.get("keywords", ())),
                entropy=float(raw.get("entropy", 0)),
                secret_group=int(raw.get("secretGroup", 0)),
                raw_allowlists=tuple(raw.get("allowlists", ())),
            )
        )
    return tuple(out)


@cache
def _prescreen() -> re.Pattern[str]:
    """Every keyword in one alternation: a text none occurs in runs no rule at all."""
    words = sorted({k for r in rules() for k in r.keywords}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words)))


def candidates(text: str) -> Iterator[Rule]:
    """The rules worth running on `text`: those with no keywords, or one occurring in it
    (case-insensitive, as gitleaks prefilters)."""
    lowered = text.lower()
    if _prescreen().search(lowered) is None:
        yield from (r for r in rules() if not r.keywords)
        return
    for rule in rules():
        if not rule.keywords or any(k in lowered for k in rule.keywords):
            yield rule


def find(text: str) -> list[tuple[int, int, str]]:
    """`(start, end, rule id)` of every secret gitleaks' rules find in `text`.

    Diffs show records as stored, so a quote may be escaped (`\\"`), which no rule expects
    around a value: the rules read a view of the same length with `\\"` as ` "`.
    """
    view = text.replace('\\"', ' "') if '\\"' in text else text
    found: list[tuple[int, int, str]] = []
    for rule in candidates(view):
        rule.spans(view, found)
    return found
