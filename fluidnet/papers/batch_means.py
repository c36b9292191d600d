"""Batch means: the mean of a stationary simulated series and its standard error.

A packet run's traces are correlated in time (a window, a queue), so the standard error of their
mean is not ``sd / sqrt(n)``. The tail is cut into ``blocks`` consecutive blocks of equal length;
when a block is much longer than the series' correlation time the block means are nearly
independent, and their spread gives the standard error (the classical batch-means estimate).
The packet items of the seed papers use it to put a run's sampling error next to a tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError

__all__ = ["BatchMean", "batch_mean", "batch_ratio"]


@dataclass(frozen=True)
class BatchMean:
    """A mean over the tail of a run with its batch-means standard error.

    Attributes
    ----------
    mean : float
        The mean over the tail.
    se : float
        Standard error: the standard deviation of the block means over ``sqrt(blocks)``.
    blocks : numpy.ndarray
        The block means.
    """

    mean: float
    se: float
    blocks: np.ndarray

    def describe(self, digits: int = 4) -> str:
        """``mean ± se`` with ``digits`` significant digits."""
        return f"{self.mean:.{digits}g} ± {self.se:.2g}"


def _tail(t: np.ndarray, after: float, blocks: int) -> list[np.ndarray]:
    t = np.asarray(t, dtype=float)
    if isinstance(blocks, bool) or not isinstance(blocks, int) or blocks < 2:
        raise ParameterError(f"blocks = {blocks!r} must be a whole number >= 2")
    index = np.flatnonzero(t >= after)
    if index.size < 2 * blocks:
        raise ParameterError(
            f"after = {after!r} s leaves {index.size} samples of the run (ending at "
            f"{t[-1]:g} s), fewer than two per block ({blocks} blocks): start the tail earlier"
        )
    return np.array_split(index, blocks)


def batch_mean(t: np.ndarray, y: np.ndarray, *, after: float, blocks: int = 10) -> BatchMean:
    """Mean of ``y`` over ``t >= after`` and its batch-means standard error.

    Parameters
    ----------
    t, y : array_like
        Sample times (s, increasing) and values.
    after : float
        Start of the tail (s).
    blocks : int
        Number of blocks (>= 2).

    Returns
    -------
    BatchMean

    Raises
    ------
    ParameterError
        When the tail holds fewer than two samples per block.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(1000) * 0.1
    >>> batch_mean(t, np.ones(1000), after=10.0).mean
    1.0
    """
    y = np.asarray(y, dtype=float)
    parts = _tail(t, after, blocks)
    means = np.array([y[p].mean() for p in parts])
    tail = np.concatenate(parts)
    return BatchMean(float(y[tail].mean()), float(means.std(ddof=1) / np.sqrt(blocks)), means)


def batch_ratio(
    t: np.ndarray, num: np.ndarray, den: np.ndarray, *, after: float, blocks: int = 10
) -> BatchMean:
    """Ratio of the tail means of ``num`` and ``den``, with the spread of the per-block ratios
    as its standard error.

    Parameters
    ----------
    t, num, den : array_like
        Sample times (s) and the two series (e.g. two flows' rates).
    after : float
        Start of the tail (s).
    blocks : int
        Number of blocks (>= 2).

    Returns
    -------
    BatchMean
        ``mean`` is ``mean(num) / mean(den)`` over the whole tail; ``blocks`` the per-block
        ratios.

    Raises
    ------
    ParameterError
        When the tail holds fewer than two samples per block, or ``den`` averages to zero.
    """
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    parts = _tail(t, after, blocks)
    tail = np.concatenate(parts)
    if np.mean(den[tail]) == 0 or any(np.mean(den[p]) == 0 for p in parts):
        raise ParameterError("batch_ratio: the denominator averages to zero over the tail")
    ratios = np.array([num[p].mean() / den[p].mean() for p in parts])
    mean = float(num[tail].mean() / den[tail].mean())
    return BatchMean(mean, float(ratios.std(ddof=1) / np.sqrt(blocks)), ratios)
