"""Worker processes of a process pool: one BLAS thread, Ctrl-C, SIGTERM and SIGHUP left to the
parent (sent to the whole process group by a terminal or a batch scheduler, they would kill a
worker before the parent could save its results; the parent stops its workers itself), and no
orphans — a worker exits as soon as the process that started it is gone.

A worker blocked on its task pipe does not notice its parent's death by itself (SIGKILL or
SIGTERM of the parent leaves the pool's workers alive forever). Two guards, both set up by
:func:`init_worker`:

* on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker when the thread
  that started it ends;
* everywhere, a daemon thread that checks every :data:`POLL_SECONDS` whether the parent is still
  its parent (an orphan is re-parented, so ``os.getppid()`` changes), or, for a worker started
  by a fork server, whether the pool's owner still exists, and exits otherwise.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

from ..threads import one_blas_thread

__all__ = ["init_worker", "POLL_SECONDS"]

#: How often a worker checks that its parent is alive (seconds).
POLL_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


def _kill_with_parent() -> None:
    """Linux: ask the kernel for SIGKILL when the parent goes (no effect elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - no prctl: the watcher still runs
        pass


def _alive(parent: int, direct: bool) -> bool:
    if direct:  # an orphan is re-parented: its parent pid changes
        return os.getppid() == parent
    try:  # started by a fork server: ask about the owner itself
        os.kill(parent, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - the pid was reused by another user's process
        return False
    return True


def _watch(parent: int, direct: bool) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if not _alive(parent, direct):
            os._exit(1)


def init_worker(parent: int) -> None:
    """Process-pool initializer (``parent``: the pid of the process that owns the pool)."""
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):  # the parent handles them and stops us
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    one_blas_thread()
    direct = os.getppid() == parent  # False for workers started by a fork server
    if direct:
        _kill_with_parent()
        if os.getppid() != parent:  # the parent died before the guard was set
            os._exit(1)
    elif not _alive(parent, direct):
        os._exit(1)
    threading.Thread(
        target=_watch, args=(parent, direct), daemon=True, name="fluidnet-parent"
    ).start()
