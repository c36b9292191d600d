"""Sec III: processor sharing and flow-level numbers (eq (3), bounds, slow start, Little's law).

The analytic curves the paper draws next to its ns-2 results (Figs 7-10, 20-22), the mean number
of active flows under PS, and the max-min example of Fig 3. The formulas themselves are in
:mod:`fluidnet.models.flow_level`.
"""

from __future__ import annotations

import numpy as np

from ... import flowlevel as fl
from ...models.rate_control import PACKET_BITS
from ..registry import Context
from ..targets import Value
from . import PAPER

#: The size-split PS workload of Figs 20-22: Pareto mean 25 pkts, shape 1.2, load 0.9.
SPLIT_WORKLOAD = {"mean": 25.0, "shape": 1.2, "rho": 0.9}
#: Size groups of Figs 20 and 21 (label -> [lo, hi) in packets) ...
SPLIT_500 = {"< 500": (0.0, 500.0), ">= 500": (500.0, np.inf)}
#: ... and of Fig 22, as its legend writes them.
SPLIT_500_FIG22 = {"<= 500": (0.0, 500.0), "> 500": (500.0, np.inf)}


def _pkts(bits_per_s: float) -> float:
    return bits_per_s / PACKET_BITS


def ps_afct_vs_capacity(caps_bits, rtpd: float, groups: dict) -> dict[str, list[float]]:
    """PS AFCT of each size group of :data:`SPLIT_WORKLOAD` against capacity (in bits/s)."""
    return {
        name: [
            fl.ps_size_split_afct(C=_pkts(c), rtpd=rtpd, lo=lo, hi=hi, **SPLIT_WORKLOAD)
            for c in caps_bits
        ]
        for name, (lo, hi) in groups.items()
    }


def ps_afct_vs_rtpd(C: float, rtpds, groups: dict) -> dict[str, list[float]]:
    """PS AFCT of each size group of :data:`SPLIT_WORKLOAD` against RTPD, ``C`` in pkts/s."""
    return {
        name: [fl.ps_size_split_afct(C=C, rtpd=r, lo=lo, hi=hi, **SPLIT_WORKLOAD) for r in rtpds]
        for name, (lo, hi) in groups.items()
    }


def ps_afct_vs_mean_size(C: float, means) -> tuple[list[float], list[float]]:
    """Fig 10: PS AFCT of flows below and above 7000 pkts against the Pareto mean size."""
    small = [
        fl.ps_size_split_afct(C=C, rtpd=0.1, rho=0.8, mean=m, shape=1.2, lo=0, hi=7000)
        for m in means
    ]
    big = [fl.ps_size_split_afct(C=C, rtpd=0.1, rho=0.8, mean=m, shape=1.2, lo=7000) for m in means]
    return small, big


def figs07_08(ctx: Context, c24: float, c150: float) -> dict:
    """Figs 7 and 8 (Setups 1 and 2): PS, lower bound and slow-start curves."""
    setups = {"Fig 7": (c24, 0.1, (0, 1e4)), "Fig 8": (c150, 1.6, (0, 6000))}
    fig, axes = ctx.new_figure(1, 2, figsize=(12.0, 4.2))
    for ax, (ref, (C, rtpd, (l0, l1))) in zip(axes, setups.items(), strict=True):
        L = np.linspace(max(l0, 1), l1, 400)
        ax.semilogy(L, fl.ps_fct(L, C=C, rtpd=rtpd, rho=0.9), label="PS, eq (3)")
        ax.semilogy(L, fl.slow_start_fct(L, C=C, rtpd=rtpd), label="TCP slow start")
        ax.semilogy(L, fl.fct_lower_bound(L, C=C, rtpd=rtpd), ":", label="1.5 RTPD + L/C")
        ax.set(
            xlabel="flow size L [pkts]",
            ylabel="AFCT [s]",
            title=f"{ref}: C = {C * PACKET_BITS / 1e9:g} Gb/s, RTPD = {rtpd} s, rho = 0.9",
        )
        ax.legend(fontsize=8)
    ctx.figure("fig07_08_ps_slowstart", fig)
    values = {
        ("ps", ref, L): fl.ps_fct(L, C=C, rtpd=rtpd, rho=0.9)
        for ref, L, C, rtpd in (
            ("Fig 7", 2000, c24, 0.1),
            ("Fig 7", 1e4, c24, 0.1),
            ("Fig 8", 2000, c150, 1.6),
            ("Fig 8", 6000, c150, 1.6),
        )
    }
    for ref, L, C, rtpd in (
        ("Fig 7", 230, c24, 0.1),
        ("Fig 7", 2000, c24, 0.1),
        ("Fig 8", 1000, c150, 1.6),
    ):
        values["ss", ref, L] = fl.slow_start_fct(L, C=C, rtpd=rtpd)
    values["ss L=1"] = fl.slow_start_fct(1, C=c24, rtpd=0.1)
    return values


def fig10(ctx: Context, c24: float) -> dict:
    """Fig 10: PS lines against the mean flow size, split at 7000 pkts."""
    means = np.geomspace(30, 30000, 31)
    small, big = ps_afct_vs_mean_size(c24, means)
    fig, ax = ctx.new_figure(figsize=(6.4, 4.2))
    ax.loglog(means, small, label="flows < 7000 pkts")
    ax.loglog(means, big, label="flows >= 7000 pkts")
    ax.set(
        xlabel="mean flow size [pkts]",
        ylabel="PS AFCT [s]",
        title="Fig 10: PS lines, C = 2.4 Gb/s, RTPD = 0.1 s, rho = 0.8, Pareto k = 1.2",
    )
    ax.legend(fontsize=8)
    ctx.figure("fig10_ps_vs_mean_size", fig)
    return {
        "C RTPD": c24 * 0.1,
        "fig10 big": max(big),
        "fig10 spread": max(big) - min(big),
        "fig10 small 30": small[0],
        "fig10 small 30000": small[-1],
    }


def figs20_22(ctx: Context, c150: float) -> dict:
    """Figs 20-22: size-split PS lines (Pareto mean 25, shape 1.2, split at 500 pkts)."""
    frac = fl.pareto_cdf(500, shape=1.2, scale=fl.pareto_scale(25, 1.2))
    shown = f"{100 * frac:.2f}% (continuous Pareto, mean 25, shape 1.2)"
    values = {"99.5%": Value(frac >= 0.995, shown)}
    caps = np.geomspace(100e6, 9.6e9, 25)
    lines = ps_afct_vs_capacity(caps, 0.1, SPLIT_500)
    for name in SPLIT_500:
        values["fig20", name, 0], values["fig20", name, 1] = lines[name][0], lines[name][-1]
    rtpds = np.geomspace(0.01, 1.6, 25)
    f21 = ps_afct_vs_rtpd(c150, rtpds, SPLIT_500)
    values["fig21", "< 500"] = f21["< 500"][0] - 1.5 * rtpds[0]
    values["fig21", ">= 500"] = f21[">= 500"][-1] - 1.5 * rtpds[-1]
    groups = np.round(np.arange(0.02, 0.201, 0.02), 10)
    f22 = ps_afct_vs_rtpd(_pkts(640e6), groups, SPLIT_500_FIG22)
    for name in f22:
        values["fig22", name] = f22[name][0] - 1.5 * groups[0]
    fig, axes = ctx.new_figure(1, 3, figsize=(15.0, 4.0))
    for name in lines:
        axes[0].loglog(caps / 1e9, lines[name], label=f"flows {name} pkts")
        axes[1].loglog(rtpds, f21[name], label=f"flows {name} pkts")
    for name in f22:
        axes[2].plot(groups, f22[name], "o-", label=f"flows {name} pkts")
    axes[0].set(xlabel="C [Gb/s]", ylabel="PS AFCT [s]", title="Fig 20: RTPD 0.1 s, rho 0.9")
    axes[1].set(xlabel="RTPD [s]", title="Fig 21: C = 150 Mb/s, rho 0.9")
    axes[2].set(xlabel="group RTPD [s]", yscale="log", title="Fig 22: C = 640 Mb/s, rho 0.9")
    for ax in axes:
        ax.legend(fontsize=8)
    ctx.figure("fig20_22_ps_size_split", fig)
    return values


def little_law(ctx: Context, c24: float, c150: float) -> dict:
    """Little's law: mean number of active flows under PS (R11), and Fig 15's lower bound."""
    rows, values = [], {}
    for ref, C, rtpd, rho, mean in (
        ("Fig 1", c24, 0.1, 0.9, 30),
        ("Fig 7", c24, 0.1, 0.9, 25),
        ("Figs 12-14", c24, 0.1, 0.8, 30),
        ("Fig 5", c150, 0.1, 0.7, 30),
        ("Fig 17", c24, 0.1, 0.2, 300),
        ("Fig 46", c24, 0.1, 0.8, 500),
    ):
        got = fl.ps_mean_active_flows(C=C, rtpd=rtpd, rho=rho, mean_size=mean)
        values["E[N]", ref] = got
        rows.append(
            {
                "figure": ref,
                "C_pkts_per_s": C,
                "rtpd": rtpd,
                "rho": rho,
                "mean_size": mean,
                "E_N_ps": got,
            }
        )
    lam15 = fl.arrival_rate(0.9, 30, c24)
    values["fig15"] = fl.little_mean_flows(lam15, fl.fct_lower_bound(30, C=c24, rtpd=0.5))
    rows.append(
        {
            "figure": "Fig 15 (lower bound)",
            "C_pkts_per_s": c24,
            "rtpd": 0.5,
            "rho": 0.9,
            "mean_size": 30,
            "E_N_ps": values["fig15"],
        }
    )
    ctx.table("little_law", rows, columns=list(rows[0]))
    return values


def fig03() -> dict:
    """Fig 3: max-min rates and RCP's flow estimate C/R = N1 + theta N2."""
    routes = {"A": ["C"], "B": ["B", "C"]}
    both = fl.max_min_rates({"B": 80.0, "C": 400.0}, routes, {"A": 8, "B": 4})
    alone = fl.max_min_rates({"B": 80.0, "C": 400.0}, routes, {"A": 8, "B": 0})
    est = fl.rcp_flow_estimate(400.0, both["A"])
    return {"B": both["B"], "A": both["A"], "A alone": alone["A"], "C/R": est}


@PAPER.item(title="Eq (3), bounds, slow start; PS lines of Figs 7-10, 20-22")
def processor_sharing(ctx: Context) -> dict:
    """Sec III: the analytic curves drawn next to the ns-2 results, Little's law, Fig 3."""
    c24, c150 = _pkts(2.4e9), _pkts(150e6)
    return (
        figs07_08(ctx, c24, c150)
        | fig10(ctx, c24)
        | figs20_22(ctx, c150)
        | little_law(ctx, c24, c150)
        | fig03()
    )
