"""The session files a run processes: what the user asked for (`InputOptions`), the files a walk lists (`Candidate`: stat only, no reads) and the files resolved (`InputFile`: format detected from the head, or `--format`; or an `InputError`; or a skip reason). `resolve` reads, so it runs in worker processes."""

# Without `from __future__ import annotations` (a name imported for annotations only is
# quoted), from when typing compiled each string annotation of a NamedTuple's fields;
# `_serialize.NamedTuple` keeps annotations as written (#26 item 3).

import os
from collections.abc import Callable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, BinaryIO

from thinkfix.engine.report import InputError
from thinkfix.formats import places, registry
from thinkfix.formats.base import SessionFormat
from thinkfix.formats.detection import own_document, read_head
from thinkfix.io import remote
from thinkfix.io.compression import Compression, sniff, wrap_reader
from thinkfix.io.errors import ErrorKind
from thinkfix.io.regular import open_regular

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

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


def name_globs(patterns: Sequence[str]) -> Callable[[str], bool]:
    """Does a name (one path segment) match one of these patterns, as gitignore matching
    (`pathspec`) reads them? For patterns that are a name, or hold one `*` and no other
    wildcard: plain comparisons, so a walk with no ignore file and no `exclude` never
    imports pathspec (~20-28 ms of a scan's start)."""
    if any(c in p for p in patterns for c in "?[]\\!/") or any(p.count("*") > 1 for p in patterns):
        raise ValueError(f"not simple name patterns: {patterns}")
    exact = frozenset(p for p in patterns if "*" not in p)
    parts = tuple(tuple(p.split("*")) for p in patterns if "*" in p)

    def matches(name: str) -> bool:
        return name in exact or any(
            len(name) >= len(head) + len(tail) and name.startswith(head) and name.endswith(tail)
            for head, tail in parts
        )

    return matches


#: Is this folder or file name never walked into (`ALWAYS_SKIP`)?
always_skipped = name_globs(ALWAYS_SKIP)
#: Does this name (compression and archive suffixes stripped) look like a session file?
default_session_name = name_globs(DEFAULT_INCLUDE)

IGNORE_FILES = (".gitignore", ".thinkfixignore")

#: Why a file was skipped, in the words every report shows.
EMPTY = "empty"
UNKNOWN = "not a known session format"
DISABLED = "disabled by configuration"
NOT_REGULAR = "not a regular file"  # a FIFO, socket or device found in a folder


class UnknownPolicy(str, Enum):
    """What a file no format claims becomes."""

    AUTO = (
        "auto"  # an error when named, a skip when found by walking a folder (config JSON abounds)
    )
    ERROR = "error"
    SKIP = "skip"


# NamedTuples, not frozen dataclasses: every scan builds these, and a dataclass costs ~1 ms
# of every start-up to define (#26 item 3).


class InputOptions(NamedTuple):
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
    # Read the target of a symlink found in a walked folder that lies outside every path
    # named (`--follow-links`; a checkout's link to a session of the user's is refused).
    follow_links: bool = False


class Candidate(NamedTuple):
    """A file to look at: where to open it, how to show it, and whether the user named it."""

    path: str  # display path: as given, or the given folder joined with the relative path
    real_path: str  # what to open ("-" spooled: a temp file)
    explicit: bool = True
    size: int = 0


class InputFile(NamedTuple):
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
        state = {**self._asdict(), "fmt": self.format}  # the format's wire form: its id
        return (_input_file, (state,))

    def open(self) -> BinaryIO:
        """The decompressed bytes, ready to hand to `SessionFormat.read`."""
        return wrap_reader(open_input(self.real_path), self.compression)


def _input_file(state: dict[str, Any]) -> InputFile:
    """An `InputFile` from its pickled state: the format id becomes the registry's object."""
    fmt = state["fmt"]
    return InputFile(**{**state, "fmt": None if fmt is None else registry.get(fmt)})


def open_input(real_path: str) -> BinaryIO:
    """A local regular file (`open_regular`), or the file an fsspec URL names."""
    return remote.open_url(real_path) if remote.is_url(real_path) else open_regular(real_path)


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
        return base._replace(
            error=InputError(path, None, ErrorKind.UNREADABLE, f"cannot read: {message}")
        )
    except Exception as exc:  # noqa: BLE001 - zstd raises its own type for corrupt frames
        return base._replace(
            error=InputError(path, None, ErrorKind.UNREADABLE, f"cannot decompress: {exc}")
        )
    base = base._replace(compression=compression, size=size)
    if not head.strip():
        return base._replace(skipped=EMPTY)
    forced = options.format if options.format not in (None, "", "auto") else None
    if forced is not None:
        return base._replace(fmt=registry.get(forced))
    found = registry.detect(head, path if path != STDIN else "")
    if found is not None:
        return base._replace(fmt=found[0])
    own = own_document(head, path)
    if own is not None:  # ours (a sidecar, a baseline): known, never an unknown session
        return base._replace(skipped=f"thinkfix {own}")
    place = places.claim(real) if path != STDIN else None
    if place is not None:  # where the runtime writes only sessions: read as its, never skipped
        return base._replace(fmt=registry.get(place.format))
    policy = options.unknown
    if policy is UnknownPolicy.SKIP or (policy is UnknownPolicy.AUTO and not candidate.explicit):
        return base._replace(skipped=UNKNOWN)
    return base._replace(
        error=InputError(
            path,
            None,
            ErrorKind.UNKNOWN_FORMAT,
            "not a known session format (name one with --format, or exclude the file)",
        ),
    )
