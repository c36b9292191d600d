"""A model's steady-state equations as generated numpy code, kept between processes.

The equilibrium search of a model of up to :data:`~fluidnet.symbolic.equilibrium.DENSE_MAX_STATES`
states evaluates, at many points at once (starts, parameter points):

* the steady-state residuals ``f(x, p)`` (every delayed value equal to the current one, the
  equations as written) and the nonzero entries of their Jacobian ``df/dx`` (differentiated
  forward through shared subexpressions: :func:`~fluidnet.symbolic.jacobians.forward_jacobian`),
  in one function;
* every term of every expanded equation (the scale of an equation is its largest term: see
  :func:`~fluidnet.symbolic.equilibrium.equilibria`);
* the right-hand sides as written, delayed values as separate arguments (undefined where the
  steady-state equations had a factor cancelled).

They are written as Python source over numpy (:mod:`fluidnet.symbolic.npsource`; a C
compile costs more than a small law's whole search), each function compiled when first used,
and kept in the model's *record* (:func:`record`, :func:`keep`) in the store of model pieces
(:mod:`fluidnet.stores`: the compile cache, verified before it is run) under a digest of the
model's structure and of the generator: a second process reads them instead of differentiating
and printing again. The record also keeps the closed-form equilibria
(:mod:`fluidnet.symbolic.closedforms`) and the numeric search's results at the parameter values
searched before (:mod:`fluidnet.symbolic.equilibrium`).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import sympy

from ..errors import FluidnetError, ModelError
from ..stores import provided
from .jacobians import forward_jacobian
from .npsource import NAMESPACE_VERSION, Unprintable, function_source, namespace

__all__ = [
    "ENUMERATED_MAX",
    "SteadyCode",
    "boundary_subsets",
    "form_digest",
    "generator_digest",
    "keep",
    "record",
    "load_piece",
    "save_piece",
    "run_source",
    "steady_code",
    "steady_state_equations",
    "structure_text",
]

#: The modules whose source decides the steady-state code (part of its key).
STEADY_GENERATOR = ("npsource.py", "steadycode.py", "jacobians.py")


@lru_cache(maxsize=4)
def generator_digest(modules: tuple[str, ...]) -> str:
    """A digest of the source of ``modules`` (files of this package): a change of the
    generator makes new keys."""
    here = Path(__file__).parent
    data = b"".join((here / f).read_bytes() for f in modules)
    return hashlib.sha256(NAMESPACE_VERSION.encode() + data).hexdigest()[:16]


def structure_text(e: sympy.Basic, atoms: dict) -> str:
    """A deterministic description of an expression tree: ``srepr`` of its atoms joined by the
    classes of its nodes in sympy's canonical argument order (the same in every process)."""
    if e.is_Atom:
        text = atoms.get(e)
        if text is None:
            text = atoms[e] = sympy.srepr(e)
        return text
    return f"{type(e).__name__}({','.join(structure_text(a, atoms) for a in e.args)})"


def form_digest(form, generator: tuple[str, ...] = STEADY_GENERATOR) -> str:
    """A digest of everything that decides what ``generator`` (modules of this package) makes
    of a form: its structure (not its parameter values) and the generator's source."""
    atoms: dict = {}
    parts = [
        generator_digest(generator),
        sympy.__version__,
        repr(form.states),
        repr(form.params),
        repr(form.nonnegative),
        repr(form.inputs),
    ]
    parts += [
        f"{lag.symbol.name}|{lag.state}|{structure_text(lag.delay, atoms)}" for lag in form.lags
    ]
    parts += [structure_text(e, atoms) for e in form.rhs]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


# ---------------------------------------------------------------------- the store of pieces
def load_piece(name: str) -> bytes | None:
    """The bytes kept under ``name`` in the store of model pieces, or ``None`` (no store, not
    kept, altered, or an unusable cache directory: then the piece is built again)."""
    store = provided("model pieces")
    if store is None:
        return None
    try:
        return store.load(name)
    except (FluidnetError, OSError, ValueError):
        return None


def save_piece(name: str, data: bytes) -> None:
    """Keep ``data`` under ``name`` when a store is provided; a refused write (full disk, unsafe
    directory) only means it is built again next time."""
    store = provided("model pieces")
    if store is None:
        return
    try:
        store.save(name, data)
    except (FluidnetError, OSError, ValueError):
        pass


def run_source(source: str, label: str) -> dict[str, Any]:
    """The namespace after running generated ``source`` (our own code, from this process or
    from the verified store) over :func:`~fluidnet.symbolic.npsource.namespace`."""
    ns = namespace()
    exec(compile(source, f"<fluidnet {label}>", "exec"), ns)  # noqa: S102 - generated here
    return ns


#: The modules whose source decides what a model's record holds (part of its key): the
#: generated code, the closed forms, the search whose results it keeps, the row scaling and a
#: large model's sparse code.
RECORD_GENERATOR = (
    "npsource.py",
    "steadycode.py",
    "jacobians.py",
    "closedforms.py",
    "densenewton.py",
    "rootsearch.py",
    "equilibrium.py",
    "rowscaling.py",
    "newton.py",
)
#: The sections of a model's record.
SECTIONS = ("steady", "closed", "recalled", "scaling", "sparse")


def record(model) -> dict[str, Any]:
    """What the store keeps for ``model``, read once per process: ``{"steady": source of the
    steady-state code, "closed": source of the closed forms, "recalled": the search's points
    at parameter values searched before, "scaling": the free parameters and factors of
    :mod:`~fluidnet.symbolic.rowscaling`, "sparse": a large model's code of
    :mod:`~fluidnet.symbolic.newton`}``, each section present when kept.

    One file per model (``fluidnet_model_<digest>.py``, a Python module of literals), keyed by
    its structure and by :data:`RECORD_GENERATOR`'s source: a second process reads it once
    (with the index of the cache directory) instead of once per piece.
    """

    def read() -> dict[str, Any]:
        data = load_piece(_record_name(model))
        if data is None:
            return {}
        try:
            ns = run_source(data.decode(), f"record of {model.form.name}")
        except Exception:  # noqa: BLE001 - a stale or foreign record: rebuilt
            return {}
        return {k: ns[k.upper()] for k in SECTIONS if k.upper() in ns}

    return model.cached("record", read)


def _record_name(model) -> str:
    key = model.cached("record digest", lambda: form_digest(model.form, RECORD_GENERATOR))
    return f"fluidnet_model_{key}.py"


def keep(model, section: str, value: Any) -> None:
    """Set ``section`` of ``model``'s record and write the record to the store (a refused write
    only means it is built again next time)."""
    rec = record(model)
    rec[section] = value
    text = [f"# what fluidnet keeps of model {model.form.name!r}"]
    text += [f"{k.upper()} = {rec[k]!r}" for k in SECTIONS if k in rec]
    save_piece(_record_name(model), ("\n".join(text) + "\n").encode())


# ---------------------------------------------------------------------- steady-state equations
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


#: Models with at most this many projected states try every boundary configuration (every
#: set of them held at 0, ``2^k``); with more, the search holds them by an active set instead.
ENUMERATED_MAX = 5


def boundary_subsets(form):
    """Every set of projected states (indices), smallest first: the boundary configurations;
    only the empty one when there are more than :data:`ENUMERATED_MAX` projected states (an
    active set then decides which are held)."""
    idx = form.nonnegative
    if len(idx) > ENUMERATED_MAX:
        yield ()
        return
    for r in range(len(idx) + 1):
        yield from itertools.combinations(idx, r)


def _source(form) -> str:
    """The module of the steady-state functions of ``form`` (see the module docstring)."""
    eqs = steady_state_equations(form)
    x, p = tuple(form.x), tuple(form.p)
    # residuals and Jacobian from the equations as written (a factored cubic keeps its roots
    # to the last bit; expanded, it is zero in floating point over several ulps around them)
    rep = {lag.symbol: form.x[lag.state] for lag in form.lags}
    written = [e.xreplace(rep) for e in form.rhs]
    terms = [list(sympy.Add.make_args(sympy.expand(e))) for e in eqs]
    zs = tuple(lag.symbol for lag in form.lags)
    # one function for every boundary configuration: held states are 0 in its values (equations
    # with them set to 0 by sympy would cancel some terms exactly, but cost a differentiation
    # per configuration, 2^k of them; the search refuses the points where such terms cancel
    # only to rounding)
    subsets: list[tuple] = [()]
    parts = [
        f"# steady-state equations of model {form.name!r}, generated by fluidnet",
        f"LABEL = {'steady state of ' + form.name!r}",
        f"N = {len(x)}",
        f"SUBSETS = {tuple(tuple(int(i) for i in sub) for sub in subsets)!r}",
        f"OWNER = {tuple(i for i, ts in enumerate(terms) for _ in ts)!r}",
        f"LAG_STATES = {tuple(int(lag.state) for lag in form.lags)!r}",
    ]
    sources = {}
    for k, sub in enumerate(subsets):
        zero = {form.x[i]: sympy.S.Zero for i in sub}
        exprs = [e.xreplace(zero) for e in written] if sub else written
        values, derivs, outputs, entries = forward_jacobian(exprs, list(x))
        parts += [
            f"ROWS_{k} = {tuple(int(e[0]) for e in entries)!r}",
            f"COLS_{k} = {tuple(int(e[1]) for e in entries)!r}",
        ]
        sources[f"fj_{k}"] = function_source(
            f"fj_{k}", (x, p), [*outputs, *(e[2] for e in entries)], definitions=values + derivs
        )
    sources["terms"] = function_source("terms", (x, p), [t for ts in terms for t in ts])
    sources["raw"] = function_source("raw", (x, zs, p), list(form.rhs))
    # the functions as text, compiled when first used (a search that is recalled from the store
    # needs three of them)
    parts.append("SOURCES = {")
    parts += [f"    {name!r}: {text!r}," for name, text in sources.items()]
    parts.append("}")
    return "\n".join(parts) + "\n"


class SteadyCode:
    """The compiled steady-state functions of one model (see the module docstring).

    Every function takes the states ``x`` as an array ``(n,)`` or ``(n, K)`` and the
    parameters ``p`` as ``(m,)``, ``(m, 1)`` or ``(m, K)`` (``K`` points), and evaluates with
    floating-point errors ignored (undefined values are NaN; callers check). The residuals and
    Jacobian take a boundary configuration ``held`` (a tuple of projected states, set to 0 in
    the equations before they were differentiated; default none).

    Attributes
    ----------
    n : int
        Number of states.
    subsets : tuple of tuple of int
        The boundary configurations.
    owner : numpy.ndarray
        The equation of every term of :meth:`terms`.
    lag_states : numpy.ndarray
        The state of every lag (the delayed arguments of :meth:`raw`).
    """

    def __init__(self, ns: dict[str, Any]):
        self.n = int(ns["N"])
        self.subsets = tuple(tuple(s) for s in ns["SUBSETS"])
        self.owner = np.array(ns["OWNER"], dtype=np.intp)
        self.lag_states = np.array(ns["LAG_STATES"], dtype=np.intp)
        self._fj: dict[tuple, tuple[str, np.ndarray, np.ndarray]] = {
            tuple(sorted(sub)): (
                f"fj_{k}",
                np.array(ns[f"ROWS_{k}"], dtype=np.intp),
                np.array(ns[f"COLS_{k}"], dtype=np.intp),
            )
            for k, sub in enumerate(self.subsets)
        }
        self._sources: dict[str, str] = dict(ns["SOURCES"])
        self._ns = namespace()
        self._label = str(ns.get("LABEL", "steady state"))

    def _function(self, name: str) -> Callable[..., np.ndarray]:
        """The generated function ``name``, compiled on first use."""
        fn = self._ns.get(name)
        if fn is None:
            exec(compile(self._sources[name], f"<fluidnet {self._label}>", "exec"), self._ns)  # noqa: S102
            fn = self._ns[name]
        return fn

    def sparsity(self, held: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)``: where the Jacobian of configuration ``held`` may be nonzero."""
        _, rows, cols = self._fj.get(tuple(sorted(held)), self._fj[()])
        return rows, cols

    def values_and_entries(self, x, p, held: tuple = ()) -> tuple[np.ndarray, np.ndarray]:
        """``(f, e)``: the residuals ``(n,) + points`` and the Jacobian's entries at
        :meth:`sparsity` ``(nnz,) + points``."""
        # a configuration without code of its own (an active set): the full equations, the
        # held states 0 in the values
        fn = self._function(self._fj.get(tuple(sorted(held)), self._fj[()])[0])
        with np.errstate(all="ignore"):
            out = fn(np.asarray(x, dtype=float), np.asarray(p, dtype=float))
        return out[: self.n], out[self.n :]

    def f(self, x, p, held: tuple = ()) -> np.ndarray:
        """The residuals of the steady-state equations at ``x``."""
        return self.values_and_entries(x, p, held)[0]

    def jacobian(self, x, p, held: tuple = ()) -> np.ndarray:
        """The dense Jacobian: ``(n, n)`` at one point, ``(K, n, n)`` at ``x`` of shape
        ``(n, K)``."""
        e = self.values_and_entries(x, p, held)[1]
        rows, cols = self.sparsity(held)
        if e.ndim == 1:
            J = np.zeros((self.n, self.n))
            J[rows, cols] = e
            return J
        J = np.zeros((e.shape[1], self.n, self.n))
        J[:, rows, cols] = e.T
        return J

    def terms(self, x, p) -> np.ndarray:
        """Every term of every expanded steady-state equation (see :attr:`owner`)."""
        with np.errstate(all="ignore"):
            return self._function("terms")(np.asarray(x, dtype=float), np.asarray(p, dtype=float))

    def scales(self, x, p) -> np.ndarray:
        """The largest ``|term|`` of every equation at ``x`` (0 where all vanish or none is
        finite): ``(n,) + points``."""
        mags = np.abs(self.terms(x, p))
        mags[~np.isfinite(mags)] = 0.0
        order, starts, has = self._owners
        out = np.zeros((self.n,) + mags.shape[1:])
        if order.size:
            # the maximum over each equation's terms: one reduceat over the terms sorted by
            # equation (np.maximum.at costs tens of microseconds a call)
            out[has] = np.maximum.reduceat(mags[order], starts[has], axis=0)
        return out

    @cached_property
    def _owners(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(order, starts, has)``: the terms sorted by their equation, where each equation's
        terms start in that order, and which equations have terms."""
        order = np.argsort(self.owner, kind="stable")
        counts = np.bincount(self.owner, minlength=self.n)
        starts = np.cumsum(counts) - counts
        return order, starts, counts > 0

    def raw(self, x, z, p) -> np.ndarray:
        """The right-hand sides as written, with the delayed values ``z`` (one per lag)."""
        with np.errstate(all="ignore"):
            return self._function("raw")(
                np.asarray(x, dtype=float), np.asarray(z, dtype=float), np.asarray(p, dtype=float)
            )


def kept_or_built(
    model, section: str, load: Callable[[Any], Any], build: Callable[[], tuple[Any, Any]]
) -> Any:
    """``load(value)`` of the model's record ``section`` when it is kept and loads, else the
    object of ``build() -> (object, value)``, whose ``value`` is kept (unless ``None``). A kept
    value that does not load (stale, foreign, or refused by ``load`` raising) is built again."""
    kept = record(model).get(section)
    if kept is not None:
        try:
            return load(kept)
        except Exception:  # noqa: BLE001 - a stale or foreign piece: built again below
            pass
    built, value = build()
    if value is not None:
        keep(model, section, value)
    return built


def steady_code(model) -> SteadyCode | None:
    """The steady-state code of ``model`` (from its record in the store, else generated and
    kept), or ``None`` when an expression has no numpy form here (the caller builds functions
    with :func:`~fluidnet.symbolic.numeric.to_numpy` instead)."""
    form = model.form
    label = f"steady state of {form.name}"

    def build() -> tuple[SteadyCode | None, str | None]:
        try:
            source = _source(form)
        except Unprintable:
            return None, None
        return SteadyCode(run_source(source, label)), source

    return kept_or_built(model, "steady", lambda src: SteadyCode(run_source(src, label)), build)
