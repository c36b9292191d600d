"""The packet-simulation server: loads ns-3 once, then runs every request in a forked process.

``python -m fluidnet.packet._server`` is started by :mod:`fluidnet.packet.runner` (one server per
client process, on first use). It loads ns-3 and compiles fluidnet's C++ components (seconds of
CPU), runs a small warm-up scenario through every component once (cling compiles code when it
is first executed: without this, every forked run would compile it again, about 6 s of CPU),
then answers requests read from stdin. Each request runs in a child forked from the
server: ns-3 keeps global state (the simulator, node ids, random streams), and a fork starts every
run from the same state -- the one the warm-up leaves, identical in every server -- so a run
depends only on its plan and seed, and a crash, a
signal or a timeout takes only that child.

Protocol (binary, both ways): an 8-byte big-endian length and a pickle. The server's own stdout
and stderr go to the log file the client gave; a child's go to the run's log file, whose end is
sent back with a failure. The server exits at the end of its input (the client is gone) and, on
Linux, when its parent dies; its children die with it.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import re
import signal
import struct
import sys
import time
import traceback
from typing import Any

__all__ = ["main", "read_message", "write_message"]

_HEADER = struct.Struct(">Q")
_PR_SET_PDEATHSIG = 1
#: Bytes of a failed run's log sent back to the client.
LOG_TAIL = 4000
#: Signals whose handlers a run restores to the default (a crash kills the run at once).
_CRASH_SIGNALS = (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE)


def read_message(fd: int):
    """One message from file descriptor ``fd``; None at end of file."""
    head = _read_exactly(fd, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    body = _read_exactly(fd, size)
    if body is None:
        return None
    return pickle.loads(body)


def write_message(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = []
    while size > 0:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover - no prctl
            pass


_BACKTRACE = re.compile(r"^(#\d+\s|entry=|\s*$)")


def _tail(path: str) -> str:
    """What a run's log says, without the debugger backtrace cling's crash handler appends:
    its first lines (where ns-3's fatal error message is) and its last ones."""
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if not _BACKTRACE.match(line)]
    whole = "\n".join(lines)
    if len(whole) <= LOG_TAIL:
        return whole
    head, tail = "\n".join(lines[:30])[: LOG_TAIL // 2], "\n".join(lines[-20:])[-LOG_TAIL // 2 :]
    return f"{head}\n...\n{tail}"


def _child(request: dict) -> None:
    """In the forked child: run the request, write the arrays, exit (never returns)."""
    code = 0
    try:
        _die_with_parent()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        # cling's crash handler attaches gdb for a backtrace (10-20 s under load) before the
        # child dies: a crash ends the child at once, ns-3's message is already in the log
        for sig in _CRASH_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        fd = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        import numpy as np

        from ._worker import run_plan

        # dict[str, Any]: savez's stub types **kwds apart from its allow_pickle keyword
        arrays: dict[str, Any] = run_plan(
            request["plan"],
            request["t_end"],
            request["seed"],
            request["dt"],
            request.get("n_points"),
        )
        tmp = request["out"] + ".part"
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, request["out"])
    except BaseException:  # noqa: BLE001 - everything is reported through the log and exit code
        traceback.print_exc()
        code = 3
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _run(request: dict) -> dict:
    """Fork a child for ``request`` and wait for it (within the request's timeout)."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        _child(request)
    timeout = request.get("timeout")
    status = None
    while status is None:
        if timeout is None:
            _, status = os.waitpid(pid, 0)
            break
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        if time.perf_counter() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"status": "timeout", "timeout": timeout, "log": _tail(request["log"])}
        time.sleep(0.02)
    if os.WIFSIGNALED(status):
        return {"status": "signal", "signal": os.WTERMSIG(status), "log": _tail(request["log"])}
    code = os.WEXITSTATUS(status)
    if code != 0 or not os.path.exists(request["out"]):
        return {"status": "error", "exitcode": code, "log": _tail(request["log"])}
    return {"status": "ok", "wall_time": time.perf_counter() - start}


def main() -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client stops us
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # whatever ns-3 prints goes to the server's log, not into the protocol
    cpu0, wall0 = time.process_time(), time.perf_counter()
    try:
        from . import _ns3
        from ._worker import warm_up

        _ns3.load()
        warm_up()
    except BaseException as exc:  # noqa: BLE001
        write_message(
            reply_fd,
            {
                "ready": False,
                "error": f"{type(exc).__name__}: {exc}",
                "log": traceback.format_exc(),
            },
        )
        return
    write_message(
        reply_fd,
        {
            "ready": True,
            "pid": os.getpid(),
            "load_cpu_time": time.process_time() - cpu0,
            "load_wall_time": time.perf_counter() - wall0,
        },
    )
    while True:
        request = read_message(0)
        if request is None:
            return
        try:
            reply = _run(request)
        except Exception as exc:  # noqa: BLE001 - e.g. fork failed: reported, server goes on
            reply = {"status": "server", "error": f"{type(exc).__name__}: {exc}"}
        write_message(reply_fd, reply)


if __name__ == "__main__":
    main()
