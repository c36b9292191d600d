"""Closed-form equilibria of a model: sympy's solution of the steady-state equations, bounded.

Solving is tried only for rational steady-state equations in at most
:data:`SYMBOLIC_MAX_STATES` states of total degree at most :data:`SYMBOLIC_MAX_DEGREE` (a
polynomial of higher degree has no useful closed form: Abel-Ruffini), and even then sympy can
run for minutes (a law of two TCP classes over two RED links: 14 minutes), so it runs within a
budget of CPU time (:func:`~fluidnet.symbolic.timebox.within_cpu_time`). Whatever the outcome
(solutions, none, the budget spent) is kept in the store of model pieces
(:mod:`fluidnet.symbolic.steadycode`) with numpy code for the solutions, so a later process pays
neither the solving nor the printing.

The equilibrium search (:mod:`fluidnet.symbolic.equilibrium`) uses the closed forms when they
are known already, or when they are trivial (:func:`cheap_to_solve`: one polynomial in one
state that is a binomial or has numbers for coefficients); otherwise it searches numerically
and closed forms are solved only where an exact expression is asked for (the Jacobians with
symbolic parameters of :func:`fluidnet.symbolic.linearize.linearize`, loop-gain expressions),
and kept, so that later searches of the model use them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sympy

from .npsource import Unprintable, function_source
from .steadycode import boundary_subsets, keep, record, run_source, steady_state_equations
from .timebox import TimeBoxExpired, within_cpu_time

__all__ = [
    "ClosedForms",
    "SYMBOLIC_CPU_SECONDS",
    "SYMBOLIC_MAX_DEGREE",
    "SYMBOLIC_MAX_STATES",
    "cheap_to_solve",
    "closed_forms",
    "skip_solving",
]

#: Models of more states are not solved symbolically.
SYMBOLIC_MAX_STATES = 4
#: Steady-state polynomials of higher total degree in the states are solved numerically: their
#: closed-form roots (radicals, roots of unity as trigonometric expressions) are of no use, and
#: sympy spends tens of seconds verifying them (Kelly's law with the price (x/c)^10: 25 s).
SYMBOLIC_MAX_DEGREE = 4
#: CPU seconds sympy may spend solving (and simplifying) one model's steady state.
SYMBOLIC_CPU_SECONDS = 5.0


@dataclass
class ClosedForms:
    """The closed-form equilibria of a model (or why there are none).

    Attributes
    ----------
    status : str
        ``"skipped"`` (recorded by the search: not cheap by structure, not solved yet),
        ``"found"``, ``"none"`` (not rational, too many states, a degree above
        :data:`SYMBOLIC_MAX_DEGREE`, sympy gave up, or a continuum) or ``"expired"`` (the
        budget of :data:`SYMBOLIC_CPU_SECONDS` ran out).
    texts : list of dict
        Every solution as ``{state: srepr}`` plus ``"__boundary__"``: the projected states held
        at 0.
    functions : list of callable
        For every solution, ``g(p)``: the states at parameters ``p`` (``(m,)`` or ``(m, K)``),
        complex (radicals), ``(n,) + points``; empty when a solution has no numpy form.
    """

    status: str
    texts: list[dict] = field(default_factory=list)
    functions: list[Callable[..., np.ndarray]] = field(default_factory=list)

    def expressions(self) -> list[dict]:
        """The solutions as ``{state: sympy.Expr}`` plus ``"__boundary__"`` (a tuple)."""
        out = []
        for text in self.texts:
            sol: dict = {k: sympy.sympify(v) for k, v in text.items() if k != "__boundary__"}
            sol["__boundary__"] = tuple(text["__boundary__"])
            out.append(sol)
        return out


def _is_rational(eqs, xs) -> bool:
    bad = (sympy.Piecewise, sympy.Heaviside, sympy.Max, sympy.Min, sympy.sign, sympy.Abs)
    return all(e.is_rational_function(*xs) and not e.has(*bad) for e in eqs)


def _degree(eqs, xs) -> int:
    """The largest total degree in ``xs`` of the polynomial equations ``eqs``."""
    return max((sympy.Poly(e, *xs).total_degree() for e in eqs if e != 0), default=0)


def _numerators(form, eqs, subset) -> tuple[list, list]:
    """The free states and the numerators of their equations with ``subset`` held at 0."""
    fixed = {form.x[i]: sympy.S.Zero for i in subset}
    free = [x for i, x in enumerate(form.x) if i not in subset]
    sub = [sympy.together(eqs[i].xreplace(fixed)) for i in range(len(eqs)) if i not in subset]
    return free, [sympy.fraction(e)[0] for e in sub]


def cheap_to_solve(form) -> bool:
    """Whether the search solves the steady state of ``form`` symbolically before searching:
    in every boundary configuration, at most one rational equation in one state, a polynomial
    of degree at most :data:`SYMBOLIC_MAX_DEGREE` that is a binomial (``a x^k + b``) or has
    numbers for coefficients. (Its roots are then exact: ``x' = -x^3`` has the triple root
    ``0``, which Newton's method only approaches. Anything more is searched numerically first:
    even a linear system costs sympy's ``solve`` 70 ms of imports in a new process.)"""
    if len(form.x) != 1:
        return False
    eqs = steady_state_equations(form)
    if not _is_rational(eqs, form.x):
        return False
    for subset in boundary_subsets(form):
        free, nums = _numerators(form, eqs, subset)
        polys = [sympy.Poly(e, *free) for e in nums if e != 0] if free else []
        for poly in polys:
            numbers = all(c.is_number for c in poly.coeffs())
            if poly.degree() > SYMBOLIC_MAX_DEGREE or not (len(poly.terms()) <= 2 or numbers):
                return False
    return True


def _solve(form) -> list[dict[str, sympy.Expr]] | None:
    """sympy's solutions in every boundary configuration, or ``None`` (see the module)."""
    if len(form.x) > SYMBOLIC_MAX_STATES:
        return None  # before expanding the equations of a large model
    eqs = steady_state_equations(form)
    if not _is_rational(eqs, form.x):
        return None
    result: list[dict[str, sympy.Expr]] = []
    for subset in boundary_subsets(form):
        free, sub_eqs = _numerators(form, eqs, subset)
        if free and _degree(sub_eqs, free) > SYMBOLIC_MAX_DEGREE:
            return None  # no useful closed form (Abel-Ruffini): the numeric search
        if free:
            try:
                sols = sympy.solve(sub_eqs, free, dict=True)
            except (NotImplementedError, sympy.PolynomialError):
                return None
        else:
            sols = [{}] if all(sympy.simplify(e) == 0 for e in sub_eqs) else []
        for sol in sols:
            full: dict = {form.states[i]: sympy.S.Zero for i in subset}
            for i, x in enumerate(form.x):
                if i not in subset:
                    full[form.states[i]] = sympy.simplify(sol.get(x, x))
            if any(v.free_symbols & set(form.x) for v in full.values()):
                continue  # a continuum of equilibria: not a point
            full["__boundary__"] = tuple(subset)
            result.append(full)
    return result


def _source(form, status: str, sols: list[dict] | None) -> str:
    """The stored piece: the outcome, the solutions' ``srepr`` and numpy code for each (none
    when one of them has no numpy form: the search is then numeric)."""
    texts = []
    lines = [f"# closed-form equilibria of model {form.name!r}, generated by fluidnet"]
    lines.append(f"STATUS = {status!r}")
    functions = []
    for k, sol in enumerate(sols or []):
        text = {n: sympy.srepr(sol[n]) for n in form.states}
        text["__boundary__"] = list(sol["__boundary__"])  # type: ignore[assignment]
        texts.append(text)
        outputs = [sol[n] for n in form.states]
        try:
            functions.append(
                function_source(f"closed_{k}", (form.p,), outputs, complex_values=True)
            )
        except Unprintable:
            functions = None
            break
    if functions is None:
        functions = []
    lines.append(f"TEXTS = {texts!r}")
    lines.append(f"PRINTED = {len(functions)}")
    return "\n".join(lines + functions) + "\n"


def _from_namespace(ns: dict) -> ClosedForms:
    texts = list(ns["TEXTS"])
    return ClosedForms(str(ns["STATUS"]), texts, [ns[f"closed_{k}"] for k in range(ns["PRINTED"])])


def closed_forms(model, *, solve: bool = True, budget: float | None = None) -> ClosedForms | None:
    """The closed-form equilibria of ``model``: known in this process, kept in the store, or
    (with ``solve``) solved now within ``budget`` seconds of CPU (default
    :data:`SYMBOLIC_CPU_SECONDS`) and kept.

    Returns
    -------
    ClosedForms or None
        ``None`` only without ``solve`` when nothing is known yet.
    """
    known = model._cache.get("closed forms")
    if known is not None:
        return known
    form = model.form
    label = f"closed forms of {form.name}"
    source = record(model).get("closed")
    if isinstance(source, str):
        try:
            found = _from_namespace(run_source(source, label))
        except Exception:  # noqa: BLE001 - a stale or foreign piece: solved again
            found = None
        if found is not None and (found.status != "skipped" or not solve):
            if found.status != "skipped":
                return model.cached("closed forms", lambda: found)
            return found
    if not solve:
        return None
    try:
        limit = SYMBOLIC_CPU_SECONDS if budget is None else min(budget, SYMBOLIC_CPU_SECONDS)
        sols = within_cpu_time(lambda: _solve(form), limit)
        status = "none" if sols is None else "found"
    except TimeBoxExpired:
        sols, status = None, "expired"
    source = _source(form, status, sols)
    found = _from_namespace(run_source(source, label))
    keep(model, "closed", source)
    return model.cached("closed forms", lambda: found)


def skip_solving(model) -> None:
    """Record in the store that the search of ``model`` does not solve it symbolically (not
    cheap by structure), so that a later process does not test the structure again; a
    :func:`closed_forms` that must solve still does."""
    keep(model, "closed", _source(model.form, "skipped", None))
