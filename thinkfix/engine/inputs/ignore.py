"""Which paths a walk leaves out: glob patterns and ignore files with gitignore semantics (`pathspec`): the `.gitignore` files from the top of the work tree down, `.git/info/exclude`, a `.thinkfixignore`, and what `exclude` names."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec
from thinkfix.engine.inputs.files import IGNORE_FILES

# --- glob patterns and ignore files (gitignore semantics, by pathspec) -------------------------


def _git_line(line: str) -> str:
    """One pattern as git means it, for `pathspec`, which lets a trailing `/**` match the
    folder itself (`a/**` matches `a/`). In git, `a/**` matches only what is *inside* `a`, so
    `a` is still walked and a later `!keep.jsonl` re-includes `a/keep.jsonl`; pruning `a` would
    lose it. `x/**` becomes `x/**/*` (and `x/**/` becomes `x/**/*/`): same contents, not the
    folder. A bare `**` or `/**` does match every folder in git too, so it is left alone."""
    stripped = line.rstrip()
    body = stripped.removeprefix("!")
    if body.endswith("/**") and body.lstrip("/") != "**":
        return stripped + "/*"
    if body.endswith("/**/") and body.lstrip("/") != "**/":
        return stripped[:-1] + "/*/"
    return line


def _git_spec(lines: Iterable[str]) -> pathspec.GitIgnoreSpec:
    """The patterns matched by pathspec's pure backend: where hyperscan is installed (the
    `fast` extra) pathspec would compile a database for them, which costs a scan of a folder
    ~0.2 s of CPU for a walk's few paths (tests/engine/test_native.py). Each expression is
    made linear (`linear`) before any path meets it."""
    import pathspec  # only when there are patterns: a scan of one named file never needs it

    spec = pathspec.GitIgnoreSpec.from_lines((_git_line(line) for line in lines), backend="simple")
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        if regex is not None:
            safe = linear(regex.pattern)
            if safe != regex.pattern:
                pattern.regex = re.compile(safe)
    return spec


# One name's wildcard as pathspec spells it, and what may stand between two of them: a
# literal, an escape, any one character (`[^/]`) or a class without a range or a negation;
# nothing that can match a `/` (the earliest fit is the best one only then).
_STAR = re.escape("[^/]*")
_ATOM = (
    r"\\[^/]"  # an escaped character
    r"|[^\\\[\]()*+?.{}|^$/]"  # a plain one
    r"|\[\^/\]"  # any one character of a name
    r"|\[(?!\^)(?:\\[^/]|[^\]\\/-])+\]"  # a class of listed characters
)
_MIDDLE = re.compile(f"{_STAR}((?:{_ATOM})+)(?={_STAR})")
_STARS = re.compile(f"(?:{_STAR}){{2,}}")  # `**` inside a name is `*` (pathspec spells each)


def linear(expression: str) -> str:
    """`expression` (pathspec's for one gitignore pattern) with every wildcard of a name that
    another wildcard of the same name follows matched once, atomically, up to the earliest
    place the text between them fits (a lookahead's capture, then its backreference: an
    atomic group that Python 3.10's `re` has no syntax for).

    A checkout's `.gitignore` is data the scan must not trust: `*a*a*a*a*a*a*a*a*b` made
    `re` backtrack for minutes over one long name (hostile10, finding 14), each wildcard
    trying every split of the name. Taking the earliest fit of each middle part is what a
    glob matcher does and gives the same answer (a later fit never leaves more room for the
    parts after it: they are of fixed length); the last wildcard of a name backtracks alone,
    in linear time. tests/engine/test_ignore_linear.py holds both expressions to the same
    answers."""
    count = iter(range(1 << 30))

    def atomic(match: re.Match[str]) -> str:
        name = f"tf{next(count)}"
        return f"(?=(?P<{name}>[^/]*?{match[1]}))(?P={name})"

    return _MIDDLE.sub(atomic, _STARS.sub(_STAR.replace("\\", ""), expression))


@dataclass(frozen=True)
class _SelfMatcher:
    """An ignore file's patterns, each matching only a path itself, as git does while it walks.

    `pathspec` lets a pattern for a folder match everything inside it too (`!a/` matches
    `a/logs/`), which is right for a flat list of files but wrong for a walk that asks about
    every folder on the way down: after `*/` then `!a/`, git re-includes `a` but still ignores
    `a/logs` (only `*/` names it), whereas the contents match made `!a/` win. Anchoring each
    pattern's expression at the end of the path keeps the match to the path itself; what is
    inside an ignored folder is never reached, because the walk prunes that folder."""

    patterns: tuple[tuple[re.Pattern[str], bool], ...]

    @classmethod
    def from_lines(cls, lines: Iterable[str]) -> _SelfMatcher:
        compiled = []
        for pattern in _git_spec(lines).patterns:
            regex = getattr(pattern, "regex", None)
            if pattern.include is None or regex is None:
                continue  # a comment or a blank line
            compiled.append((re.compile(f"(?:{regex.pattern})\\Z"), pattern.include))
        return cls(tuple(compiled))

    def check(self, path: str) -> bool | None:
        """The last pattern naming `path` (a folder ends in `/`): True ignores, False
        re-includes, None: no pattern names it."""
        for regex, include in reversed(self.patterns):
            if regex.search(path):
                return include
        return None


@lru_cache(maxsize=512)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    return _git_spec(patterns)


def _posix(rel_path: str) -> str:
    rel_path = rel_path.replace(os.sep, "/").lstrip("/")
    while rel_path.startswith("./"):
        rel_path = rel_path[2:]
    return rel_path


def glob_match(pattern: str, rel_path: str) -> bool:
    """Does a gitignore-style `pattern` match a `/`-separated path (relative to its anchor)?

    As in .gitignore: a pattern without a `/` (other than a trailing one) matches a name at
    any depth (`archive` covers `a/archive/b.jsonl`); one with a `/` is anchored to the
    folder the path is relative to (`datasets/**`); a pattern for a folder covers everything
    inside it; `*` stays in one segment, `**` crosses them.
    """
    pattern = pattern.strip()
    return bool(pattern) and _spec((pattern,)).match_file(_posix(rel_path))


@dataclass(frozen=True)
class IgnoreRule:
    """One ignore file: its patterns, and the folder they are relative to."""

    base: str  # the ignore file's folder relative to the walked root ("": the root or above)
    spec: _SelfMatcher
    above: str = ""  # a file above the walked root: the root's path relative to its folder

    def verdict(self, rel_path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included by a `!` pattern; None: no pattern applies."""
        if self.base:
            if not rel_path.startswith(self.base + "/"):
                return None
            rel_path = rel_path[len(self.base) + 1 :]
        elif self.above:
            rel_path = f"{self.above}/{rel_path}" if rel_path else self.above
        return self.spec.check(rel_path + ("/" if is_dir else ""))


def parse_ignore(text: str, base: str = "") -> list[IgnoreRule]:
    """The rules of one ignore file, as git reads it (comments, `!`, trailing `/`, `**`)."""
    return [IgnoreRule(base, _SelfMatcher.from_lines(text.splitlines()))]


def ignored(rules: Sequence[IgnoreRule], rel_path: str, is_dir: bool) -> bool:
    """The last rule that says anything wins, as in git, where deeper files override."""
    verdict: bool | None = None
    for rule in rules:
        said = rule.verdict(rel_path, is_dir)
        if said is not None:
            verdict = said
    return bool(verdict)


def _read_ignore_rules(folder: str, base: str, names: Sequence[str] = ()) -> list[IgnoreRule]:
    rules: list[IgnoreRule] = []
    for name in names or IGNORE_FILES:
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fp:
                rules.extend(parse_ignore(fp.read(), base))
        except OSError:
            continue
    return rules


def repository_root(folder: str) -> str | None:
    """The top of the git work tree holding `folder` (where `.git` is), or None."""
    current = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _ancestor_rules(root: str) -> list[IgnoreRule]:
    """What git applies to `root` from above it: `.git/info/exclude`, then each `.gitignore`
    from the top of the work tree down to `root`'s parent (absolute bases: they are not under
    the walked root). Scanning a subfolder honours the repository's root .gitignore."""
    absolute = os.path.abspath(root)
    top = repository_root(absolute)
    if top is None:
        return []
    rel = os.path.relpath(absolute, top)
    parts = [] if rel == "." else rel.split(os.sep)

    def above(k: int) -> str:  # the walked root relative to the folder k levels below top
        return "/".join(parts[k:])

    rules = [
        replace(r, above=above(0))
        for r in _read_ignore_rules(os.path.join(top, ".git", "info"), "", ("exclude",))
    ]
    for k in range(len(parts)):  # top, then each folder down to root's parent
        folder = os.path.join(top, *parts[:k])
        rules += [
            replace(r, above=above(k)) for r in _read_ignore_rules(folder, "", (".gitignore",))
        ]
    return rules


def _inside_ignored_folder(root: str) -> bool:
    """Is the walked root, or a folder between it and the top of the work tree, ignored?
    git cannot re-include anything inside an excluded folder, whatever a later `!` says
    (`/**` then `!keep.jsonl` keeps no `a/keep.jsonl`), so then nothing under root is kept."""
    absolute = os.path.abspath(root)
    top = repository_root(absolute)
    if top is None or top == absolute:
        return False
    parts = os.path.relpath(absolute, top).split(os.sep)
    return any(
        ignored(_ancestor_rules(os.path.join(top, *parts[: j + 1])), "", True)
        for j in range(len(parts))
    )
