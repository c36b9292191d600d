"""Where a packet run's measured tail starts, and how long it lasts: decided from the fluid
model's time constants, per parameter point.

A packet run starts from empty queues, with flows starting over ``[0, start)`` in slow start;
what the comparison measures -- the mean queue, its swing, the period of a cycle -- belongs to
the run after that start-up has died out (or, for a fluid-unstable point, after the queue has
grown into its cycle). A tail fixed by hand (half the run, a third) is too early at one point
and wasteful at another: the agreement map used to call a still-settling queue "oscillating",
and report no fluid period when the tail held less than one cycle. The rule here reads the
time constants from the fluid model at the point:

* ``rtt``: the round trip at the fluid equilibrium, ``R0 = rtt_propagation + q*/C``;
* ``abscissa``, ``period``: the rightmost characteristic root ``alpha + i omega`` of the
  linearization at the equilibrium (:func:`fluidnet.stability_chart`); ``period = 2 pi/omega``
  (at a fluid-unstable point near its Hopf point, the period of the cycle that grows);
* ``cycle``: at a fluid-unstable point, the period of the fluid model's own limit cycle,
  measured on a nonlinear fluid run (:func:`fluidnet.oscillation` over the second half of a run
  of :data:`PROBE_PERIODS` linear periods from the mapping's start). Away from the Hopf point
  the cycle is much slower than the linear mode -- MGT/RED with 10 flows at Tp = 0.3 s: 6.4 s
  against ``2 pi/omega`` = 2.7 s -- so a tail of linear periods would hold less than two
  cycles; where no cycle is found the linear period stands in;
* ``averaging``: the time constant of the AQM's averaging filter where the model has one
  (RED: ``1/K`` with ``K = -ln(1 - weight)/delta`` for MGT/RED, ``1/(alpha c)`` for Reno/RED),
  NaN otherwise.

The rule needs a smooth equilibrium to linearize: DCTCP's fluid model switches at ``q = K``
and has none (its queue rests on a limit cycle), so its items take their tail from the fluid
cycle itself (:func:`fluidnet.packet.experiments.dctcp_oscillation`).

**The rule** (constants :data:`STARTUP_RTTS`, :data:`SETTLE`, :data:`GROWTH_PERIODS`,
:data:`TAIL_PERIODS`, :data:`TAIL_RTTS`):

* start-up: ``startup = start + 10 R0`` (the last flow starts at ``start``; slow start and the
  first windows take a few round trips);
* the tail starts at ``after = startup + settle`` where, at a fluid-stable point,
  ``settle = 5 max(1/|alpha|, averaging)`` -- five time constants of the slowest decaying mode
  (what is left of a start-up deviation is below e^-5 < 1 % of it) and of the filter that must
  forget the start-up -- and, at a fluid-unstable point, ``settle = max(3 cycle, 5
  averaging)``: three cycles for the queue to grow into its cycle;
* the tail lasts ``tail = max(4 T, 20 R0)`` with ``T`` the cycle (fluid-unstable) or the
  period of the rightmost mode (fluid-stable), so that a swing and a period are measured over
  whole cycles (a real rightmost root has no period: then ``20 R0``, and ``5/|alpha|`` when
  that is longer);
* the run lasts ``t_end = after + tail``.

:func:`transient` computes it for a library model with a packet counterpart
(:func:`fluidnet.packet.scenario_for`); :func:`transient_rule` from the time constants
themselves (the agreement map passes its chart's abscissa and frequency, point by point).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ParameterError

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from ..symbolic.model import Model

__all__ = [
    "Transient",
    "transient",
    "transient_rule",
    "averaging_time",
    "fluid_cycle",
    "STARTUP_RTTS",
    "SETTLE",
    "GROWTH_PERIODS",
    "TAIL_PERIODS",
    "TAIL_RTTS",
    "PROBE_PERIODS",
]

#: Round trips after the last flow's start that slow start and the first windows take.
STARTUP_RTTS = 10.0
#: Time constants of the slowest decaying mode (and of the averaging filter) before the tail.
SETTLE = 5.0
#: Periods a fluid-unstable queue takes to grow into its cycle.
GROWTH_PERIODS = 3.0
#: Periods of the rightmost mode in the tail.
TAIL_PERIODS = 4.0
#: Round trips in the tail at least.
TAIL_RTTS = 20.0
#: Length of the nonlinear fluid run that measures the cycle, in linear periods.
PROBE_PERIODS = 200.0


@dataclass(frozen=True)
class Transient:
    """The measured tail of a packet run at one point (see :mod:`fluidnet.packet.timescales`).

    Attributes
    ----------
    after : float
        Start of the measured tail (s).
    tail : float
        Its length (s).
    t_end : float
        Length of the run, ``after + tail`` (s).
    startup : float
        End of the flows' start-up, ``start + 10 R0`` (s).
    settle : float
        Time allowed after the start-up for the start-up deviation to die out, or for the
        queue to grow into its cycle (s).
    rtt : float
        Round trip at the fluid equilibrium (s).
    abscissa : float
        Real part of the rightmost root of the linearization (1/s; < 0: fluid-stable).
    period : float
        ``2 pi / omega`` of the rightmost root (s; NaN for a real root).
    averaging : float
        Time constant of the AQM's averaging filter (s; NaN where there is none).
    cycle : float
        Period of the nonlinear fluid cycle at a fluid-unstable point (s; NaN where none was
        measured: a stable point, or no cycle found).
    """

    after: float
    tail: float
    t_end: float
    startup: float
    settle: float
    rtt: float
    abscissa: float
    period: float
    averaging: float
    cycle: float = math.nan

    @property
    def stable(self) -> bool:
        """Whether the fluid equilibrium is linearly stable at the point."""
        return self.abscissa < 0

    def describe(self) -> str:
        """The rule's numbers in a sentence (for a figure's caption or an item's note)."""
        mode = (
            f"rightmost root {self.abscissa:.3g} +/- {2 * math.pi / self.period:.3g}i /s "
            f"(period {self.period:.3g} s)"
            if math.isfinite(self.period)
            else f"rightmost root {self.abscissa:.3g} /s (real)"
        )
        avg = f", averaging {self.averaging:.3g} s" if math.isfinite(self.averaging) else ""
        if math.isfinite(self.cycle):
            avg += f", fluid cycle {self.cycle:.3g} s"
        return (
            f"tail [{self.after:.3g}, {self.t_end:.3g}] s: start-up to {self.startup:.3g} s "
            f"(R0 = {self.rtt:.3g} s), then {self.settle:.3g} s to "
            f"{'settle' if self.stable else 'grow into the cycle'}; {mode}{avg}"
        )

    def to_xarray(self) -> xr.Dataset:
        """The numbers as a Dataset of scalars (attribute ``rule``: :meth:`describe`)."""
        import xarray as xr

        return xr.Dataset(
            {k: ((), float(v)) for k, v in asdict(self).items()}, attrs={"rule": self.describe()}
        )

    def plot(self, ax: Axes | None = None) -> Axes:
        """The run's time line: start-up, settling (or growth) and the measured tail.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 1.6))
        spans = [
            (0.0, self.startup, "0.8", "start-up"),
            (self.startup, self.after, "C1", "settle" if self.stable else "growth"),
            (self.after, self.t_end, "C0", "measured tail"),
        ]
        for lo, hi, color, label in spans:
            ax.barh(0, hi - lo, left=lo, color=color, label=label)
        ax.set_yticks([])
        ax.set_xlabel("t (s)")
        ax.legend(fontsize=7, ncol=3, loc="upper center")
        return ax


def transient_rule(
    abscissa: float,
    omega: float,
    *,
    rtt: float,
    start: float = 1.0,
    averaging: float = math.nan,
    cycle: float = math.nan,
) -> Transient:
    """The rule of :mod:`fluidnet.packet.timescales` from the time constants themselves.

    Parameters
    ----------
    abscissa : float
        Real part of the rightmost root of the linearization (1/s).
    omega : float
        ``|Im|`` of that root (rad/s; 0 for a real root).
    rtt : float
        Round trip at the equilibrium (s, > 0).
    start : float
        The flows start over ``[0, start)`` (s).
    averaging : float
        Time constant of the AQM's averaging filter (s; NaN: none).
    cycle : float
        Period of the nonlinear fluid cycle (s) at a fluid-unstable point (NaN: not known; the
        linear period stands in).

    Returns
    -------
    Transient

    Raises
    ------
    ParameterError
        For a time constant that is not a finite number (a root at exactly 0 has none).

    Examples
    --------
    >>> from fluidnet.packet.timescales import transient_rule
    >>> tr = transient_rule(-0.5, 3.0, rtt=0.1, start=1.0)
    >>> round(tr.after, 3), round(tr.tail, 3)   # 1 + 10*0.1 + 5/0.5; 4*2*pi/3
    (12.0, 8.378)
    """
    for name, v in (("abscissa", abscissa), ("omega", omega), ("rtt", rtt), ("start", start)):
        if not math.isfinite(v):
            raise ParameterError(f"{name} = {v!r}: the transient rule needs a finite value")
    if rtt <= 0 or start < 0:
        raise ParameterError(f"rtt = {rtt!r} must be > 0 and start = {start!r} >= 0")
    if abscissa == 0:
        raise ParameterError(
            "abscissa = 0: a root on the imaginary axis has no decay or growth time; the "
            "transient rule needs a point off the stability boundary"
        )
    avg = float(averaging) if math.isfinite(averaging) else 0.0
    period = 2 * math.pi / omega if omega > 0 else math.nan
    cycle = float(cycle) if abscissa > 0 and math.isfinite(cycle) and cycle > 0 else math.nan
    slow = cycle if math.isfinite(cycle) else period  # the oscillation the tail must hold
    startup = start + STARTUP_RTTS * rtt
    if abscissa < 0:
        settle = SETTLE * max(1.0 / -abscissa, avg)
    else:
        growth = GROWTH_PERIODS * slow if math.isfinite(slow) else SETTLE / abscissa
        settle = max(growth, SETTLE * avg)
    if math.isfinite(slow):
        tail = max(TAIL_PERIODS * slow, TAIL_RTTS * rtt)
    else:
        tail = max(TAIL_RTTS * rtt, SETTLE / abs(abscissa))
    after = startup + settle
    return Transient(
        after=after,
        tail=tail,
        t_end=after + tail,
        startup=startup,
        settle=settle,
        rtt=float(rtt),
        abscissa=float(abscissa),
        period=period,
        averaging=float(averaging) if math.isfinite(averaging) else math.nan,
        cycle=cycle,
    )


def fluid_cycle(model: Model, params: Mapping[str, float] | None, period: float) -> float:
    """Period of the nonlinear fluid model's cycle (s) from the mapping's start (an empty
    queue), measured over the second half of a run of ``PROBE_PERIODS * period``; NaN when the
    run shows no sustained cycle (or fails).

    Parameters
    ----------
    model : fluidnet.Model
    params : dict, optional
    period : float
        The linear period ``2 pi/omega`` (s): sets the run's length.

    Returns
    -------
    float
    """
    from ..dde.oscillation import oscillation
    from ..dde.simulation import simulate
    from ..errors import FluidnetError
    from .mapping import fluid_view

    if not (math.isfinite(period) and period > 0):
        return math.nan
    view = fluid_view(model, params)
    horizon = PROBE_PERIODS * period
    try:
        sol = simulate(model, horizon, params=dict(params or {}), history=view["history"])
        osc = oscillation(sol, view["queue"], after=horizon / 2)
    except FluidnetError:
        return math.nan
    return float(osc.period) if osc.sustained else math.nan


def averaging_time(model: Model, params: Mapping[str, float] | None = None) -> float:
    """Time constant of the averaging filter of a library model's AQM (s; NaN: none).

    MGT/RED: ``1/K``, ``K = -ln(1 - weight)/delta``; Reno/RED: ``1/(alpha c)``; the others
    have none.

    Parameters
    ----------
    model : fluidnet.Model
    params : dict, optional

    Returns
    -------
    float
    """
    from .mapping import _values

    name = getattr(model, "name", "")
    v = _values(model, params)
    if name.startswith("mgt_red"):
        return -v["delta"] / math.log(1.0 - v["weight"])
    if name.startswith("reno_red"):
        return 1.0 / (v["alpha"] * v["c"])
    return math.nan


def transient(
    model: Model,
    params: Mapping[str, float] | None = None,
    *,
    start: float = 1.0,
) -> Transient:
    """The measured tail of a packet run of a library model's scenario at one point.

    Parameters
    ----------
    model : fluidnet.Model
        A library model with a packet counterpart (:func:`fluidnet.packet.scenario_for`).
    params : dict, optional
        Parameter values of the point.
    start : float
        The flows start over ``[0, start)`` (s; ``scenario_for``'s default is 1).

    Returns
    -------
    Transient
        ``after``, ``tail``, ``t_end`` and the time constants they come from.

    Raises
    ------
    ModelError
        For a model without a packet counterpart.
    AnalysisError
        For a point without a smooth equilibrium (DCTCP: see the module notes).
    ParameterError
        At a point on the stability boundary (a root at 0 real part).

    Examples
    --------
    >>> import fluidnet as fn
    >>> m = fn.models.mgt_red(C=1250, weight=0.001, delta=1 / 1250, min_th=20, max_th=200)
    >>> tr = fn.packet.transient(m, {"N": 10, "Tp": 0.05})
    >>> tr.stable, round(tr.averaging, 3)          # RED's average: 1/K = 0.8 ms / 1e-3
    (True, 0.8)
    """
    from ..stability.chart import stability_chart
    from .mapping import fluid_view

    view = fluid_view(model, params)
    values: dict[str, Any] = dict(params or {})
    eq = model.equilibrium(params=values)
    rtt = view["rtt"] + float(eq[view["queue"]]) / view["capacity"]
    name = next(iter(values)) if values else next(iter(model.values))
    point = {name: [float(values.get(name, model.values[name]))]}
    fixed = {k: v for k, v in values.items() if k != name}
    chart = stability_chart(model, point, params=fixed)
    abscissa = float(chart["abscissa"].values.ravel()[0])
    omega = float(chart["omega"].values.ravel()[0])
    cycle = (
        fluid_cycle(model, params, 2 * math.pi / omega) if abscissa > 0 and omega > 0 else math.nan
    )
    return transient_rule(
        abscissa,
        omega,
        rtt=rtt,
        start=start,
        averaging=averaging_time(model, params),
        cycle=cycle,
    )
