"""Window Markov chains driven by per-acknowledgement congestion feedback.

A :class:`WindowChain` is the chain of Misra, Baras & Ott (2000), eqs (1)-(2), with any laws:
after the ``n``-th acknowledgement (ACK) the window ``W_n = w`` becomes

* ``w + increase(w)`` with probability ``1 - mark(w)`` (an unmarked ACK), or
* ``w - decrease(w)`` with probability ``mark(w)`` (a marked ACK),

where ``increase``, ``decrease`` and ``mark`` are sympy expressions in a window symbol and named
parameters. An optional ``ack_rate(w)`` (ACKs per unit time at window ``w``) turns per-ACK
averages into per-time averages; it is 1 by default, as for a flow that keeps its pipe full
(Misra, Baras & Ott 2000, eq (15)).

The chain is the ground truth; :func:`~fluidnet.stochastic.stationary_distribution` solves its
piecewise-deterministic (small-increment) limit, :func:`~fluidnet.stochastic.monte_carlo`
simulates it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..brent import brentq
from ..errors import AnalysisError, ModelError, OptionError, ParameterError
from ..overrides import parameter_value
from ..parsing import as_expression

if TYPE_CHECKING:
    from .distribution import WindowDistribution

__all__ = ["WindowChain"]

_LAWS = ("increase", "decrease", "mark", "ack_rate")


def _name(key: Any, what: str) -> str:
    if isinstance(key, str):
        name = key
    elif isinstance(key, sympy.Symbol):
        name = key.name
    else:
        raise ModelError(f"cannot use {key!r} ({type(key).__name__}) as a {what} name")
    if not name.isidentifier():
        raise ModelError(f"{what} name {name!r} is not a valid identifier")
    return name


def _finite(name: str, value: Any) -> float:
    """A finite real number (the rule of :mod:`fluidnet.overrides`), else ParameterError."""
    v = parameter_value(f"parameter {name!r}", value, finite=False)
    if not math.isfinite(v):
        raise ParameterError(f"parameter {name!r} must be finite, got {v!r}")
    return v


class WindowChain:
    """A window Markov chain with state-dependent marking (Misra, Baras & Ott 2000, (1)-(2)).

    Parameters
    ----------
    increase, decrease, mark : sympy expression or number
        ``increase(w) > 0``: window growth on an unmarked ACK; ``decrease(w)``, with
        ``0 < decrease(w) < w``: the reduction on a marked ACK; ``mark(w)`` in ``[0, 1]``: the
        probability that an ACK at window ``w`` is marked. ``Piecewise``, ``Max``, ``Min`` and
        ``Heaviside`` are allowed.
    window : str or sympy.Symbol, default ``"w"``
        The window variable (matched by name, so assumptions on the symbol do not matter).
    params : dict, optional
        ``{symbol or name: value}`` for every other free symbol.
    ack_rate : sympy expression or number, default 1
        ACKs per unit time at window ``w`` (``> 0``); only per-time averages use it. ``1``
        (a full pipe: ACKs at the link rate) makes them equal to per-ACK averages; ``w`` (a
        window-limited flow with a fixed round trip) weighs each window by ``1/w``.
    name : str

    Raises
    ------
    ModelError
        For a free symbol that is neither the window nor a parameter (the message names it and
        the law it appears in).
    ParameterError
        For a parameter value that is not a finite number.

    Notes
    -----
    Values of the laws are checked where the solvers evaluate them: a non-positive increase,
    a decrease outside ``(0, w)`` or a marking probability outside ``[0, 1]`` raises
    :class:`fluidnet.ParameterError` naming the law, the window and the value.

    Examples
    --------
    Standard TCP congestion avoidance (``+1/w`` per unmarked ACK, halving per mark) with a
    constant marking probability of 1 %:

    >>> import fluidnet as fn
    >>> w, p = fn.sympy.symbols("w p")
    >>> chain = fn.WindowChain(1 / w, w / 2, p, params={p: 0.01})
    >>> round(chain.zero_drift(), 4)    # where the expected change per ACK vanishes
    14.0712
    """

    def __init__(
        self,
        increase: Any,
        decrease: Any,
        mark: Any,
        *,
        window: str | sympy.Symbol = "w",
        params: Mapping[Any, Any] | None = None,
        ack_rate: Any = 1,
        name: str = "window chain",
    ) -> None:
        self.name = str(name)
        self.window = sympy.Symbol(_name(window, "window"), positive=True)
        values: dict[str, float] = {}
        for key, val in dict(params or {}).items():
            n = _name(key, "parameter")
            if n == self.window.name:
                raise ModelError(f"parameter {n!r} has the name of the window variable")
            if n in values:
                raise ModelError(f"parameter {n!r} is listed twice")
            values[n] = _finite(n, val)
        self._values = values
        self._params = tuple(sympy.Symbol(n, real=True) for n in values)
        exprs = {}
        for law, e in zip(_LAWS, (increase, decrease, mark, ack_rate), strict=True):
            exprs[law] = self._canon(law, e)
        self._exprs = exprs

    def _canon(self, law: str, expr: Any) -> sympy.Expr:
        try:
            e = as_expression(expr, where=f"{law} law")
        except (sympy.SympifyError, TypeError) as exc:
            raise ModelError(f"{law} law {expr!r} is not a sympy expression") from exc
        if not isinstance(e, sympy.Expr):
            raise ModelError(f"{law} law {expr!r} is not an expression")
        known = {self.window.name: self.window} | {p.name: p for p in self._params}
        rep = {}
        for s in cast("set[sympy.Symbol]", e.free_symbols):
            if s.name not in known:
                raise ModelError(
                    f"{law} law {e} has the free symbol {s.name!r}, which is neither the "
                    f"window {self.window.name!r} nor a parameter "
                    f"({', '.join(self._values) or 'none given'})"
                )
            rep[s] = known[s.name]
        return cast(sympy.Expr, e.xreplace(rep))

    # ----------------------------------------------------------------------------- accessors
    @property
    def params(self) -> dict[str, float]:
        """Parameter values ``{name: value}``."""
        return dict(self._values)

    @property
    def param_symbols(self) -> tuple[sympy.Symbol, ...]:
        return self._params

    @property
    def increase(self) -> sympy.Expr:
        return self._exprs["increase"]

    @property
    def decrease(self) -> sympy.Expr:
        return self._exprs["decrease"]

    @property
    def mark(self) -> sympy.Expr:
        return self._exprs["mark"]

    @property
    def ack_rate(self) -> sympy.Expr:
        return self._exprs["ack_rate"]

    def with_params(self, **values: float) -> WindowChain:
        """A copy with some parameter values replaced (unknown names raise ParameterError).

        Parameters
        ----------
        **values
            ``name=value`` for each parameter of the laws to change; values must be finite real
            numbers.

        Returns
        -------
        WindowChain

        Raises
        ------
        ParameterError
            For an unknown name or a value that is not a finite number.
        """
        for n in values:
            if n not in self._values:
                raise ParameterError(
                    f"unknown parameter {n!r} of {self.name!r}; parameters: "
                    f"{', '.join(self._values) or 'none'}"
                )
        new = dict(self._values)
        new.update({n: _finite(n, v) for n, v in values.items()})
        return WindowChain(
            self.increase,
            self.decrease,
            self.mark,
            window=self.window,
            params=new,
            ack_rate=self.ack_rate,
            name=self.name,
        )

    def __repr__(self) -> str:
        vals = ", ".join(f"{k}={v:g}" for k, v in self._values.items())
        return (
            f"WindowChain({self.name!r}: +{self.increase} w.p. 1 - ({self.mark}), "
            f"-{self.decrease} w.p. {self.mark}; {vals})"
        )

    # ----------------------------------------------------------------------------- numerics
    @cached_property
    def _numpy(self) -> dict[str, Callable[..., np.ndarray]]:
        args = (self.window, *self._params)
        return {law: sympy.lambdify(args, e, modules=np) for law, e in self._exprs.items()}

    def evaluate(self, law: str, w: Any, *, check: bool = True) -> np.ndarray:
        """The law ``"increase"``, ``"decrease"``, ``"mark"`` or ``"ack_rate"`` at windows ``w``.

        Parameters
        ----------
        law : {"increase", "decrease", "mark", "ack_rate"}
            Which law of the chain.
        w : float or array_like
            Windows (packets), any shape.
        check : bool, default True
            Check every value against the law's admissible range: ``increase`` and ``ack_rate``
            positive and finite, ``mark`` in ``[0, 1]``, ``decrease`` in ``(0, w)``.

        Returns
        -------
        numpy.ndarray
            The law's values, the shape of ``w``.

        Raises
        ------
        OptionError
            For an unknown ``law``.
        ParameterError
            With ``check``, for a value outside the law's admissible range (the message names
            the law, the first window at fault and the value).
        """
        if law not in _LAWS:
            raise OptionError(f"law must be one of {_LAWS}, got {law!r}")
        w = np.asarray(w, dtype=float)
        with np.errstate(all="ignore"):
            v = self._numpy[law](w, *self._values.values())
        v = np.broadcast_to(np.asarray(v, dtype=float), w.shape).copy()
        if check:
            self._check(law, w, v)
        return v

    def _check(self, law: str, w: np.ndarray, v: np.ndarray) -> None:
        if law == "increase" or law == "ack_rate":
            bad = ~(np.isfinite(v) & (v > 0))
            what = "must be positive and finite"
        elif law == "mark":
            bad = ~(np.isfinite(v) & (v >= 0) & (v <= 1))
            what = "must be a probability in [0, 1]"
        else:
            bad = ~(np.isfinite(v) & (v > 0) & (v < w))
            what = "must lie in (0, w): a marked ACK must leave a positive, smaller window"
        if np.any(bad):
            i = np.flatnonzero(bad.ravel())[0]
            raise ParameterError(
                f"{law} law of {self.name!r} {what}; at w = {w.ravel()[i]:.6g} it is "
                f"{float(v.ravel()[i]):.6g} ({law} = {self._exprs[law]}, {self._fmt_values()})"
            )

    def _fmt_values(self) -> str:
        return ", ".join(f"{k} = {v:g}" for k, v in self._values.items()) or "no parameters"

    def decrease_factor(self) -> float | None:
        """``c`` when ``decrease(w) = c w`` (multiplicative decrease, ``beta = 1``), else None.

        Raises
        ------
        ParameterError
            When the decrease is multiplicative with ``c`` outside ``(0, 1)``.
        """
        ratio = sympy.simplify(self.decrease / self.window)
        if self.window in ratio.free_symbols:
            return None
        c = float(ratio.subs({p: self._values[p.name] for p in self._params}))
        if not (0.0 < c < 1.0) or not math.isfinite(c):
            raise ParameterError(
                f"decrease law {self.decrease} of {self.name!r} is c w with c = {c:g}; "
                "c must lie in (0, 1)"
            )
        return c

    def drift(self, w: Any) -> np.ndarray:
        """Expected window change per ACK, ``increase (1 - mark) - decrease mark``.

        Parameters
        ----------
        w : float or array_like
            Windows (packets), any shape.

        Returns
        -------
        numpy.ndarray
            Drift in packets per ACK, the shape of ``w``.

        Raises
        ------
        ParameterError
            When a law leaves its admissible range at some window (see :meth:`evaluate`).
        """
        p = self.evaluate("mark", w)
        return self.evaluate("increase", w) * (1 - p) - self.evaluate("decrease", w) * p

    def zero_drift(self, lo: float = 1e-6, hi: float = 1e9) -> float:
        """The window where the expected change per ACK vanishes (the fluid equilibrium).

        The drift is scanned on a geometric grid over ``[lo, hi]`` and its first change of sign
        from positive to negative is refined by Brent's method. This is the "mean" window of
        the mean-value analysis of Misra, Baras & Ott (2000), eq (4).

        Parameters
        ----------
        lo, hi : float, default 1e-6 and 1e9
            Ends of the window range searched (packets), ``0 < lo < hi``; 2001 geometrically
            spaced points.

        Returns
        -------
        float
            The smallest zero of the drift found in ``[lo, hi]`` (packets).

        Raises
        ------
        NotNormalizableError
            When the drift stays positive up to ``hi``: the window grows without bound.
        AnalysisError
            When it is not positive at ``lo``.
        """
        from .errors import NotNormalizableError

        grid = np.geomspace(lo, hi, 2001)
        d = self.drift(grid)
        if not d[0] > 0:
            raise AnalysisError(
                f"the drift of {self.name!r} is {d[0]:.4g} <= 0 already at w = {lo:g}; "
                "no zero-drift window above it"
            )
        neg = np.flatnonzero(d <= 0)
        if neg.size == 0:
            raise NotNormalizableError(
                f"the drift of {self.name!r} stays positive up to w = {hi:g} "
                f"(drift {d[-1]:.4g} per ACK there): the marking cannot hold the window and it "
                "grows without bound"
            )
        i = neg[0]
        if d[i] == 0:
            return float(grid[i])
        lo_i, hi_i = float(grid[i - 1]), float(grid[i])
        return brentq(lambda x: float(self.drift(x)), lo_i, hi_i, xtol=1e-14, rtol=1e-14)

    def marking_onset(self, below: float | None = None) -> float:
        """The largest window ``W*`` under which nothing is marked (0 if marking starts at 0).

        Found on a geometric grid below ``below`` (default: the zero-drift window) and refined
        by bisection to 1e-12 relative.

        Parameters
        ----------
        below : float, optional
            Upper end of the search (packets); the grid runs from ``1e-9 * below`` to ``below``
            (4001 points). Default :meth:`zero_drift`.

        Returns
        -------
        float
            ``W*`` in packets; 0 when the smallest window of the grid is already marked.

        Raises
        ------
        AnalysisError
            When nothing is marked below ``below`` (or :meth:`zero_drift` fails).
        """
        top = self.zero_drift() if below is None else float(below)
        grid = np.geomspace(top * 1e-9, top, 4001)
        p = self.evaluate("mark", grid)
        pos = np.flatnonzero(p > 0)
        if pos.size == 0:
            raise AnalysisError(f"{self.name!r} marks nothing below w = {top:g}")
        i = pos[0]
        if i == 0:
            return 0.0
        a, b = grid[i - 1], grid[i]
        while b - a > 1e-12 * b:
            c = 0.5 * (a + b)
            if self.evaluate("mark", c) > 0:
                b = c
            else:
                a = c
        return float(a)

    # ----------------------------------------------------------------------------- solvers
    def stationary(self, **options: Any) -> WindowDistribution:
        """The stationary distribution by the PDMP solver
        (see :func:`fluidnet.stochastic.stationary_distribution`).

        Parameters
        ----------
        **options
            Keyword options of :func:`fluidnet.stochastic.stationary_distribution` (``m``,
            ``drift``, ``support``, ``tol``, ``check``, ``max_points``).

        Returns
        -------
        WindowDistribution
        """
        from .pdmp import stationary_distribution  # a solver below this module (scipy)

        return stationary_distribution(self, **options)

    def monte_carlo(self, **options: Any) -> WindowDistribution:
        """The stationary distribution by Monte Carlo of the exact chain
        (see :func:`fluidnet.stochastic.monte_carlo`).

        Parameters
        ----------
        **options
            Keyword options of :func:`fluidnet.stochastic.monte_carlo` (``n_chains``,
            ``n_steps``, ``burn_in``, ``seed``, ``start``, ``bins``, ``window_range``, ``groups``,
            ``level``).

        Returns
        -------
        WindowDistribution
            With confidence intervals from independent groups of chains.
        """
        from .montecarlo import monte_carlo  # a solver below this module (numba)

        return monte_carlo(self, **options)
