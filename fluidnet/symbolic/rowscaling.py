"""Parameters a model's equilibria do not depend on, read from its steady-state equations.

Every steady-state equation (each delayed value equal to the current one) is split as
``f_i(x, p) = c_i(p) h_i(x, p)``, ``c_i`` the factor free of the states (sympy's
``factor_terms`` then ``as_independent``). A parameter that no ``h_i`` contains, only delays and
the factors ``c_i`` (a source gain ``kappa`` in ``kappa (w - x p)``, a filter bandwidth, a delay),
does not move the equilibria: at two parameter points with the same values of the other
parameters and the same signs of every ``c_i`` (none zero or undefined), the equations differ by
positive factors of their rows. They have the same solutions, the same equations held at the
boundary (``f_i < 0`` at ``x_i = 0``), the same relative residuals (each equation relative to
its own terms) and the same rank of the Jacobian, so the equilibrium search has the same answer
at both points. :meth:`RowScaling.keys` names such classes of points; the search's in-process
memory (:mod:`fluidnet.symbolic.equilibrium`) and the batched equilibria of a chart
(:mod:`fluidnet.symbolic.batchequilibria`) solve one point of each class.

The test is structural and one-sided: a parameter that moves nothing but is not a factor of
its rows (``alpha`` in ``alpha (C - y) - beta q``, where ``y = C, q = 0`` holds for any
``alpha``) is not found free, and the points are then solved one class each as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

__all__ = ["RowScaling", "row_scaling"]


@dataclass(frozen=True)
class RowScaling:
    """The steady-state equations' factors free of the states (see the module).

    Attributes
    ----------
    names : tuple of str
        The model's parameters (``model.param_names`` order).
    free : numpy.ndarray of bool
        ``(m,)``: the parameters no equation contains except in its factor ``c_i``.
    """

    names: tuple[str, ...]
    free: np.ndarray
    _factors: Any  # a numpy function of the parameters: the factors c_i, (n,) or (K, n)

    @property
    def any_free(self) -> bool:
        """Whether some parameter is free."""
        return bool(self.free.any())

    def keys(self, P: np.ndarray) -> list[str | None]:
        """One key per column of ``P`` ``(m, K)``: equal keys, equal equilibria (see the
        module). ``None`` where no parameter is free, or a factor ``c_i`` is zero or not
        finite at the point (it shares its class with no other point)."""
        P = np.asarray(P, dtype=float).reshape(len(self.names), -1)
        K = P.shape[1]
        if not self.any_free:
            return [None] * K
        with np.errstate(all="ignore"):
            C = np.asarray(self._factors.batch(P), dtype=complex).reshape(K, -1)
        re, im = np.real(C), np.imag(C)
        good = np.all(np.isfinite(C) & (im == 0) & (re != 0), axis=1)
        signs = np.where(re > 0, "+", "-")
        fixed = P[~self.free]
        return [
            repr(([float(v) for v in fixed[:, k]], "".join(signs[k]))) if good[k] else None
            for k in range(K)
        ]

    def key(self, p: np.ndarray) -> str | None:
        """The key of one parameter vector ``p`` ``(m,)``."""
        return self.keys(np.asarray(p, dtype=float)[:, None])[0]


def _split(e: sympy.Expr, states) -> tuple[sympy.Expr, sympy.Expr]:
    """``(c, h)``: ``e = c h`` with ``c`` free of ``states`` (a sum's common factors pulled out
    first; a product, as a gain times a bracket is, is split as it stands)."""
    if not e.is_Mul:
        e = sympy.factor_terms(e)
    c, h = e.as_independent(*states, as_Add=False)
    return c, h


def _row_scaling(model) -> RowScaling:
    from .numeric import to_numpy

    form = model.form
    lagged = {lag.symbol: form.x[lag.state] for lag in form.lags}
    factors, rest = [], []
    for e in form.rhs:
        c, h = _split(sympy.sympify(e).xreplace(lagged), form.x)
        factors.append(c)
        rest.append(h)
    used = set().union(*(h.free_symbols for h in rest)) if rest else set()
    names = tuple(model.param_names)
    by_name = {str(s): s for s in form.p}
    free = np.array([by_name[nm] not in used for nm in names], dtype=bool)
    if form.t in used:
        free[:] = False  # explicit time: no equilibrium to share
    return RowScaling(names, free, to_numpy((form.p,), factors, plain=True))


def row_scaling(model) -> RowScaling:
    """The model's :class:`RowScaling` (built once per model: about 1 ms an equation)."""
    return model.cached("row scaling", lambda: _row_scaling(model))
