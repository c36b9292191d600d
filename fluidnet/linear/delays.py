"""Delay bookkeeping shared by the linear layer: when two delays are the same delay."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["DELAY_RTOL", "same_delay", "merge_delays"]

#: Two delays closer than this (relative, with an absolute floor of the same size) are merged.
DELAY_RTOL = 1e-12


def same_delay(a: float, b: float) -> bool:
    """Whether two delays agree to :data:`DELAY_RTOL`."""
    return abs(a - b) <= DELAY_RTOL * max(1.0, abs(a), abs(b))


def merge_delays(
    pairs: Iterable[tuple[float, Any]], add: Callable[[Any, Any], Any]
) -> list[tuple[float, Any]]:
    """Sort ``(delay, value)`` pairs by delay and combine equal delays with ``add``."""
    out: list[tuple[float, Any]] = []
    for tau, val in sorted(pairs, key=lambda p: p[0]):
        if out and same_delay(out[-1][0], tau):
            out[-1] = (out[-1][0], add(out[-1][1], val))
        else:
            out.append((tau, val))
    return out
