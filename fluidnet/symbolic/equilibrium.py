"""Equilibria of fluid models, including equilibria on the boundary of projected states.

At an equilibrium every delayed value equals the current one, so the steady-state equations are
``f(x, x, p) = 0``. For a projected state ``x_i >= 0`` an equilibrium may also sit on the boundary
``x_i = 0`` with ``f_i <= 0`` (the projection holds it there). All combinations of projected
states at the boundary are tried.

Closed forms (sympy) are used when they are known already (solved earlier in this process, or
kept in the compile cache by an earlier one) or trivial (one polynomial in one state, a
binomial or with numbers for coefficients: :func:`~fluidnet.symbolic.closedforms.cheap_to_solve`);
sympy never runs before the numeric search otherwise (its first ``solve`` in a process costs 70
ms of imports alone), and never without a budget of CPU time
(:mod:`fluidnet.symbolic.closedforms`).
Otherwise, and wherever a closed form is singular at the given parameter values (e.g. 0/0) or
yields nothing admissible, the search is numeric (:mod:`fluidnet.symbolic.rootsearch`): damped
Newton's method on generated numpy code of the residuals and their Jacobian
(:mod:`fluidnet.symbolic.steadycode`, kept in the compile cache) from a guess and a set of
starts, all at once, then with the roots found deflated; where that finds nothing, continuation
in the parameters from points where the equilibrium is known and the global Newton homotopy.
"No equilibrium found" lists what was tried and the smallest residual reached.

Every equilibrium, from a closed form or not, is then polished by Newton's method on the numeric
steady-state equations (a closed form evaluated in floating point can lose several digits: a
cubic's Cardano formula, for one) and returned as an :class:`Equilibrium` with its relative
residual: the largest residual of the equations, each relative to the largest of its own terms
(not to 1 nor to the size of the state: a point "at infinity" where every term is tiny but they
do not cancel is refused; an equation whose terms all vanish exactly is solved). A candidate
must have a relative residual below ``RESIDUAL_TOL``. It is refused where the right-hand side as
written is undefined (a ``0/0`` that sympy cancelled when the delayed values were set equal, e.g.
``x(t - 1)/x(t)`` at ``x = 0``), and a solution that is not isolated (a continuum of equilibria,
e.g. a conserved quantity) is flagged (``isolated = False``, a warning) or, for the list of all
equilibria, an error, rather than an arbitrary point of it passed off as isolated.

A rest point held on a switching surface (``Heaviside``, ``sign``, ... : Filippov sliding) is not
a smooth equilibrium; when none is found, the error names the model's switching surfaces.

:meth:`fluidnet.Model.equilibrium` returns the first equilibrium found in a documented order
(:func:`equilibria`) and never silently: it warns (:class:`EquilibriumWarning`) when that is one
point of a continuum (flagged ``isolated = False``; the message names the curve and the
combination of states behind the zero root), and when other equilibria of the same kind were
found, listing them with the rule that chose and how to choose (``guess=``; ``all=True`` for
the list); see :func:`chosen_equilibrium`.

A model of more than :data:`DENSE_MAX_STATES` states is solved without expanding its equations
or building a dense Jacobian, by the sparse Newton iteration of :mod:`fluidnet.symbolic.newton`
(projected states by an active set instead of every combination of boundary states); the
relative residual of an equation is then measured against its sensitivity to the states.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
import warnings
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..errors import AnalysisError, ModelError
from .closedforms import cheap_to_solve, closed_forms, skip_solving
from .memo import trim_oldest
from .numeric import to_numpy
from .rootsearch import Attempts, InOrder, homotopy, search
from .rowscaling import row_scaling
from .steadycode import (
    boundary_subsets,
    keep,
    kept_or_built,
    record,
    steady_code,
    steady_state_equations,
)

if TYPE_CHECKING:
    from .model import Model
    from .newton import SparseSteadyState

__all__ = [
    "Equilibrium",
    "EquilibriumWarning",
    "chosen_equilibrium",
    "check_equilibrium",
    "equilibria",
    "first_equilibrium",
    "state_values",
    "steady_state_equations",
    "symbolic_equilibria",
]

#: Models of more states are solved sparsely (:mod:`fluidnet.symbolic.newton`): their equations
#: are not expanded, their Jacobian not built dense, their starts followed by Newton's method
#: all at once.
DENSE_MAX_STATES = 40
#: Relative residual below which a point solves a steady-state equation (each equation is
#: measured against its largest term).
RESIDUAL_TOL = 1e-8
#: :func:`check_equilibrium` (an equilibrium given by the user) accepts this relative residual:
#: a steady state read off a simulation (about 1e-5) passes, a point that is not one does not.
GIVEN_TOL = 1e-4
#: Equilibria remembered per model (in this process) as starting points of continuation.
REMEMBERED = 16


class Equilibrium(dict):
    """An equilibrium ``{state: value}`` with its certificate.

    A plain dict of floats, plus

    Attributes
    ----------
    residual : float
        The largest relative residual of the steady-state equations that hold with equality
        (each measured against the largest of its terms); about 1e-16 after polishing.
    boundary : tuple of str
        Projected states held at 0 by the projection (their equation is negative there).
    isolated : bool
        False when the equilibrium is one point of a continuum (then not determined by the
        model; :meth:`fluidnet.Model.equilibrium` with ``all=True`` raises instead).
    """

    residual: float = 0.0
    boundary: tuple[str, ...] = ()
    isolated: bool = True
    _continuum: str | None = None  # why it is not isolated

    def __reduce__(self):
        return (_rebuild, (dict(self), self.residual, self.boundary, self.isolated))

    def __repr__(self) -> str:
        return f"{dict.__repr__(self)}"


def _rebuild(values, residual, boundary, isolated=True) -> Equilibrium:
    eq = Equilibrium(values)
    eq.residual, eq.boundary, eq.isolated = residual, boundary, isolated
    return eq


def symbolic_equilibria(model) -> list[dict[str, sympy.Expr]] | None:
    """Closed-form equilibria with symbolic parameters, or ``None`` when there are none.

    Each entry maps a state name to an expression of the parameters. The boundary cases of
    projected states are included (with the projected states set to 0); whether a boundary
    candidate is admissible (``f_i <= 0``) depends on the parameter values and is decided by
    :func:`equilibria`. Solved by sympy within a budget of CPU time
    (:data:`~fluidnet.symbolic.closedforms.SYMBOLIC_CPU_SECONDS`; ``None`` when it ran out)
    and kept in the compile cache (:func:`~fluidnet.symbolic.closedforms.closed_forms`).
    """

    def build():
        found = closed_forms(model)
        assert found is not None  # solved when not known
        return found.expressions() if found.status == "found" else None

    return model.cached("symbolic equilibria", build)


def _switching_surfaces(eqs) -> tuple[str, ...]:
    """The switching surfaces of steady-state equations, as ``"expr = 0"`` strings.

    Where a ``Heaviside``, ``sign`` or ``Abs`` changes its argument's sign, where the arguments
    of a ``Max`` or ``Min`` are equal, and on the boundary of a ``Piecewise`` condition the
    right-hand side jumps or has a kink: no smooth equilibrium lies there.
    """
    found: list[sympy.Expr] = []
    for e in eqs:
        for a in e.atoms(sympy.Heaviside, sympy.sign, sympy.Abs):
            found.append(a.args[0])
        for a in e.atoms(sympy.Max, sympy.Min):
            found += [u - v for u, v in itertools.combinations(a.args, 2)]
        for a in e.atoms(sympy.Piecewise):
            for _, cond in a.args:
                if isinstance(cond, sympy.core.relational.Relational):
                    lhs, rhs = cast("tuple[sympy.Expr, sympy.Expr]", cond.args)
                    found.append(lhs - rhs)
    out: list[str] = []
    for f in found:
        text = f"{sympy.simplify(f)} = 0"
        if text not in out:
            out.append(text)
    return tuple(out)


class _OnDemand:
    """A read-only list whose item ``i`` is ``build(i)``, built on first access."""

    def __init__(self, size: int, build):
        self._items: list = [None] * size
        self._build = build

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i: int):
        item = self._items[i]
        if item is None:
            item = self._items[i] = self._build(i)
        return item


#: CPU seconds of numeric searches of one model in a process after which its closed forms are
#: solved (within as many seconds again, at most
#: :data:`~fluidnet.symbolic.closedforms.SYMBOLIC_CPU_SECONDS`): a model searched at many
#: parameter points one by one (a critical value, a continuation) then evaluates closed forms
#: (0.3 ms a point) instead of searching (5-10 ms).
SOLVE_AFTER = 0.2

#: True while an analysis makes its systems (:func:`closed_forms_deferred`).
_DEFERRED: ContextVar[bool] = ContextVar("fluidnet_closed_forms_deferred", default=False)


@contextlib.contextmanager
def closed_forms_deferred() -> Iterator[None]:
    """Within: the equilibrium searches neither count towards :data:`SOLVE_AFTER` nor solve a
    model's closed forms (closed forms known already are used).

    The stability analyses make their systems within it
    (:class:`fluidnet.stability.system.SystemFactory`): their one-point searches are few (the
    start of a critical value's path and its branch check, a chart's seeds), and the one-time
    solve (up to ``max(spent, 0.5)`` s of CPU) fell in whichever analysis call crossed the
    line: RCP's second ``critical_value`` 122-126 ms instead of 12, the tandem law's first
    0.6 s (its solve runs into the time box). A model searched point by point outside the
    analyses (``m.equilibrium(...)`` in a loop, where the closed forms pay: RCP 3.4 -> 0.46 ms
    a point) counts and solves as before. A context variable: a thread or task sees its own.
    """
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def _count_search_time(model, started: float) -> None:
    """Add the CPU time since ``started`` to the model's numeric search time (what
    :func:`_solving_pays` weighs), except within :func:`closed_forms_deferred`."""
    if not _DEFERRED.get():
        spent = model.cached("numeric search time", lambda: [0.0])
        spent[0] += time.process_time() - started


def _solving_pays(model, plan: _Plan) -> bool:
    """Solve the closed forms now when the numeric searches of this model have cost
    :data:`SOLVE_AFTER` already (once per model and process, never within
    :func:`closed_forms_deferred`); True when the plan uses them from now on."""
    if _DEFERRED.get():
        return False
    spent = model.cached("numeric search time", lambda: [0.0])
    if spent[0] < SOLVE_AFTER or plan.large or plan.code is None:
        return False
    if model._cache.get("closed forms tried"):
        return False
    model._cache["closed forms tried"] = True
    known = closed_forms(model, solve=False)
    if known is None or known.status == "skipped":
        known = closed_forms(model, budget=max(spent[0], 0.5))
    if known is None or known.status != "found" or len(known.functions) != len(known.texts):
        return False
    plan.closed, plan.symbolic = known.functions, True
    return True


def _plan_closed_forms(model) -> list | None:
    """The numpy functions of the closed-form equilibria the search uses, or ``None`` when it
    is numeric: closed forms are used when known already (this process, or the compile cache)
    or cheap by structure, and when every solution has a numpy form."""
    known = closed_forms(model, solve=False)
    if known is None:
        if cheap_to_solve(model.form):
            known = closed_forms(model)
        else:
            skip_solving(model)
    if known is None or known.status != "found" or len(known.functions) != len(known.texts):
        return None
    return known.functions


class _Plan:
    """Numeric functions of one model, built once: residuals, Jacobian, term sizes, closed forms.

    The residuals, the Jacobian's entries, the terms of the expanded equations and the
    right-hand sides as written are generated numpy code
    (:class:`~fluidnet.symbolic.steadycode.SteadyCode`, kept in the compile cache); for a model
    with an expression numpy cannot write (then ``code`` is ``None``) they are
    :func:`~fluidnet.symbolic.numeric.to_numpy` functions, searched by scipy's root finder.

    A model of more than :data:`DENSE_MAX_STATES` states is planned sparsely instead (see
    :mod:`fluidnet.symbolic.newton`): its equations are not expanded, an equation's size is
    its sensitivity to the states (``sum_j |df_i/dx_j| |x_j|``) rather than its largest
    expanded term, and its Jacobian is sparse.
    """

    def __init__(self, model):
        form = model.form
        self.states = form.states
        self.nonneg = tuple(form.nonnegative)
        self.large = form.n > DENSE_MAX_STATES
        self.code = None
        self.active = None
        if self.large:
            self._plan_sparse(model)
            return
        self.sparse: SparseSteadyState | None = None
        for i, e in enumerate(form.rhs):
            if e.has(form.t):  # lags are symbols: only an explicit t is left
                raise ModelError(
                    f"the right-hand side of {form.states[i]} depends explicitly on t; a "
                    "time-varying model has no equilibrium"
                )
        self._form = form
        self._args, self._x = (form.x, form.p), form.x
        self.lag_states = [lag.state for lag in form.lags]
        self.code = steady_code(model)
        if self.code is None:
            self._plan_lambdified(form, self._eqs, self._args)
        closed = _plan_closed_forms(model)
        self.symbolic = closed is not None
        self.closed = closed or []
        self.subsets = list(boundary_subsets(form))
        # too many projected states to try every configuration: an active set holds them
        self.active = np.array(self.nonneg, dtype=np.intp) if self.subsets == [()] else None

    def _plan_lambdified(self, form, eqs, args) -> None:
        """Functions by :func:`~fluidnet.symbolic.numeric.to_numpy` (an expression numpy cannot
        write here)."""
        self.f = to_numpy(args, eqs)
        # the right-hand sides as written, delayed values as separate arguments: undefined
        # (0/0) where the steady-state equations had a factor cancelled by sympy
        zs = [lag.symbol for lag in form.lags]
        self.raw = to_numpy((form.x, zs, form.p), form.rhs)
        terms = [list(sympy.Add.make_args(sympy.expand(e))) for e in eqs]
        # one function per equation, each built on first use
        self.term_fns = _OnDemand(len(terms), lambda i: to_numpy(args, terms[i]))
        # every term of every equation in one function (for the scales of all equations)
        self.all_terms = to_numpy(args, [t for ts in terms for t in ts])
        self.term_owner = np.repeat(np.arange(len(eqs)), [len(ts) for ts in terms])

    def _plan_sparse(self, model) -> None:
        """The plan of a large model: equations as written, sparse Jacobian, sizes from it;
        its generated code kept in the model's record (a later process reads it instead of
        differentiating the equations again: 0.1 s of the 100-state network's equilibrium)."""
        from .newton import SparseSteadyState

        form = self._form = model.form
        for i, e in enumerate(form.rhs):
            if e.has(form.t):  # lags are symbols: only an explicit t is left
                raise ModelError(
                    f"the right-hand side of {form.states[i]} depends explicitly on t; a "
                    "time-varying model has no equilibrium"
                )

        def build() -> tuple[SparseSteadyState, str | None]:
            steady = SparseSteadyState(self._written, form.x, form.p, form.nonnegative)
            return steady, steady.source

        sparse: SparseSteadyState = kept_or_built(
            model,
            "sparse",
            lambda src: SparseSteadyState.from_source(src, form.n, form.nonnegative),
            build,
        )
        self.sparse = sparse
        self.f = sparse.f  # the values part of one evaluation of values, sizes, Jacobian
        self.lag_states = [lag.state for lag in form.lags]
        self.symbolic, self.closed = False, []
        self.subsets = [()]  # projected states: an active set in the Newton iteration

    @functools.cached_property
    def _written(self) -> list[sympy.Expr]:
        """The steady-state equations as written (every lag the current state; a large
        model's, not expanded)."""
        form = self._form
        rep = {lag.symbol: form.x[lag.state] for lag in form.lags}
        return [e.xreplace(rep) for e in form.rhs]

    @functools.cached_property
    def raw(self):
        """The right-hand sides as written, delayed values as separate arguments (a large
        model's; built on first use)."""
        form = self._form
        zs = [lag.symbol for lag in form.lags]
        return to_numpy((form.x, zs, form.p), form.rhs, plain=True)

    @functools.cached_property
    def _eqs(self) -> list[sympy.Expr]:
        """The steady-state equations, expanded (see :func:`steady_state_equations`; built on
        first use: the generated code does not need them)."""
        return steady_state_equations(self._form)

    @functools.cached_property
    def _surface_eqs(self) -> list[sympy.Expr]:
        return self._written if self.large else self._eqs

    @functools.cached_property
    def surfaces(self) -> tuple[str, ...]:
        """The model's switching surfaces, for messages (built on first use: simplifying each
        takes sympy a fraction of a second)."""
        return _switching_surfaces(self._surface_eqs)

    @property
    def sparse_form(self) -> SparseSteadyState:
        """The sparse steady state of a large model (built with the plan)."""
        assert self.sparse is not None, "only a large model has the sparse form"
        return self.sparse

    def residuals(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The residuals of the steady-state equations at ``x`` (``(n,) + points``)."""
        if self.code is not None:
            return self.code.f(x, p)
        return self.f(x, p)

    @functools.cached_property
    def jac(self):
        """The Jacobian of the steady-state equations (built on first use: dense and slow to
        build for a model of a thousand states, and not needed to check a given point)."""
        if self.large:
            return self.sparse_form.dense_jacobian
        if self.code is not None:
            return self.code.jacobian
        return to_numpy(self._args, sympy.Matrix(self._eqs).jacobian(sympy.Matrix(self._x)))

    def scale(self, i: int, x: np.ndarray, p: np.ndarray) -> float:
        """Largest term of equation ``i`` at ``x`` (for a relative residual test); for a large
        model the size of the equation (see :mod:`fluidnet.symbolic.newton`)."""
        if self.large or self.code is not None:
            return float(self.scales(x, p)[i])
        mags = np.abs(self.term_fns[i](x, p))
        mags = mags[np.isfinite(mags)]
        return float(mags.max()) if mags.size else 0.0

    def scales(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The largest term of every equation at ``x`` (0 where all its terms vanish); for a
        large model the sizes of the equations. At points ``x`` ``(n, K)`` (not for a large
        model): ``(n, K)``."""
        if self.large:
            sizes = self.sparse_form.sizes(x, p)
            sizes[~np.isfinite(sizes)] = 0.0
            return sizes
        if self.code is not None:
            return self.code.scales(x, p)
        mags = np.abs(self.all_terms(x, p))
        mags[~np.isfinite(mags)] = 0.0
        out = np.zeros(len(self.states))
        np.maximum.at(out, self.term_owner, mags)
        return out

    def defined(self, x: np.ndarray, p: np.ndarray) -> bool:
        """Whether the right-hand sides as written are finite at the steady state ``x``."""
        z = x[self.lag_states] if self.lag_states else np.zeros(0)
        if self.code is not None:
            return bool(np.all(np.isfinite(self.code.raw(x, z, p))))
        return bool(np.all(np.isfinite(self.raw(x, z, p))))


def _plan(model) -> _Plan:
    return model.cached("equilibrium plan", lambda: _Plan(model))


def equilibria(
    model: Model,
    *,
    guess: Mapping[str, float] | None = None,
    isolated: bool = False,
    **params: Any,
) -> list[Equilibrium]:
    """All equilibria found, best first.

    Parameters
    ----------
    model : fluidnet.Model
    guess : dict, optional
        ``{state: value}``; numeric root finding starts here, and the equilibria are sorted:
        those without negative states first (unless the guess has a negative value), then by
        their distance to the guess over the states it names, each state relative to its own
        scale (``|guess|``; for a state guessed at 0, the largest magnitude among the
        equilibria found), so that a queue in bytes does not outweigh a window in packets.
    isolated : bool, default False
        Raise when an equilibrium found is not isolated (``equilibrium(all=True)``: listing
        arbitrary points of a continuum would be wrong). Otherwise such an equilibrium is
        returned with ``isolated = False``.
    **params
        Parameter overrides.

    Returns
    -------
    list of Equilibrium
        ``[{state: value}, ...]``, each polished by Newton's method, with its ``residual``.
        Without ``guess`` the order is: equilibria of the unprojected equations first
        (``f = 0`` everywhere, which the papers linearize at), then those held on a boundary by
        the projection (``f_i < 0`` at ``x_i = 0``); within each group, equilibria without
        negative states first (rates, windows and queues are non-negative in fluid models),
        then fewer zero states first.

    Raises
    ------
    AnalysisError
        When no equilibrium exists or none is found (the message names the switching
        surfaces of the model, if any: a rest point held on one by Filippov sliding is not a
        smooth equilibrium and is not returned), or (with ``isolated``) when the
        equilibria are not isolated (they form a curve: a conserved quantity, an undetermined
        state).
    ModelError
        When the model depends explicitly on time, or ``guess`` names an unknown state.
    """
    return _equilibria(model, guess, isolated, params, first=False)


def first_equilibrium(model: Model, **params: Any) -> Equilibrium:
    """The equilibrium :meth:`Model.equilibrium` returns at ``params`` (no guess), the numeric
    search stopped as soon as that one is known.

    The search's list is ranked by a stable sort on (held at the boundary, a negative state,
    the number of zero states): a candidate without any of these (the best rank) that comes
    first in the list among those of its rank is the one returned, whatever the rest of the
    search finds after it. The first pass's rows are judged in their order as they finish
    (:func:`~fluidnet.symbolic.rootsearch.search` with ``first``; a large model's sparse
    search start by start, :meth:`~fluidnet.symbolic.newton.SparseSteadyState.solve` with
    ``until``): once a leading row gives an
    isolated equilibrium of the best rank, with every row before it finished, the search stops
    there. It is the same point, bit for bit, as the full search's first; only the other
    equilibria are not looked for, so no :class:`EquilibriumWarning` names them. Where no
    leading row settles it (the first equilibrium is held at the boundary, has a zero or
    negative state, or comes from the deflation), the search is the full one and the result,
    warnings included, that of :meth:`Model.equilibrium`.

    Parameters
    ----------
    model : fluidnet.Model
    **params
        Parameter overrides.

    Returns
    -------
    Equilibrium

    Raises
    ------
    AnalysisError
        As :meth:`Model.equilibrium`.
    """
    found = _equilibria(model, None, False, params, first=True)
    if len(found) == 1 and getattr(found, "settled", False):
        return found[0]
    return chosen_equilibrium(model, found, None, model.resolve_params(params))


class _Found(list):
    """The equilibria of :func:`_equilibria`; ``settled`` when only the first was searched."""

    settled = False


def rank_key(x: np.ndarray, held: bool) -> tuple[bool, bool, int]:
    """The key of the search's documented order of equilibria (smallest first, a stable sort):
    held at the boundary by the projection, a negative state, the number of zero states."""
    return bool(held), bool(np.any(x < 0)), int(np.sum(x == 0))


def _best_rank(x: np.ndarray, held) -> bool:
    """Whether an accepted point has the best rank of the search's order: free of the
    boundary, no negative and no zero state (nothing found after it comes before it)."""
    return rank_key(x, bool(held)) == (False, False, 0)


def _equilibria(model, guess, isolated: bool, params, first: bool) -> list[Equilibrium]:
    started = time.process_time()
    values = model.resolve_params(params)
    plan = _plan(model)
    p = np.array([values[k] for k in model.param_names], dtype=float)
    if guess is not None:
        guess = state_values(plan.states, guess, "guess", complete=False)
    numeric = not plan.symbolic
    candidates: list[np.ndarray] = []
    for closed in plan.closed:
        with np.errstate(all="ignore"):
            c = closed(p)
        if not np.all(np.isfinite(c)):
            numeric = True  # a closed form singular at these values (e.g. 0/0): search too
        elif np.all(np.abs(np.imag(c)) <= 1e-12 * np.maximum(1, np.abs(np.real(c)))):
            candidates.append(np.real(c))
    if numeric and not plan.closed and _solving_pays(model, plan):
        return _equilibria(model, guess, isolated, params, first)
    attempts = Attempts()
    accepted = _Accepted()
    recalled = _recalled(model, plan, p, guess) if numeric else None
    if recalled is not None:  # the search's points at these values, kept by an earlier run
        accepted = _admissible(plan, candidates + recalled, p)
    # only the first equilibrium: the search stops where a leading row settles it
    first = first and numeric and guess is None and not candidates
    first = first and (plan.code is not None or plan.large)
    full = None
    if first and not accepted:
        settled, full = _first_only(model, plan, p, started)
        if settled is not None:
            return settled
    if not accepted:
        recalled = None
        if numeric:
            attempts = full or _numeric_candidates(plan, p, guess)
            candidates += attempts.candidates
        accepted = _admissible(plan, candidates, p)
    if not accepted and not numeric:
        numeric = True
        candidates = (attempts := _numeric_candidates(plan, p, guess)).candidates
        accepted = _admissible(plan, candidates, p)
    if not accepted and plan.code is not None:
        candidates = (attempts := _continued(plan, model, p, guess, attempts)).candidates
        accepted = _admissible(plan, candidates, p)
    if accepted and numeric and recalled is None and (plan.code is not None or plan.large):
        _memorize(model, plan, p, guess, _productive(candidates, accepted, attempts))
    if numeric and recalled is None:
        _count_search_time(model, started)
    if not accepted:
        where = ""
        if plan.surfaces:
            surfaces = "; ".join(plan.surfaces[:_LISTED])
            if len(plan.surfaces) > _LISTED:
                surfaces += f"; ... ({len(plan.surfaces)} surfaces)"
            where = (
                f". Its right-hand side switches on {surfaces}: a rest point "
                "held on a switching surface (Filippov sliding) is not a smooth equilibrium and "
                "is not searched for; simulate the model to see where it settles"
            )
        tried = ""
        if numeric:
            tried = " in the numeric search"
            if attempts.methods:
                tried += " (tried: " + "; ".join(attempts.methods)
                if attempts.best_x is not None and np.isfinite(attempts.best):
                    tried += (
                        f"; the smallest scaled residual reached was {attempts.best:.2g}, at "
                        f"({_point(plan.states, attempts.best_x)})"
                    )
                tried += ")"
            tried += "; try guess={...}"
        raise AnalysisError(
            f"no equilibrium found for model {model.name!r} at {_at(values)}: no isolated smooth "
            "equilibrium (a point where every steady-state equation vanishes to rounding "
            f"relative to its terms){tried}{where}"
        )
    if plan.code is not None:
        _remember(model, p, accepted)
    loose: dict[int, str] = {}
    directions: dict[int, np.ndarray] = {}
    for x, held, _ in accepted:
        direction = _not_isolated(plan, x, held, p)
        if direction is None:
            continue
        loose[id(x)] = reason = _continuum(plan, model, values, x, held, p, direction)
        directions[id(x)] = direction
        if isolated:
            raise AnalysisError(reason)
    if len(directions) > 1:
        accepted = _continuum_ends(plan, accepted, directions)
    if guess is not None:
        accepted.sort(key=_guess_order(plan, guess, [a[0] for a in accepted]))
    else:
        accepted.sort(key=lambda a: rank_key(a[0], bool(a[1])))
    out = _Found()
    for x, held, res in accepted:
        out.append(_equilibrium(plan, x, held, res, id(x) not in loose, loose.get(id(x))))
    return out


def _equilibrium(plan: _Plan, x, held, res, isolated: bool, continuum) -> Equilibrium:
    eq = Equilibrium({n: float(v) for n, v in zip(plan.states, x, strict=True)})
    eq.residual = res
    eq.boundary = tuple(plan.states[i] for i in held)
    eq.isolated = isolated
    eq._continuum = continuum
    return eq


def _first_only(
    model, plan: _Plan, p: np.ndarray, started: float
) -> tuple[_Found | None, Attempts | None]:
    """``(found, None)``: the equilibrium ranked first at ``p`` when a leading row of the
    search's first pass settles it (see :func:`first_equilibrium`), as a one-element list
    with ``settled`` (kept in this process for the same values); else ``(None, attempts)``,
    the full search's when it ran to its end, or ``(None, None)`` (the caller searches)."""
    memo = model.cached("first found here", dict)
    key = repr([float(v) for v in p])
    accepted = _Accepted()
    verdict: list[bool] = []  # [isolated] of the first point of the best rank
    judged = [0]

    def judge(x: np.ndarray) -> bool:
        """True (stop) at the first accepted point of the best rank; ``verdict`` says whether
        it is isolated (else the full search decides: a continuum's point is ranked alike)."""
        judged[0] += 1
        if not _admit(plan, x, p, accepted, judged[0] - 1):
            return False
        x_, held, _ = accepted[-1]
        if not _best_rank(x_, held):
            return False
        verdict.append(_not_isolated(plan, x_, held, p) is None)
        return True

    seen = memo.get(key)
    if seen is not None:  # the leading candidates of an earlier search at these values
        any(judge(x) for x in seen)
    else:
        attempts = _numeric_candidates(plan, p, None, first=judge)
        if not attempts.settled:
            return None, attempts  # the full search, run to its end
        if verdict[-1]:
            _keep_recent(memo, key, attempts.candidates)
            _count_search_time(model, started)
    if not (verdict and verdict[-1]):
        return None, None
    if plan.code is not None:  # a start of the homotopies of _continued (generated code only)
        _remember(model, p, accepted)
    x, held, res = accepted[-1]
    out = _Found([_equilibrium(plan, x, held, res, True, None)])
    out.settled = True
    return out, None


def _continuum_ends(plan: _Plan, accepted: list, directions: dict[int, np.ndarray]) -> list:
    """Points found on one straight continuum of equilibria (their difference along its
    direction) are represented by the one with the most projected states at 0, where the
    continuum meets the boundary (an RCP queue at 0 when its gain on the queue vanishes, as its
    closed form gives; a point anywhere on the line would be linearized with another delay)."""
    loose = [a for a in accepted if id(a[0]) in directions]
    nonneg = list(plan.nonneg)

    def zeros(a) -> int:
        return int(np.sum(a[0][nonneg] == 0)) if nonneg else 0

    dropped: set[int] = set()
    for a in loose:
        if id(a[0]) in dropped:
            continue
        v = directions[id(a[0])]
        line = [b for b in loose if id(b[0]) not in dropped and _along(b[0] - a[0], v)]
        best = max(line, key=zeros)
        if zeros(best) > 0:
            dropped.update(id(b[0]) for b in line if b is not best)
    return [a for a in accepted if id(a[0]) not in dropped]


def _along(d: np.ndarray, v: np.ndarray) -> bool:
    """Whether ``d`` is 0 or parallel to ``v`` (to 1e-6 in angle)."""
    nd, nv = float(np.linalg.norm(d)), float(np.linalg.norm(v))
    if nd == 0.0:
        return True
    return nv > 0 and abs(float(d @ v)) >= (1.0 - 1e-6) * nd * nv


def _continuum(plan: _Plan, model, values, x, held, p, direction) -> str:
    """Why the equilibrium ``x`` is not isolated: the curve's direction, and the left null
    vector of the steady-state Jacobian (the combination of states behind the zero root; for
    an ODE a quantity its linearization conserves)."""
    point = _point(plan.states, x)
    along = _combination(plan.states, direction, ": ", ", ")
    conserved = ""
    free = [i for i in range(len(x)) if i not in held]
    J = plan.jac(x, p)[np.ix_(free, free)]
    if np.all(np.isfinite(J)) and not np.iscomplexobj(J) and len(free) <= 2000:
        w = np.zeros(len(x))
        w[free] = np.linalg.svd(J)[0][:, -1]
        w /= w[np.argmax(np.abs(w))]
        conserved = (
            "; its linearization has a zero root, whose left null vector is "
            f"{_combination(plan.states, w, ' ', ' + ')} (a combination of states the "
            "steady-state equations do not pin)"
        )
    return (
        f"the equilibria of model {model.name!r} at {_at(values)} are not isolated: the "
        f"steady-state equations hold along a curve through ({point}), in the direction "
        f"({along}){conserved}. An equilibrium there is not determined by the model (a "
        "conserved quantity or a state whose level nothing fixes): pin it with another "
        "equation, or give equilibrium={...} explicitly where one is needed"
    )


#: At most this many states (and equilibria) are written out in a message.
_LISTED = 8


def _at(values: Mapping[str, float]) -> str:
    """The parameter values for a message (``{...}``, or their number when there are many)."""
    if len(values) <= _LISTED:
        return str(dict(values))
    return f"the given values of its {len(values)} parameters"


def _point(states, values) -> str:
    """``"x=1, y=2"``, the first :data:`_LISTED` states, and how many more there are."""
    text = ", ".join(f"{n}={v:.6g}" for n, v in list(zip(states, values, strict=True))[:_LISTED])
    return text + (f", ... ({len(states)} states)" if len(states) > _LISTED else "")


def _combination(states, coefficients, between: str, join: str) -> str:
    """``"x: +0.707, y: -0.707"`` (``between=": "``) or ``"x - 0.5 y"``: the nonzero entries,
    by state."""
    pairs = [(n, c) for n, c in zip(states, coefficients, strict=True) if abs(c) > 1e-9]
    more = f"{join}... ({len(pairs)} states)" if len(pairs) > _LISTED else ""
    pairs = pairs[:_LISTED]
    if between == ": ":
        return join.join(f"{n}: {c:+.3g}" for n, c in pairs) + more
    text = " + ".join(n if f"{c:.3g}" == "1" else f"{c:.3g} {n}" for n, c in pairs)
    return text.replace("+ -", "- ") + more


class EquilibriumWarning(UserWarning):
    """The equilibrium :meth:`fluidnet.Model.equilibrium` returned is not the only one: it is
    one point of a continuum, or several equilibria of the same kind were found and it is the
    first in the documented order. The message says which, and how to choose."""


def chosen_equilibrium(model, found: list[Equilibrium], guess, values) -> Equilibrium:
    """The equilibrium :meth:`fluidnet.Model.equilibrium` returns: the first of ``found``.

    Warns (:class:`EquilibriumWarning`) when it is one point of a continuum (it is returned
    with ``isolated = False``: the model does not determine it, and its linearization has a
    zero root from the combination of states it leaves free), and, without a ``guess``, when
    other equilibria of the same kind were found (both satisfy ``f = 0``, or both are held at
    the boundary by the projection): the order that chose it (no negative state first, fewer
    zero states first, otherwise the order found) is a convention, not a property of the
    model.
    """
    first = found[0]
    if not first.isolated:
        reason = first._continuum or f"the equilibrium of model {model.name!r} is not isolated"
        warnings.warn(
            EquilibriumWarning(
                f"{reason}. equilibrium() returns that point flagged isolated=False: the zero "
                "root of its linearization says nothing about stability (equilibrium(all=True) "
                "raises)"
            ),
            stacklevel=3,
        )
    # other points of a continuum are not rivals: the warning above names the continuum
    rivals = [e for e in found[1:] if e.isolated and bool(e.boundary) == bool(first.boundary)]
    if guess is not None or not rivals:
        return first
    negative = any(v < 0 for v in rivals[0].values()) and not any(v < 0 for v in first.values())
    zeros = sum(v == 0 for v in first.values()) < sum(v == 0 for v in rivals[0].values())
    rule = (
        "no negative state first"
        if negative
        else "fewer zero states first"
        if zeros
        else "neither has a negative state nor fewer zeros: the order they were found"
    )
    shown = [first, *rivals][:_LISTED]
    differ = [n for n in first if len({e[n] for e in shown}) > 1] or list(first)
    listed = "; ".join(
        _point(differ, [e[n] for n in differ]) + (" (returned)" if e is first else "")
        for e in shown
    )
    if len(rivals) + 1 > len(shown):
        listed += f"; and {len(rivals) + 1 - len(shown)} more"
    if len(differ) > _LISTED:
        listed += f" ({len(differ)} states differ between them)"
    kind = "held at the boundary by the projection" if first.boundary else "with f = 0"
    warnings.warn(
        EquilibriumWarning(
            f"model {model.name!r} has {len(rivals) + 1} equilibria {kind} at {_at(values)}: "
            f"{listed}. equilibrium() returned the first by its order ({rule}); give "
            "guess={state: value} near the one you mean (this warning is then not raised), or "
            "use equilibrium(all=True) for the list"
        ),
        stacklevel=3,
    )
    return first


def _guess_order(plan: _Plan, guess: Mapping[str, float], points: list[np.ndarray]):
    """Sort key for ``guess``: equilibria without negative states first (unless the guess has a
    negative value itself: then it asks for one), then by the distance to the guess over the
    states it names, each state in units of its own scale.

    The scale of a state is ``|guess|``, or for a state guessed at 0 the largest ``|value|`` of
    the equilibria found (1 if all are 0): states in bytes and in packets weigh alike.
    """
    named = [i for i, n in enumerate(plan.states) if n in guess]
    g = np.array([float(guess[plan.states[i]]) for i in named])
    spread = np.max(np.abs(np.array(points)[:, named]), axis=0) if points else np.zeros(len(g))
    scale = np.where(g != 0, np.abs(g), np.where(spread > 0, spread, 1.0))
    signs = not np.any(g < 0)

    def key(a):
        x = a[0]
        return (signs and bool(np.any(x < 0)), float(np.linalg.norm((x[named] - g) / scale)))

    return key


def _residual(plan: _Plan, x: np.ndarray, p: np.ndarray, held) -> tuple[float, np.ndarray]:
    """Largest relative residual over the equations that must vanish, and all residuals."""
    r = plan.residuals(x, p)
    scale = plan.scales(x, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(r == 0, 0.0, np.abs(r) / scale)
    free = [i for i in range(len(r)) if i not in held]
    return (float(np.max(rel[free])) if free else 0.0), r


def _polish(plan: _Plan, x: np.ndarray, p: np.ndarray, held) -> tuple[np.ndarray, float]:
    """Newton's method on the equations of the states not held at 0; never makes it worse.

    Where the plain iteration stops above ``RESIDUAL_TOL`` (a solution whose components span
    many orders of magnitude: ``lstsq`` solves to an error relative to the largest of them), it
    is continued with the equations scaled by their sizes and the states by theirs.
    """
    free = [i for i in range(len(x)) if i not in held]
    best, best_res = x, _residual(plan, x, p, held)[0]
    if not free or best_res <= 1e-15:
        return best, best_res  # already at the rounding floor
    if plan.large:  # the sparse Newton iteration (where it stopped short), from this point
        if best_res <= RESIDUAL_TOL:
            return best, best_res
        for y in plan.sparse_form.solve(x[None, :], p):
            res = _residual(plan, y, p, held)[0]
            if res < best_res:
                best, best_res = y, res
        return best, best_res
    best, best_res = _polish_plain(plan, x, p, held, free, best, best_res)
    if best_res > RESIDUAL_TOL:
        best, best_res = _polish_scaled(plan, best, p, held, free, best_res)
    return best, best_res


def _polish_scaled(plan, x, p, held, free, res) -> tuple[np.ndarray, float]:
    """Newton's method on the scaled equations (rows by their sizes: the largest term, or for a
    large model the sensitivity), each step an LU solve (componentwise accurate where the
    Jacobian is triangular, as in a chain; least squares where it is singular); never makes it
    worse. From a point whose small states are wrong in every digit, each step gains about 16
    digits of them: it keeps going while any of the last few steps improved."""
    best, best_res = x, res
    y = x.copy()
    stale = 0
    for _ in range(60):
        r = plan.residuals(y, p)[free]
        J = plan.jac(y, p)[np.ix_(free, free)]
        if not (np.all(np.isfinite(J)) and np.all(np.isfinite(r))) or np.iscomplexobj(J):
            break
        rows = plan.scales(y, p)[free]
        rows = np.where(rows > 0, rows, 1.0)
        A, b = J / rows[:, None], r / rows
        try:
            step = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(A, b, rcond=None)[0]
        if not np.all(np.isfinite(step)):
            break
        y = y.copy()
        y[free] -= step
        res = _residual(plan, y, p, held)[0]
        if not np.isfinite(res):
            break
        if res < best_res:
            best, best_res, stale = y, res, 0
        else:
            stale += 1
        if best_res <= 1e-15 or stale >= 4:
            break
    return best, best_res


def _polish_plain(plan, x, p, held, free, best, best_res) -> tuple[np.ndarray, float]:
    """Newton's method, steps by ``lstsq`` of the Jacobian as it is."""
    y = x.copy()
    for _ in range(8):
        r = plan.residuals(y, p)[free]
        J = plan.jac(y, p)[np.ix_(free, free)]
        if not (np.all(np.isfinite(J)) and np.all(np.isfinite(r))) or np.iscomplexobj(J):
            break
        step = np.linalg.lstsq(J, r, rcond=None)[0]
        y = y.copy()
        y[free] -= step
        res = _residual(plan, y, p, held)[0]
        if not np.isfinite(res):
            break
        if res >= best_res:
            break  # no progress: the rounding floor
        best, best_res = y, res
        if res <= 1e-15:
            break
    return best, best_res


def _not_isolated(plan: _Plan, x: np.ndarray, held, p: np.ndarray) -> np.ndarray | None:
    """A direction along which the steady states form a curve through ``x``, or ``None``.

    Only where the Jacobian of the free equations is singular: a step of ``1e-3`` along its
    null vector is projected back onto the solution set (minimum-norm Gauss-Newton); on a curve
    the projection stays about that far away, at an isolated (even a multiple) solution it
    returns to ``x``.
    """
    free = [i for i in range(len(x)) if i not in held]
    if not free:
        return None
    if plan.large and plan.sparse_form.well_conditioned(x, p, free):
        return None  # regular: isolated (the dense test below is for the rare singular case)
    J = plan.jac(x, p)[np.ix_(free, free)]
    if not np.all(np.isfinite(J)) or np.iscomplexobj(J):
        return None
    sv = np.linalg.svd(J, compute_uv=False)
    if sv[0] == 0.0:
        v = np.zeros(len(free))
        v[0] = 1.0
    elif sv[-1] > 1e-10 * sv[0]:
        return None
    else:
        v = np.linalg.svd(J)[2][-1]
    delta = 1e-3 * (1.0 + float(np.linalg.norm(x)))
    y = x.copy()
    y[free] += delta * v
    for _ in range(30):
        r = plan.residuals(y, p)[free]
        Jy = plan.jac(y, p)[np.ix_(free, free)]
        if not (np.all(np.isfinite(r)) and np.all(np.isfinite(Jy))):
            return None
        step = np.linalg.lstsq(Jy, r, rcond=1e-12)[0]
        y[free] -= step
        if np.linalg.norm(step) <= 1e-14 * (1.0 + np.linalg.norm(y)):
            break
    res = _residual(plan, y, p, held)[0]
    if res <= RESIDUAL_TOL and np.linalg.norm(y - x) >= 0.5 * delta:
        full = np.zeros(len(x))
        full[free] = v
        return full
    return None


class _Accepted(list):
    """The ``(x, held, residual)`` triples of :func:`_admissible`, with ``sources``: the index
    among the candidates of the one each triple was polished from."""

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[int] = []


def _admissible(plan: _Plan, candidates, p) -> _Accepted:
    """Keep real, finite candidates that solve the projected steady-state problem where the
    right-hand sides are defined; polish them; dedupe.

    Returns ``(x, states held at 0 by the projection, relative residual)`` triples (their
    candidates' indices in ``sources``: only those candidates count, see :func:`_memorize`).
    """
    out = _Accepted()
    for k, x in enumerate(candidates):
        _admit(plan, x, p, out, k)
    return out


def _admit(plan: _Plan, x, p, out: _Accepted, k: int) -> bool:
    """:func:`_admissible` of one more candidate ``x`` (index ``k``): appended to ``out`` when
    it is admissible and not a duplicate of one there; whether it was."""
    nonneg = plan.nonneg
    x = np.asarray(x, dtype=float)
    if not np.all(np.isfinite(x)):
        return False
    big = max(1.0, float(np.max(np.abs(x))))
    if any(x[i] < -1e-12 * big for i in nonneg):
        return False
    x = x.copy()
    for i in nonneg:
        if abs(x[i]) <= 1e-12 * big:
            x[i] = 0.0
    held = _held(plan, x, p)
    x, res = _polish(plan, x, p, held)
    if res > RESIDUAL_TOL or not plan.defined(x, p) or _flat(plan, x, p, held):
        return False
    if any(x[i] < -1e-12 * big for i in nonneg):
        return False
    if any(np.all(np.abs(x - y) <= 1e-12 + 1e-9 * np.abs(y)) for y, _, _ in out):
        return False
    out.append((x, held, res))
    out.sources.append(k)
    return True


#: An equation whose sensitivity to the states is below this fraction of its largest term is
#: flat at the point (see :func:`_flat`).
FLAT_TOL = 1e-13


def _flat(plan: _Plan, x: np.ndarray, p: np.ndarray, held) -> bool:
    """Whether an equation that must vanish does not depend on the states at ``x`` but
    through terms that cancel: ``sum_j |df_i/dx_j| w_j`` (``w_j = |x_j|``, or 1 for a state at
    0) is below :data:`FLAT_TOL` times its largest term. Its residual is then zero only by
    rounding: ``W/d - W/(b/c + d) + w`` at ``b = 0`` rounds to 0 at ``W = 1e16``, a point "at
    infinity" that Newton's method reaches by steps driven by rounding noise. (At a root of
    multiplicity ``m`` the ratio is about ``eps^((m - 1)/m)``: 1e-8 for a double root.)"""
    if plan.large:
        return False
    free = [i for i in range(len(x)) if i not in held]
    J = plan.jac(x, p)
    if not np.all(np.isfinite(J)) or np.iscomplexobj(J):
        return False
    w = np.where(x != 0, np.abs(x), 1.0)
    sens = np.abs(J) @ w
    scale = plan.scales(x, p)
    return bool(np.any((scale[free] > 0) & (sens[free] < FLAT_TOL * scale[free])))


def _held(plan: _Plan, x: np.ndarray, p: np.ndarray) -> tuple[int, ...]:
    """The projected states at 0 whose equation is negative there: held by the projection."""
    r = plan.residuals(x, p)
    return tuple(
        i
        for i in plan.nonneg
        if x[i] == 0.0 and r[i] < 0 and abs(r[i]) > RESIDUAL_TOL * max(1.0, plan.scale(i, x, p))
    )


def _plainly_equilibrium(model, x: np.ndarray, p: np.ndarray) -> bool:
    """True when ``x`` is clearly a steady state: no projected state negative, the right-hand
    sides as written finite and within ``GIVEN_TOL`` of zero with every lag at the current
    value. Built without the equilibrium plan (whose symbolic expansion, Jacobian and common
    subexpressions take tens of seconds for a model of a thousand states); any other case is
    decided by the plan, so the verdict is the plan's."""

    def build():
        form = model.form
        zs = [lag.symbol for lag in form.lags]
        raw = to_numpy((form.x, zs, form.p), form.rhs, plain=True)
        return raw, [lag.state for lag in form.lags], tuple(form.nonnegative)

    raw, lag_states, nonneg = model.cached("equilibrium check", build)
    if any(x[i] < 0 for i in nonneg):
        return False
    r = raw(x, x[lag_states] if lag_states else np.zeros(0), p)
    return bool(np.all(np.isfinite(r)) and np.all(np.abs(r) <= GIVEN_TOL))


def state_values(
    states: tuple[str, ...], given: Any, what: str, *, complete: bool = True
) -> dict[str, float]:
    """``{state: float}`` from a caller's ``{state: number}`` (``equilibrium=``, ``guess=``).

    Names are read as identifiers (NFKC-normalized, like the model's own); values must be real,
    finite numbers (text is never evaluated).

    Raises
    ------
    ModelError
        For something other than a dict, a name that is not a state, two spellings of one name,
        a missing state (with ``complete``), or a value that is not a real finite number (the
        message names the state and the value).
    """
    from numbers import Real

    from .symbols import collision, given_name, identifier

    if not isinstance(given, Mapping):
        raise ModelError(f"{what} must be a dict {{state: number}}, not {type(given).__name__}")
    out: dict[str, float] = {}
    spelled: dict[str, str] = {}
    for key, v in given.items():
        name = given_name(key, "state")
        n = identifier(name)
        if n in spelled:
            raise collision(spelled[n], name, "state", where=what)
        spelled[n] = name
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (Real, np.number, sympy.Expr)):
            raise ModelError(f"{what} value of state {name!r} is {v!r}: not a real number")
        try:
            value = float(v)
        except (TypeError, ValueError) as exc:
            raise ModelError(f"{what} value of state {name!r} is {v!r}: not a real number") from exc
        if not np.isfinite(value):
            raise ModelError(f"{what} value of state {name!r} is {value}: not finite")
        out[n] = value
    unknown = [spelled[n] for n in out if n not in states]
    if unknown:
        raise ModelError(f"{what} names unknown states {unknown} (states: {', '.join(states)})")
    missing = [n for n in states if n not in out]
    if complete and missing:
        raise ModelError(f"{what} misses states {missing}")
    return {n: out[n] for n in states if n in out}


def check_equilibrium(model, eq: Mapping[str, float], values: Mapping[str, float]) -> None:
    """Refuse a given point that is not an equilibrium of ``model`` at ``values``.

    Raises
    ------
    AnalysisError
        When a projected state is negative, the right-hand side is undefined there, or a
        steady-state equation is violated by more than ``GIVEN_TOL`` relative to its terms (the
        message names the state and the residual).
    """
    x = np.array([float(eq[n]) for n in model.state_names], dtype=float)
    p = np.array([values[k] for k in model.param_names], dtype=float)
    if "equilibrium plan" not in model._cache and _plainly_equilibrium(model, x, p):
        return
    plan = _plan(model)
    for i in plan.nonneg:
        if x[i] < 0:
            raise AnalysisError(
                f"equilibrium={dict(eq)} is not admissible: the projected state "
                f"{plan.states[i]!r} = {x[i]:g} is negative"
            )
    if not plan.defined(x, p):
        raise AnalysisError(
            f"equilibrium={dict(eq)}: the right-hand side of model {model.name!r} is undefined "
            "there (a 0/0 or a non-finite value)"
        )
    r = plan.residuals(x, p)
    for i, ri in enumerate(r):
        if plan.states[i] in model.nonnegative and x[i] == 0.0 and ri < 0:
            continue  # held at 0 by the projection
        if abs(ri) <= GIVEN_TOL:
            continue  # within the tolerance of any scale (it is at least 1)
        scale = max(1.0, plan.scale(i, x, p))
        if not abs(ri) <= GIVEN_TOL * scale:
            raise AnalysisError(
                f"equilibrium={dict(eq)} is not an equilibrium of model {model.name!r} at "
                f"{dict(values)}: d{plan.states[i]}/dt = {ri:.6g} there (relative residual "
                f"{abs(ri) / scale:.2g} > {GIVEN_TOL:g}); use model.equilibrium(guess=...) to "
                "find the nearby one"
            )


def _starts(plan: _Plan, guess) -> list[np.ndarray]:
    """Starting points of the numeric search: the guess, constant vectors of magnitudes 1e-2
    to 1e5, and random ones (fixed seed)."""
    n = len(plan.states)
    starts: list[np.ndarray] = []
    if guess is not None:
        starts.append(np.array([guess.get(s, 1.0) for s in plan.states], dtype=float))
    for mag in (1.0, 10.0, 0.1, 100.0, 1e3, 1e4, 0.01, 1e5):
        starts.append(np.full(n, mag))
    rng = np.random.default_rng(0)
    for _ in range(8):
        starts.append(10.0 ** rng.uniform(-2, 4, size=n))
    return starts


def _numeric_candidates(plan: _Plan, p: np.ndarray, guess, first=None) -> Attempts:
    """The numeric search at ``p``: points where it converged, and what it tried (``first``:
    see :func:`~fluidnet.symbolic.rootsearch.search`; generated code and large models only)."""
    n = len(plan.states)
    if plan.code is not None:
        g = None
        if guess is not None:
            g = np.array([guess.get(s, 1.0) for s in plan.states], dtype=float)
        return search(plan.code, p, plan.subsets, plan.states, g, active=plan.active, first=first)
    starts = _starts(plan, guess)
    out = Attempts()
    if plan.large:
        if plan.nonneg:  # the same starts with the projected states at 0 (held if pushed down)
            idx = list(plan.nonneg)
            for x0 in list(starts):
                y0 = x0.copy()
                y0[idx] = 0.0
                starts.append(y0)
        leading = None if first is None else InOrder(first, converged=bool)
        points = plan.sparse_form.solve(np.array(starts), p, until=leading)
        out.methods.append(f"sparse damped Newton from {len(starts)} starts")
        if leading is not None and leading.settled:
            out.candidates, out.settled = leading.seen.candidates, True
            return out
        out.add(np.array(points).reshape(-1, n))
        return out
    from scipy import optimize  # here, not at module level: keeps `import fluidnet` light

    for subset in plan.subsets:
        free = [i for i in range(n) if i not in subset]
        if not free:
            out.add(np.zeros((1, n)))
            continue

        def reduced(v, free=free):
            x = np.zeros(n)
            x[free] = v
            return plan.residuals(x, p)[free]

        for x0 in starts:
            with np.errstate(all="ignore"):
                try:
                    sol = optimize.root(reduced, x0[free], method="hybr")
                except (ValueError, ZeroDivisionError, FloatingPointError):
                    continue
            if sol.success and np.all(np.isfinite(sol.x)):
                x = np.zeros(n)
                x[free] = sol.x
                out.add(x[None, :])
    out.methods.append(
        f"scipy's root (hybr) from {len(starts)} starts in each of {len(plan.subsets)} boundary "
        "configurations"
    )
    return out


#: Parameter points whose search results a model's record in the store keeps.
RECALLED = 32
#: Parameter sets whose search results a process keeps in memory (see :func:`_memorize`).
SEARCHED_HERE = 64


def _memo_entry(p: np.ndarray, guess, states) -> list:
    g = None if guess is None else [guess.get(s) for s in states]
    return [[float(v) for v in p], g]


def _recalled(model, plan: _Plan, p: np.ndarray, guess) -> list[np.ndarray] | None:
    """The points the numeric search found at exactly these parameter values (and guess), kept
    in the model's record by an earlier process (a large model's too: its record holds only
    them); checked again like any candidate by the caller."""
    if plan.code is None and not plan.large:
        return None
    want = _memo_entry(p, guess, plan.states)
    memo = model.cached("searched here", dict)
    seen = memo.get(repr(want))
    if seen is None:
        seen = _same_class(model, memo, p, want[1])
    if seen is not None:
        return [x.copy() for x in seen]
    entries = record(model).get("recalled", ())
    for entry in entries:
        if list(entry[:2]) == want:
            return [np.array(x, dtype=float) for x in entry[2]]
    return _recorded_same_class(model, entries, p, want[1])


def _recorded_same_class(model, entries, p: np.ndarray, g) -> list[np.ndarray] | None:
    """The points of a search kept in the record (by an earlier process) at values that differ
    from ``p`` only in the parameters the equilibria do not depend on, as :func:`_same_class`
    finds them in this process: a chart over a gain and a delay reads the search
    ``equilibria()`` made at the model's defaults (0.3 s at 100 states)."""
    kept = [e for e in entries if e[1] == g and len(e[0]) == p.size]
    if not kept:  # (the row scaling is not built for nothing: a first process has no entry)
        return None
    at = _first_of_class(model, p, np.array([e[0] for e in kept], dtype=float).T)
    return None if at is None else [np.array(x, dtype=float) for x in kept[at][2]]


def _first_of_class(model, p: np.ndarray, others: np.ndarray) -> int | None:
    """The first column of ``others`` ``(m, N)`` whose parameter values differ from ``p`` only
    in parameters the equilibria do not depend on (the same key of
    :mod:`fluidnet.symbolic.rowscaling`, all columns in one evaluation); ``None`` when none
    does or when the model has no such parameters."""
    scaling = row_scaling(model)
    key = scaling.key(p) if scaling.any_free else None
    if key is None:
        return None
    return next((i for i, other in enumerate(scaling.keys(others)) if other == key), None)


def _memorize(model, plan: _Plan, p: np.ndarray, guess, points: list[np.ndarray]) -> None:
    """Keep the numeric search's points at ``p`` that gave the equilibria (:func:`_productive`)
    in the model's record (the first search of a model in a process only: a sweep point by
    point does not rewrite the record every time).
    Every search's points are also kept in this process (the last :data:`SEARCHED_HERE`
    parameter sets): an analysis that returns to values it solved before (a critical value
    after a chart, each call of a repeated analysis) checks them again instead of searching."""
    memo = model.cached("searched here", dict)
    entry = _memo_entry(p, guess, plan.states)
    _keep_recent(memo, repr(entry), points)
    at = model.cached("searched at", dict)
    at[repr(entry)] = (p.copy(), entry[1])
    for k in [k for k in at if k not in memo]:
        del at[k]
    if model._cache.get("recalled written"):
        return
    model._cache["recalled written"] = True
    entry = _memo_entry(p, guess, plan.states) + [[[float(v) for v in x] for x in points]]
    kept = [e for e in record(model).get("recalled", ()) if list(e[:2]) != entry[:2]]
    keep(model, "recalled", (kept + [entry])[-RECALLED:])


def _same_class(model, memo: dict, p: np.ndarray, g) -> list[np.ndarray] | None:
    """The points kept in this process by a search at other values of only the parameters the
    equilibria do not depend on (the same equations up to positive factors of their rows:
    :mod:`fluidnet.symbolic.rowscaling`), the newest first; ``None`` when there are none."""
    if not memo:
        return None
    at = model.cached("searched at", dict)
    kept = [k for k in reversed(list(memo)) if k in at and at[k][1] == g]
    if not kept:
        return None
    first = _first_of_class(model, p, np.stack([at[k][0] for k in kept], axis=1))
    return None if first is None else memo[kept[first]]


def _keep_recent(memo: dict, key: str, points) -> None:
    """``memo[key] = points`` (copies), the last :data:`SEARCHED_HERE` keys kept."""
    memo.pop(key, None)
    memo[key] = [np.array(x, dtype=float) for x in points]
    trim_oldest(memo, SEARCHED_HERE)


def _productive(checked: list, accepted: _Accepted, attempts: Attempts) -> list[np.ndarray]:
    """The search's points (of ``attempts``) that an equilibrium of ``accepted`` was polished
    from, in their order: checked again at the same values (see :func:`_recalled`), they give
    the same list, without polishing the points that were refused (a boundary configuration
    whose state is not held at 0, a duplicate) once more."""
    found = {id(x) for x in attempts.candidates}
    return [checked[k] for k in accepted.sources if id(checked[k]) in found]


def _held_mask(n: int, held) -> np.ndarray:
    mask = np.zeros(n, dtype=bool)
    mask[list(held)] = True
    return mask


def _remember(model, p: np.ndarray, accepted) -> None:
    """Keep the first equilibrium found at ``p`` as a starting point of continuation."""
    known = model.cached("solved points", list)
    x, held, _ = accepted[0]
    known.append((p.copy(), x.copy(), _held_mask(len(x), held)))
    del known[:-REMEMBERED]


def _continued(plan: _Plan, model, p: np.ndarray, guess, attempts: Attempts) -> Attempts:
    """Homotopies to ``p`` (see :func:`fluidnet.symbolic.rootsearch.homotopy`): from the
    equilibria found at other parameter points in this process, else from one at the model's
    own parameter values, and the global Newton homotopy."""
    code = plan.code
    assert code is not None
    n = len(plan.states)
    known = list(model.cached("solved points", list))
    defaults = [model.params[k].value for k in model.param_names]
    if not known and all(v is not None for v in defaults):
        p0 = np.array(defaults, dtype=float)
        if not np.array_equal(p0, p):
            found = search(code, p0, plan.subsets, plan.states, active=plan.active)
            for x, held, _ in _admissible(plan, found.candidates, p0)[:4]:
                known.append((p0, x, _held_mask(n, held)))
    if known:  # the nearest first, in parameters relative to their size
        size = np.maximum(np.abs(p), 1e-300)
        known.sort(key=lambda k: float(np.max(np.abs(k[0] - p) / size)))
        known = known[:4]
    g = None
    if guess is not None:
        g = np.array([guess.get(s, 1.0) for s in plan.states], dtype=float)
    return homotopy(code, p, plan.subsets, known, attempts, g, active=plan.active)
