"""Bounded in-process memos: dictionaries that keep their newest entries.

A model's memos (searches kept for values solved before, equilibria kept by class of points)
live in its cache and may be shared by the threads of a sweep run on a thread pool
(``executor=concurrent.futures.ThreadPoolExecutor(...)``): dropping the oldest entry must not
fail when another thread dropped it, or changed the dictionary, in between.
"""

from __future__ import annotations

__all__ = ["trim_oldest"]


def trim_oldest(memo: dict, size: int) -> None:
    """Drop the oldest entries of ``memo`` (in insertion order) until at most ``size`` are left.

    An entry another thread removed between this one reading it and dropping it is no error,
    nor a dictionary another thread changed while this one looked for its oldest entry.
    """
    while len(memo) > size:
        try:
            oldest = next(iter(memo))
        except (RuntimeError, StopIteration):  # changed meanwhile, or emptied: look again
            continue
        memo.pop(oldest, None)
