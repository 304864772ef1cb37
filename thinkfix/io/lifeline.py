"""Worker processes die with the process that started them.

A worker that outlives its parent (killed, crashed) would go on rewriting files
nobody will journal into a manifest, and then hang on a pipe no one reads (the
issue saw 40 files rewritten after the kill). On Linux the kernel sends the
worker SIGKILL when its parent dies (`PR_SET_PDEATHSIG`); elsewhere a daemon
thread watches the parent's pid and ends the worker. Either way a worker is
killed between whole-file steps or inside one, and a file's atomic replace
leaves it as it was or fully written, never torn.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

from thinkfix.io.filestate import alive

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.25


def die_with_parent(parent: int) -> None:
    """Make this (worker) process end as soon as process `parent` is gone.

    Call it first thing in a worker, with the parent's pid read *before* the
    worker started: if the parent is already gone, the worker ends at once.
    Where the worker's direct parent is not `parent` (a fork server started it),
    or the kernel has no parent-death signal, a thread watches `parent` instead.
    """
    armed = _pdeathsig() and os.getppid() == parent
    if not alive(parent):  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        threading.Thread(
            target=_watch, args=(parent,), name="thinkfix-lifeline", daemon=True
        ).start()


def _pdeathsig() -> bool:
    """Arm Linux's parent-death signal; False where there is none."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
            return True
    return False


def _watch(parent: int) -> None:
    while alive(parent):
        time.sleep(_POLL_SECONDS)
    os._exit(1)
