"""Initial histories: what a state did before ``t0``, turned into the integrator's pieces.

Per state, a history is

* a number: the state was constant (it is constant arbitrarily far back);
* a callable ``f(t)``: tabulated on ``[t0 - span, t0]`` by a cubic spline refined until it
  matches ``f`` at the midpoints well below the integration tolerance, and called nowhere
  else. ``span`` is the largest delay at ``t0`` when every delay is a constant or a parameter
  expression (the run reads nothing earlier), so a history defined only there (``ln t`` just
  after ``t = 0``) is fine; when a delay depends on the states or on ``t`` it may grow, and
  ``span`` is four times the largest delay at ``t0``, or the largest delay alone when ``f``
  cannot be evaluated that far back (reaching before the tabulated span raises an error that
  says so);
* samples ``(t, values)``: interpolated by a not-a-knot cubic spline (linear for 2-3 samples);
  they must reach ``t0``; the history is undefined before the first sample.

* a :class:`~fluidnet.Solution`: an earlier run, whose dense output is used as it is.

States without an entry take their value at the model's equilibrium (constant).
"""

from __future__ import annotations

import math
import sys
import unicodedata
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, IntegrationError, ModelError, OptionError, ParameterError
from .methods import NCOEF

if TYPE_CHECKING:  # scipy.interpolate is imported when a history needs it (slow import)
    from scipy.interpolate import PPoly

    from .solution import Solution

__all__ = ["HistoryData", "build_history", "normalize_history"]

_MAX_TAB_POINTS = 2**15


@dataclass(frozen=True)
class HistoryData:
    """The pre-``t0`` pieces in the integrator's layout.

    Attributes
    ----------
    t : ndarray, shape (K+1,)
        Breakpoints, ending at ``t0``.
    c : ndarray, shape (K, n, NCOEF)
        Power-basis coefficients in ``theta`` per piece and state.
    start : ndarray, shape (n,)
        Earliest time each state's history is defined (``-inf`` for constants).
    x0 : ndarray, shape (n,)
        State at ``t0``.
    """

    t: np.ndarray
    c: np.ndarray
    start: np.ndarray
    x0: np.ndarray


def _state_key(key: Any, names: tuple[str, ...]) -> tuple[str, str]:
    """The state ``key`` names (an identifier as Python reads it, NFKC-normalized like the
    model's names) and ``key`` as spelled."""
    if isinstance(key, str):
        given = key
    else:
        from ..symbolic.symbols import given_name  # sympy: a state given as a symbol

        given = given_name(key, "state")
    name = given if given.isascii() else unicodedata.normalize("NFKC", given)
    if name not in names:
        raise ModelError(
            f"history given for {given!r}, which is not a state (states: {', '.join(names)})"
        )
    return name, given


def normalize_history(model, history, params: Mapping[str, float]) -> dict[str, Any] | Solution:
    """``{state: spec}`` for every state; missing states get their equilibrium value.

    A :class:`~fluidnet.Solution` is passed through (its dense output is the history).
    """
    from .solution import Solution

    names = model.state_names
    if isinstance(history, Solution):
        return history
    if history is None:
        history = {}
    if not isinstance(history, Mapping):
        raise ModelError(
            "history must be a dict {state: constant | callable | (t, values)}, "
            f"not {type(history).__name__}"
        )
    spec: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for k, v in history.items():
        name, given = _state_key(k, names)
        if name in spec:
            raise ModelError(
                f"history gives state {name!r} twice: {spelled[name]!r} and {given!r} are "
                "one identifier once Unicode-normalized (NFKC), as Python reads names"
            )
        spec[name], spelled[name] = v, given
    missing = [s for s in names if s not in spec]
    if missing:
        try:
            eq = model.equilibrium(**dict(params))
        except AnalysisError as exc:
            raise AnalysisError(
                f"no history given for {', '.join(missing)} and the default (the equilibrium) "
                f"is not available: {exc}"
            ) from exc
        for s in missing:
            spec[s] = float(eq[s])
    return {s: spec[s] for s in names}


def _real(name: str, values: Any, t: Any) -> np.ndarray:
    """``values`` as floats; :class:`ParameterError` naming the state for a complex value."""
    arr = np.asarray(values)
    if np.iscomplexobj(arr):
        bad = np.atleast_1d(np.imag(arr) != 0)
        if np.any(bad):
            i = int(np.argmax(bad))
            v = np.atleast_1d(arr)[i]
            tt = np.broadcast_to(np.asarray(t, dtype=float), bad.shape)[i]
            raise ParameterError(f"history of {name!r} is complex: {v} at t = {tt:g}")
        arr = np.real(arr)
    return arr.astype(float)


def _sympy_number(v: Any) -> bool:
    """Whether ``v`` is a sympy number (sympy is not imported to find out)."""
    sympy = sys.modules.get("sympy")
    return sympy is not None and isinstance(v, sympy.Expr) and bool(v.is_number)


def _kind(name: str, v: Any) -> str:
    if isinstance(v, (complex, np.complexfloating)) or (_sympy_number(v) and v.is_real is False):
        raise ParameterError(f"history of {name!r}: the value {v} is complex")
    if isinstance(v, (Real, np.number)) and not isinstance(v, bool):
        return "constant"
    if _sympy_number(v):
        return "constant"
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return "samples"
    if callable(v):
        return "callable"
    raise ModelError(
        f"history of {name!r}: {v!r} is neither a number, a callable of t, nor samples (t, values)"
    )


def _check_finite(name: str, t, v) -> None:
    v = np.atleast_1d(np.asarray(v, dtype=float))
    bad = ~np.isfinite(v)
    if np.any(bad):
        i = int(np.argmax(bad))
        tt = np.broadcast_to(np.asarray(t, dtype=float), v.shape)[i]
        raise IntegrationError(f"history of {name!r} is not finite: {v[i]} at t = {tt:g}")


def _call(name: str, f: Callable, ts: np.ndarray) -> np.ndarray:
    try:
        out = np.asarray(f(ts))
        if out.shape != ts.shape or out.dtype.kind not in "fiuc":
            raise ValueError
    except Exception:
        try:
            out = np.array([f(float(s)) for s in ts])
            if out.shape != ts.shape or out.dtype.kind not in "fiuc":
                raise ValueError(f"it returned {out[0]!r}, not a number")
        except Exception as exc:
            raise ModelError(
                f"history of {name!r}: calling it at t = {ts[0]:g} failed: {exc}"
            ) from exc
    out = _real(name, out, ts)
    _check_finite(name, ts, out)
    return out


def _tabulate(name: str, f: Callable, lo: float, t0: float, tol: Callable) -> PPoly:
    """Cubic spline of ``f`` on ``[lo, t0]`` accurate to ``tol(value)`` at the midpoints."""
    from scipy.interpolate import CubicSpline, PPoly

    npts = 32
    while True:
        ts = np.linspace(lo, t0, npts + 1)
        vs = _call(name, f, ts)
        spl = CubicSpline(ts, vs)
        mids = 0.5 * (ts[1:] + ts[:-1])
        ref = _call(name, f, mids)
        errs = np.abs(spl(mids) - ref)
        if np.all(errs <= tol(ref)) or npts >= _MAX_TAB_POINTS:
            if not np.all(errs <= tol(ref)):
                warnings.warn(
                    f"history of {name!r} is not smooth enough to tabulate to the integration "
                    f"tolerance on [{lo:g}, {t0:g}] (max interpolation error "
                    f"{errs.max():.3g}); give it as samples (t, values) to control this",
                    RuntimeWarning,
                    stacklevel=4,
                )
            return PPoly(spl.c, spl.x)
        npts *= 2


def _from_samples(name: str, samples, t0: float) -> tuple[PPoly | None, float]:
    from scipy.interpolate import CubicSpline, PPoly, make_interp_spline

    ts, vs = samples
    ts = _real(f"{name}'s sample times", np.asarray(ts).reshape(-1), np.nan)
    vs = np.asarray(vs).reshape(-1)
    vs = _real(name, vs, ts if ts.shape == vs.shape else np.nan)
    if ts.shape != vs.shape or ts.size == 0:
        raise ModelError(
            f"history of {name!r}: samples (t, values) must be two 1-D arrays of "
            f"equal, non-zero length (got {ts.size} and {vs.size})"
        )
    if not np.all(np.isfinite(ts)):
        raise ModelError(f"history of {name!r}: sample times must be finite")
    _check_finite(name, ts, vs)
    if ts.size > 1 and np.any(np.diff(ts) <= 0):
        raise ModelError(f"history of {name!r}: sample times must be strictly increasing")
    tol = 1e-12 * max(1.0, abs(t0))
    if ts[-1] < t0 - tol:
        raise IntegrationError(
            f"history of {name!r}: the samples end at t = {ts[-1]:g}, before t0 = {t0:g}"
        )
    if ts.size == 1:
        return None, float(vs[0])
    k = 1 if ts.size < 4 else 3
    spl = make_interp_spline(ts, vs, k=1) if k == 1 else CubicSpline(ts, vs)
    pp = PPoly.from_spline(spl) if k == 1 else PPoly(spl.c, spl.x)
    return pp, float(pp(min(t0, ts[-1])))


def _restrict(pp: PPoly, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Power-basis coefficients in ``theta`` of ``pp`` on each ``[a_k, b_k]``, shape (K, NCOEF).

    Every interval must lie inside one piece of ``pp``.
    """
    mid = 0.5 * (a + b)
    j = np.clip(np.searchsorted(pp.x, mid, side="right") - 1, 0, pp.c.shape[1] - 1)
    deg = pp.c.shape[0] - 1
    if deg + 1 > NCOEF:  # pragma: no cover - splines here are at most cubic
        raise AssertionError("history polynomial degree too high")
    coef = pp.c[::-1, j]  # coef[m, k]: coefficient of (x - x_j)**m on interval k
    d = a - pp.x[j]
    hh = b - a
    out = np.zeros((a.size, NCOEF))
    for m in range(deg + 1):
        # (d + theta*hh)**m = sum_r C(m, r) d**(m-r) hh**r theta**r
        for r in range(m + 1):
            out[:, r] += coef[m] * math.comb(m, r) * d ** (m - r) * hh**r
    return out


def _check_delay_at_t0(delay: Any, label: str, tau: float, t0: float) -> None:
    if not math.isfinite(tau):
        raise IntegrationError(
            f"the delay {delay} of {label} is not finite at t0 = {t0:g} with the given history"
        )
    if tau < 0:
        raise IntegrationError(
            f"the delay {delay} of {label} is negative ({tau:g}) at t0 = {t0:g} with the given "
            "history"
        )


def _max_delay_at_t0(model, values: Mapping[str, float], t0: float, value_at) -> float:
    """Largest delay at ``t0`` with the given history (lags evaluated in order)."""
    form = model.form
    if hasattr(model, "lag_delays"):  # a saved model: its compiled delay function
        taus = model.lag_delays(values, t0, value_at)
        for lag, tau in zip(form.lags, taus, strict=True):
            _check_delay_at_t0(lag.delay, form.lag_label(lag), tau, t0)
        return max(taus, default=0.0)
    import sympy

    subs = {sympy.Symbol(k, real=True): v for k, v in values.items()}
    subs[form.t] = t0
    for i, xs in enumerate(form.x):
        subs[xs] = value_at(i, t0)
    largest = 0.0
    for lag in form.lags:
        try:
            tau = float(lag.delay.xreplace(subs))
        except (TypeError, ValueError):
            tau = float("nan")
        _check_delay_at_t0(lag.delay, form.lag_label(lag), tau, t0)
        largest = max(largest, tau)
        subs[lag.symbol] = value_at(lag.state, t0 - tau)
    return largest


def _defined(f: Callable, lo: float, hi: float) -> bool:
    """Whether the history ``f`` gives finite real numbers on a grid of ``[lo, hi]`` (probed
    quietly: the margin beyond the span needed at ``t0`` is optional)."""
    ts = np.linspace(lo, hi, 33)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            out = np.asarray(f(ts))
            if out.shape != ts.shape:
                out = np.array([f(float(s)) for s in ts])
            return bool(np.all(np.isfinite(out)) and not np.iscomplexobj(out))
        except Exception:  # noqa: BLE001 - a history that cannot be called there
            return False


def _fixed_delays(model) -> bool:
    """Whether every delay of ``model`` is a constant or a parameter expression (then the delays
    at ``t0`` are the delays of the whole run)."""
    return all(lag.kind in ("constant", "parameter") for lag in model.form.lags)


def _from_solution(model, sol, t0: float) -> HistoryData:
    """The dense output of an earlier run up to ``t0``, piece for piece (no re-interpolation)."""
    names = model.state_names
    if not sol.dense:
        raise OptionError(
            "a run made with dense=False cannot be continued: it kept no dense output "
            "(run it with dense=True to use it as a history)"
        )
    if tuple(sol.state_names) != tuple(names):
        raise ModelError(
            f"the history is a run of a model with states {', '.join(sol.state_names)}, not "
            f"{', '.join(names)}"
        )
    mt, mc = sol._mt, sol._mc
    tol = 1e-12 * max(1.0, abs(sol.t_end))
    if not (mt[0] < t0 <= sol.t_end + tol):
        raise IntegrationError(
            f"t0 = {t0:g} is outside the run given as history ({mt[0]:g}, {sol.t_end:g}]"
        )
    t0 = min(t0, float(mt[-1]))
    k = int(np.clip(np.searchsorted(mt, t0, side="left") - 1, 0, mc.shape[0] - 1))
    t_new = np.append(mt[: k + 1], t0)
    c_new = mc[: k + 1].copy()
    frac = (t0 - mt[k]) / (mt[k + 1] - mt[k])
    c_new[k] *= frac ** np.arange(NCOEF)  # the last piece cut at t0
    x0 = c_new[k].sum(axis=1)
    for i in model.form.nonnegative:
        x0[i] = max(x0[i], 0.0)
    return HistoryData(t=t_new, c=np.ascontiguousarray(c_new), start=sol._start.copy(), x0=x0)


def build_history(
    model,
    spec: Mapping[str, Any] | Solution,
    values: Mapping[str, float],
    t0: float,
    rtol: float,
    atol: np.ndarray,
) -> HistoryData:
    """Turn a normalized history ``{state: spec}`` (or a Solution) into :class:`HistoryData`."""
    from .solution import Solution

    if isinstance(spec, Solution):
        return _from_solution(model, spec, t0)
    names = model.state_names
    n = len(names)
    kinds = {s: _kind(s, v) for s, v in spec.items()}
    consts: dict[int, float] = {}
    polys: dict[int, PPoly] = {}
    x0 = np.zeros(n)
    for i, s in enumerate(names):
        v = spec[s]
        if kinds[s] == "constant":
            val = float(v)
            _check_finite(s, t0, val)
            consts[i] = val
            x0[i] = val
        elif kinds[s] == "samples":
            pp, val = _from_samples(s, v, t0)
            if pp is None:
                consts[i] = val
            else:
                polys[i] = pp
            x0[i] = val
        else:
            x0[i] = _call(s, v, np.array([t0]))[0]

    def value_at(i: int, tt: float) -> float:
        s = names[i]
        if i in consts:
            return consts[i]
        if i in polys:
            pp = polys[i]
            if tt < pp.x[0]:
                return float("nan")
            return float(pp(min(tt, t0)))
        return float(_call(s, spec[s], np.array([tt]))[0])

    callables = [i for i, s in enumerate(names) if kinds[s] == "callable"]
    if callables:
        needed = _max_delay_at_t0(model, values, t0, value_at)
        if needed > 0:
            for i in callables:
                s = names[i]

                def tol(ref, i=i):
                    return 0.01 * (atol[i] + rtol * np.abs(ref))

                lo = t0 - needed
                if not _fixed_delays(model) and _defined(spec[s], t0 - 4.0 * needed, lo):
                    try:  # delays that may grow: a margin, where the history is defined
                        polys[i] = _tabulate(s, spec[s], t0 - 4.0 * needed, t0, tol)
                        continue
                    except (ModelError, IntegrationError, ParameterError):
                        pass
                polys[i] = _tabulate(s, spec[s], lo, t0, tol)
        else:
            for i in callables:
                consts[i] = x0[i]
    for i in model.form.nonnegative:
        if x0[i] < 0:
            raise IntegrationError(
                f"history of {names[i]!r} at t0 = {t0:g} is {x0[i]:g} < 0, but {names[i]!r} is "
                "a non-negative (projected) state"
            )

    start = np.full(n, -np.inf)
    if polys:
        grid = np.unique(np.concatenate([pp.x[pp.x <= t0] for pp in polys.values()] + [[t0]]))
        for i, pp in polys.items():
            start[i] = pp.x[0]
        grid = grid[grid >= grid[0]]
        c = np.zeros((len(grid) - 1, n, NCOEF))
        lo, hi = grid[:-1], grid[1:]
        for i in range(n):
            if i in consts:
                c[:, i, 0] = consts[i]
            else:
                inside = lo >= polys[i].x[0]
                c[inside, i] = _restrict(polys[i], lo[inside], hi[inside])
                c[~inside, i, 0] = np.nan  # before this state's history: never read
        t_grid = grid
    else:
        t_grid = np.array([t0 - 1.0, t0])
        c = np.zeros((1, n, NCOEF))
        for i in range(n):
            c[0, i, 0] = consts[i]
    return HistoryData(
        t=np.ascontiguousarray(t_grid, dtype=float), c=np.ascontiguousarray(c), start=start, x0=x0
    )
