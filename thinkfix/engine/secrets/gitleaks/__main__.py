"""Update the vendored gitleaks rules from a gitleaks checkout.

    git clone --depth 1 https://github.com/gitleaks/gitleaks /tmp/gitleaks
    python -m thinkfix.engine.secrets.gitleaks /tmp/gitleaks [--examples tests/data/gitleaks_examples.json]

Copies `config/gitleaks.toml` and `LICENSE`, records the commit in `UPSTREAM`, translates the
rules into `rules.json` (`build`; a regex Python cannot compile stops the update), and writes
each rule's plain-string examples (the `tps`/`fps` lists of `cmd/generate/config/rules/*.go`,
the ones gitleaks validates its rules on) for `tests/engine/test_gitleaks_rules.py`. Examples
built by Go calls (`utils.GenerateSampleSecret(...)`) are left out: only literals are read.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

from thinkfix.engine.secrets.gitleaks.build import HERE, RULES_JSON, build, load_toml

_RULE_ID = re.compile(r'RuleID:\s*"([^"]+)"')
_LIST = re.compile(r"\b(tps|fps)\s*:?=\s*\[\]string\{")
_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"')


def _string_end(text: str, i: int) -> int:
    """Index past the Go string literal starting at `i` (raw or interpreted)."""
    if text[i] == "`":
        return text.index("`", i + 1) + 1
    m = _QUOTED.match(text, i)
    if m is None:
        raise ValueError(f"unterminated string at {i}")
    return m.end()


def _go_strings(body: str) -> list[str]:
    """The elements of a Go `[]string{...}` body that are one string literal each."""
    out, i, item, plain = [], 0, [], True
    while i < len(body):
        c = body[i]
        if body.startswith("//", i):
            i = body.find("\n", i) if "\n" in body[i:] else len(body)
        elif c in '`"':
            end = _string_end(body, i)
            item.append(body[i + 1 : end - 1] if c == "`" else ast.literal_eval(body[i:end]))
            i = end
        elif c == ",":
            if plain and len(item) == 1:
                out.append(item[0])
            item, plain = [], True
            i += 1
        elif c in " \t\r\n":
            i += 1
        else:
            plain = False
            i += 1
    if plain and len(item) == 1:
        out.append(item[0])
    return out


def _braced(text: str, start: int) -> str:
    """The text from `start` (just past a `{`) to its matching `}`, strings skipped."""
    depth, i = 1, start
    while depth:
        c = text[i]
        if c in '`"':
            i = _string_end(text, i) - 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        i += 1
    return text[start : i - 1]


def examples(checkout: Path) -> dict[str, dict[str, list[str]]]:
    """Rule id -> {"tps": [...], "fps": [...]}: the literal examples of each rule function."""
    out: dict[str, dict[str, list[str]]] = {}
    for go in sorted((checkout / "cmd/generate/config/rules").glob("*.go")):
        for func in re.split(r"\nfunc ", go.read_text(encoding="utf-8"))[1:]:
            ids = set(_RULE_ID.findall(func))
            if len(ids) != 1:
                continue
            lists: dict[str, list[str]] = {"tps": [], "fps": []}
            for m in _LIST.finditer(func):
                lists[m.group(1)] += _go_strings(_braced(func, m.end()))
            if lists["tps"] or lists["fps"]:
                out[ids.pop()] = lists
    return out


def write_rules(upstream: str) -> None:
    """`rules.json` from the vendored TOML (one rule a line, so an update's diff reads)."""
    doc = build(load_toml(HERE / "gitleaks.toml"), upstream)
    lines = ",\n".join(json.dumps(rule, sort_keys=True) for rule in doc["rules"])
    head = {k: v for k, v in doc.items() if k != "rules"}
    text = json.dumps(head, sort_keys=True, indent=1)[:-2] + ',\n "rules": [\n' + lines + "\n]}\n"
    RULES_JSON.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a gitleaks git checkout")
    parser.add_argument("--examples", type=Path, default=Path("tests/data/gitleaks_examples.json"))
    args = parser.parse_args(argv)
    src: Path = args.checkout
    shutil.copyfile(src / "config" / "gitleaks.toml", HERE / "gitleaks.toml")
    shutil.copyfile(src / "LICENSE", HERE / "LICENSE")
    commit = subprocess.run(
        ["git", "-C", str(src), "log", "-1", "--format=%H %cs"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    tag = subprocess.run(
        ["git", "-C", str(src), "describe", "--tags"], capture_output=True, text=True, check=False
    ).stdout.strip()
    upstream = f"gitleaks {tag or 'untagged'}, commit {commit[0]} ({commit[1]})"
    (HERE / "UPSTREAM").write_text(
        "https://github.com/gitleaks/gitleaks config/gitleaks.toml and LICENSE (MIT)\n"
        + upstream
        + "\n",
        encoding="utf-8",
    )
    write_rules(upstream)
    found = examples(src)
    args.examples.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(found)} rules' examples -> {args.examples}; rules from {commit[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
