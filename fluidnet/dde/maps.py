"""Discrete-time maps: ``x <- f(x, p, s, u)`` iterated by compiled code.

A :class:`DiscreteMap` is the discrete-time counterpart of a :class:`~fluidnet.symbolic.Model`:
states with their update expressions, named intermediate *signals* evaluated in order at every
step (a later signal and the updates may use the earlier ones), parameters with default values,
and optional *random inputs*, numbers drawn uniformly from ``[0, 1)`` afresh at every step.
:func:`iterate_map` runs it and returns a :class:`MapRun`.

The loop is generated from the expressions by the code-generation stage
(:mod:`fluidnet.codegen.maploop`: the printers and common-subexpression statements of the
integrator's model functions, compiled by the C compiler, or numba where no compiler works),
compiled once per structure and cached on disk; parameter values are passed at run time.

The random inputs come from ``numpy.random.default_rng(seed)``: at each step, the inputs in the
order they were declared. They are drawn in blocks of steps, which gives the same numbers as
drawing them one at a time, so a run is reproduced by its seed.

Examples
--------
The logistic map ``x <- r x (1 - x)`` at ``r = 3.2`` settles on its period-2 orbit:

>>> import fluidnet as fn
>>> logistic = fn.DiscreteMap({"x": "r*x*(1 - x)"}, params={"r": 3.2})
>>> run = fn.iterate_map(logistic, [0.3], 1000, record_every=1)
>>> [round(float(v), 6) for v in run.x[0, -2:]]
[0.513045, 0.799455]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..codegen.backend import backend_request
from ..codegen.maploop import map_loop
from ..errors import IntegrationError, ModelError, OptionError, ParameterError
from ..options import seed_option
from ..overrides import parameter_value
from ..parsing import as_expression

if TYPE_CHECKING:  # pragma: no cover
    import xarray as xr

__all__ = ["DiscreteMap", "MapRun", "iterate_map"]

#: Steps per call of the compiled loop (and per block of random draws).
BLOCK_STEPS = 1 << 16


def _name(key: Any, where: str) -> str:
    if isinstance(key, sympy.Symbol):
        return key.name
    if isinstance(key, str) and key.isidentifier():
        return key
    raise ModelError(f"{where}: {key!r} is not a name (a str identifier or a sympy Symbol)")


class DiscreteMap:
    """A discrete-time map: states updated simultaneously from the values of the step before.

    One step computes the signals in order, then every state's new value from the old states,
    the parameters, the signals and the step's random inputs.

    Parameters
    ----------
    update : mapping of str (or sympy.Symbol) to expression
        For each state (in order), its new value ``f_i(x, p, s, u)``: a sympy expression or
        text (parsed by :func:`~fluidnet.parsing.as_expression`) in the names below.
    signals : mapping of str (or sympy.Symbol) to expression, optional
        Intermediate values computed in order at every step, before the updates; each may use
        the states, parameters, random inputs and the signals before it.
    params : mapping of str (or sympy.Symbol) to float, optional
        Parameters with their default values (real, finite).
    random : sequence of str (or sympy.Symbol), optional
        Random inputs, each uniform on ``[0, 1)`` and drawn afresh at every step.
    name : str
        What the map is (messages, generated code).

    Raises
    ------
    ModelError
        For a name used twice (a state, signal, parameter and random input are all names in
        one space), an expression that uses a name it may not (an unknown name, or a signal
        defined later), or no state.
    ParameterError
        For a default value that is not a finite real number (the message names it).

    Attributes
    ----------
    states, signal_names, param_names, random_names : tuple of str
        The names, in order.
    defaults : dict of str to float
        The parameters' default values.
    """

    def __init__(
        self,
        update: Mapping[Any, Any],
        *,
        signals: Mapping[Any, Any] | None = None,
        params: Mapping[Any, Any] | None = None,
        random: Sequence[Any] = (),
        name: str = "map",
    ):
        self.name = str(name)
        where = f"map {self.name!r}"
        if not isinstance(update, Mapping) or not update:
            raise ModelError(f"{where}: update must be a non-empty mapping {{state: expression}}")
        signals = dict(signals or {})
        params = dict(params or {})
        if isinstance(random, (str, sympy.Symbol)):
            random = (random,)
        self.states = tuple(_name(k, f"{where}, state") for k in update)
        self.signal_names = tuple(_name(k, f"{where}, signal") for k in signals)
        self.param_names = tuple(_name(k, f"{where}, parameter") for k in params)
        self.random_names = tuple(_name(k, f"{where}, random input") for k in random)
        seen: dict[str, str] = {}
        kinds = (
            ("state", self.states),
            ("signal", self.signal_names),
            ("parameter", self.param_names),
            ("random input", self.random_names),
        )
        for kind, names in kinds:
            for nm in names:
                if nm in seen:
                    raise ModelError(f"{where}: {nm!r} is both a {seen[nm]} and a {kind}")
                seen[nm] = kind
        self.defaults = {
            nm: parameter_value(f"{where}: parameter {nm!r}", v)
            for nm, v in zip(self.param_names, params.values(), strict=True)
        }
        # expressions, with every symbol of a known name checked
        self._array: tuple[tuple, tuple] | None = None
        self._loops: dict[str, tuple] = {}
        self._symbols = {nm: sympy.Symbol(nm, real=True) for nm in seen}
        allowed = set(self.states) | set(self.param_names) | set(self.random_names)
        self.signals: dict[str, sympy.Expr] = {}
        for nm, value in zip(self.signal_names, signals.values(), strict=True):
            self.signals[nm] = self._expression(value, allowed, f"{where}: signal {nm!r}")
            allowed.add(nm)
        self.update: dict[str, sympy.Expr] = {
            nm: self._expression(value, allowed, f"{where}: update of state {nm!r}")
            for nm, value in zip(self.states, update.values(), strict=True)
        }

    def _expression(self, value: Any, allowed: set[str], where: str) -> sympy.Expr:
        expr = as_expression(value, symbols=self._symbols, where=where)
        if not isinstance(expr, sympy.Expr):
            raise ModelError(f"{where}: {expr!r} is not an expression with a number value")
        later = set(self.signal_names) - allowed
        for sym in sorted(expr.free_symbols, key=str):
            nm = getattr(sym, "name", str(sym))
            if nm in allowed:
                continue
            if nm in later:
                raise ModelError(f"{where} uses the signal {nm!r}, which is computed after it")
            raise ModelError(
                f"{where} uses {nm!r}, which is no state, signal before it, parameter or "
                "random input of the map"
            )
        with sympy.evaluate(False):  # renaming symbols: keep the expression as written
            renamed = expr.xreplace({s: self._symbols[str(s)] for s in expr.free_symbols})
        return cast(sympy.Expr, renamed)

    @property
    def n_states(self) -> int:
        """The number of states."""
        return len(self.states)

    def __repr__(self) -> str:
        return (
            f"DiscreteMap({self.name!r}: {len(self.states)} states, {len(self.signals)} "
            f"signals, {len(self.param_names)} parameters, {len(self.random_names)} random)"
        )

    def values(self, params: Mapping[str, Any] | None = None) -> np.ndarray:
        """The parameter vector: the defaults with ``params`` (name to real number) overriding.

        Parameters
        ----------
        params : dict, optional
            ``{name: value}`` overrides of the defaults, one real number each.

        Returns
        -------
        numpy.ndarray
            The values in the map's parameter order.

        Raises
        ------
        ParameterError
            For an unknown name or a value that is not a finite real number.
        OptionError
            When ``params`` is not a mapping.
        """
        if params is None:
            params = {}
        if not isinstance(params, Mapping):
            raise OptionError(
                f"map {self.name!r}: params must be a dict {{name: value}}, got "
                f"{type(params).__name__}"
            )
        vals = dict(self.defaults)
        for k, v in params.items():
            nm = k.name if isinstance(k, sympy.Symbol) else str(k)
            if nm not in vals:
                known = ", ".join(self.param_names) or "none"
                raise ParameterError(
                    f"map {self.name!r} has no parameter {nm!r} (parameters: {known})"
                )
            vals[nm] = parameter_value(f"map {self.name!r}: parameter {nm!r}", v)
        return np.array([vals[nm] for nm in self.param_names], dtype=np.float64)

    def array_form(self) -> tuple[list[sympy.Expr], list[sympy.Expr]]:
        """The signals and updates in the array symbols of the generated loop (``x[i]``,
        ``p[j]``, ``uk[r]``, ``s[q]``; see :mod:`fluidnet.codegen.maploop`)."""
        if self._array is not None:
            return list(self._array[0]), list(self._array[1])
        rep: dict[sympy.Symbol, sympy.Symbol] = {}
        for prefix, names in (
            ("x", self.states),
            ("p", self.param_names),
            ("uk", self.random_names),
            ("s", self.signal_names),
        ):
            for i, nm in enumerate(names):
                rep[self._symbols[nm]] = sympy.Symbol(f"{prefix}[{i}]", real=True)
        with sympy.evaluate(False):  # the expressions as written, in other names
            signals = [cast(sympy.Expr, e.xreplace(rep)) for e in self.signals.values()]
            updates = [cast(sympy.Expr, e.xreplace(rep)) for e in self.update.values()]
        self._array = (tuple(signals), tuple(updates))
        return signals, updates

    def compiled(self, backend: str | None = None):
        """The compiled stepping loop and the backend that compiled it (see
        :func:`fluidnet.codegen.maploop.map_loop`); compiled once per map and backend.

        Parameters
        ----------
        backend : {"c", "numba"}, optional
            Force a backend; default as ``FLUIDNET_BACKEND`` says, else C where a compiler
            works and numba otherwise.

        Returns
        -------
        tuple
            The loop and the name of the backend that compiled it.
        """
        request = backend_request(backend)
        if request not in self._loops:
            signals, updates = self.array_form()
            self._loops[request] = map_loop(
                signals, updates, len(self.random_names), self.name, request
            )
        return self._loops[request]


@dataclass(frozen=True)
class MapRun:
    """The result of :func:`iterate_map`.

    Attributes
    ----------
    map : DiscreteMap
        The map iterated.
    steps : ndarray of int
        The step numbers of the recorded states (0 is the initial state).
    x : ndarray, shape (states, len(steps))
        The states after those steps.
    mean_states : ndarray, shape (states,)
        Each state averaged over the last ``average_steps`` steps (its value after each step).
    mean_signals : ndarray, shape (signals,)
        Each signal averaged over the same steps (its value computed in each step).
    average_steps : int
        The number of steps averaged over (at the end of the run).
    params : dict of str to float
        The parameter values of the run.
    seed : int or None
        The seed of the random inputs.
    backend : str
        ``"c"`` or ``"numba"``: what compiled the loop.
    """

    map: DiscreteMap
    steps: np.ndarray
    x: np.ndarray
    mean_states: np.ndarray
    mean_signals: np.ndarray
    average_steps: int
    params: dict[str, float] = field(default_factory=dict)
    seed: int | None = None
    backend: str = "c"

    def state(self, name: str) -> np.ndarray:
        """The recorded values of state ``name``.

        Parameters
        ----------
        name : str
            A state of the map.

        Returns
        -------
        numpy.ndarray
            Its values at the recorded steps.

        Raises
        ------
        OptionError
            For a name that is no state of the map.
        """
        if name not in self.map.states:
            raise OptionError(f"{name!r} is no state of map {self.map.name!r}: {self.map.states}")
        return self.x[self.map.states.index(name)]

    def to_xarray(self) -> xr.Dataset:
        """The recorded states as an :class:`xarray.Dataset` (dimension ``step``, one variable
        per state); the averages (``mean_<name>``), parameters (``param_<name>``), seed and
        window are in ``attrs``."""
        import xarray as xr

        data = {s: ("step", self.x[i]) for i, s in enumerate(self.map.states)}
        attrs: dict[str, Any] = {f"param_{k}": v for k, v in self.params.items()}
        names = (*self.map.states, *self.map.signal_names)
        means = np.concatenate([self.mean_states, self.mean_signals])
        attrs |= {f"mean_{s}": float(v) for s, v in zip(names, means, strict=True)}
        attrs |= {
            "map": self.map.name,
            "average_steps": self.average_steps,
            "seed": "none" if self.seed is None else int(self.seed),
            "backend": self.backend,
        }
        return xr.Dataset(data, coords={"step": self.steps}, attrs=attrs)

    def plot(self, ax: Any = None, *, states: Sequence[str] | None = None, **kwargs: Any) -> Any:
        """Plot the recorded states against the step (one axes per state), with each state's
        average over the final window as a dashed line.

        Parameters
        ----------
        ax : matplotlib Axes or array of Axes, optional
        states : sequence of str, optional
            Default: all states.
        **kwargs
            Passed to ``Axes.plot``.

        Returns
        -------
        array of matplotlib Axes
        """
        import matplotlib.pyplot as plt

        states = list(states) if states is not None else list(self.map.states)
        if ax is None:
            _, ax = plt.subplots(
                len(states), 1, sharex=True, squeeze=False, figsize=(6.4, 1.8 + 1.6 * len(states))
            )
            ax = ax[:, 0]
        axes = np.atleast_1d(ax)
        if len(axes) < len(states):
            raise OptionError(f"{len(states)} states to plot on {len(axes)} axes")
        first = int(self.steps[-1]) - self.average_steps if len(self.steps) else 0
        for a, s in zip(axes[: len(states)], states, strict=True):
            i = self.map.states.index(s) if s in self.map.states else None
            if i is None:
                raise OptionError(f"{s!r} is no state of map {self.map.name!r}")
            kw = {"drawstyle": "steps-post"} | kwargs
            a.plot(self.steps, self.x[i], **kw)
            a.hlines(self.mean_states[i], first, self.steps[-1], linestyles="dashed", colors="k")
            a.set_ylabel(s)
        axes[len(states) - 1].set_xlabel("step")
        return axes


def _integer(name: str, value: Any, low: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    if value < low:
        raise ParameterError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def iterate_map(
    dmap: DiscreteMap,
    x0: Sequence[float] | np.ndarray | Mapping[str, float],
    steps: int,
    *,
    params: Mapping[str, Any] | None = None,
    seed: int | None = 0,
    record_every: int = 1,
    average: float = 0.5,
    backend: str | None = None,
) -> MapRun:
    """Iterate a discrete-time map ``steps`` times from ``x0``.

    Parameters
    ----------
    dmap : DiscreteMap
        The map.
    x0 : sequence of float, or mapping of state name to float
        The initial states (all of them, finite).
    steps : int
        The number of steps, ``>= 1``.
    params : dict of str to float, optional
        Parameter values overriding the map's defaults.
    seed : int or None
        Seed of :func:`numpy.random.default_rng`, which draws the random inputs (step by step,
        in the order declared); ``None`` for fresh entropy. Unused without random inputs.
    record_every : int
        Record the states after every ``record_every``-th step (and the initial state).
    average : float
        Fraction of the run, at its end, over which states and signals are averaged:
        ``round(average * steps)`` steps, in ``(0, 1]``.
    backend : {"auto", "c", "numba"} or None
        What compiles the loop (default: ``$FLUIDNET_BACKEND``, else C when a compiler works,
        numba otherwise).

    Returns
    -------
    MapRun

    Raises
    ------
    ParameterError
        For ``x0`` of the wrong size or not finite, ``steps`` or ``record_every`` not a
        positive integer, ``average`` outside (0, 1], an unknown parameter or a value that is
        not a finite real number.
    IntegrationError
        When a state stops being finite (the message names the state and the step).
    OptionError
        For an unknown backend, or ``params`` that is not a mapping.

    Examples
    --------
    >>> import fluidnet as fn
    >>> affine = fn.DiscreteMap({"x": "a*x + b"}, params={"a": 0.5, "b": 1.0})
    >>> run = fn.iterate_map(affine, [0.0], 3)
    >>> run.x[0].tolist()     # 0 -> 1 -> 1.5 -> 1.75
    [0.0, 1.0, 1.5, 1.75]
    """
    if not isinstance(dmap, DiscreteMap):
        raise OptionError(f"iterate_map needs a DiscreteMap, got {type(dmap).__name__}")
    where = f"map {dmap.name!r}"
    n = dmap.n_states
    if isinstance(x0, Mapping):
        missing = [s for s in dmap.states if s not in x0]
        unknown = [str(k) for k in x0 if k not in dmap.states]
        if missing or unknown:
            raise ParameterError(
                f"{where}: x0 must give each state once; missing {missing}, unknown {unknown}"
            )
        x0 = [x0[s] for s in dmap.states]
    try:
        x = np.array(x0, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{where}: x0 must be {n} real numbers, got {x0!r}") from exc
    if np.ndim(x0) > 1 or x.size != n:
        raise ParameterError(
            f"{where}: x0 must have one value per state ({n}: {', '.join(dmap.states)}), "
            f"got {x.size}"
        )
    bad = [dmap.states[i] for i in np.flatnonzero(~np.isfinite(x))]
    if bad:
        raise ParameterError(f"{where}: x0 of {', '.join(bad)} is not finite")
    steps = _integer("steps", steps, 1)
    record_every = _integer("record_every", record_every, 1)
    seed = seed_option(seed, where="iterate_map")
    average = float(average)
    if not (0.0 < average <= 1.0):
        raise ParameterError(f"average must be in (0, 1], got {average!r}")
    pvec = dmap.values(params)
    n_u = len(dmap.random_names)
    run, used = dmap.compiled(backend)
    rng = np.random.default_rng(seed) if n_u else None
    start_avg = steps - int(round(average * steps))
    rec = np.zeros((steps // record_every + 1, n))
    rec[0] = x
    info = np.array([1, -1], dtype=np.int64)
    acc_x = np.zeros(n)
    acc_s = np.zeros(len(dmap.signal_names))
    no_draws = np.zeros((BLOCK_STEPS, 0))
    k0 = 0
    while k0 < steps:
        block = min(BLOCK_STEPS, steps - k0)
        u = rng.random((block, n_u)) if rng is not None else no_draws
        failed = run(x, pvec, u, block, k0, start_avg, record_every, rec, info, acc_x, acc_s)
        if failed >= 0:
            state = dmap.states[int(info[1])]
            raise IntegrationError(
                f"{where}: state {state!r} is not finite ({x[int(info[1])]}) after step "
                f"{k0 + failed + 1}"
            )
        k0 += block
    n_avg = steps - start_avg
    r = int(info[0])
    return MapRun(
        map=dmap,
        steps=np.arange(r, dtype=np.int64) * record_every,
        x=rec[:r].T.copy(),
        mean_states=acc_x / n_avg,
        mean_signals=acc_s / n_avg,
        average_steps=n_avg,
        params=dict(zip(dmap.param_names, pvec.tolist(), strict=True)),
        seed=seed,
        backend=used,
    )
