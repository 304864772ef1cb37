"""One spelling for every path a report shows: relative to the working folder when inside it,
POSIX separators, no `./`.

GitHub matches an annotation to a pull request's diff only by its workspace-relative path
(`fixtures/a.jsonl`, never `./fixtures/a.jsonl`), and code-scanning services resolve SARIF URIs
against the checkout, so every machine-readable output must spell a file the same way.
"""

from __future__ import annotations

import os

from thinkfix.io import remote

STDIN = "-"


def display_path(path: str, cwd: str) -> str:
    """`path` relative to `cwd` when it lies inside it, else absolute; `/` separators."""
    if not path or path == STDIN or remote.is_url(path):
        return path  # a URL is shown as given
    absolute = os.path.normpath(os.path.join(cwd, path))
    try:
        rel = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive on Windows: no relative spelling exists
        rel = os.pardir
    inside = rel != os.pardir and not rel.startswith(os.pardir + os.sep)
    out = rel if inside else absolute
    return out.replace(os.sep, "/") if os.sep != "/" else out


def inside(path: str, folder: str) -> bool:
    """Is `path` `folder` or below it (both absolute, spelled alike: real paths, say)?"""
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # one relative, the other absolute; another drive on Windows
        return False
