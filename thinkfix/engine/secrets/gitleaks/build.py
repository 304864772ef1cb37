"""gitleaks' TOML rules as the JSON `engine.gitleaks` loads: regexes translated from Go RE2
to Python `re`, the rules session text cannot use set aside with the reason.

Run by `python -m thinkfix.engine.secrets.gitleaks` when the vendored TOML is updated, so a scan
never parses TOML or translates regexes (parsing the 98 KB TOML alone cost ~30-60 ms of each
run that masks a secret; orjson reads the JSON in ~2 ms).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: The vendored files' folder, and the translated rules a scan reads.
HERE = Path(__file__).resolve().parent
RULES_JSON = HERE / "rules.json"

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


def _allowlist(raw: dict[str, Any]) -> dict[str, Any] | None:
    """An allowlist as `engine.gitleaks.Allowlist` reads it, or None where it can never hold
    for session text (it needs a file path or commit)."""
    regexes = [translate(r) for r in raw.get("regexes", ())]
    stopwords = [w.lower() for w in raw.get("stopwords", ())]
    every = raw.get("condition", "OR").upper() == "AND"
    if (raw.get("paths") or raw.get("commits")) and every:
        return None
    if not regexes and not stopwords:
        return None
    return {
        "regexes": regexes,
        "stopwords": stopwords,
        "target": raw.get("regexTarget", "secret"),
        "every": every,
    }


def build(toml: dict[str, Any], upstream: str) -> dict[str, Any]:
    """The JSON document for `rules.json` from gitleaks' parsed TOML."""
    rules, skipped = [], {}
    for raw in toml["rules"]:
        rid = raw["id"]
        if "regex" not in raw:
            skipped[rid] = "matches a file name only (no regex)"
            continue
        if "path" in raw:
            skipped[rid] = f"only for files named like {raw['path']}: session text has none"
            continue
        re.compile(translate(raw["regex"]), re.ASCII)  # fails the update, not a scan
        lists = (_allowlist(a) for a in raw.get("allowlists", ()))
        rules.append(
            {
                "id": rid,
                "regex": translate(raw["regex"]),
                "keywords": sorted({k.lower() for k in raw.get("keywords", ())}),
                "entropy": float(raw.get("entropy", 0)),
                "group": int(raw.get("secretGroup", 0)),
                "allowlists": [a for a in lists if a is not None],
            }
        )
    glob = [toml.get("allowlist", {}), *toml.get("allowlists", ())]
    return {
        "upstream": upstream,
        "rules": rules,
        "allowlists": [a for a in map(_allowlist, glob) if a is not None],
        "skipped": skipped,
    }


def load_toml(path: Any) -> dict[str, Any]:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 with the tomli backport
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    with open(path, "rb") as fp:
        return tomllib.load(fp)
