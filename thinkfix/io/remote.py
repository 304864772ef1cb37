"""Inputs named by fsspec URLs (`s3://bucket/sessions`, `gs://…`, `file://…`, `memory://…`).

A URL names a file or a folder on any filesystem fsspec knows; a folder is listed
recursively, the same session names kept as for a local folder (`*.jsonl`, `*.json` and
their compressed or archived copies, or `--include`), sorted. Files are read through
fsspec's own file objects (seekable, read in blocks), so the engine reads a bucket the way
it reads a disk and the report is the one a local copy of the files gives, each file
shown by its URL. fsspec is an optional extra (`pip install 'thinkfix[remote]'`), imported
only when a URL is given; each cloud needs its own fsspec backend (s3fs, gcsfs, adlfs).

Not read from a URL: ignore files (`.gitignore`, `.thinkfixignore`), which belong to local
checkouts.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from typing import NamedTuple
else:  # typing's class, made without its per-class `eval` and checks (#26 item 3)
    from thinkfix._serialize import NamedTuple

from thinkfix.io.regular import open_regular

#: What a URL's scheme is made of after its first letter (RFC 3986): `is_url` reads it with
#: str methods, so importing this module (every scan does) compiles no regex (#26 item 3).
_SCHEME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")


class RemoteUnavailable(OSError):
    """A URL without fsspec installed: say what to install."""


def is_url(path: str) -> bool:
    """Is `path` a URL (`scheme://…`) rather than a local path?"""
    scheme, colon_slashes, _ = path.partition("://")
    first = scheme[:1]
    ascii_letter = first.isascii() and first.isalpha()
    return bool(colon_slashes) and ascii_letter and _SCHEME_CHARACTERS.issuperset(scheme)


#: Filesystems that live in one process's memory: a worker process (a pool's, a cluster's)
#: sees its own, empty one, so what it read or wrote there is not this process's.
PROCESS_LOCAL = ("memory",)


def process_local(path: str) -> bool:
    """Is `path` a URL of a filesystem only this process can see (`memory://`)?"""
    return is_url(path) and path.split("://", 1)[0].lower() in PROCESS_LOCAL


def _fsspec() -> Any:
    try:
        import fsspec  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise RemoteUnavailable(
            "reading URLs needs fsspec: pip install 'thinkfix[remote]'"
        ) from None
    return fsspec


#: The fsspec backend each common scheme needs, for a message that says what to install.
BACKENDS = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
    "hf": "huggingface_hub",
    "sftp": "paramiko",
}


#: A `::` that begins another URL chains filesystems (`zip://a.jsonl::s3://bucket/a.zip`).
#: No file name holds `//`, so a name's `::` (`a::memory:.jsonl`) never reads as a chain.
_CHAIN = r"::(?=[A-Za-z][A-Za-z0-9+.-]*://)"  # compiled on first use (re's cache)
#: Stands for `::` while fsspec strips the scheme (memory:// leaves a path holding `::`
#: unrooted); no URL nor file name holds NUL.
_COLONS = "\0\0"


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of `url`, and the path on it, every character of a name taken
    literally (`url_to_fs` reads any `::` as a chain); `RemoteUnavailable`, naming the
    package to install, when fsspec has no backend for its scheme here."""
    fsspec = _fsspec()
    try:
        if re.search(_CHAIN, url):
            fs, path = fsspec.core.url_to_fs(url)
        else:
            cls = fsspec.get_filesystem_class(url.split("://", 1)[0].lower())
            fs = cls(**cls._get_kwargs_from_urls(url))
            path = cls._strip_protocol(url.replace("::", _COLONS)).replace(_COLONS, "::")
    except ImportError as exc:  # fsspec knows the scheme; its backend is not installed
        scheme = url.split("://", 1)[0].lower()
        package = BACKENDS.get(scheme)
        hint = f"pip install {package}" if package else str(exc)
        raise RemoteUnavailable(f"reading {scheme}:// URLs needs {package or 'a backend'}: {hint}")
    return fs, path


def join(url: str, path_on_fs: str, root_on_fs: str) -> str:
    """The URL of `path_on_fs`, a file found under the folder `url` names (`root_on_fs`)."""
    rel = path_on_fs[len(root_on_fs) :].lstrip("/")
    return url.rstrip("/") + "/" + rel


class Listed(NamedTuple):
    """One file a URL's listing found: its URL, its path relative to the folder, its size;
    `regular` unless the filesystem calls it something else (fsspec's `other`: a FIFO, a
    socket, a device, or on the local disk any symlink); `local`, for a file on this disk
    (`file://`), its path here, so the walk can judge it as a local folder's file."""

    url: str
    rel: str
    size: int
    regular: bool = True
    local: str | None = None


def listing(url: str) -> tuple[bool, list[Listed]]:
    """Whether `url` is a folder, and its files (or itself), sorted by URL; what is not a
    plain file is listed too (`Listed.regular`), never left out without a word.
    FileNotFoundError when nothing is there."""
    fs, root = filesystem(url)
    if fs.isdir(root):
        local = is_local(fs)
        found = fs.find(root, detail=True)
        files = [
            Listed(
                join(url, p, root),
                p[len(root) :].lstrip("/"),
                int(info.get("size") or 0),
                info.get("type", "file") == "file",
                p if local else None,
            )
            for p, info in found.items()
            if info.get("type", "file") != "directory"
        ]
        return True, sorted(files)
    if not fs.exists(root):
        raise FileNotFoundError(2, "No such file or directory", url)
    return False, [Listed(url, root.rsplit("/", 1)[-1], int(fs.size(root) or 0))]


def open_url(url: str) -> BinaryIO:
    """The file at `url`, open for reading in binary (seekable, buffered by fsspec). A local
    one (`file://`) is opened as a local path is (`open_regular`): fsspec opens a FIFO
    blocking, and a scan waited for a writer forever (review10)."""
    fs, path = filesystem(url)
    if is_local(fs):
        return open_regular(path)
    fp: BinaryIO = fs.open(path, "rb")
    return fp


def modified(url: str) -> float:
    """When the file at `url` last changed (seconds since the epoch), as `os.stat` says of
    a local file; OSError when the filesystem does not say."""
    fs, path = filesystem(url)
    try:
        return float(fs.modified(path).timestamp())
    except (NotImplementedError, AttributeError, ValueError) as exc:
        raise OSError(f"{url}: no modification time") from exc


def isdir(url: str) -> bool:
    """Does `url` name a folder (a prefix holding objects, on an object store)?"""
    fs, path = filesystem(url)
    return bool(fs.isdir(path))


def is_local(fs: Any) -> bool:
    """Is `fs` fsspec's local filesystem (`file://`), where a path is a path on this disk?"""
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol in ("file", "local")


def location(path: str) -> tuple[str, str]:
    """Where `path` (a local path or a URL) lies, comparable across both spellings: the
    filesystem's protocol and the path on it (`file` and the real path for a local one)."""
    if not is_url(path):
        return "file", os.path.realpath(path)
    fs, on_fs = filesystem(path)
    if is_local(fs):
        return "file", os.path.realpath(on_fs)
    protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
    return protocol, on_fs.rstrip("/")
