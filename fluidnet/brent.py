"""scipy's Brent root finder with the types it really has.

scipy ships no type stubs, so a type checker infers :func:`scipy.optimize.brentq`'s signature
from its code: ``rtol`` typed as ``numpy.float64`` (its default's type) and a result that may
be a tuple (the ``full_output=True`` form). fluidnet never asks for the full output, so the
root is a float; this wrapper says so, and imports scipy only when a root is refined.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .errors import OptionError

__all__ = ["brentq"]


def brentq(f: Callable[[float], Any], a: float, b: float, **options: Any) -> float:
    """The root of ``f`` bracketed by ``[a, b]`` (:func:`scipy.optimize.brentq`).

    Parameters
    ----------
    f : callable
        A scalar function with ``f(a)`` and ``f(b)`` of opposite signs.
    a, b : float
        The bracket.
    **options
        ``xtol``, ``rtol``, ``maxiter``, ``args``, ``disp`` of scipy's function
        (``full_output`` is not for this wrapper).

    Returns
    -------
    float
        The root, as scipy returns it.
    """
    from scipy.optimize import brentq as scipy_brentq

    if options.get("full_output"):
        raise OptionError("fluidnet.brent.brentq returns the root only: full_output is not taken")
    return cast(float, scipy_brentq(f, a, b, **options))
