"""gitleaks' maintained secret rules (vendored `gitleaks.toml`, MIT), run from Python.

A hand-kept list of credential shapes always lags the services that mint them; gitleaks'
rule file is maintained upstream with each rule's keywords, entropy floor and allowlists.
It is written for Go's RE2: `build` translates it once, when it is updated, into
`rules.json` beside it (the rules session text cannot use are listed there, under
`skipped`, with the reason). A scan reads the JSON, and compiles a rule's regex the first
time one of its keywords occurs: a scan that masks nothing never loads them.

The version vendored is in `UPSTREAM`; `python -m thinkfix.engine.secrets.gitleaks CHECKOUT`
updates the TOML, the JSON and the tests' examples from a gitleaks checkout.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

#: The translated rules, found without `pathlib` (and the `urllib` it imports): ~10 ms of
#: a process's first mask (#26 item 3). `build.HERE` is the folder as a `Path`.
_RULES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules.json")


@dataclass(frozen=True, eq=False)
class Allowlist:
    """What makes a match not a secret: a regex on the secret, the match or the line, or a
    stopword inside the secret; `every` (gitleaks' `condition = "AND"`) needs all it names."""

    sources: tuple[str, ...]
    stopwords: tuple[str, ...]
    target: str  # "secret", "match" or "line"
    every: bool

    @cached_property
    def regexes(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(s, re.ASCII) for s in self.sources)

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = {"match": match, "line": line}.get(self.target, secret)
        checks = []
        if self.sources:
            checks.append(any(r.search(target) for r in self.regexes))
        if self.stopwords:
            lowered = secret.lower()
            checks.append(any(w in lowered for w in self.stopwords))
        return all(checks) if self.every else any(checks)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Allowlist:
        return cls(tuple(raw["regexes"]), tuple(raw["stopwords"]), raw["target"], raw["every"])


@dataclass(frozen=True, eq=False)
class Rule:
    """One gitleaks rule; its regex is compiled the first time its keyword occurs
    (compiling all 217 costs ~190 ms, a run needs a handful)."""

    id: str
    source: str  # Python `re` source, translated from the Go regex
    keywords: tuple[str, ...]  # lower case; empty: always run
    entropy: float  # the secret must exceed it (0: no floor)
    secret_group: int  # 0: the first group that matched text, or the whole match
    allowlists: tuple[Allowlist, ...]

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source, re.ASCII)

    def spans(self, text: str, found: list[tuple[int, int, str]]) -> None:
        """Append `(start, end, id)` of each secret this rule finds in `text` (gitleaks'
        `detectRule`: the secret group, the entropy floor, then the allowlists)."""
        for m in self.pattern.finditer(text):
            start, end = _secret_span(m, self.secret_group)
            if start == end:
                continue
            secret = text[start:end]
            if self.entropy and entropy(secret) <= self.entropy:
                continue
            line = _line(text, m.start(), m.end())
            lists = (*_global_allowlists(), *self.allowlists)
            if any(a.allows(secret, m.group(0), line) for a in lists):
                continue
            found.append((start, end, self.id))


def _secret_span(m: re.Match[str], group: int) -> tuple[int, int]:
    """gitleaks' secret: `secretGroup`, else the first group that matched text, else all."""
    if group:
        return m.span(group)
    for g in range(1, m.re.groups + 1):
        if m.start(g) < m.end(g):
            return m.span(g)
    return m.span()


def _line(text: str, start: int, end: int) -> str:
    stop = text.find("\n", end)
    return text[text.rfind("\n", 0, start) + 1 : len(text) if stop < 0 else stop]


def entropy(text: str) -> float:
    """Shannon entropy in bits per character (gitleaks' `shannonEntropy`)."""
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in Counter(text).values()) if n else 0.0


@cache
def _document() -> dict[str, Any]:
    import orjson

    with open(_RULES_FILE, "rb") as fp:
        doc: dict[str, Any] = orjson.loads(fp.read())
    return doc


@cache
def _global_allowlists() -> tuple[Allowlist, ...]:
    return tuple(map(Allowlist.of, _document()["allowlists"]))


@cache
def rules() -> tuple[Rule, ...]:
    """Every gitleaks rule that applies to text, in file order."""
    return tuple(
        Rule(
            id=raw["id"],
            source=raw["regex"],
            keywords=tuple(raw["keywords"]),
            entropy=raw["entropy"],
            secret_group=raw["group"],
            allowlists=tuple(map(Allowlist.of, raw["allowlists"])),
        )
        for raw in _document()["rules"]
    )


def skipped() -> dict[str, str]:
    """The rules not run, and why (each needs a file path, which session text has not)."""
    return dict(_document()["skipped"])


def innermost(words: set[str]) -> set[str]:
    """The words of `words` that hold no other word of it: a text holds one of `words`
    exactly when it holds one of these."""
    return {w for w in words if not any(part in words for part in _inner_parts(w))}


def _inner_parts(word: str) -> set[str]:
    n = len(word)
    return {word[i:j] for i in range(n) for j in range(i + 1, n + 1) if j - i < n}


@cache
def _by_keyword() -> tuple[tuple[tuple[str, frozenset[Rule]], ...], tuple[Rule, ...]]:
    """Each keyword with the rules it lets run, and the rules that always run (no
    keywords). Tested with `in`, not one regex of every keyword: compiling that cost
    ~30 ms of a process's first keyword (#26 item 3), paid again by each `--jobs` worker."""
    table: dict[str, set[Rule]] = {}
    for r in rules():
        for k in r.keywords:
            table.setdefault(k, set()).add(r)
    always = tuple(r for r in rules() if not r.keywords)
    return tuple((k, frozenset(rs)) for k, rs in sorted(table.items())), always


def candidates(text: str, present: frozenset[str] | None = None) -> list[Rule]:
    """The rules worth running on `text`, in file order: those with no keywords, and those
    with a keyword occurring in it (case-insensitive, as gitleaks prefilters); `present`:
    the keywords already found in its lower case, where the caller knows them."""
    table, always = _by_keyword()
    if present is None:
        lowered = text.lower()
        found = [rs for k, rs in table if k in lowered]
    else:
        found = [rs for k, rs in table if k in present]
    if not found:
        return list(always)
    chosen = set(always).union(*found)
    return [r for r in rules() if r in chosen]


def find(text: str, present: frozenset[str] | None = None) -> list[tuple[int, int, str]]:
    """`(start, end, rule id)` of every secret gitleaks' rules find in `text` (`present`: the
    rule keywords in its lower case, where the caller found them).

    Diffs show records as stored, so a quote may be escaped (`\\"`), which no rule expects
    around a value: the rules read a view of the same length with `\\"` as ` "`.
    """
    view = text.replace('\\"', ' "') if '\\"' in text else text
    found: list[tuple[int, int, str]] = []
    for rule in candidates(view, present if view is text else None):
        rule.spans(view, found)
    return found
