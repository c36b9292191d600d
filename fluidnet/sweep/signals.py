"""Signals that stop a sweep: SIGTERM and SIGHUP handled as Ctrl-C (SIGINT) is.

``timeout``, batch schedulers (Slurm, PBS, Kubernetes) and ``kill`` send SIGTERM; closing the
terminal sends SIGHUP. By default either kills Python at once, and the results a sweep finished
but had not yet written to its store are lost, where Ctrl-C keeps them. While a sweep runs
(:meth:`fluidnet.sweep.Executor.map_chunks`), :func:`stop_signals` turns SIGTERM and SIGHUP
into :class:`Terminated`, a :class:`KeyboardInterrupt`: the sweep stops its workers, writes
what finished to its store and raises it again, saying how much was kept — and code that
cleans up after Ctrl-C (the packet runner stops its ns-3 server) does so for these signals too.
Uncaught, it ends the program with a traceback that says which signal stopped it, and exit
status 1.

Handlers are installed only in the main thread (Python runs signal handlers there), only over
the default action (a handler of yours, or an ignored signal — ``nohup`` ignores SIGHUP — is
left alone), and the previous handlers are restored when the sweep ends.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Terminated", "STOP_SIGNALS", "stop_signals"]

#: The signals handled like Ctrl-C while a sweep runs (those the platform has).
STOP_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Terminated(KeyboardInterrupt):
    """A sweep was stopped by SIGTERM or SIGHUP (``signum``), as Ctrl-C stops one.

    Parameters
    ----------
    signum : int
        The signal.
    message : str, optional
        What was kept (default: the signal's name).
    """

    def __init__(self, signum: int, message: str | None = None) -> None:
        self.signum = int(signum)
        super().__init__(message or f"stopped by {signal.Signals(self.signum).name}")

    def __reduce__(self):
        return type(self), (self.signum, str(self))


class _Handler:
    """Raises :class:`Terminated` in the main thread; quiet while the sweep saves its work."""

    def __init__(self) -> None:
        self.saving = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.saving:  # a second signal while finished work is written: let it finish
            return
        raise Terminated(signum)


@contextmanager
def stop_signals() -> Iterator[_Handler | None]:
    """While the block runs, SIGTERM and SIGHUP raise :class:`Terminated` (main thread only,
    over the default action only); the previous handlers are restored after it.

    Yields the handler (``None`` outside the main thread): set its ``saving`` to ignore further
    signals while finished work is written.

    Examples
    --------
    >>> import signal
    >>> before = signal.getsignal(signal.SIGTERM)
    >>> with stop_signals() as handler:
    ...     signal.getsignal(signal.SIGTERM) in (handler, before)
    True
    >>> signal.getsignal(signal.SIGTERM) is before
    True
    >>> print(Terminated(signal.SIGTERM))
    stopped by SIGTERM
    """
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    current = [signal.getsignal(sig) for sig in STOP_SIGNALS]
    outer = [h for h in current if isinstance(h, _Handler)]
    handler = outer[0] if outer else _Handler()  # a sweep inside a sweep: the outer handler
    previous = {}
    saving = handler.saving
    try:
        for sig, now in zip(STOP_SIGNALS, current, strict=True):
            if now is signal.SIG_DFL:
                previous[sig] = signal.signal(sig, handler)
        yield handler
    finally:
        handler.saving = saving  # an inner sweep that stopped leaves the outer one as it was
        for sig, old in previous.items():
            signal.signal(sig, old)
