"""Turn sympy expressions into fast numpy functions (cached per model by the callers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import sympy

__all__ = ["to_numpy"]


def _dirac(x):
    # Derivative of a switch (Heaviside, sign, Max): zero away from the kink, undefined on it.
    return np.where(np.asarray(x) == 0, np.inf, 0.0)


_MODULES = [{"DiracDelta": _dirac}, "numpy"]


def to_numpy(
    args: Sequence[Sequence[sympy.Symbol]], exprs: Sequence[sympy.Expr] | sympy.Matrix
) -> Callable[..., np.ndarray]:
    """A numpy function of the argument groups returning ``np.asarray(exprs, float)``.

    ``args`` is a sequence of symbol tuples (e.g. ``(x_symbols, p_symbols)``); the function takes
    one array per group. Evaluation happens under ``np.errstate(all="ignore")``: callers check
    the result for non-finite values and raise a clear error themselves.
    """
    if isinstance(exprs, sympy.MatrixBase):
        shape = exprs.shape
        flat = list(exprs)
    else:
        flat = list(exprs)
        shape = (len(flat),)
    groups = [tuple(a) for a in args]
    f = sympy.lambdify(groups, flat, modules=_MODULES, cse=True)

    def call(*vals) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = f(*[np.asarray(v, dtype=float) for v in vals])
        arr = np.empty(len(flat), dtype=complex if any(np.iscomplexobj(o) for o in out) else float)
        for i, o in enumerate(out):
            arr[i] = o
        return arr.reshape(shape)

    return call
