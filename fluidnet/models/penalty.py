"""The link penalty (loss or marking fraction) of Kunniyur & Srikant (2003) and its origin.

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003, Sec II.

The loss probability of an M/M/1/B queue at load ``rho = u/C`` is
``(1 - rho) rho^B / (1 - rho^(B+1))``; scaling ``u``, ``C`` and ``B`` by ``K -> inf`` (many
sources) gives the fluid loss fraction used throughout the paper,

    ``p(C, u) = (u - C)^+ / u``,

the fraction of fluid lost when the arrival rate ``u`` exceeds the capacity ``C``. With ECN
(Sec V) the same function of the marking level ``C~ <= C`` is the marked fraction. On ``u > C``:
``p = 1 - C/u``, ``p' = C/u^2`` and ``p + u p' = 1`` (which makes the delay-stability gain of the
delayed primal law ``kappa beta``, independent of the operating point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ..errors import ParameterError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["fluid_penalty", "mm1b_loss", "penalty_integral"]


def fluid_penalty(u: Any, C: Any) -> Any:
    """``p(C, u) = max(u - C, 0) / u``, symbolic or numeric.

    Parameters
    ----------
    u : sympy expression or array_like
        Arrival rate into the link (> 0).
    C : sympy expression or array_like
        Capacity (loss) or marking level (ECN marks).

    Returns
    -------
    sympy.Expr or numpy.ndarray
        A sympy expression when either argument is symbolic, an array otherwise.

    Examples
    --------
    >>> from fluidnet.models.penalty import fluid_penalty
    >>> float(fluid_penalty(120.0, 100.0))
    0.16666666666666666
    """
    if isinstance(u, sympy.Basic) or isinstance(C, sympy.Basic):
        ue, Ce = sympy.sympify(u), sympy.sympify(C)
        if not (isinstance(ue, sympy.Expr) and isinstance(Ce, sympy.Expr)):
            raise ParameterError(f"fluid_penalty: u = {u!r} and C = {C!r} must be expressions")
        return sympy.Max(ue - Ce, 0) / ue
    u = np.asarray(u, dtype=float)
    return np.maximum(u - np.asarray(C, dtype=float), 0.0) / u


def mm1b_loss(u: Any, C: Any, B: Any) -> Any:
    """Loss probability of an M/M/1/B queue, ``(1 - rho) rho^B / (1 - rho^(B+1))``, ``rho = u/C``.

    Symbolic when an argument is a sympy object (its ``K -> oo`` limit with ``B -> K B`` is
    :func:`fluid_penalty`); numeric otherwise, with the removable singularity ``rho = 1``
    evaluated as ``1/(B + 1)``.

    Parameters
    ----------
    u : sympy expression or array_like
        Arrival rate into the link (> 0).
    C : sympy expression or array_like
        Service rate.
    B : sympy expression or array_like
        Buffer size (packets).

    Returns
    -------
    sympy.Expr or numpy.ndarray
    """
    if any(isinstance(a, sympy.Basic) for a in (u, C, B)):
        rho = u / C
        return (1 - rho) * rho**B / (1 - rho ** (B + 1))
    rho = np.asarray(u, dtype=float) / np.asarray(C, dtype=float)
    B = np.asarray(B, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # divide numerator and denominator by rho^(B+1) above rho = 1 (no overflow)
        big = rho > 1
        inv = np.where(big, 1.0 / np.where(big, rho, 1.0), 1.0)
        val_big = (1 - inv) / (1 - inv ** (B + 1))
        val = (1 - rho) * rho**B / (1 - rho ** (B + 1))
        out = np.where(big, val_big, val)
    return np.where(np.isclose(rho, 1.0, rtol=0, atol=1e-12), 1.0 / (B + 1.0), out)


def penalty_integral(y: ArrayLike, C: ArrayLike) -> Any:
    """``int_0^y p(C, u) du = y - C - C log(y/C)`` for ``y > C``, 0 otherwise (numeric).

    The link term of the team objectives (3), (5) and (42).

    Parameters
    ----------
    y : array_like
        Link load.
    C : array_like
        Capacity (loss) or marking level (ECN marks).

    Returns
    -------
    numpy.ndarray or float
    """
    y = np.asarray(y, dtype=float)
    C = np.asarray(C, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        val = y - C - C * np.log(y / C)
    return np.where(y > C, val, 0.0)
