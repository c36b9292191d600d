"""The packet halves of the reproduced papers: ns-3 experiments next to the fluid predictions.

Every function runs a small study and returns an :class:`Experiment` (measured values as an
xarray Dataset, the claim it tests, a figure). Sizes default to what runs in minutes on one
core; the papers' own experiments were longer, and their sizes are the functions' arguments.

=====================================  ==================================================
function                               what it measures
=====================================  ==================================================
:func:`mgt_red_onset`                  MGT/RED mean queue and oscillation against the
                                       round-trip delay or the number of flows, with the
                                       fluid critical value (Misra, Gong & Towsley 2000;
                                       Hollot et al. 2001)
:func:`critical_delay_runs`            Reno/RED or SBRM below and above their fluid
                                       critical delays (Zimmermann 2005, Sec 6.7)
:func:`dctcp_oscillation`              DCTCP's queue oscillation against K and g (fluid
                                       limit cycle and ns-3; Alizadeh et al. 2011)
:func:`rcp_completion_times`           RCP flow completion times against processor
                                       sharing (Dukkipati & McKeown 2004, eq (3))
=====================================  ==================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import OptionError, ParameterError
from .analysis import queue_oscillation
from .mapping import fluid_view, scenario_for

__all__ = [
    "Experiment",
    "mgt_red_onset",
    "critical_delay_runs",
    "dctcp_oscillation",
    "rcp_completion_times",
]


@dataclass
class Experiment:
    """Values measured by a packet experiment.

    Attributes
    ----------
    name : str
    claim : str
        The qualitative claim of the paper the experiment tests.
    data : xarray.Dataset
        Everything measured (fluid and packet sides).
    """

    name: str
    claim: str
    data: Any
    _plot: Callable | None = field(repr=False, default=None)

    def to_xarray(self):
        return self.data

    def plot(self, ax=None):
        """The experiment's figure (returns its Axes)."""
        if self._plot is None:
            raise OptionError(f"experiment {self.name!r} has no figure")
        return self._plot(self.data, ax)


def _axes(ax, n: int = 1):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(1, n, figsize=(5.2 * n, 3.8))
    return ax


def _runs(scenarios: list, t_end, seeds: Sequence[int], n_points=None) -> list:
    """All runs of an experiment as one batch (stored runs read back; a Dask cluster when
    ``$FLUIDNET_SCHEDULER`` names one): ``out[i][k]`` for scenario ``i``, seed ``k``."""
    from .batch import simulate_many

    return simulate_many(scenarios, t_end, seeds=seeds, n_points=n_points)


def _tails(model, points: list[dict], t_end, after, start: float = 1.0) -> list[tuple]:
    """``(t_end, after)`` of every point: as given, or from the fluid time constants
    (:func:`fluidnet.packet.transient`) where not given."""
    from .timescales import transient

    out = []
    for point in points:
        if t_end is not None and after is not None:
            out.append((float(t_end), float(after)))
            continue
        rule = transient(model, point, start=start)
        length = float(t_end) if t_end is not None else rule.t_end
        begin = float(after) if after is not None else rule.after
        if not begin < length:
            raise ParameterError(
                f"t_end = {length:g} s is too short at {point}: the fluid time constants put "
                f"the measured tail after {begin:g} s ({rule.describe()}); give a longer t_end, "
                "or t_end=None to take the rule's"
            )
        out.append((length, begin))
    return out


def mgt_red_onset(
    over: str = "Tp",
    values: Sequence[float] = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4),
    *,
    model=None,
    params: Mapping[str, float] | None = None,
    t_end: float | None = None,
    after: float | None = None,
    seeds: Sequence[int] = (1,),
) -> Experiment:
    """MGT/RED's mean queue and oscillation against one parameter, fluid and packets.

    Parameters
    ----------
    over : {"Tp", "N"}
        The parameter varied.
    values : sequence of float
    model : fluidnet.Model, optional
        Default: ``fn.models.mgt_red`` on 10 Mb/s (1250 packets/s, RED 20/200/0.1, weight
        0.001 per packet).
    params : dict, optional
        The other parameters (default ``{"N": 10}`` or ``{"Tp": 0.1}``).
    t_end, after : float, optional
        Length of every run and start of the measured tail (s); default, at each value, from
        the fluid time constants (:func:`fluidnet.packet.transient`).
    seeds : sequence of int

    Returns
    -------
    Experiment
        ``data``: per value, the fluid equilibrium queue, stability, nonlinear fluid mean
        queue, swing and period, the packet mean queue, swing, period and verdict (mean over
        seeds), the run's ``t_end`` and ``after``, and the attribute ``fluid_critical`` (the
        value where the fluid model loses stability, NaN if it does not in the range).
    """
    import xarray as xr

    from .. import models
    from ..dde.oscillation import oscillation
    from ..dde.simulation import simulate as fluid_simulate
    from ..stability.critical import critical_value

    if over not in ("Tp", "N"):
        raise ParameterError(f"over = {over!r}: use 'Tp' or 'N'")
    m = model or models.mgt_red(C=1250, weight=0.001, delta=1 / 1250, min_th=20, max_th=200)
    base = dict(params or ({"N": 10} if over == "Tp" else {"Tp": 0.1}))
    xs = np.asarray(values, dtype=float)
    cols: dict[str, list] = {k: [] for k in _ONSET_VARS}
    points = [{**base, over: float(x)} for x in xs]
    tails = _tails(m, points, t_end, after)
    batch = _runs([scenario_for(m, params=point) for point in points], [t for t, _ in tails], seeds)
    for point, (length, begin), runs in zip(points, tails, batch, strict=True):
        view = fluid_view(m, point)
        eq = m.equilibrium(params=point)
        sol = fluid_simulate(m, length, params=point, history=view["history"])
        t = np.linspace(0, length, int(length * 100) + 1)
        fq = queue_oscillation(t, sol(t, "q"), rtt=view["rtt"], after=begin)
        cyc = oscillation(sol, "q", after=begin)
        pk = [queue_oscillation(r.time, r.queue[:, 0], rtt=view["rtt"], after=begin) for r in runs]
        cols["t_end"].append(length)
        cols["after"].append(begin)
        cols["fluid_equilibrium"].append(eq["q"])
        cols["fluid_stable"].append(float(m.linearize(params=point).is_stable()))
        cols["fluid_queue"].append(fq.mean)
        cols["fluid_swing"].append(fq.swing)
        cols["fluid_period"].append(cyc.period if cyc.sustained else math.nan)
        cols["packet_queue"].append(np.mean([p.mean for p in pk]))
        cols["packet_swing"].append(np.mean([p.swing for p in pk]))
        cols["packet_period"].append(np.nanmean([p.period for p in pk]) if pk else math.nan)
        cols["packet_oscillating"].append(np.mean([p.oscillating for p in pk]))
    try:
        crit = float(critical_value(m, over, xs.min(), xs.max(), params=base).value)
    except Exception:  # noqa: BLE001 - no change of stability in the range: stated as NaN
        crit = math.nan
    data = xr.Dataset(
        {k: (over, np.asarray(v, dtype=float)) for k, v in cols.items()},
        coords={over: xs},
        attrs={"fluid_critical": crit, "seeds": list(seeds)}
        | {f"param_{k}": v for k, v in base.items()},
    )
    return Experiment(
        "mgt_red_onset",
        "below the fluid critical value the packet queue sits at the fluid equilibrium; above "
        "it the packet queue oscillates with the fluid limit cycle's size and period",
        data,
        _plot_onset,
    )


_ONSET_VARS = (
    "t_end",
    "after",
    "fluid_equilibrium",
    "fluid_stable",
    "fluid_queue",
    "fluid_swing",
    "fluid_period",
    "packet_queue",
    "packet_swing",
    "packet_period",
    "packet_oscillating",
)


def _plot_onset(d, ax):
    axes = _axes(ax, 2)
    over = next(iter(d.coords))
    x = d[over].values
    a = axes[0]
    a.plot(x, d["fluid_equilibrium"], "k--", label="fluid equilibrium")
    a.plot(x, d["fluid_queue"], "s-", color="C0", label="fluid (run mean)")
    a.plot(x, d["packet_queue"], "o-", color="C1", label="ns-3")
    a.set_ylabel("mean queue (pkts)")
    a = axes[1]
    a.plot(x, d["fluid_swing"], "s-", color="C0", label="fluid")
    a.plot(x, d["packet_swing"], "o-", color="C1", label="ns-3")
    a.axhline(1.0, color="0.6", lw=0.8, ls=":")
    a.set_ylabel("swing (q95 - q5)/mean")
    for a in axes:
        if np.isfinite(d.attrs["fluid_critical"]):
            a.axvline(d.attrs["fluid_critical"], color="C3", lw=1, label="fluid critical")
        a.set_xlabel(over)
        a.legend(fontsize=7)
    return axes


def critical_delay_runs(
    law: str = "reno_red",
    factors: Sequence[float] = (0.5, 0.8, 1.25, 2.0),
    *,
    params: Mapping[str, float] | None = None,
    t_end: float | None = None,
    after: float | None = None,
    seeds: Sequence[int] = (1,),
) -> Experiment:
    """Reno/RED or SBRM (Zimmermann 2005) in ns-3 at multiples of the fluid critical delay.

    Zimmermann's Sec 6.7 validates the critical delays of Table 6.6.2 by simulation: below the
    critical delay the queue settles, above it oscillates. Here the fluid critical delay
    ``d*`` comes from :func:`fluidnet.critical_value` (certified) and ns-3 runs the model's
    scenario at ``factor * d*``.

    Parameters
    ----------
    law : {"reno_red", "sbrm"}
    factors : sequence of float
        Delays as multiples of the fluid critical delay.
    params : dict, optional
        Model parameters (default: the model's, Zimmermann's example: 30 flows on 10 000
        packets/s).
    t_end, after, seeds
        Run length and start of the measured tail (default, at each delay, from the fluid
        time constants: :func:`fluidnet.packet.transient`), seeds.

    Returns
    -------
    Experiment
        ``data``: per factor, the delay, the run's ``t_end`` and ``after``, the fluid verdict,
        packet swing, mean queue and verdict; attribute ``critical_delay``.
    """
    import xarray as xr

    from .. import models
    from ..stability.critical import critical_value

    if law not in ("reno_red", "sbrm"):
        raise ParameterError(f"law = {law!r}: use 'reno_red' or 'sbrm'")
    m = getattr(models, law)()
    base = dict(params or {})
    d0 = float({**m.values, **base}["d"])
    crit = float(critical_value(m, "d", 0.05 * d0, 20 * d0, params=base).value)
    fs = np.asarray(factors, dtype=float)
    names = ("d", "t_end", "after", "fluid_stable", "packet_swing", "packet_queue")
    cols: dict[str, list] = {k: [] for k in names}
    cols["packet_oscillating"] = []
    points = [{**base, "d": float(f * crit)} for f in fs]
    tails = _tails(m, points, t_end, after)
    batch = _runs([scenario_for(m, params=point) for point in points], [t for t, _ in tails], seeds)
    for point, (length, begin), runs in zip(points, tails, batch, strict=True):
        pk = [queue_oscillation(r.time, r.queue[:, 0], rtt=point["d"], after=begin) for r in runs]
        cols["d"].append(point["d"])
        cols["t_end"].append(length)
        cols["after"].append(begin)
        cols["fluid_stable"].append(float(m.linearize(params=point).is_stable()))
        cols["packet_swing"].append(np.mean([p.swing for p in pk]))
        cols["packet_queue"].append(np.mean([p.mean for p in pk]))
        cols["packet_oscillating"].append(np.mean([p.oscillating for p in pk]))
    data = xr.Dataset(
        {k: ("factor", np.asarray(v, dtype=float)) for k, v in cols.items()},
        coords={"factor": fs},
        attrs={"law": law, "critical_delay": crit},
    )
    return Experiment(
        f"critical_delay_runs({law})",
        "the packet queue settles below the fluid critical delay and oscillates above it "
        "(Zimmermann 2005, Sec 6.7)",
        data,
        _plot_critical,
    )


def _plot_critical(d, ax):
    ax = _axes(ax)
    ax.plot(d["factor"], d["packet_swing"], "o-", color="C1", label="ns-3 swing")
    ax.axvline(1.0, color="C3", lw=1, label=f"fluid d* = {d.attrs['critical_delay']:.3g} s")
    ax.axhline(1.0, color="0.6", lw=0.8, ls=":")
    ax.set_xlabel("delay / fluid critical delay")
    ax.set_ylabel("swing (q95 - q5)/mean")
    ax.set_title(d.attrs["law"])
    ax.legend(fontsize=7)
    return ax


def dctcp_oscillation(
    K_values: Sequence[float] = (20.0, 40.0, 65.0),
    g_values: Sequence[float] = (1 / 16,),
    *,
    params: Mapping[str, float] | None = None,
    t_end: float = 0.04,
    after: float = 0.015,
    start: float | None = None,
    seeds: Sequence[int] = (1,),
) -> Experiment:
    """DCTCP's queue oscillation against the marking threshold K and the gain g.

    The fluid model (Alizadeh, Javanmard & Prabhakar 2011) has a limit cycle whose amplitude
    shrinks relative to K as K grows; the packet side runs ``fn.models.dctcp``'s scenario
    (:func:`~fluidnet.packet.scenario_for`) in ns-3. Both queues are sampled ten times per
    round-trip propagation delay ``d`` and measured the same way
    (:func:`~fluidnet.packet.queue_oscillation`, averaged over ``d``) after ``after``.

    Parameters
    ----------
    K_values, g_values : sequence of float
        Marking thresholds (packets) and gains; every pair is run.
    params : dict, optional
        The model's other parameters (default: 10 flows, 10 Gb/s of 1500-byte packets,
        ``d = 100`` us).
    t_end, after : float
        Length of every run and start of the measured tail (s).
    start : float, optional
        The packet flows start uniformly over ``[0, start)`` (default ``20 d``: all flows are
        running long before the tail; the fluid model starts them together).
    seeds : sequence of int

    Returns
    -------
    Experiment
        ``data`` with dimensions ``(K, g)``: fluid and packet mean queue, period (s),
        ``amplitude`` (peak to trough of the last cycle, packets) and ``span`` (``q95 - q5``
        of the averaged tail, packets: every cycle of the tail counts, so it is the steadier
        measure of a packet queue), the packet run's CPU time.
    """
    import xarray as xr

    from .. import models
    from ..dde.oscillation import oscillation
    from ..dde.simulation import simulate as fluid_simulate

    m = models.dctcp()
    base = dict(params or {})
    Ks = np.asarray(K_values, dtype=float)
    gs = np.asarray(g_values, dtype=float)
    names = ("fluid_amplitude", "fluid_span", "fluid_queue", "fluid_period")
    names += ("packet_amplitude", "packet_span", "packet_queue", "packet_period", "packet_cpu")
    out = {k: np.full((Ks.size, gs.size), math.nan) for k in names}
    pairs = [
        (i, j, {**base, "K": float(K), "g": float(g)})
        for i, K in enumerate(Ks)
        for j, g in enumerate(gs)
    ]
    rtt = fluid_view(m, base)["rtt"]  # d: the same at every (K, g)
    spread = 20 * rtt if start is None else float(start)
    n_points = int(round(t_end / (rtt / 10))) + 1  # ten samples per RTT
    scenarios = [scenario_for(m, params=point, start=spread) for _, _, point in pairs]
    batch = _runs(scenarios, t_end, seeds, n_points)
    for (i, j, point), runs in zip(pairs, batch, strict=True):
        view = fluid_view(m, point)
        sol = fluid_simulate(m, t_end, params=point, history=view["history"])
        cyc = oscillation(sol, "q", after=after)
        t = np.linspace(0.0, t_end, n_points)
        fq = queue_oscillation(t, sol(t, "q"), rtt=rtt, after=after)
        pk = [queue_oscillation(r.time, r.queue[:, 0], rtt=rtt, after=after) for r in runs]
        out["fluid_amplitude"][i, j] = cyc.amplitude
        out["fluid_span"][i, j] = fq.swing * fq.mean
        out["fluid_queue"][i, j] = cyc.mean
        out["fluid_period"][i, j] = cyc.period if cyc.sustained else math.nan
        out["packet_amplitude"][i, j] = np.mean([p.amplitude for p in pk])
        out["packet_span"][i, j] = np.mean([p.swing * p.mean for p in pk])
        out["packet_queue"][i, j] = np.mean([p.mean for p in pk])
        out["packet_period"][i, j] = np.nanmean([p.period for p in pk])
        out["packet_cpu"][i, j] = np.mean([r.cpu_time for r in runs])
    data = xr.Dataset(
        {k: (("K", "g"), v) for k, v in out.items()},
        coords={"K": Ks, "g": gs},
        attrs={"t_end": t_end, "after": after, "seeds": list(seeds)}
        | {f"param_{k}": v for k, v in base.items()},
    )
    return Experiment(
        "dctcp_oscillation",
        "DCTCP's queue oscillates around K with an amplitude that grows more slowly than K "
        "(Alizadeh et al. 2011)",
        data,
        _plot_dctcp,
    )


def _plot_dctcp(d, ax):
    ax = _axes(ax)
    for j, g in enumerate(d["g"].values):
        ax.plot(d["K"], d["fluid_span"][:, j], "s-", color=f"C{j}", label=f"fluid g={g:g}")
        ax.plot(d["K"], d["packet_span"][:, j], "o--", color=f"C{j}", label=f"ns-3 g={g:g}")
    ax.set_xlabel("K (pkts)")
    ax.set_ylabel("queue span q95 - q5 (pkts)")
    ax.legend(fontsize=7)
    return ax


def rcp_completion_times(
    load: float = 0.5,
    *,
    capacity: float = 1250.0,
    rtt: float = 0.1,
    mean_size: float = 25.0,
    shape: float = 1.2,
    t_end: float = 60.0,
    seeds: Sequence[int] = (1,),
    bins: int = 8,
) -> Experiment:
    """Flow completion times of RCP in ns-3 against processor sharing.

    Dukkipati & McKeown's claim: RCP's flows finish close to processor sharing,
    ``FCT_PS(L) = 1.5 RTT + L / (C (1 - rho))`` (their eq (3)). Poisson arrivals of Pareto
    sizes at offered load ``load`` arrive during the first ``2/3`` of the run.

    Returns
    -------
    Experiment
        ``data`` over size bins (log-spaced): mean FCT measured, processor sharing's, the
        number of flows per bin; attribute ``unfinished`` (flows that did not complete).
    """
    import xarray as xr

    from ..models.flow_level import ps_fct
    from .aqm import RCP
    from .scenario import Dumbbell, Link, ShortFlows

    if not 0 < load < 1:
        raise ParameterError(f"load = {load!r} must lie in (0, 1)")
    sc = Dumbbell(
        link=Link.from_packets(capacity, buffer=1000, aqm=RCP(0.4, 0.2, initial_rtt=rtt)),
        flows=[
            ShortFlows(
                load=load,
                mean_size=mean_size,
                shape=shape,
                rtt=rtt,
                transport="rcp",
                stop=2 * t_end / 3,
            )
        ],
    )
    sizes, fcts, unfinished = [], [], 0
    for run in _runs([sc], t_end, seeds)[0]:
        fct = run.completion_times()
        unfinished += int(np.sum(~np.isfinite(fct)))
        ok = np.isfinite(fct)
        sizes.append(run.short_size[ok])
        fcts.append(fct[ok])
    size = np.concatenate(sizes)
    fct = np.concatenate(fcts)
    if size.size == 0:
        raise ParameterError("no short flow completed: lengthen t_end")
    edges = np.unique(np.geomspace(max(size.min(), 1), size.max() + 1, bins + 1))
    idx = np.clip(np.digitize(size, edges) - 1, 0, edges.size - 2)
    centre = np.sqrt(edges[:-1] * edges[1:])
    mean_fct = np.array(
        [np.mean(fct[idx == k]) if np.any(idx == k) else math.nan for k in range(centre.size)]
    )
    mean_size_bin = np.array(
        [np.mean(size[idx == k]) if np.any(idx == k) else math.nan for k in range(centre.size)]
    )
    count = np.array([np.sum(idx == k) for k in range(centre.size)])
    ps = np.where(
        np.isfinite(mean_size_bin),
        ps_fct(np.nan_to_num(mean_size_bin), C=capacity, rtpd=rtt, rho=load),
        math.nan,
    )
    data = xr.Dataset(
        {
            "mean_size": ("bin", mean_size_bin),
            "packet_fct": ("bin", mean_fct),
            "ps_fct": ("bin", ps),
            "count": ("bin", count),
        },
        coords={"bin": centre},
        attrs={"load": load, "capacity": capacity, "rtt": rtt, "unfinished": unfinished},
    )
    return Experiment(
        "rcp_completion_times",
        "RCP's flow completion times are close to processor sharing's (Dukkipati & McKeown "
        "2004, eq (3))",
        data,
        _plot_rcp,
    )


def _plot_rcp(d, ax):
    ax = _axes(ax)
    ax.loglog(d["mean_size"], d["packet_fct"], "o-", color="C1", label="RCP in ns-3")
    ax.loglog(d["mean_size"], d["ps_fct"], "k--", label="processor sharing, eq (3)")
    ax.set_xlabel("flow size (pkts)")
    ax.set_ylabel("mean FCT (s)")
    ax.legend(fontsize=7)
    return ax
