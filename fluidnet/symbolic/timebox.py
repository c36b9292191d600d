"""A bound on the CPU time of a computation that cannot be told to stop (sympy's ``solve``).

sympy's solver has no budget: on a law of two TCP classes over two RED links it ran for 14
minutes before the numeric search could start. :func:`within_cpu_time` runs a function in the
calling thread while a watchdog thread reads that thread's CPU clock; past the budget it raises
:class:`TimeBoxExpired` in the calling thread (``PyThreadState_SetAsyncExc``: delivered at the
next bytecode, so pure-Python code such as sympy's stops within microseconds). No signal is
used: it works in any thread and leaves the caller's signal handlers alone. sympy's global
evaluation flags are restored afterwards (the exception may interrupt one of its context
managers).
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["TimeBoxExpired", "within_cpu_time"]

T = TypeVar("T")


class TimeBoxExpired(BaseException):
    """Raised in a computation that used up its CPU time.

    A ``BaseException`` (like ``KeyboardInterrupt``): sympy catches ``Exception`` in places and
    goes on along another path, which swallowed the interruption and let a solve finish past
    its budget, its result possibly incomplete."""


def _cpu_clock(ident: int) -> Callable[[], float]:
    """The CPU clock of thread ``ident`` (wall time where threads have no CPU clock)."""
    try:
        clock = time.pthread_getcpuclockid(ident)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return time.monotonic
    return lambda: time.clock_gettime(clock)


def _sympy_flags():
    from sympy.core.parameters import global_parameters

    names = ("evaluate", "distribute", "exp_is_pow")
    saved = {n: getattr(global_parameters, n) for n in names if hasattr(global_parameters, n)}

    def restore() -> None:
        for n, v in saved.items():
            setattr(global_parameters, n, v)

    return restore


def within_cpu_time(fn: Callable[[], T], seconds: float) -> T:
    """``fn()``, or :class:`TimeBoxExpired` once it has used ``seconds`` of CPU time.

    Parameters
    ----------
    fn : callable
        Called without arguments in this thread.
    seconds : float
        The budget of CPU time (of this thread).

    Returns
    -------
    object
        What ``fn()`` returned.

    Raises
    ------
    TimeBoxExpired
        When the budget ran out first (``fn``'s work is abandoned).
    """
    ident = threading.get_ident()
    clock = _cpu_clock(ident)
    restore = _sympy_flags()
    start = clock()
    lock = threading.Lock()
    state = {"inside": True, "fired": False}
    finished = threading.Event()

    def watch() -> None:
        poll = min(0.005, max(seconds / 20, 0.0005))
        while not finished.wait(poll):
            if clock() - start < seconds:
                continue
            with lock:
                if not state["inside"]:
                    return
                # again at every poll: code that catches every exception may swallow one
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(ident), ctypes.py_object(TimeBoxExpired)
                )

    watcher = threading.Thread(target=watch, name="fluidnet-time-box", daemon=True)
    landed = False
    result: list[T] = []
    try:
        watcher.start()
        result.append(fn())
    except TimeBoxExpired:
        landed = True
    finally:
        landed = _stop_watching(lock, state, finished) or landed
    if landed or state["fired"] or not result:
        # past the budget: either the interruption ended fn, or fn caught it and returned all
        # the same (what it returned was made along a path it did not mean to take)
        restore()
        raise TimeBoxExpired
    return result[0]


def _nothing() -> None:
    """A Python call: the interpreter checks for a pending asynchronous exception on entry."""


def _stop_watching(lock: threading.Lock, state: dict, finished: threading.Event) -> bool:
    """Stop the watcher and take in an interruption it sent that has not landed yet; True when
    one landed here.

    An interruption that was sent is never withdrawn (``PyThreadState_SetAsyncExc(id, NULL)``):
    on CPython 3.11 that leaves the interpreter's "pending" flag set with nothing pending, and
    under a profiler or a tracer (cProfile, coverage, a debugger) the interpreter then spins
    at the next function call, forever. It is let land instead, in calls made for that
    purpose, once the watcher can no longer send another.
    """
    landed = False
    for _ in range(8):  # each pass can be cut short only by an interruption sent before it
        try:
            with lock:
                state["inside"] = False
            finished.set()
            if state["fired"]:
                for _ in range(4):
                    _nothing()
            return landed
        except TimeBoxExpired:
            landed = True
    return True
