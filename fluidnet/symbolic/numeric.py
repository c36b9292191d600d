"""Turn sympy expressions into fast numpy functions (cached per model by the callers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import sympy

__all__ = ["to_numpy"]


def _dirac(x):
    # Derivative of a switch (Heaviside, sign, Max): zero away from the kink, undefined on it.
    return np.where(np.asarray(x) == 0, np.inf, 0.0)


def _heaviside_strict(x, *_):
    # A switch evaluated exactly on its switching surface inside a derivative: undefined.
    x = np.asarray(x, dtype=float)
    return np.where(x == 0, np.nan, (x > 0).astype(float))


def _sign_strict(x):
    x = np.asarray(x, dtype=float)
    return np.where(x == 0, np.nan, np.sign(x))


_MODULES = [{"DiracDelta": _dirac}, "numpy"]
_MODULES_STRICT = [
    {"DiracDelta": _dirac, "Heaviside": _heaviside_strict, "sign": _sign_strict},
    "numpy",
]


def to_numpy(
    args: Sequence[Sequence[sympy.Symbol]],
    exprs: Sequence[sympy.Expr] | sympy.MatrixBase,
    *,
    strict_switches: bool = False,
) -> Callable[..., np.ndarray]:
    """A numpy function of the argument groups returning the expressions as an array.

    ``args`` is a sequence of symbol tuples (e.g. ``(x_symbols, p_symbols)``); the function takes
    one array per group and returns an array shaped like ``exprs`` (float, or complex when an
    entry is complex). Evaluation happens under ``np.errstate(all="ignore")``: callers check the
    result for non-finite values and raise a clear error themselves.

    With ``strict_switches`` (used for derivatives), ``Heaviside`` and ``sign`` evaluate to NaN
    exactly on their switching surface, where a derivative of a switching term is undefined,
    instead of sympy's conventional values ``1/2`` and ``0``.

    The function's ``batch`` attribute evaluates ``K`` points at once: one array of shape
    ``(len(group), K)`` per group, a result of shape ``(K,) + shape``.
    """
    if isinstance(exprs, sympy.MatrixBase):
        shape = exprs.shape
        flat = list(exprs)
    else:
        flat = list(exprs)
        shape = (len(flat),)
    groups = [tuple(a) for a in args]
    modules = _MODULES_STRICT if strict_switches else _MODULES
    f = sympy.lambdify(groups, flat, modules=modules, cse=True)

    def call(*vals) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = f(*[np.asarray(v, dtype=float) for v in vals])
        cplx = any(np.iscomplexobj(o) for o in out)
        arr = np.empty(len(flat), dtype=complex if cplx else float)
        for i, o in enumerate(out):
            arr[i] = o
        return arr.reshape(shape)

    def batch(*vals) -> np.ndarray:
        """Many points at once: each group as an array ``(len(group), K)``; returns
        ``(K,) + shape``."""
        vals = [np.asarray(v, dtype=float) for v in vals]
        K = next((v.shape[-1] for v in vals if v.ndim == 2), 1)
        with np.errstate(all="ignore"):
            out = f(*vals)
        cplx = any(np.iscomplexobj(o) for o in out)
        arr = np.empty((len(flat), K), dtype=complex if cplx else float)
        for i, o in enumerate(out):
            arr[i] = o
        return np.moveaxis(arr, 0, -1).reshape((K,) + tuple(shape))

    call.batch = batch
    return call
