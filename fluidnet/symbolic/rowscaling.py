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
(:mod:`fluidnet.symbolic.batchequilibria`) solve one point of each class, and the continuations
of a branch (:mod:`fluidnet.symbolic.nearby`: a stability boundary, a critical value) recall an
equilibrium they settled at a point of the class (:func:`keep_equilibria`,
:func:`known_equilibria`) instead of taking Newton's steps and the tests again.

The test is structural and one-sided: a parameter that moves nothing but is not a factor of
its rows (``alpha`` in ``alpha (C - y) - beta q``, where ``y = C, q = 0`` holds for any
``alpha``) is not found free, and the points are then solved one class each as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy

from .memo import trim_oldest
from .npsource import GeneratedFunction, real_function_source
from .steadycode import kept_or_built, run_source

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

    def all_free(self, names) -> bool:
        """Whether every parameter of ``names`` is free (points that differ only in them share
        their class, when the factors keep their signs)."""
        free = {nm for nm, f in zip(self.names, self.free, strict=True) if f}
        return all(nm in free for nm in names)

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


def _row_scaling(model) -> tuple[RowScaling, dict | None]:
    """The row scaling from the model's equations (sympy: about 1-3 ms an equation), and what
    its record keeps of it: the free parameters and the generated source of the factors
    (``None`` where a factor has no generated form: sympy's function then, not kept)."""
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
    source = real_function_source("factors", (tuple(form.p),), factors)
    if source is None:
        from .numeric import to_numpy

        return RowScaling(names, free, to_numpy((form.p,), factors, plain=True)), None
    kept = {"names": names, "free": [bool(f) for f in free], "source": source}
    return _loaded(model, kept), kept


def _loaded(model, kept: dict) -> RowScaling:
    """The row scaling of a record's section (raises where it is not this model's)."""
    names = tuple(model.param_names)
    free = np.array(kept["free"], dtype=bool)
    if tuple(kept["names"]) != names or free.shape != (len(names),):
        raise ValueError("the kept row scaling is another model's")
    ns = run_source(str(kept["source"]), f"row scaling of {model.form.name}")
    return RowScaling(names, free, GeneratedFunction(ns["factors"]))


def row_scaling(model) -> RowScaling:
    """The model's :class:`RowScaling` (built once per model and kept in its record: a later
    process reads it)."""
    return model.cached(
        "row scaling",
        lambda: kept_or_built(
            model, "scaling", lambda kept: _loaded(model, kept), lambda: _row_scaling(model)
        ),
    )


def recalls_between(model, names) -> bool:
    """Whether a continuation over the parameters ``names`` keeps and recalls its equilibria
    (:func:`keep_equilibria`, :func:`known_equilibria`): every one of them free, by the row
    scaling the model already has (a chart's batched equilibria or the search's memory built
    it; a first continuation of a process does not pay for it, 1 ms an equation, and goes
    without, as before)."""
    scaling = model._cache.get("row scaling")
    return scaling is not None and scaling.all_free(names)


#: Equilibria kept per class of points (:meth:`RowScaling.keys`), and classes kept, by
#: :func:`keep_equilibria` in a process (per model).
KEPT_PER_CLASS = 8
KEPT_CLASSES = 256


def _interior_rows(model, X: np.ndarray) -> np.ndarray:
    """``(K,)``: rows of ``X`` finite and with no projected state at 0 (a boundary
    configuration's equilibrium is continued, not recalled: from it, the attempt with every
    state free may settle another point)."""
    rows = np.all(np.isfinite(X), axis=1)
    for i in model.form.nonnegative:
        rows &= X[:, int(i)] != 0.0
    return rows


def keep_equilibria(model, P: np.ndarray, X: np.ndarray, ok: np.ndarray) -> None:
    """Remember the equilibria ``X[k]`` ``(K, n)`` settled (by the tests of the full search) at
    the parameter points ``P[:, k]`` ``(m, K)`` where ``ok``, by class of points (see
    :func:`known_equilibria`)."""
    scaling = row_scaling(model)
    if not scaling.any_free:
        return
    rows = np.flatnonzero(np.asarray(ok, dtype=bool) & _interior_rows(model, X))
    if not rows.size:
        return
    memo = model.cached("equilibria by class", dict)
    for k, key in zip(rows, scaling.keys(P[:, rows]), strict=True):
        if key is None:
            continue
        kept = memo.pop(key, None) or {}
        memo[key] = kept  # the newest class last
        kept[X[k].tobytes()] = None
        trim_oldest(kept, KEPT_PER_CLASS)
    trim_oldest(memo, KEPT_CLASSES)


def known_equilibria(model, P: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``(K,)``: whether ``X[k]`` is, bit for bit, an equilibrium :func:`keep_equilibria` kept
    for a point of the class of ``P[:, k]`` (the other parameters equal, the parameters that
    differ free: the same equations up to positive factors of their rows, see the module).

    It is then an equilibrium at ``P[:, k]`` that passes the tests of the full search there,
    and the one the continuation from ``X[k]`` settles (Newton's method with every state free
    starts at a root; no projected state is 0): the continuation of a branch over a plane of
    free parameters (a gain and a delay) skips its Newton steps and tests."""
    X = np.asarray(X, dtype=float)
    out = np.zeros(len(X), dtype=bool)
    memo = model._cache.get("equilibria by class")
    if not memo:
        return out
    rows = np.flatnonzero(_interior_rows(model, X))
    if not rows.size:
        return out
    keys = row_scaling(model).keys(P[:, rows])
    for k, key in zip(rows, keys, strict=True):
        kept = memo.get(key) if key is not None else None
        out[k] = kept is not None and X[k].tobytes() in kept
    return out
