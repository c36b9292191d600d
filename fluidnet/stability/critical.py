"""Critical parameter values and stability switches, each with a certificate.

:func:`critical_value` returns the first value of a parameter in ``[lo, hi]`` where stability
changes; :func:`stability_switches` returns every crossing of the imaginary axis in the range,
with its direction, frequency and the number of right-half-plane roots on each side.

Two methods, chosen automatically (``method="auto"``):

``"delay"``
    When the parameter enters only as delays ``exp(-s tau)`` (one delay, or several integer
    multiples of it, with the system matrices fixed), every crossing frequency and the whole
    sequence of critical values come from a finite eigenvalue problem, exactly
    (:mod:`fluidnet.stability.delaysweep`; for ``P(s) + Q(s) e^{-s tau}`` this is
    ``|P(j omega)| = |Q(j omega)|``, ``tau_k = (theta + 2 pi k) / omega``). The system is
    read from samples of the range, and must have the same matrices (delays proportional to
    the parameter) at every value where the method counts the roots; where it does not (a
    gain that varies with the parameter), continuation answers instead.
``"continuation"``
    Any parameter: the rightmost roots are followed along the parameter with steps controlled
    so that a root cannot cross the axis and come back unseen
    (:mod:`fluidnet.stability.rootpaths`). A network whose alike flows factor the
    determinant has each factor and the reduced system followed on its own
    (:mod:`fluidnet.stability.factoredpaths`).

The delay method covers a swept delay ``tau`` with the system matrices independent of it, and
every delay an integer multiple ``m_k tau / q`` of it (``q <= 12``, ``max m_k <= 8``): one delay,
a round trip and its half, ``tau`` and ``2 tau``. A parameter that also enters a gain (an RTT in
a window), or a delay swept while another delay stays fixed, goes to continuation (certified the
same way, but it evaluates the system at many more values).

Many parameter sets
-------------------
With a ``grid`` of parameter sets (and no ``executor``), the sets are solved together when the
exact delay method does not apply to the first of them: :mod:`fluidnet.stability.pathbatch` follows
the root paths of all sets at once (vectorized Newton on stacked systems, one argument-principle
count for all sets at each round of checkpoints), with the same step control and certificate
as one set alone; a set the batch cannot certify is solved by itself.

The certificate
---------------
Either way, the number of right-half-plane roots ``N`` is computed in full (rightmost
characteristic roots, :func:`~fluidnet.linear.roots.characteristic_roots`, confirmed by the
argument principle) at the start of the range and between consecutive crossings, and must
equal the count at the start plus the changes of the crossings found: ``N`` at both ends of
every bracket differs by exactly the crossings in it. The counts checked are returned
(``checks``). A sweep whose counts cannot be reconciled raises
:class:`~fluidnet.errors.AnalysisError` instead of answering.

A system unstable at ``lo`` has no first switch in the range when it stays unstable: by
continuation, its rightmost roots (up to four of the right half-plane, from the count at
``lo``) are followed to ``hi``, and when one of them is right of the axis in every step, the
range is reported without a switch and nothing more is counted (a large network's count of
tens of unstable roots at every checkpoint could take a minute, or fail). Where they all leave
the right half-plane, the range is followed and counted in full as above.

The ends of the range
---------------------
A range may begin or end a hair's breadth from a crossing (``lo`` 1e-7 past a switch, where
the root that crossed has a real part of 1e-9). Such a root is on the side of the axis its real
part says: the system at ``lo`` is then unstable, and the first switch of the range is the next
one. A crossing at ``lo`` or ``hi`` itself (to ``1e-12`` of the parameter's scale) is one of the
range. The exact delay method computes its counts in the middle of the brackets between
crossings, never at the ends; the continuation follows each root near the axis at an end to
where it crosses (:meth:`~fluidnet.stability.crossing.Sweep.count_edge`).

Scales
------
Tolerances are relative to the size of the system's rates
(:func:`~fluidnet.stability.crossing.rate_scale`), and a slow system's roots are computed in a
unit of time where its rates are of order one, so that RCP's round-trip time can be swept from
0.1 s to 1e12 s; the continuation's steps follow the value reached, not the width of the range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, FluidnetError, OptionError, ParameterError
from ..options import root_options as check_root_options
from ..overrides import merge_params, parameter_value, parameter_values
from ..threads import blas_bound
from .critical_results import CriticalValue, CriticalValues
from .crossing import Count, Crossing, Sweep, anchor_value, local_scale
from .delaysweep import delay_crossings, delay_family
from .factoredpaths import first_switch_factored, switches_factored
from .rootpaths import follow_roots
from .system import SystemFactory

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..sweep.executors import ExecutorSpec
    from ..symbolic.model import Model

__all__ = [
    "CriticalValue",
    "CriticalValues",
    "Crossing",
    "StabilitySwitches",
    "critical_value",
    "stability_switches",
]

_METHODS = ("auto", "delay", "continuation")


@dataclass(frozen=True)
class StabilitySwitches:
    """Every crossing of the imaginary axis as one parameter sweeps a range.

    Attributes
    ----------
    name : str
    lo, hi : float
        The range.
    crossings : tuple of Crossing
        In increasing order of value; each with ``value``, ``omega``, ``change``,
        ``count_before``, ``count_after``, ``direction``, ``is_switch``.
    count_lo : int
        Right-half-plane roots at ``lo``.
    method : str
        ``"delay"`` or ``"continuation"``.
    checks : tuple of (float, int)
        The certificate: values where the count was computed in full, and the counts.
    """

    name: str
    lo: float
    hi: float
    crossings: tuple[Crossing, ...]
    count_lo: int
    method: str
    checks: tuple[tuple[float, int], ...] = field(default=())

    @property
    def switches(self) -> tuple[Crossing, ...]:
        """The crossings where stability changes (the count leaves or reaches 0)."""
        return tuple(c for c in self.crossings if c.is_switch)

    @property
    def values(self) -> np.ndarray:
        """The values of the stability switches."""
        return np.array([c.value for c in self.switches])

    def count(self, value) -> np.ndarray | int:
        """Right-half-plane roots at ``value`` (right-continuous at a crossing)."""
        v = np.asarray(value, dtype=float)
        at = np.array([c.value for c in self.crossings])
        after = np.array([self.count_lo] + [c.count_after for c in self.crossings])
        out = after[np.searchsorted(at, v, side="right")]
        return int(out) if out.ndim == 0 else out

    def stable_intervals(self) -> list[tuple[float, float]]:
        """The maximal sub-intervals of ``[lo, hi]`` where the system is stable."""
        edges = [self.lo] + [c.value for c in self.crossings] + [self.hi]
        counts = [self.count_lo] + [c.count_after for c in self.crossings]
        out: list[tuple[float, float]] = []
        for a, b, n in zip(edges[:-1], edges[1:], counts, strict=True):
            if n == 0 and b > a:
                if out and out[-1][1] == a:
                    out[-1] = (out[-1][0], b)
                else:
                    out.append((a, b))
        return out

    def to_xarray(self) -> xr.Dataset:
        """The crossings as an :class:`xarray.Dataset` along dimension ``crossing``."""
        import xarray as xr

        cs = self.crossings
        dim = "crossing"
        return xr.Dataset(
            {
                self.name: (dim, [c.value for c in cs], {"long_name": "critical value"}),
                "omega": (dim, [c.omega for c in cs], {"units": "rad/s"}),
                "change": (dim, [c.change for c in cs]),
                "count_before": (dim, [c.count_before for c in cs]),
                "count_after": (dim, [c.count_after for c in cs]),
                "is_switch": (dim, [c.is_switch for c in cs]),
                "direction": (dim, [c.direction for c in cs]),
            },
            coords={dim: np.arange(len(cs))},
            attrs={"lo": self.lo, "hi": self.hi, "count_lo": self.count_lo, "method": self.method},
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The right-half-plane count as a step function of the parameter, switches marked."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        edges = [self.lo] + [c.value for c in self.crossings] + [self.hi]
        counts = [self.count_lo] + [c.count_after for c in self.crossings]
        kwargs.setdefault("color", "C0")
        ax.stairs(counts, edges, **kwargs)
        for c in self.switches:
            ax.axvline(c.value, color="C3" if c.change > 0 else "C2", lw=0.8, ls="--")
        for a, b in self.stable_intervals():
            ax.axvspan(a, b, color="C2", alpha=0.12, lw=0)
        ax.set_xlim(self.lo, self.hi)
        ax.set_xlabel(self.name)
        ax.set_ylabel("roots in the right half-plane")
        ax.set_title(f"stability switches in {self.name} ({len(self.switches)})")
        return ax

    def __len__(self) -> int:
        return len(self.crossings)

    def __repr__(self) -> str:
        lines = [
            f"StabilitySwitches({self.name} in [{self.lo:g}, {self.hi:g}], {self.method}: "
            f"{len(self.crossings)} crossings, {len(self.switches)} switches, "
            f"{self.count_lo} right-half-plane roots at {self.lo:g})"
        ]
        for c in self.crossings:
            mark = " switch" if c.is_switch else ""
            lines.append(
                f"  {self.name}={c.value:.12g}  omega={c.omega:.10g}  "
                f"{c.count_before} -> {c.count_after}{mark}"
            )
        return "\n".join(lines)


# ------------------------------------------------------------------------------ the search
def _check_range(name: str, lo, hi) -> tuple[float, float]:
    lo = parameter_value(f"lo of {name!r}", lo, finite=False)
    hi = parameter_value(f"hi of {name!r}", hi, finite=False)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise OptionError(f"need finite lo < hi for {name!r}, got [{lo!r}, {hi!r}]")
    return lo, hi


def _group(raw) -> list[list]:
    """Crossings at the same value (to 1e-12) in one event."""
    events: list[list] = []
    for c in raw:
        if events and abs(c.value - events[-1][0].value) <= 1e-12 * max(1.0, abs(c.value)):
            events[-1].append(c)
        else:
            events.append([c])
    return events


def _by_delays(sweep: Sweep, lo: float, hi: float, first_switch: bool):
    """Crossings by the exact delay method, certified: ``(crossings, checks, count at lo)``, or
    ``None`` when it does not apply.

    The count of right-half-plane roots is constant between crossings, and computed in full in
    the middle of each bracket between them, never at ``lo`` or ``hi``: a range may start or
    end within 1e-7 of a crossing, where the root that crosses is too near the axis to be
    counted. A crossing at ``lo`` itself (to ``1e-12`` of the parameter's scale) is one of the
    range; a bracket too narrow for a count (two crossings within ``1e-6`` of each other) is
    certified by the counts on either side.
    """
    fam = delay_family(sweep, lo, hi)
    if fam is None:
        return None
    span = hi - lo
    raw, zero_root = delay_crossings(fam, lo - 1e-12 * local_scale(lo, span), hi)
    if zero_root:
        raise AnalysisError(
            f"the system has a root at 0 for every value of {sweep.name} "
            "(det(A0 + sum A_k) = 0): it is never asymptotically stable, and no crossing "
            "changes that; remove the integrator or conserved quantity"
        )
    if raw is None:
        return None
    events = _group(raw)
    edges = [lo] + [e[0].value for e in events] + [hi]
    changes = [sum(c.change for c in event) for event in events]

    def middle(i: int) -> float | None:
        """The middle of the bracket before event ``i``, or None for a narrow one."""
        a, b = max(edges[i], lo), min(edges[i + 1], hi)
        mid = 0.5 * (a + b)
        return mid if b - a > 1e-6 * local_scale(mid, span) else None

    def family_count(p: float) -> Count | None:
        """The count at ``p``, or ``None`` when the system there is not the family's (a gain
        that varies with the parameter between the samples)."""
        return sweep.count(p) if fam.holds_at(p, sweep.lin(p)) else None

    first = next((i for i in range(len(edges) - 1) if middle(i) is not None), None)
    if first is None:
        return None
    mid = middle(first)
    assert mid is not None  # first is the first bracket with a middle
    check = family_count(mid)
    if check is None:
        return None
    checks = [check]
    count = checks[0].count - sum(changes[:first])
    if count < 0:
        return None
    count_lo = count
    crossings: list[Crossing] = []
    for i, event in enumerate(events):
        before = count
        count += changes[i]
        for c in event:
            crossings.append(
                Crossing(
                    value=c.value,
                    omega=abs(c.root.imag),
                    change=c.change,
                    count_before=before,
                    count_after=count,
                    root=c.root,
                )
            )
        if count < 0:
            return None
        mid = middle(i + 1)
        if i + 1 > first and mid is not None:
            check = family_count(mid)
            if check is None or check.count != count:
                return None
            checks.append(check)
        if first_switch and (before == 0) != (count == 0):
            break
    return crossings, checks, count_lo


def _crossings(sweep: Sweep, lo: float, hi: float, method: str, first_switch: bool):
    if method in ("auto", "delay"):
        found = _by_delays(sweep, lo, hi, first_switch)
        if found is not None:
            return found[0], found[1], "delay", found[2]
        if method == "delay":
            raise AnalysisError(
                f"method='delay' needs {sweep.name} to enter only as delays (system matrices "
                "independent of it, every delay an integer multiple of one delay proportional to "
                f"{sweep.name}) and the counts to confirm the crossings; use method='auto'"
            )
    if first_switch:
        factored = first_switch_factored(sweep, lo, hi)
    else:
        factored = switches_factored(sweep, lo, hi)
    if factored is not None:
        crossings, checks = factored
    else:
        crossings, checks = follow_roots(sweep, lo, hi, first_switch=first_switch)
    return crossings, checks, "continuation", checks[0].count


def _prepare(model_or_factory, name, lo, hi, params, fixed, method, root_options, where):
    """Every argument checked at the entry (see :mod:`fluidnet.overrides` and
    :mod:`fluidnet.options`): ``(lo, hi, parameter values, root options)``."""
    if method not in _METHODS:
        raise OptionError(f"method = {method!r}: use one of {', '.join(map(repr, _METHODS))}")
    root_kw = check_root_options(root_options, where=where)
    if np.ndim(lo) == 0 and np.ndim(hi) == 0:
        lo, hi = _check_range(name, lo, hi)
    elif where != "critical_value":
        raise OptionError(f"{where} takes one interval: lo and hi must be numbers")
    else:
        lo = parameter_values(f"lo of {name!r}", lo, finite=False)
        hi = parameter_values(f"hi of {name!r}", hi, finite=False)
    arrays = sorted(
        str(k)
        for k, v in {**dict(params or {}), **fixed}.items()
        if np.ndim(v) > 0 and not isinstance(v, (str, bytes))
    )
    if arrays and where == "critical_value":
        raise ParameterError(
            f"critical_value: parameter(s) {', '.join(map(repr, arrays))} given an array in "
            "params: params holds one value per parameter; for the critical value at many "
            "parameter sets (the outer product) give grid={name: 1-D values}"
        )
    values = merge_params(params, fixed, where)
    if name in values:
        raise OptionError(f"{name!r} is the swept parameter: do not also fix it")
    return lo, hi, values, root_kw


def _checks(checks: list[Count]) -> tuple[tuple[float, int], ...]:
    return tuple((c.value, c.count) for c in checks)


def _no_switch_message(name, lo, hi, crossings, checks, method, count_lo) -> str:
    last = checks[-1]
    if count_lo == 0:
        state = "stable on the whole interval (no root in the right half-plane)"
        hint = f"widen [{lo:g}, {hi:g}] towards larger values of {name}"
    else:
        state = (
            f"unstable on the whole interval ({count_lo} right-half-plane roots at {lo:g}, "
            f"{last.count} at {last.value:g})"
        )
        hint = "look outside the interval, or change another parameter"
    seen = f"{len(crossings)} crossings of the imaginary axis, none changing stability"
    return (
        f"no stability switch of {name} in [{lo:g}, {hi:g}] (no crossing of the imaginary axis "
        f"changes stability): the system is {state}; checked by "
        f"{method} ({seen}; right-half-plane roots counted in full at "
        f"{', '.join(f'{c.value:g}' for c in checks[:6])}{', ...' if len(checks) > 6 else ''}). "
        f"To find one, {hint}"
    )


def _critical_one(factory, name, lo, hi, method, root_options) -> CriticalValue:
    sweep = Sweep(factory, name, root_options, anchor=anchor_value(factory, name, lo, hi))
    crossings, checks, used, count_lo = _crossings(sweep, lo, hi, method, first_switch=True)
    switch = next((c for c in crossings if c.is_switch), None)
    at = switch.value if switch is not None else hi
    if not sweep.same_branch(at):
        # the equilibria continued along the range left the branch the full search ranks
        # first: every value again with the full search, as one would one by one
        sweep = Sweep(factory, name, root_options, continued=False)
        crossings, checks, used, count_lo = _crossings(sweep, lo, hi, method, first_switch=True)
        switch = next((c for c in crossings if c.is_switch), None)
    if switch is None:
        raise AnalysisError(_no_switch_message(name, lo, hi, crossings, checks, used, count_lo))
    before = max((c.value for c in checks if c.value < switch.value), default=lo)
    after = min((c.value for c in checks if c.value > switch.value), default=hi)
    return CriticalValue(
        name=name,
        value=float(switch.value),
        omega=float(switch.omega),
        direction=switch.direction,
        bracket=(float(before), float(after)),
        root=complex(switch.root),
        count_before=switch.count_before,
        count_after=switch.count_after,
        method=used,
        checks=_checks(checks),
    )


@blas_bound
def critical_value(
    model_or_factory: Model | Callable[..., Any],
    name: str,
    lo: ArrayLike,
    hi: ArrayLike,
    *,
    params: Mapping[str, Any] | None = None,
    grid: Mapping[str, Any] | None = None,
    method: str = "auto",
    root_options: Mapping[str, Any] | None = None,
    executor: ExecutorSpec = None,
    progress: bool | None = None,
    on_error: str = "raise",
    **fixed: Any,
) -> CriticalValue | CriticalValues:
    """The first value of ``name`` in ``[lo, hi]`` where stability changes, certified.

    Roots are followed (or, for delays, every crossing is computed exactly) from ``lo``
    upwards; the answer is the first crossing of the imaginary axis after which the system
    changes from stable to unstable or back, however close crossings are to each other (see the
    module notes for the methods and the certificate).

    Parameters
    ----------
    model_or_factory : Model or callable
        See :mod:`fluidnet.stability.system`.
    name : str
        The parameter to vary (e.g. a delay).
    lo, hi : float or array_like
        The interval searched, ``lo < hi``. With a ``grid``, arrays broadcasting to the grid's
        shape give each parameter set its own interval.
    params : dict, optional
        Values of the other parameters ``{name: value}``, one real number each.
    grid : dict, optional
        ``{parameter name: 1-D values}``: the critical value is computed for every
        combination (the outer product, one dimension per entry) and returned as a
        :class:`~fluidnet.CriticalValues` collection. Without an
        ``executor``, the sets are solved together as one batched continuation
        (:mod:`fluidnet.stability.pathbatch`: vectorized Newton over stacked systems, counts
        by the argument principle for all sets at once) when the exact delay method does not
        apply; a set the batch cannot certify is solved alone, as without a grid.
    method : {"auto", "delay", "continuation"}
        See the module notes. ``"auto"`` uses the exact delay method when it applies.
    root_options : dict, optional
        Discretization options of :func:`~fluidnet.linear.roots.characteristic_roots`:
        ``max_nodes``, ``n_nodes`` (:data:`fluidnet.options.ROOT_OPTIONS`).
    executor, progress
        With a ``grid`` (see :mod:`fluidnet.sweep`).
    on_error : {"raise", "nan"}
        With a ``grid``: raise the first error, or keep the set's error message (its
        ``value`` is NaN and its ``error`` holds the message).
    **fixed
        Parameter values as keywords (the same as ``params``; a name given both ways is an
        error).

    Returns
    -------
    CriticalValue or CriticalValues
        One parameter set: a :class:`~fluidnet.CriticalValue`
        (``.value``, ``.omega`` in rad/s, ``.frequency`` in Hz, ``.direction``, the counts on
        each side and the certificate ``.checks``). With a ``grid``: a
        :class:`~fluidnet.CriticalValues`, the collection of one
        ``CriticalValue`` per set, shaped like the grid (``res[i, j]``, ``res.sel(N=10)``);
        its attributes ``value``, ``omega``, ``frequency``, ``destabilizing``,
        ``count_before``, ``count_after``, ``method``, ``error`` and the certificate's bracket
        ``bracket_lo``, ``bracket_hi`` are arrays over the grid. Both have ``.to_xarray()``
        (the same variables) and ``.plot()``.

    Raises
    ------
    AnalysisError
        When ``[lo, hi]`` holds no change of stability (the message says whether the system is
        stable or unstable throughout and what was checked), when the crossings cannot be
        certified, or for a root at 0 for every value.
    OptionError
        For a bad interval, method or option.
    ParameterError
        For an unknown parameter name (models), a parameter value, ``lo`` or ``hi`` that is
        not a real number (see :mod:`fluidnet.overrides`), or an array in ``params`` (arrays
        go in ``grid``).

    See Also
    --------
    stability_switches : every crossing in an interval, for delays
    hopf_point : the same crossing with its first Lyapunov coefficient
    margins : the margins of a loop gain at one parameter value

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> k, T = fn.params("k T")
    >>> m = fn.Model({x: -k * x(fn.t - T)}, {k: 2.0, T: 0.1})
    >>> cv = fn.critical_value(m, "T", 0.1, 2.0)       # stable iff k T < pi/2
    >>> abs(cv.value - math.pi / 4) < 1e-12, abs(cv.omega - 2.0) < 1e-12, cv.method
    (True, True, 'delay')
    """
    if on_error not in ("raise", "nan"):
        raise OptionError(f"on_error = {on_error!r}: use 'raise' or 'nan'")
    lo, hi, values, root_kw = _prepare(
        model_or_factory, name, lo, hi, params, fixed, method, root_options, "critical_value"
    )
    arrays = {}
    if grid is not None:
        from ..sweep.grid import grid_axes

        names, axes = grid_axes(grid)
        both = sorted(set(names) & (set(values) | {name}))
        if both:
            raise OptionError(
                f"critical_value: {both} given both in grid and as the swept parameter or in params"
            )
        arrays = dict(zip(names, axes, strict=True))
        values = {**values, **arrays}
    if not arrays and (np.ndim(lo) > 0 or np.ndim(hi) > 0):
        raise OptionError(
            "lo and hi may be arrays only with a grid of parameter sets (one interval per set)"
        )
    if arrays:
        return _critical_grid(
            model_or_factory,
            name,
            lo,
            hi,
            values,
            arrays,
            method,
            root_kw,
            executor,
            progress,
            on_error,
        )
    factory = SystemFactory(model_or_factory, values)
    factory.check_names([name])
    return _critical_one(factory, name, lo, hi, method, root_kw)


def _point_factory(factory: SystemFactory, point: dict) -> SystemFactory:
    """``factory`` with the values of one grid point fixed as well."""
    f = SystemFactory.__new__(SystemFactory)
    f.__dict__.update(factory.__dict__)
    f.fixed = {**factory.fixed, **point}
    return f


class _CriticalTask:
    """One parameter set of a grid of critical values (picklable for process executors)."""

    def __init__(self, factory, name, lo, hi, method, root_kw, on_error):
        self.factory, self.name, self.lo, self.hi = factory, name, lo, hi
        self.method, self.root_kw, self.on_error = method, root_kw, on_error

    def __call__(self, item) -> CriticalValue | str:
        """The set's critical value, or (with ``on_error="nan"``) its error message."""
        point, lo, hi = item
        f = _point_factory(self.factory, point)
        try:
            return _critical_one(f, self.name, lo, hi, self.method, self.root_kw)
        except AnalysisError as exc:
            if self.on_error == "raise":
                where = ", ".join(f"{k}={v:g}" for k, v in point.items())
                raise type(exc)(f"at {where}: {exc}") from exc
            return str(exc)


def _from_batch(name: str, lo: float, hi: float, found) -> CriticalValue:
    """The :class:`CriticalValue` of a set solved by :func:`~.pathbatch.first_switches`."""
    switch = found.crossing
    before = max((v for v, _ in found.checks if v < switch.value), default=lo)
    after = min((v for v, _ in found.checks if v > switch.value), default=hi)
    return CriticalValue(
        name=name,
        value=float(switch.value),
        omega=float(switch.omega),
        direction=switch.direction,
        bracket=(float(before), float(after)),
        root=complex(switch.root),
        count_before=switch.count_before,
        count_after=switch.count_after,
        method="continuation",
        checks=tuple(found.checks),
    )


def _vectorized(factory: SystemFactory, name: str, points: list[dict]):
    """``(ks, ps) -> Stack`` when the factory is vectorized (a ``stacked`` method taking the
    parameters as arrays, see :mod:`~.system`), else ``None``."""
    stacked = getattr(factory.source, "stacked", None)
    if factory.is_model or not callable(stacked):
        return None
    cols = {n: np.array([pt[n] for pt in points], dtype=float) for n in points[0]}

    def build(ks, ps):
        K = len(ks)
        fixed = {n: np.full(K, float(v)) for n, v in factory.fixed.items()}
        return stacked(**fixed, **{n: c[ks] for n, c in cols.items()}, **{name: ps})

    return build


def critical_batch(factory: SystemFactory, name, points, lo, hi, method, root_kw):
    """Critical values of many parameter sets as one batched continuation.

    Returns a list with a :class:`CriticalValue` per point, or ``None`` where the batch does not
    apply (the exact delay method does, or ``root_options`` are given) or could not certify the
    set: the caller computes those one by one. The batch applies when the parameter is not a
    pure delay scale of the first point's system (see :mod:`~.delaysweep`), since the exact
    method is then better.
    """
    from .pathbatch import first_switches

    K = len(points)
    if K == 0 or method == "delay" or root_kw:
        return [None] * K
    factories = [_point_factory(factory, pt) for pt in points]
    sweeps = [Sweep(f, name, root_kw) for f in factories]
    if method == "auto":
        try:
            if delay_family(sweeps[0], lo[0], hi[0]) is not None:
                return [None] * K
        except FluidnetError:
            return [None] * K
    found, _ = first_switches(sweeps, lo, hi, _vectorized(factory, name, points))
    return [
        None if f is None else _from_batch(name, float(lo[k]), float(hi[k]), f)
        for k, f in enumerate(found)
    ]


def _critical_grid(
    source, name, lo, hi, values, arrays, method, root_kw, executor, progress, on_error
) -> CriticalValues:
    from ..sweep import grid_points, resolve_executor

    if on_error not in ("raise", "nan"):
        raise OptionError(f"on_error = {on_error!r}: use 'raise' or 'nan'")
    scalars = {k: v for k, v in values.items() if k not in arrays}
    factory = SystemFactory(source, scalars)
    names, shape, points = grid_points(arrays)
    factory.check_names([name, *names])
    try:
        los = np.broadcast_to(lo, shape).reshape(-1)
        his = np.broadcast_to(hi, shape).reshape(-1)
    except ValueError as exc:
        raise OptionError(
            f"lo (shape {np.shape(lo)}) and hi (shape {np.shape(hi)}) must broadcast to the "
            f"grid of parameter sets (shape {shape})"
        ) from exc
    for a, b in zip(los, his, strict=True):
        _check_range(name, a, b)
    # one batched continuation for every set when the work runs here (not in other processes)
    batched = [None] * len(points)
    if executor is None:
        batched = critical_batch(factory, name, points, los, his, method, root_kw)
    rest = [i for i, cv in enumerate(batched) if cv is None]
    task = _CriticalTask(factory, name, lo, hi, method, root_kw, on_error)
    done = resolve_executor(executor).map(
        task,
        [(points[i], float(los[i]), float(his[i])) for i in rest],
        progress=progress,
        desc=f"critical {name} ({factory.name})",
    )
    found: list[CriticalValue | str | None] = list(batched)
    for i, one in zip(rest, done, strict=True):
        found[i] = one
    results = [r for r in found if r is not None]
    if len(results) != len(found):  # every set is solved by the batch or by a task
        raise AnalysisError(f"critical_value: {len(found) - len(results)} sets left unsolved")
    attrs: dict[str, Any] = dict(scalars)
    intervals = None
    if np.ndim(lo) == 0 and np.ndim(hi) == 0:
        attrs.update(lo=float(lo), hi=float(hi))
    else:
        intervals = (los.reshape(shape).copy(), his.reshape(shape).copy())
    return CriticalValues(name, names, arrays, results, attrs=attrs, intervals=intervals)


@blas_bound
def stability_switches(
    model_or_factory: Model | Callable[..., Any],
    name: str,
    lo: float,
    hi: float,
    *,
    params: Mapping[str, Any] | None = None,
    method: str = "auto",
    root_options: Mapping[str, Any] | None = None,
    **fixed: Any,
) -> StabilitySwitches:
    """Every crossing of the imaginary axis as ``name`` sweeps ``[lo, hi]``, certified.

    Parameters
    ----------
    model_or_factory, name, lo, hi, params, method, root_options, **fixed
        As in :func:`critical_value` (scalar parameter values only).

    Returns
    -------
    StabilitySwitches
        ``.crossings`` (every crossing, with direction, frequency and the right-half-plane
        count on each side), ``.switches`` (those that change stability), ``.count(value)``,
        ``.stable_intervals()``, ``.to_xarray()``, ``.plot(ax=None)`` (the count as a step
        function) and the certificate ``.checks``.

    Raises
    ------
    AnalysisError
        When the crossings cannot be certified, or for a root at 0 for every value.
    OptionError
        For a bad interval, method or option.
    ParameterError
        As in :func:`critical_value` (an array value included).

    See Also
    --------
    critical_value : the first crossing only

    Examples
    --------
    The delayed oscillator ``x'' + 2 zeta x' + x = -K x(t - tau)`` (Cooke and Grossman 1982)
    is stable at ``tau = 0`` and switches stability 11 times for ``tau`` in ``[0, 80]``:

    >>> import fluidnet as fn
    >>> x1, x2 = fn.states("x1 x2"); zeta, K, tau = fn.params("zeta K tau")
    >>> m = fn.Model({x1: x2(fn.t), x2: -x1(fn.t) - 2*zeta*x2(fn.t) - K*x1(fn.t - tau)},
    ...              {zeta: 0.1, K: 0.25, tau: 1.0})
    >>> sw = fn.stability_switches(m, "tau", 0.0, 80.0)
    >>> len(sw.switches), round(float(sw.switches[0].value), 9), sw.switches[0].direction
    (11, 0.956825895, 'destabilizing')
    """
    lo_, hi_, values, root_kw = _prepare(
        model_or_factory, name, lo, hi, params, fixed, method, root_options, "stability_switches"
    )
    lo, hi = float(lo_), float(hi_)  # numbers already: _prepare takes one interval here
    factory = SystemFactory(model_or_factory, values)
    factory.check_names([name])
    sweep = Sweep(factory, name, root_kw, anchor=anchor_value(factory, name, lo, hi))
    crossings, checks, used, count_lo = _crossings(sweep, lo, hi, method, first_switch=False)
    ends = {crossings[0].value, hi} if crossings else {hi}
    if not all(sweep.same_branch(v) for v in sorted(ends)):
        # continued off the branch the full search ranks first: without continuation
        sweep = Sweep(factory, name, root_kw, continued=False)
        crossings, checks, used, count_lo = _crossings(sweep, lo, hi, method, first_switch=False)
    return StabilitySwitches(
        name=name,
        lo=lo,
        hi=hi,
        crossings=tuple(crossings),
        count_lo=count_lo,
        method=used,
        checks=_checks(checks),
    )
