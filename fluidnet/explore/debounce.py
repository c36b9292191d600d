"""Updates at most every ``interval`` seconds while a slider moves, and once after it stops.

A slider sends a value for every pixel it is dragged; computing each would queue work behind
the hand. :class:`Throttle` runs its callback on the kernel's event loop no sooner than
``interval`` after the end of the previous run, and only once for any number of requests made in
between: the callback reads the sliders when it runs, so the latest values always win, the
last one included. Without a running event loop (a script, a test) the callback runs at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

__all__ = ["Throttle"]


class Throttle:
    """Run a callback on request, at most once per ``interval`` seconds, the last request kept.

    Parameters
    ----------
    callback : callable
        Called without arguments.
    interval : float
        Least time (s) from the end of one run to the start of the next.
    """

    def __init__(self, callback: Callable[[], Any], interval: float) -> None:
        self.callback = callback
        self.interval = float(interval)
        self._handle: asyncio.TimerHandle | None = None
        self._last = -float("inf")

    @property
    def pending(self) -> bool:
        """Whether a run is scheduled."""
        return self._handle is not None

    def __call__(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop in this thread: nothing to wait on
            self.callback()
            return
        if self._handle is not None:  # a run is coming: it will read the latest values
            return
        wait = max(0.0, self._last + self.interval - loop.time())
        self._handle = loop.call_later(wait, self._run, loop)

    def _run(self, loop: asyncio.AbstractEventLoop) -> None:
        self._handle = None
        try:
            self.callback()
        finally:
            self._last = loop.time()

    def cancel(self) -> None:
        """Drop a scheduled run."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
