"""The linear system at given parameter values, from a model or a user factory.

Every parameter-plane analysis (:func:`~fluidnet.stability.stability_chart`,
:func:`~fluidnet.stability.stability_boundary`, :func:`~fluidnet.stability.critical_value`)
accepts either a :class:`fluidnet.Model` — linearized at its equilibrium for every parameter
point — or a *factory*: a callable ``f(**params)`` returning one of

* a :class:`fluidnet.LinearDDE`;
* a :class:`fluidnet.DelayTF` loop gain ``L = N/D`` (the closed loop is ``D + N = 0``, taken in
  companion form; ``D + N`` must be retarded);
* a :class:`fluidnet.QuasiPolynomial` characteristic function (companion form);
* a :class:`fluidnet.Model` (linearized at its default parameters).

A user factory may also be *vectorized*: an object with a method ``stacked(**params)`` taking
every parameter as a 1-D array of one length ``K`` and returning the ``K`` systems as a
:class:`~fluidnet.linear.stacked.Stack` (the same systems as ``K`` calls would give, in any
similar realization of equal size and delays). Batched analyses
(:func:`~fluidnet.stability.critical_value` over many parameter sets) then build the systems
of all sets in one call; they check it against the factory's own systems first.
"""

from __future__ import annotations

import hashlib
import inspect
import pickle
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnalysisError, FluidnetError, ParameterError
from ..linear.delaytf import DelayTF
from ..linear.lineardde import LinearDDE
from ..linear.quasipoly import QuasiPolynomial
from ..linear.stacked import Stack
from ..symbolic.equilibrium import closed_forms_deferred, first_equilibrium
from ..symbolic.linearize import dense_batch_points, linearize_batch
from ..symbolic.model import Model
from ..symbolic.nearby import NearbyPoint, linearize_near

__all__ = ["SystemFactory", "SystemBatch", "ContinuedSystems", "as_linear"]

# Models already unpickled in this (worker) process, by a digest of their definition: their
# compiled pieces are built (or received) once per process, not once per chunk or per chart.
_WORKER_MODELS: OrderedDict[str, Model] = OrderedDict()
#: How many models a worker process keeps (least recently used first out).
WORKER_MODELS_KEPT = 16
#: A pickled factory carries its model's built pieces (see :meth:`SystemFactory.prepare`) when
#: they pickle to at most this many bytes.
SHIP_MAX_BYTES = 16 * 2**20
#: The model pieces (:meth:`fluidnet.Model.cached` keys) a chart uses, shipped when built (the
#: compiled integrator is not: numba compiles, or loads from its disk cache, in each process).
SHIPPED_PIECES = (
    "form",
    "parameter delays",
    "symbolic equilibria",
    "equilibrium plan",
    "linearization plan",
)


def as_linear(obj: Any, where: str = "") -> LinearDDE:
    """Convert what a factory returned into a :class:`LinearDDE` (see the module docstring)."""
    if isinstance(obj, LinearDDE):
        return obj
    if isinstance(obj, Model):
        return obj.linearize()
    if isinstance(obj, DelayTF):
        qp = obj.den + obj.num
        what = "closed-loop characteristic function den + num of the loop gain"
    elif isinstance(obj, QuasiPolynomial):
        qp = obj
        what = "characteristic quasi-polynomial"
    else:
        raise AnalysisError(
            f"the factory returned {type(obj).__name__}{where}; expected a LinearDDE, a DelayTF "
            "loop gain, a QuasiPolynomial or a Model"
        )
    if not qp.is_retarded:
        raise AnalysisError(f"the {what}{where} is not retarded: {qp!r}")
    return qp.companion()


class SystemFactory:
    """``factory(**params) -> LinearDDE`` for a model or a user factory, with fixed values.

    Picklable (for process executors) when the model or the user factory is. A pickled
    factory of a model carries the pieces the model has built so far (its equilibrium and
    linearization plans, compiled numpy functions pickled by value with ``cloudpickle`` when it
    is installed): a worker process that receives it does not build them again, and keeps the
    model for later tasks and charts of the same model (by a digest of its definition).

    Parameters
    ----------
    source : Model or callable
    fixed : dict
        Parameter values used at every call (overridden by the call's own).

    Raises
    ------
    ParameterError
        When ``source`` is a Model and a fixed name is not one of its parameters.
    """

    #: Not part of what a sweep computes (see :mod:`fluidnet.sweep.signature`).
    __sweep_ignore__ = ("_shipped", "_shipment")

    def __init__(self, source: Model | Callable[..., Any], fixed: Mapping[str, Any] | None = None):
        if not isinstance(source, Model) and not callable(source):
            raise AnalysisError(
                f"expected a Model or a callable factory(**params), got {type(source).__name__}"
            )
        if isinstance(source, SystemFactory):
            # a factory of a factory: the model underneath, so that a chart of it is batched
            # (the coarse chart of a boundary by continuation solved every point's equilibrium
            # by a full search: 256 points of a 20-flow network, 14 s)
            fixed = {**source.fixed, **dict(fixed or {})}
            source = source.source
        self.source = source
        self.fixed = dict(fixed or {})
        self._shipment: tuple | None = None
        self.check_names(self.fixed)

    @property
    def is_model(self) -> bool:
        return isinstance(self.source, Model)

    @property
    def name(self) -> str:
        if isinstance(self.source, Model):
            return self.source.name
        return getattr(self.source, "__name__", type(self.source).__name__)

    def check_names(self, names) -> None:
        """Raise :class:`ParameterError` for a name that is not a parameter of the model, or
        that the factory's signature does not take (a factory taking ``**params`` takes
        any)."""
        if isinstance(self.source, Model):
            known, owner = self.source.param_names, f"model {self.source.name!r}"
        else:
            known, owner = _keywords(self.source), f"the factory {self.name!r}"
            if known is None:
                return
        for n in names:
            if n not in known:
                raise ParameterError(
                    f"unknown parameter {n!r} for {owner} (parameters: "
                    f"{', '.join(known) or 'none'})"
                )

    def values(self, **values: float) -> dict[str, float]:
        return {**self.fixed, **values}

    def __call__(self, **values: float) -> LinearDDE:
        params = self.values(**values)
        if isinstance(self.source, Model):
            with closed_forms_deferred():  # no one-time symbolic solve inside an analysis
                return self.source.linearize(params=params)
        where = " at " + ", ".join(f"{k}={v:g}" for k, v in params.items()) if params else ""
        try:
            made = self.source(**params)
        except Exception as exc:
            missing = _unbound(self.source, params) if isinstance(exc, TypeError) else ""
            if missing:  # the call does not fit the signature: say which parameter
                raise ParameterError(f"the factory {self.name!r}{where}: {missing}") from exc
            # the factory's own error, with the point at which it was called
            exc.add_note(f"(raised by the factory {self.name!r}{where})")
            raise
        return as_linear(made, where)

    def first_found(self, **values: float) -> LinearDDE:
        """The system of :meth:`__call__` at ``values``; a model's equilibrium by
        :func:`~fluidnet.symbolic.equilibrium.first_equilibrium` (the one
        :meth:`Model.equilibrium` returns, the search stopped once it is known: no
        :class:`~fluidnet.symbolic.equilibrium.EquilibriumWarning` names the others then)."""
        if not isinstance(self.source, Model):
            return self(**values)
        params = self.values(**values)
        with closed_forms_deferred():
            eq = first_equilibrium(self.source, **params)
        return self.source.linearize(equilibrium=eq, params=params)

    def batch_points(self) -> int | None:
        """The most points :meth:`batch` settles as one batch (a model's
        :func:`~fluidnet.symbolic.linearize.dense_batch_points`); ``None`` for a factory, whose
        systems are made one by one, or a model that cannot be linearized (each point then
        reports why)."""
        if not isinstance(self.source, Model):
            return None
        try:
            return dense_batch_points(self.source)
        except FluidnetError:
            return None

    def batch(self, values: Mapping[str, Any], near: np.ndarray | None = None) -> SystemBatch:
        """The linear systems at many points at once.

        Parameters
        ----------
        values : dict
            ``{name: 1-D array}``, all of one length ``K`` (the fixed values are added).
        near : numpy.ndarray, optional
            Models only: ``(K, n)`` equilibria of nearby points on the branch to follow (a
            continuation's previous step): each point's equilibrium is continued from its
            row by Newton's method (:func:`~fluidnet.symbolic.nearby.linearize_near`) instead
            of the batched equilibrium search.

        Returns
        -------
        SystemBatch
            For a model, the linearizations are computed vectorized
            (:func:`~fluidnet.symbolic.linearize.linearize_batch`, or
            :func:`~fluidnet.symbolic.nearby.linearize_near` from ``near``); points it cannot
            settle, and every point of a user factory, are made one by one. A point whose
            system cannot be made keeps its error.
        """
        arrays = {k: np.asarray(v, dtype=float).reshape(-1) for k, v in values.items()}
        K = max((a.size for a in arrays.values()), default=1)
        names = list(arrays)
        limit = self.batch_points()
        if limit is not None and K > limit:
            # more points than the dense matrices of one batch may hold: batches of `limit`
            # (one batch of all went one point at a time, each with the full search)
            parts = [
                self.batch(
                    {k: a[i : i + limit] if a.size == K else a for k, a in arrays.items()},
                    None if near is None else near[i : i + limit],
                )
                for i in range(0, K, limit)
            ]
            return _joined(parts, arrays)
        made: dict[int, LinearDDE] = {}
        errors: dict[int, FluidnetError] = {}
        fallback: dict[int, str] = {}
        equilibria = None
        stack = None
        todo = range(K)
        if self.is_model:
            params = {**{k: np.full(K, float(v)) for k, v in self.fixed.items()}, **arrays}
            with closed_forms_deferred():
                if near is None:
                    lb = linearize_batch(self.source, params)
                else:
                    lb = linearize_near(self.source, params, near)
            stack = lb.stack
            equilibria = np.where(lb.ok[:, None], lb.equilibrium, np.nan)
            todo = np.flatnonzero(~lb.ok)
            why = getattr(lb, "reasons", None) or [""] * K
            for k in todo:
                fallback[int(k)] = "equilibrium or linearization not settled by the batch" + (
                    f" ({why[k]})" if why[k] else ""
                )
        for k in todo:
            point = {n: float(arrays[n][k]) for n in names}
            try:
                made[int(k)] = self(**point)
            except FluidnetError as exc:
                errors[int(k)] = exc
        if equilibria is not None and isinstance(self.source, Model):
            names_x = self.source.state_names
            for k, lin in made.items():
                eq = getattr(lin, "equilibrium", None) or {}
                if all(n in eq for n in names_x):
                    equilibria[k] = [eq[n] for n in names_x]
        if stack is None:
            sizes = [lin.n for lin in made.values()]
            n = max(set(sizes), key=sizes.count) if sizes else 1
            pad = [lin if lin.n == n else LinearDDE(np.zeros((n, n))) for lin in made.values()]
            rows = dict(zip(made, pad, strict=True))
            filler = LinearDDE(np.zeros((n, n)))
            stack = Stack.from_systems([rows.get(k, filler) for k in range(K)])
            made = {k: lin for k, lin in made.items() if lin.n != n}
        else:
            made = _fill(stack, made)
        for k in errors:
            fallback.pop(k, None)  # its error says what went wrong
        return SystemBatch(
            stack=stack,
            errors=errors,
            separate=made,
            names=names,
            values=arrays,
            fallback=fallback,
            equilibria=equilibria,
        )

    def prepare(self, point: Mapping[str, float]) -> None:
        """Build the model's pieces here, at one parameter point (a model's plans do not depend
        on the values), before the factory is sent to worker processes. Errors at that point
        are left to the workers, which report them with the point."""
        if not self.is_model:
            return
        try:
            self.batch({k: np.array([float(v)]) for k, v in point.items()})
        except FluidnetError:
            pass

    def _shipped_pieces(self) -> tuple[str, bytes | None]:
        """``(model digest, pickled built pieces or None)``, made once per model and set of
        pieces (pickling compiled functions by value costs about a second)."""
        cache = getattr(self.source, "_cache", {})
        keys = tuple(k for k in SHIPPED_PIECES if k in cache)
        if self._shipment is not None and self._shipment[0] == keys:
            return self._shipment[1]
        key = hashlib.sha256(pickle.dumps(self.source, protocol=4)).hexdigest()
        made = self.source.cached("pickled pieces", dict)  # {(digest, keys): blob}
        if (key, keys) not in made:
            made[key, keys] = _pickled_pieces(cache, keys)
        self._shipment = (keys, (key, made[key, keys]))
        return self._shipment[1]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_shipment"] = None
        if self.is_model:
            state["_shipped"] = self._shipped_pieces()
        return state

    def __setstate__(self, state):
        shipped = state.pop("_shipped", None)
        self.__dict__.update(state)
        if not (isinstance(self.source, Model) and shipped):
            return
        key, blob = shipped
        model = _WORKER_MODELS.get(key)
        if model is None:
            model = self.source
            if blob is not None:
                try:
                    pieces = pickle.loads(blob)
                    for k, data in pieces.items():
                        value = pickle.loads(data)
                        model.cached(k, lambda value=value: value)
                except Exception:  # noqa: BLE001 - e.g. cloudpickle missing here: rebuilt
                    pass
            _WORKER_MODELS[key] = model
            while len(_WORKER_MODELS) > WORKER_MODELS_KEPT:
                _WORKER_MODELS.popitem(last=False)
        else:
            _WORKER_MODELS.move_to_end(key)
        self.source = model


def _keywords(source: Callable[..., Any]) -> tuple[str, ...] | None:
    """The parameter names a factory takes as keywords, or None when it takes any (a
    ``**params``) or has no signature to read."""
    try:
        sig = inspect.signature(source)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return tuple(n for n, p in sig.parameters.items() if p.kind in kinds)


def _unbound(source: Callable[..., Any], params: Mapping[str, Any]) -> str:
    """Why ``source(**params)`` does not fit its signature (a missing or unknown parameter),
    or ``""``."""
    try:
        inspect.signature(source).bind(**params)
    except TypeError as exc:
        return str(exc)
    except ValueError:
        return ""
    return ""


def _pickled_pieces(cache: Mapping[str, Any], keys: tuple[str, ...]) -> bytes | None:
    try:
        import cloudpickle as dumper  # pickles compiled (lambdified) functions by value
    except ImportError:  # pragma: no cover - dask brings cloudpickle
        dumper = pickle
    pieces: dict[str, bytes] = {}
    for k in keys:
        try:
            pieces[k] = dumper.dumps(cache[k], protocol=4)
        except Exception:  # noqa: BLE001 - pickling raises many types; workers rebuild it
            continue
    blob = pickle.dumps(pieces, protocol=4) if pieces else None
    return blob if blob is not None and len(blob) <= SHIP_MAX_BYTES else None


def _fill(stack: Stack, made: dict[int, LinearDDE]) -> dict[int, LinearDDE]:
    """Write the systems made one by one into the stack rows (padding delays with zeros);
    return those that do not fit (more delays than the stack holds)."""
    left = {}
    for k, lin in made.items():
        if len(lin.delays) > stack.m or lin.n != stack.n:
            left[k] = lin
            continue
        stack.A0[k] = lin.A0
        stack.A[k] = 0.0
        stack.tau[k] = 0.0
        for j, (tau, a) in enumerate(zip(lin.delays, lin.A, strict=True)):
            stack.A[k, j] = a
            stack.tau[k, j] = tau
    return left


def _joined(parts: list[SystemBatch], values: dict[str, np.ndarray]) -> SystemBatch:
    """One :class:`SystemBatch` of consecutive batches of a model's points (``values``: all of
    them): the stacks concatenated, the points of the dictionaries renumbered."""
    offsets = np.cumsum([0] + [p.stack.K for p in parts[:-1]])

    def merged(attr: str) -> dict:
        pairs = zip(offsets, parts, strict=True)
        return {int(o) + k: v for o, p in pairs for k, v in getattr(p, attr).items()}

    eqs = [p.equilibria for p in parts if p.equilibria is not None]
    return SystemBatch(
        stack=Stack(
            np.concatenate([p.stack.A0 for p in parts]),
            np.concatenate([p.stack.A for p in parts]),
            np.concatenate([p.stack.tau for p in parts]),
        ),
        errors=merged("errors"),
        separate=merged("separate"),
        names=parts[0].names,
        values=values,
        fallback=merged("fallback"),
        equilibria=np.concatenate(eqs) if len(eqs) == len(parts) else None,
    )


@dataclass
class SystemBatch:
    """The linear systems of many parameter points (see :meth:`SystemFactory.batch`).

    Attributes
    ----------
    stack : fluidnet.linear.stacked.Stack
        Every point's system (rows of points with an error or in ``separate`` are filler).
    errors : dict
        ``{point index: FluidnetError}`` for points where no system could be made.
    separate : dict
        ``{point index: LinearDDE}`` for systems that do not fit the stack (another size).
    names : list of str
    values : dict
        ``{name: (K,) array}`` the point coordinates.
    fallback : dict
        ``{point index: reason}`` for points of a model that the batched linearization did
        not settle, made one by one instead (with the full equilibrium search).
    equilibria : numpy.ndarray or None
        Models: ``(K, n)`` the equilibrium of every point (NaN where none), else ``None``.
    """

    stack: Stack
    errors: dict[int, FluidnetError] = field(default_factory=dict)
    separate: dict[int, LinearDDE] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    fallback: dict[int, str] = field(default_factory=dict)
    equilibria: np.ndarray | None = None

    def where(self, k: int) -> str:
        """``"alpha=0.4, beta=0.2"`` for point ``k``."""
        return ", ".join(f"{n}={self.values[n][k]:g}" for n in self.names)

    def system(self, k: int) -> LinearDDE:
        if k in self.separate:
            return self.separate[k]
        st = self.stack
        return LinearDDE(st.A0[k], [(t, a) for t, a in zip(st.tau[k], st.A[k], strict=True)])


class ContinuedSystems:
    """``systems(**values) -> LinearDDE`` along a path (a root followed in a parameter, a
    curve traced in a plane): a model's equilibrium at each new point is continued by Newton's
    method from the nearest point solved so far (:meth:`SystemFactory.batch` with ``near``);
    the first point, and any point the continuation cannot settle, get the full search (stopped
    once the equilibrium it ranks first is known: :meth:`SystemFactory.first_found`). A
    user factory is called as it is.

    Parameters
    ----------
    factory : SystemFactory
    keep : int
        How many solved points are remembered as starts.
    """

    def __init__(self, factory: SystemFactory, keep: int = 64):
        self.factory = factory
        self.keep = keep
        self._points: list[tuple[dict[str, float], np.ndarray]] = []
        #: points continued, and points solved by the full search
        self.stats = {"continued": 0, "full": 0}
        self._point: NearbyPoint | None = None

    def _nearest(self, values: Mapping[str, float]) -> np.ndarray | None:
        """The remembered point nearest to ``values`` (the sum over the names of ``|v - ref|``
        relative to the larger of the two; a name a point was not given takes its fixed value,
        or none: not a start), the first of equals; ``None`` when there is none."""
        best, start = np.inf, None
        for known, x in self._points:
            d = 0.0
            for k, v in values.items():
                ref = known.get(k, self.factory.fixed.get(k))
                if ref is None:
                    d = np.inf
                    break
                d += abs(v - ref) / max(abs(ref), abs(v), 1e-300)
            if d < best:
                best, start = d, x
        return start

    def _remember(self, values: Mapping[str, float], x: np.ndarray | None) -> None:
        if x is None or not np.all(np.isfinite(x)):
            return
        self._points.append((dict(values), x))
        if len(self._points) > self.keep:
            del self._points[0]

    def __call__(self, **values: float) -> LinearDDE:
        factory = self.factory
        if not isinstance(factory.source, Model):
            return factory(**values)
        start = self._nearest(values)
        if start is not None:
            # linearize_near for one point (the same iteration and tests, without the array
            # overhead of a batch of one)
            if self._point is None:
                self._point = NearbyPoint(factory.source, factory.fixed)
            lin, x, _ = self._point(values, start)
            if lin is not None:
                self.stats["continued"] += 1
                self._remember(values, x)
                return lin
        lin = factory.first_found(**values)
        self.stats["full"] += 1
        eq = getattr(lin, "equilibrium", None) or {}
        names = factory.source.state_names
        if all(n in eq for n in names):
            self._remember(values, np.array([eq[n] for n in names], dtype=float))
        return lin

    def full(self, **values: float) -> LinearDDE:
        """The system at ``values`` with the full equilibrium search (what
        :meth:`Model.linearize` returns), remembered as a start."""
        lin = self.factory(**values)
        if isinstance(self.factory.source, Model):
            eq = getattr(lin, "equilibrium", None) or {}
            names = self.factory.source.state_names
            if all(n in eq for n in names):
                self._remember(values, np.array([eq[n] for n in names], dtype=float))
        return lin
