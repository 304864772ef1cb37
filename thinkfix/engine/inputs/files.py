"""Turn the paths a user names into the session files to process, each with its format.

Two steps, so the expensive one can run in worker processes:

- `walk(paths, options)` lists candidates (stat only, no reads): named files are
  always candidates, folders are walked in sorted order, skipping `.git`,
  `node_modules`, `__pycache__`, `*.lock`, anything git would ignore (the
  `.gitignore` files from the top of the work tree down, `.git/info/exclude`) or
  a `.thinkfixignore` ignores, what `exclude` names, and names that do not look
  like session files (see `DEFAULT_INCLUDE`). `-` spools stdin to a temp file.
  Every pattern has gitignore semantics, by `pathspec`.
- `resolve(candidate, options)` reads a file's head and detects its format (or
  takes `--format`), giving an `InputFile` that carries either a format id or an
  `InputError`, or a skip reason.

Order is deterministic: roots in the order given, files under a folder sorted by
path, duplicates (the same real file twice) dropped.
"""

from __future__ import annotations

import atexit
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from functools import lru_cache
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix.engine.report import InputError
from thinkfix.formats import registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.detection import base_name, own_document, read_head
from thinkfix.io import remote
from thinkfix.io.compression import Compression, sniff, wrap_reader
from thinkfix.io.errors import ErrorKind
from thinkfix.io.regular import kind_of, open_regular

if TYPE_CHECKING:
    import pathspec

STDIN = "-"

#: Folder and file names never walked into, whatever the ignore files say.
ALWAYS_SKIP = (
    ".git",
    "node_modules",
    "__pycache__",
    "*.lock",
    ".hg",
    ".svn",
    ".tox",
    ".venv",
    # thinkfix's own temporary files (filestate.TEMP_SUFFIX), which a killed run leaves
    # and the next run sweeps: `.x.jsonl.reset.<ts>.<host>.<pid>.<hex>.thinkfix-tmp`
    # would otherwise pass as an OpenClaw archive name.
    "*.thinkfix-tmp",
)

#: Names a walked file must match (after compression and OpenClaw archive suffixes are
#: stripped, so `x.jsonl.reset.<ts>` and `x.jsonl.zst` count as `x.jsonl`), and the names
#: OpenCode, Kilo CLI and Crush give their SQLite stores (other `.db` files abound and are not ours).
DEFAULT_INCLUDE = (
    "*.jsonl",
    "*.json",
    "opencode.db",
    "opencode-*.db",
    "kilo.db",
    "kilo-*.db",
    "crush.db",
    "state.vscdb",
    "threads.db",
    "sessions.db",  # Goose's store: a generic name, claimed only by its tables
    ".aider.chat.history.md",
)

IGNORE_FILES = (".gitignore", ".thinkfixignore")

#: Why a file was skipped, in the words every report shows.
EMPTY = "empty"
UNKNOWN = "not a known session format"
DISABLED = "disabled by configuration"


class UnknownPolicy(str, Enum):
    """What a file no format claims becomes."""

    AUTO = (
        "auto"  # an error when named, a skip when found by walking a folder (config JSON abounds)
    )
    ERROR = "error"
    SKIP = "skip"


@dataclass(frozen=True)
class InputOptions:
    """How paths become input files."""

    include: tuple[str, ...] = ()  # replaces DEFAULT_INCLUDE for walked files when set
    exclude: tuple[str, ...] = ()  # applies to walked and named files alike
    # The folder exclude patterns are anchored to (the config file's, else the working
    # folder), as ruff anchors them; a file outside it is matched relative to its walked root.
    anchor: str | None = None
    respect_ignore: bool = True  # honour .gitignore / .thinkfixignore in walked folders
    format: str | None = None  # a format id forced on every file (None or "auto": detect)
    unknown: UnknownPolicy = UnknownPolicy.AUTO
    follow_symlinks: bool = True


@dataclass(frozen=True, order=True)
class Candidate:
    """A file to look at: where to open it, how to show it, and whether the user named it."""

    path: str  # display path: as given, or the given folder joined with the relative path
    real_path: str  # what to open ("-" spooled: a temp file)
    explicit: bool = True
    size: int = 0


@dataclass(frozen=True)
class InputFile:
    """A candidate after detection: its format, or an error, or a reason to skip it.

    The format is the object detection chose (`fmt`), carried to every reader of the file
    and never looked up again by its id; the id (`format`) is what reports print. To a worker
    process the file travels with the id, and is the registry's object again there.
    """

    path: str
    real_path: str
    fmt: SessionFormat | None = None
    compression: Compression = Compression.NONE
    size: int = 0
    explicit: bool = True
    error: InputError | None = None
    skipped: str | None = None

    @property
    def format(self) -> str | None:
        """The format's id, as reports and the state file name it."""
        return None if self.fmt is None else self.fmt.id

    @property
    def ok(self) -> bool:
        """Ready to read: a format and neither an error nor a skip."""
        return self.fmt is not None and self.error is None and self.skipped is None

    def session_format(self) -> SessionFormat:
        """The format object (only for `ok` files)."""
        assert self.fmt is not None
        return self.fmt

    def __reduce__(self) -> tuple[Any, ...]:
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        state["fmt"] = self.format  # the wire form: the id
        return (_input_file, (state,))

    def open(self) -> BinaryIO:
        """The decompressed bytes, ready to hand to `SessionFormat.read`."""
        return wrap_reader(open_input(self.real_path), self.compression)


def _input_file(state: dict[str, Any]) -> InputFile:
    """An `InputFile` from its pickled state: the format id becomes the registry's object."""
    fmt = state["fmt"]
    return InputFile(**{**state, "fmt": None if fmt is None else registry.get(fmt)})


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
    import pathspec  # only when there are patterns: a scan of one named file never needs it

    return pathspec.GitIgnoreSpec.from_lines(_git_line(line) for line in lines)


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


@dataclass
class WalkStats:
    """What a walk saw that a report does not carry: which exclude patterns matched anything,
    so a pattern that matched nothing (a typo, quotes kept by a shell) can be named."""

    excluded_by: dict[str, int] = field(default_factory=dict)

    def unmatched(self, patterns: Iterable[str]) -> list[str]:
        return [p for p in patterns if not self.excluded_by.get(p)]


# --- walking ---------------------------------------------------------------------------------


def is_session_name(rel_path: str, include: Sequence[str] = ()) -> bool:
    """Does a walked file (path relative to the walked folder) look like a session file?

    Matched on the name without compression and OpenClaw archive suffixes, so
    `a.jsonl.deleted.<ts>` and `a.jsonl.gz` pass the default `*.jsonl`. User
    patterns replace the default and are tried on the relative path, the name
    and the stripped name.
    """
    name = rel_path.replace(os.sep, "/").rsplit("/", 1)[-1]
    stripped = base_name(name)
    if include:
        return any(glob_match(p, rel_path) or glob_match(p, stripped) for p in include)
    return _spec(DEFAULT_INCLUDE).match_file(stripped)


_spooled: list[str] = []


def spool_stdin(stream: BinaryIO | None = None) -> str:
    """Copy stdin to a temp file (removed at exit), so it is read like any other file."""
    import tempfile

    source = stream if stream is not None else sys.stdin.buffer
    fd, path = tempfile.mkstemp(prefix="thinkfix-stdin-")
    with os.fdopen(fd, "wb") as out:
        import shutil

        shutil.copyfileobj(source, out, 1 << 20)
    if not _spooled:
        atexit.register(_remove_spooled)
    _spooled.append(path)
    return path


def _remove_spooled() -> None:
    for path in _spooled:
        try:
            os.unlink(path)
        except OSError:
            pass
    _spooled.clear()


def walk(
    paths: Iterable[str],
    options: InputOptions = InputOptions(),
    *,
    stdin: BinaryIO | None = None,
    stats: WalkStats | None = None,
) -> Iterator[Candidate | InputFile]:
    """Candidates in deterministic order; a path that does not exist yields an error `InputFile`.

    Nothing is read here except folder listings and ignore files. `stats`, when given,
    records which exclude patterns matched something.
    """
    seen: set[str] = set()
    excluder = _Excluder(options, stats)
    for given in paths:
        if remote.is_url(given):
            yield from _walk_url(given, options, excluder)
            continue
        if given == STDIN:
            spooled = spool_stdin(stdin)
            yield Candidate(STDIN, spooled, True, os.path.getsize(spooled))
            continue
        try:
            st = os.stat(given) if options.follow_symlinks else os.lstat(given)
        except OSError as exc:
            yield _error_file(given, given, ErrorKind.UNREADABLE, _os_message(exc))
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk_folder(given, options, seen, excluder)
        elif excluder.excluded(given, os.path.basename(given)):
            continue
        elif not stat.S_ISREG(st.st_mode):
            # A FIFO would block the read forever, a device never end: refused, by name.
            yield _error_file(
                given,
                given,
                ErrorKind.UNREADABLE,
                f"{kind_of(st.st_mode)}, not a regular file; only regular files "
                "(and stdin, as '-') are read",
            )
        else:
            key = _identity(given, st)
            if key not in seen:
                seen.add(key)
                yield Candidate(given, given, True, st.st_size)


def _walk_url(
    url: str,
    options: InputOptions,
    excluder: _Excluder,
) -> Iterator[Candidate | InputFile]:
    """The files an fsspec URL names (io/remote.py): a folder's session files, by the same
    name rules and excludes as a local folder's, or the one file named."""
    try:
        folder, files = remote.listing(url)
    except remote.RemoteUnavailable:
        raise  # a missing package is the run's usage error, not this input's
    except (OSError, ValueError) as exc:
        message = _os_message(exc) if isinstance(exc, OSError) and exc.strerror else str(exc)
        yield _error_file(url, url, ErrorKind.UNREADABLE, message)
        return
    for full, rel, size in files:
        if excluder.excluded(rel, rel) or (folder and not is_session_name(rel, options.include)):
            continue
        yield Candidate(full, full, not folder, size)


def open_input(real_path: str) -> BinaryIO:
    """A local regular file (`open_regular`), or the file an fsspec URL names."""
    return remote.open_url(real_path) if remote.is_url(real_path) else open_regular(real_path)


def _identity(path: str, st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}" if st.st_ino else os.path.realpath(path)


class _Excluder:
    """`--exclude` / `exclude` patterns, matched gitignore-style against the path relative to
    the anchor folder (or, for a file outside it, relative to the folder being walked)."""

    def __init__(self, options: InputOptions, stats: WalkStats | None) -> None:
        self.patterns = tuple(p for p in options.exclude if p.strip())
        self.anchor = os.path.abspath(options.anchor) if options.anchor else None
        self.stats = stats

    def excluded(self, path: str, fallback: str, is_dir: bool = False) -> bool:
        """Is `path` (as walked) excluded? `fallback`: its path relative to the walked root."""
        if not self.patterns:
            return False
        rel = fallback
        if self.anchor is not None:
            anchored = os.path.relpath(os.path.abspath(path), self.anchor)
            if anchored != os.pardir and not anchored.startswith(os.pardir + os.sep):
                rel = anchored
        rel = _posix(rel) + ("/" if is_dir else "")
        if not _spec(self.patterns).match_file(rel):
            return False
        if self.stats is not None:
            for pattern in self.patterns:
                if _spec((pattern,)).match_file(rel):
                    self.stats.excluded_by[pattern] = self.stats.excluded_by.get(pattern, 0) + 1
        return True


def _walk_folder(
    root: str, options: InputOptions, seen: set[str], excluder: _Excluder
) -> Iterator[Candidate | InputFile]:
    rules_at: dict[str, list[IgnoreRule]] = {}
    above = _ancestor_rules(root) if options.respect_ignore else []
    if options.respect_ignore and _inside_ignored_folder(root):
        return

    def rules_for(rel: str) -> list[IgnoreRule]:
        return rules_at.get(rel, [])

    stack: list[str] = [""]  # relative folders still to list, processed in sorted order
    visited: set[str] = set()
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else root
        try:
            real = os.path.realpath(folder)
            if real in visited:  # a symlink loop
                continue
            visited.add(real)
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            yield _dir_error(folder, exc)
            continue
        inherited = rules_for(_parent(rel_dir)) if rel_dir else above
        rules = inherited + (_read_ignore_rules(folder, rel_dir) if options.respect_ignore else [])
        rules_at[rel_dir] = rules
        subdirs: list[str] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=options.follow_symlinks)
            except OSError:
                is_dir = False
            if _spec(ALWAYS_SKIP).match_file(entry.name):
                continue
            if entry.name in IGNORE_FILES:
                continue
            if rules and ignored(rules, rel, is_dir):
                continue
            if excluder.excluded(os.path.join(root, rel), rel, is_dir):
                continue
            if is_dir:
                subdirs.append(rel)
                continue
            if not is_session_name(rel, options.include):
                continue
            try:
                st = entry.stat(follow_symlinks=options.follow_symlinks)
            except OSError as exc:
                yield _error_file(
                    os.path.join(root, rel),
                    os.path.join(root, rel),
                    ErrorKind.UNREADABLE,
                    _os_message(exc),
                )
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            key = _identity(entry.path, st)
            if key in seen:
                continue
            seen.add(key)
            path = os.path.join(root, rel)
            yield Candidate(path, path, False, st.st_size)
        # Files of a folder come before its subfolders' files, both sorted by name.
        stack.extend(reversed(subdirs))


def _parent(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _dir_error(folder: str, exc: OSError) -> InputFile:
    return _error_file(folder, folder, ErrorKind.UNREADABLE, _os_message(exc))


def _error_file(path: str, real_path: str, kind: ErrorKind, message: str) -> InputFile:
    return InputFile(path, real_path, error=InputError(path, None, kind, message))


def _os_message(exc: OSError) -> str:
    return exc.strerror or str(exc)


# --- detection -------------------------------------------------------------------------------


def resolve(candidate: Candidate | InputFile, options: InputOptions = InputOptions()) -> InputFile:
    """Read a candidate's head and settle its format, or say why it cannot be read."""
    if isinstance(candidate, InputFile):
        return candidate
    path, real = candidate.path, candidate.real_path
    base = InputFile(path, real, size=candidate.size, explicit=candidate.explicit)
    try:
        with open_input(real) as raw:
            compression = sniff(raw.read(4))
            raw.seek(0)
            size = candidate.size if remote.is_url(real) else os.fstat(raw.fileno()).st_size
            with wrap_reader(raw, compression) as fp:
                head = read_head(fp)
    except (OSError, EOFError, ValueError) as exc:
        message = _os_message(exc) if isinstance(exc, OSError) and exc.strerror else str(exc)
        return replace(
            base, error=InputError(path, None, ErrorKind.UNREADABLE, f"cannot read: {message}")
        )
    except Exception as exc:  # noqa: BLE001 - zstd raises its own type for corrupt frames
        return replace(
            base, error=InputError(path, None, ErrorKind.UNREADABLE, f"cannot decompress: {exc}")
        )
    base = replace(base, compression=compression, size=size)
    if not head.strip():
        return replace(base, skipped=EMPTY)
    forced = options.format if options.format not in (None, "", "auto") else None
    if forced is not None:
        return replace(base, fmt=registry.get(forced))
    found = registry.detect(head, path if path != STDIN else "")
    if found is not None:
        return replace(base, fmt=found[0])
    own = own_document(head, path)
    if own is not None:  # ours (a sidecar, a baseline): known, never an unknown session
        return replace(base, skipped=f"thinkfix {own}")
    policy = options.unknown
    if policy is UnknownPolicy.SKIP or (policy is UnknownPolicy.AUTO and not candidate.explicit):
        return replace(base, skipped=UNKNOWN)
    return replace(
        base,
        error=InputError(
            path,
            None,
            ErrorKind.UNKNOWN_FORMAT,
            "not a known session format (name one with --format, or exclude the file)",
        ),
    )
