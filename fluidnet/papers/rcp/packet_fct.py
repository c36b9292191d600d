"""RCP's flow completion times in ns-3 against processor sharing (the packet half of Figs 11-18).

The paper's ns-2 figures show RCP's mean flow completion time (FCT) against flow size lying
close to processor sharing's, ``FCT_PS(L) = 1.5 RTT + L / (C (1 - rho))`` (eq (3)). ns-2's
exact curves cannot be matched (other traffic, sizes and seeds); the claim can. Here
:func:`fluidnet.packet.experiments.rcp_completion_times` runs RCP's router and rate-based
senders (C++ components compiled into ns-3) on one 10 Mb/s bottleneck (1250 packets/s,
RTT 0.1 s) with Poisson arrivals of Pareto flows (mean 25 packets, shape 1.2) at load 0.5,
arrivals during the first two thirds of the run, seed 1.

The criterion, fixed before the run: in every size bin holding at least ``MIN_FLOWS`` flows,
the mean FCT lies within ``FCT_TOL`` (30 %) of processor sharing's, and every flow finishes.
"""

from __future__ import annotations

import numpy as np

from ...packet import require_ns3
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER

#: Relative tolerance of the mean FCT against processor sharing's (per size bin).
FCT_TOL = 0.3
#: Size bins with fewer flows are drawn but not checked (their means are too noisy).
MIN_FLOWS = 10


@PAPER.item(
    title="RCP in ns-3: flow completion times against processor sharing (Figs 11-18)",
    quick={"t_end": 12.0},
    pairs=[
        figure_pair(
            "packet_fct",
            "fig07_08_ps_slowstart",
            "RCP's mean flow completion times in ns-3 (load 0.5) against processor sharing, "
            "eq (3), the fluid-level prediction of Figs 7-8",
            fluid_item="processor_sharing",
        )
    ],
)
def packet_fct(ctx: Context, t_end: float = 40.0) -> dict:
    """One ns-3 run of ``t_end`` seconds; mean FCT per log-spaced size bin against eq (3)."""
    from ...packet.experiments import rcp_completion_times

    require_ns3()
    exp = rcp_completion_times(load=0.5, t_end=t_end, seeds=(1,))
    d = exp.data
    ratio = d["packet_fct"].values / d["ps_fct"].values
    count = d["count"].values
    sizes = d["mean_size"].values
    checked = count >= MIN_FLOWS
    worst = float(np.max(np.abs(ratio[checked] - 1.0))) if checked.any() else np.nan
    rows = [
        {
            "mean size [pkts]": float(s),
            "flows": int(n),
            "RCP mean FCT [s]": float(f),
            "PS FCT [s]": float(p),
            "FCT / PS": float(r),
        }
        for s, n, f, p, r in zip(
            sizes, count, d["packet_fct"].values, d["ps_fct"].values, ratio, strict=True
        )
    ]
    ctx.table("packet_fct", rows)
    fig, ax = ctx.new_figure(figsize=(5.6, 4.0))
    exp.plot(ax)
    ax.set_title(f"RCP in ns-3, load 0.5, {int(count.sum())} flows, seed 1")
    ctx.figure("packet_fct", fig)
    shown = ", ".join(
        f"{s:.0f} pkts ({n}): {r:.2f}"
        for s, n, r in zip(sizes[checked], count[checked], ratio[checked], strict=True)
    )
    return {
        "within": Value(bool(checked.sum() >= 3 and worst <= FCT_TOL), shown=shown or "no bin"),
        "worst": Value(worst, shown=f"{worst:.3f} over {int(checked.sum())} bins"),
        "unfinished": int(d.attrs["unfinished"]),
    }
