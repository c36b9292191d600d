"""Equilibria of fluid models, including equilibria on the boundary of projected states.

At an equilibrium every delayed value equals the current one, so the steady-state equations are
``f(x, x, p) = 0``. For a projected state ``x_i >= 0`` an equilibrium may also sit on the boundary
``x_i = 0`` with ``f_i <= 0`` (the projection holds it there). All combinations of projected
states at the boundary are tried.

Symbolic solving (sympy) is used when every equation is a rational function of the states with
at most four states; otherwise, and wherever a closed form is singular at the given parameter
values (e.g. 0/0) or yields nothing admissible, numeric root finding (scipy) from a guess and a
set of starts.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from ..errors import AnalysisError, ModelError
from .numeric import to_numpy

__all__ = ["equilibria", "steady_state_equations", "symbolic_equilibria"]

_SYMBOLIC_MAX_STATES = 4


def steady_state_equations(form) -> list[sympy.Expr]:
    """Right-hand sides with every lag replaced by the current state (``x(t - tau) = x``)."""
    rep = {lag.symbol: form.x[lag.state] for lag in form.lags}
    eqs = [sympy.expand_mul(e.xreplace(rep)) for e in form.rhs]
    for i, e in enumerate(eqs):
        if e.has(form.t):
            raise ModelError(
                f"the right-hand side of {form.states[i]} depends explicitly on t; a "
                "time-varying model has no equilibrium"
            )
    return eqs


def _is_rational(eqs, xs) -> bool:
    bad = (sympy.Piecewise, sympy.Heaviside, sympy.Max, sympy.Min, sympy.sign, sympy.Abs)
    return all(e.is_rational_function(*xs) and not e.has(*bad) for e in eqs)


def symbolic_equilibria(model) -> list[dict[str, sympy.Expr]] | None:
    """Closed-form equilibria with symbolic parameters, or ``None`` when sympy is not used.

    Each entry maps a state name to an expression of the parameters. The boundary cases of
    projected states are included (with the projected states set to 0); whether a boundary
    candidate is admissible (``f_i <= 0``) depends on the parameter values and is decided by
    :func:`equilibria`.
    """
    return model.cached("symbolic equilibria", lambda: _solve_symbolically(model.form))


def _solve_symbolically(form) -> list[dict[str, sympy.Expr]] | None:
    eqs = steady_state_equations(form)
    result = None
    if len(form.x) <= _SYMBOLIC_MAX_STATES and _is_rational(eqs, form.x):
        result = []
        for subset in _boundary_subsets(form):
            fixed = {form.x[i]: sympy.S.Zero for i in subset}
            free = [x for i, x in enumerate(form.x) if i not in subset]
            sub_eqs = [
                sympy.together(eqs[i].xreplace(fixed)) for i in range(len(eqs)) if i not in subset
            ]
            sub_eqs = [sympy.fraction(e)[0] for e in sub_eqs]
            if free:
                try:
                    sols = sympy.solve(sub_eqs, free, dict=True)
                except (NotImplementedError, sympy.PolynomialError):
                    result = None
                    break
            else:
                sols = [{}] if all(sympy.simplify(e) == 0 for e in sub_eqs) else []
            for sol in sols:
                full = {form.states[i]: sympy.S.Zero for i in subset}
                for i, x in enumerate(form.x):
                    if i not in subset:
                        full[form.states[i]] = sympy.simplify(sol.get(x, x))
                if any(v.free_symbols & set(form.x) for v in full.values()):
                    continue  # a continuum of equilibria: not a point
                full["__boundary__"] = tuple(subset)  # type: ignore[assignment]
                result.append(full)
    return result


def _boundary_subsets(form):
    idx = form.nonnegative
    for r in range(len(idx) + 1):
        yield from itertools.combinations(idx, r)


class _Plan:
    """Numeric functions of one model, built once: residuals, term sizes, closed forms."""

    def __init__(self, model):
        form = model.form
        self.states = form.states
        eqs = steady_state_equations(form)
        args = (form.x, form.p)
        self.f = to_numpy(args, eqs)
        terms = [list(sympy.Add.make_args(sympy.expand(e))) for e in eqs]
        self.term_fns = [to_numpy(args, ts) for ts in terms]
        sym = symbolic_equilibria(model)
        self.symbolic = sym is not None
        self.closed = (
            [to_numpy((form.p,), [sol[n] for n in form.states]) for sol in sym] if sym else []
        )
        self.nonneg = tuple(form.nonnegative)
        self.subsets = list(_boundary_subsets(form))

    def scale(self, i: int, x: np.ndarray, p: np.ndarray) -> float:
        """Largest term of equation ``i`` at ``x`` (for a relative residual test)."""
        mags = np.abs(self.term_fns[i](x, p))
        mags = mags[np.isfinite(mags)]
        return float(mags.max()) if mags.size else 0.0


def _plan(model) -> _Plan:
    return model.cached("equilibrium plan", lambda: _Plan(model))


def equilibria(
    model, *, guess: Mapping[str, float] | None = None, **params: Any
) -> list[dict[str, float]]:
    """All equilibria found, best first.

    Parameters
    ----------
    model : fluidnet.Model
    guess : dict, optional
        ``{state: value}``; numeric root finding starts here, and the equilibria are sorted by
        their distance to it.
    **params
        Parameter overrides.

    Returns
    -------
    list of dict
        ``[{state: value}, ...]``. Without ``guess`` the order is: equilibria of the
        unprojected equations first (``f = 0`` everywhere, which the papers linearize at), then
        those held on a boundary by the projection (``f_i < 0`` at ``x_i = 0``); within each
        group, equilibria without negative states first (rates, windows and queues are
        non-negative in fluid models), then fewer zero states first.

    Raises
    ------
    AnalysisError
        When no equilibrium exists or none is found.
    ModelError
        When the model depends explicitly on time, or ``guess`` names an unknown state.
    """
    values = model.resolve_params(params)
    plan = _plan(model)
    p = np.array([values[k] for k in model.param_names], dtype=float)
    if guess is not None:
        unknown = set(guess) - set(plan.states)
        if unknown:
            raise ModelError(
                f"guess names unknown states {sorted(unknown)} (states: {', '.join(plan.states)})"
            )
    numeric = not plan.symbolic
    candidates: list[np.ndarray] = []
    for closed in plan.closed:
        c = closed(p)
        if not np.all(np.isfinite(c)):
            numeric = True  # a closed form singular at these values (e.g. 0/0): search too
        elif np.all(np.abs(np.imag(c)) <= 1e-12 * np.maximum(1, np.abs(np.real(c)))):
            candidates.append(np.real(c))
    if numeric:
        candidates += _numeric_candidates(plan, p, guess)
    accepted = _admissible(plan, candidates, p)
    if not accepted and not numeric:
        numeric = True
        accepted = _admissible(plan, _numeric_candidates(plan, p, guess), p)
    if not accepted:
        raise AnalysisError(
            f"no equilibrium found for model {model.name!r} at {values}"
            + (" (numeric search; try guess={...})" if numeric else "")
        )
    if guess is not None:
        g = np.array([guess.get(n, 0.0) for n in plan.states], dtype=float)
        accepted.sort(key=lambda a: float(np.linalg.norm(a[0] - g)))
    else:
        accepted.sort(key=lambda a: (a[1], bool(np.any(a[0] < 0)), int(np.sum(a[0] == 0))))
    return [{n: float(v) for n, v in zip(plan.states, a[0], strict=True)} for a in accepted]


def _admissible(plan: _Plan, candidates, p) -> list[tuple[np.ndarray, int]]:
    """Keep real, finite candidates that solve the projected steady-state problem; dedupe.

    Returns ``(x, is_boundary_only)`` pairs.
    """
    out: list[tuple[np.ndarray, int]] = []
    nonneg = set(plan.nonneg)
    for x in candidates:
        x = np.asarray(x, dtype=float)
        if not np.all(np.isfinite(x)):
            continue
        big = max(1.0, float(np.max(np.abs(x))))
        if any(x[i] < -1e-12 * big for i in nonneg):
            continue
        x = x.copy()
        for i in nonneg:
            if abs(x[i]) <= 1e-12 * big:
                x[i] = 0.0
        r = plan.f(x, p)
        boundary_only = 0
        ok = True
        for i, ri in enumerate(r):
            if abs(ri) <= 1e-8 * max(1.0, plan.scale(i, x, p)):
                continue
            if i in nonneg and x[i] == 0.0 and ri < 0:
                boundary_only = 1  # held at 0 by the projection
                continue
            ok = False
            break
        if not ok:
            continue
        if any(np.allclose(x, y, rtol=1e-9, atol=1e-12) for y, _ in out):
            continue
        out.append((x, boundary_only))
    return out


def _numeric_candidates(plan: _Plan, p: np.ndarray, guess) -> list[np.ndarray]:
    from scipy import optimize  # here, not at module level: keeps `import fluidnet` light

    n = len(plan.states)
    starts: list[np.ndarray] = []
    if guess is not None:
        starts.append(np.array([guess.get(s, 1.0) for s in plan.states], dtype=float))
    for mag in (1.0, 10.0, 0.1, 100.0, 1e3, 1e4, 0.01, 1e5):
        starts.append(np.full(n, mag))
    rng = np.random.default_rng(0)
    for _ in range(8):
        starts.append(10.0 ** rng.uniform(-2, 4, size=n))
    out = []
    for subset in plan.subsets:
        free = [i for i in range(n) if i not in subset]
        if not free:
            out.append(np.zeros(n))
            continue

        def reduced(v, free=free):
            x = np.zeros(n)
            x[free] = v
            return plan.f(x, p)[free]

        for x0 in starts:
            with np.errstate(all="ignore"):
                try:
                    sol = optimize.root(reduced, x0[free], method="hybr")
                except (ValueError, ZeroDivisionError, FloatingPointError):
                    continue
            if sol.success and np.all(np.isfinite(sol.x)):
                x = np.zeros(n)
                x[free] = sol.x
                out.append(x)
    return out
