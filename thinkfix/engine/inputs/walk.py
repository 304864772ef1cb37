"""Turn the paths a user names into candidate session files (stat only, no reads).

Named files are always candidates; folders are walked in sorted order, skipping `.git`,
`node_modules`, `__pycache__`, `*.lock`, anything git or a `.thinkfixignore` ignores
(`ignore`), what `exclude` names, and names that do not look like session files (see
`files.DEFAULT_INCLUDE`). `-` spools stdin to a temp file. Order is deterministic: roots in
the order given, files under a folder sorted by path, duplicates (the same real file twice)
dropped."""

from __future__ import annotations

import atexit
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO

from thinkfix.engine.inputs.files import (
    IGNORE_FILES,
    NOT_REGULAR,
    STDIN,
    Candidate,
    InputFile,
    InputOptions,
    _os_message,
    always_skipped,
    default_session_name,
)
from thinkfix.engine.report import InputError
from thinkfix.formats.detection import base_name
from thinkfix.io import remote
from thinkfix.io.errors import ErrorKind
from thinkfix.io.paths import inside
from thinkfix.io.regular import kind_of

if TYPE_CHECKING:
    from thinkfix.engine.inputs.ignore import IgnoreRule


class WalkStats:
    """What a walk saw that a report does not carry: which exclude patterns matched anything,
    so a pattern that matched nothing (a typo, quotes kept by a shell) can be named. (A plain
    class: a dataclass costs ~1 ms of every start-up to define.)"""

    __slots__ = ("excluded_by",)

    def __init__(self) -> None:
        self.excluded_by: dict[str, int] = {}

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
        from thinkfix.engine.inputs.ignore import glob_match  # patterns of the user's

        return any(glob_match(p, rel_path) or glob_match(p, stripped) for p in include)
    return default_session_name(stripped)


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
    paths = list(paths)
    # What a link found in a walked folder may lead into unasked (`_outside`)
    roots = [os.path.realpath(p) for p in paths if p != STDIN and not remote.is_url(p)]
    roots += _url_roots(paths)
    for given in paths:
        if remote.is_url(given):
            yield from _walk_url(given, options, excluder, roots, seen)
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
            yield from _walk_folder(given, options, seen, excluder, roots)
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
    roots: list[str],
    seen: set[str],
) -> Iterator[Candidate | InputFile]:
    """The files an fsspec URL names (io/remote.py): a folder's session files, by the same
    name rules and excludes as a local folder's, or the one file named. What is not a plain
    file is said as a local folder says it (`_url_odd`); a file on this disk is read once,
    however many names lead to it (`seen`), as a local folder's is."""
    try:
        folder, files = remote.listing(url)
    except remote.RemoteUnavailable:
        raise  # a missing package is the run's usage error, not this input's
    except (OSError, ValueError) as exc:
        message = _os_message(exc) if isinstance(exc, OSError) and exc.strerror else str(exc)
        yield _error_file(url, url, ErrorKind.UNREADABLE, message)
        return
    for entry in files:
        if excluder.excluded(entry.rel, entry.rel):
            continue
        found: Candidate | InputFile | None = None
        if not entry.regular:
            found = _url_odd(entry, options, roots)
        elif not folder or is_session_name(entry.rel, options.include):
            found = Candidate(entry.url, entry.url, not folder, entry.size)
        if isinstance(found, Candidate) and entry.local is not None:
            try:
                key = _identity(entry.local, os.stat(entry.local))
            except OSError:
                key = entry.url  # the read says why
            if key in seen:
                continue
            seen.add(key)
        if found is not None:
            yield found


def _url_odd(
    entry: remote.Listed, options: InputOptions, roots: list[str]
) -> Candidate | InputFile | None:
    """A listed file that is not a plain one, as `_walk_folder` says it of a local folder's
    (fsspec calls a FIFO, a socket, a device and, on the local disk, every symlink `other`,
    and the listing left them out without a word, review10): a FIFO, socket or device is a
    skipped file; a link on this disk is judged by its target (`_outside`, then what it
    leads to); a link to a folder inside the paths named adds nothing (its files are listed
    where they lie). None: nothing to say."""
    local = entry.local
    if local is None:  # another filesystem's special file: never opened
        return _skipped_special(entry.url) if is_session_name(entry.rel, options.include) else None
    is_dir = os.path.isdir(local)
    if not is_dir and not is_session_name(entry.rel, options.include):
        return None
    if not options.follow_links and os.path.islink(local):
        outside = _outside(local, roots, shown=entry.url)
        if outside is not None:
            return outside
    try:
        st = os.stat(local)
    except OSError as exc:
        return _error_file(entry.url, entry.url, ErrorKind.UNREADABLE, _os_message(exc))
    if stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISREG(st.st_mode):
        return Candidate(entry.url, entry.url, False, st.st_size)
    return _skipped_special(entry.url)


def _url_roots(paths: list[str]) -> list[str]:
    """The real paths on this disk of the `file://` URLs named: a link found under one may
    lead anywhere inside them, as a local folder's may inside the paths named. A URL that
    cannot be judged here is `_walk_url`'s to report."""
    found = []
    for path in paths:
        if remote.is_url(path):
            try:
                protocol, where = remote.location(path)
            except (OSError, ValueError, ImportError):
                continue
            if protocol == "file":
                found.append(where)
    return found


def _skipped_special(path: str) -> InputFile:
    """A FIFO, socket or device found in a folder: never read, but named (review10)."""
    return InputFile(path, path, explicit=False, skipped=NOT_REGULAR)


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
        # The gitignore machinery only for a run with patterns (a named file needs none).
        from thinkfix.engine.inputs.ignore import _posix, _spec

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
    root: str, options: InputOptions, seen: set[str], excluder: _Excluder, roots: list[str]
) -> Iterator[Candidate | InputFile]:
    from thinkfix.engine.inputs.ignore import (
        _ancestor_rules,
        _inside_ignored_folder,
        _read_ignore_rules,
        ignored,
    )

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
            if always_skipped(entry.name):
                continue
            if entry.name in IGNORE_FILES:
                continue
            if rules and ignored(rules, rel, is_dir):
                continue
            if excluder.excluded(os.path.join(root, rel), rel, is_dir):
                continue
            if not is_dir and not is_session_name(rel, options.include):
                continue
            if not options.follow_links and entry.is_symlink():
                outside = _outside(os.path.join(root, rel), roots)
                if outside is not None:
                    yield outside
                    continue
            if is_dir:
                subdirs.append(rel)
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
                if _special(st.st_mode):  # never read, but named: not as if it were not there
                    yield _skipped_special(os.path.join(root, rel))
                continue
            key = _identity(entry.path, st)
            if key in seen:
                continue
            seen.add(key)
            path = os.path.join(root, rel)
            yield Candidate(path, path, False, st.st_size)
        # Files of a folder come before its subfolders' files, both sorted by name.
        stack.extend(reversed(subdirs))


def _outside(path: str, roots: list[str], shown: str | None = None) -> InputFile | None:
    """The error for a symlink found in a walked folder whose target lies outside every path
    named, else None. A checkout is data: its `planted.jsonl -> ~/.claude/projects/...`
    would put a session of the user's into a report CI publishes (hostile10's request);
    naming the link itself, or `--follow-links`, reads it."""
    target = os.path.realpath(path)
    if any(inside(target, root) for root in roots):
        return None
    return _error_file(
        shown or path,
        shown or path,
        ErrorKind.LINKED,
        f"a symlink to {target}, outside the paths named; not read (name it, or pass "
        "--follow-links, to read it)",
    )


def _special(mode: int) -> bool:
    """A FIFO, socket or device: what a read could block on forever or never finish."""
    return any(test(mode) for test in (stat.S_ISFIFO, stat.S_ISSOCK, stat.S_ISCHR, stat.S_ISBLK))


def _parent(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _dir_error(folder: str, exc: OSError) -> InputFile:
    return _error_file(folder, folder, ErrorKind.UNREADABLE, _os_message(exc))


def _error_file(path: str, real_path: str, kind: ErrorKind, message: str) -> InputFile:
    return InputFile(path, real_path, error=InputError(path, None, kind, message))
