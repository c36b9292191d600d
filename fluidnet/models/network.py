"""Helpers for network models: routing matrices and per-source / per-link parameters."""

from __future__ import annotations

import numpy as np

from ..errors import ModelError, ParameterError
from ..overrides import parameter_values

__all__ = ["routing_matrix", "per_element"]


def routing_matrix(A) -> np.ndarray:
    """A validated 0/1 routing matrix ``A[l, n] = 1`` when source ``n`` uses link ``l``.

    Raises
    ------
    ModelError
        When ``A`` is not 2-D (a 1-D row is one link), holds other values than 0 and 1, or has
        a source that uses no link or a link with no source.
    """
    arr = np.asarray(A)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or arr.size == 0:
        raise ModelError(f"routing matrix A must be 2-D (links x sources), got shape {arr.shape}")
    if not np.all(np.isin(arr, (0, 1))):
        raise ModelError("routing matrix A must hold only 0 and 1 (A[l, n] = 1 if n uses l)")
    arr = arr.astype(int)
    for n in range(arr.shape[1]):
        if not arr[:, n].any():
            raise ModelError(f"source {n + 1} (column {n}) of the routing matrix uses no link")
    for link in range(arr.shape[0]):
        if not arr[link].any():
            raise ModelError(f"link {link + 1} (row {link}) of the routing matrix has no source")
    return arr


def per_element(name: str, value, count: int, what: str) -> list[float]:
    """A scalar broadcast to ``count`` entries, or a sequence of exactly ``count`` entries
    (real numbers: text, ``True``/``False`` and non-finite values are a ParameterError)."""
    arr = np.atleast_1d(parameter_values(name, value))
    if arr.ndim != 1 or arr.size not in (1, count):
        raise ParameterError(
            f"{name} must be a number or a sequence of {count} values (one per {what}), "
            f"got {value!r}"
        )
    return [float(v) for v in np.broadcast_to(arr, (count,))]
