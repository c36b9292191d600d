"""Sec IV in ns-3: the window distribution of one generalized TCP at an ORED queue (the
simulation halves of Figs 6 and 7).

The paper's single-flow network as printed: a 3 Mb/s link, 512-byte segments (564-byte IP
packets), round-trip time 13.66 ms, an assured rate of 0.75 Mb/s (token bucket of 20 packets),
ORED with thresholds 15/95 packets and ``p_max = 0.02``; the generalized TCP
(``fluidnet::TcpGeneralized``) with the baseline law ``(alpha, c1, c2) = (-1, 1, 0.5)`` and the two
changes the paper's figures show, ``c2 = 0.2`` (Fig 7) and ``alpha = -0.5`` (Fig 6). ORED marks
on the queue itself (weight 1): the analysis makes the marking a function of the current window,
``p(W) = gamma f_mark(W - C RTT)`` (16), which an average over RED's usual 0.002 per packet
(hundreds of round trips here) would turn into a nearly constant probability.

The fluid prediction is the PDMP stationary law of the chain (17)
(:func:`fluidnet.models.generalized_tcp.generalized_tcp_chain`, solved by
:mod:`fluidnet.stochastic`) for the *same* scenario: the bandwidth-delay product of the link in
packets (``3 Mb/s / (8 * 566 bytes) * 13.66 ms = 9.05``; the paper's printed "5 segments" is a
misprint, M14) plus the two packets the queue disc does not count (device queue, wire), and the
out fraction ``gamma = 1 - R/C`` of the same packets (0.749).

Criteria, fixed before the runs: the time-average window within 10 % of the PDMP mean and its
coefficient of variation within 25 % of the PDMP's (the analysis has no feedback delay: a mark
acts on the window at once, while in ns-3 the queue it was drawn from drains a round trip later;
the PDMP is also the ``p_max -> 0`` limit), and the paper's trends: lowering ``c2`` raises the mean
and lowers the CoV, raising ``alpha`` raises both, and the analysis is less accurate as ``alpha``
grows. One seed (0), 300 s per case (about 200 000 ACKs), the first 30 s left out.
"""

from __future__ import annotations

import numpy as np

from ...packet import require_ns3
from ..batch_means import batch_mean
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER
from .data import SEC4, SEC4_CASES

#: IP packet size: the paper's 512-byte segments plus 52 bytes of headers.
PACKET_SIZE = 564
#: Packets at the bottleneck outside the queue disc while it is busy (device queue, wire).
OUTSIDE = 2
#: The cases run: the baseline and one change of each figure.
CASES = ("baseline", "c2=0.2", "alpha=-0.5")


def window_scenario(case: str):
    """The ns-3 scenario of a Sec IV case (see the module)."""
    import fluidnet as fn

    law = {"alpha": -1.0, "c1": 1.0, "c2": 0.5, **SEC4_CASES[case]}
    return fn.packet.Dumbbell(
        link=fn.packet.Link(
            SEC4["C"] * 1e6,
            buffer=1000,
            aqm=fn.packet.ORED(
                min_th=SEC4["min_th"], max_th=SEC4["max_th"], p_max=SEC4["p_max"], weight=1.0
            ),
        ),
        flows=[
            fn.packet.Flows(
                1,
                rtt=SEC4["rtt"],
                transport=fn.packet.Transport("generalized", beta=1.0, **law),
                assured_rate=SEC4["R"] * 1e6,
            )
        ],
        packet_size=PACKET_SIZE,
        notes=(f"Misra, Baras & Ott Sec IV, case {case}: {law}",),
    )


def mapping() -> dict[str, float]:
    """The chain's bandwidth-delay product and out fraction for :func:`window_scenario`."""
    capacity = SEC4["C"] * 1e6 / (8.0 * (PACKET_SIZE + 2))  # packets/s on the wire
    assured = SEC4["R"] * 1e6 / (8.0 * PACKET_SIZE)  # packets/s the meter lets in
    return {"bdp": capacity * SEC4["rtt"] + OUTSIDE, "gamma": 1.0 - assured / capacity}


def predicted(case: str):
    """The PDMP stationary law of the chain (17) of the scenario of ``case``."""
    from ...models.generalized_tcp import generalized_tcp_chain

    m = mapping()
    return generalized_tcp_chain(
        **SEC4_CASES[case],
        bdp=m["bdp"],
        gamma=m["gamma"],
        min_th=SEC4["min_th"],
        max_th=SEC4["max_th"],
        p_max=SEC4["p_max"],
    ).stationary()


@PAPER.item(
    title="Sec IV in ns-3: window distribution of one generalized TCP against the PDMP (Figs 6, 7)",
    quick={"cases": ("baseline",), "t_end": 60.0, "after": 15.0},
    pairs=[
        figure_pair(
            "packet_window",
            "fig6_alpha",
            "Sec IV: ns-3 window histograms (baseline, c2 = 0.2, alpha = -0.5) against the PDMP "
            "stationary law of the same network, beside the PDMP and Monte Carlo statistics of "
            "Fig 6",
            fluid_item="window_statistics",
        )
    ],
)
def packet_window_distribution(
    ctx: Context, cases: tuple = CASES, t_end: float = 300.0, after: float = 30.0
) -> dict:
    """One ns-3 run of ``t_end`` seconds per case (seed 0); mean and CoV of the window over the
    tail from ``after`` against the PDMP's."""
    import fluidnet as fn

    require_ns3()
    runs = [
        r
        for (r,) in fn.packet.simulate_many([window_scenario(c) for c in cases], t_end, seeds=(0,))
    ]
    m = mapping()
    stats, rows, values = {}, [], {}
    fig, axes = ctx.new_figure(1, len(cases), figsize=(4.2 * len(cases), 3.6))
    axes = np.atleast_1d(axes)
    for case, run, ax in zip(cases, runs, axes, strict=True):
        d = predicted(case)
        sel = run.time >= after
        w = run.cwnd[sel, 0]
        mean = batch_mean(run.time, run.cwnd[:, 0], after=after)
        cov = float(np.std(w) / np.mean(w))
        stats[case] = (mean.mean, cov, d.mean, d.cov)
        rows.append(
            {
                "case": case,
                "mean ns-3": mean.mean,
                "mean se": mean.se,
                "mean PDMP": d.mean,
                "CoV ns-3": cov,
                "CoV PDMP": d.cov,
                "bdp (model)": m["bdp"],
                "gamma": m["gamma"],
                "marks": float(run.marks[-1, 0]),
                "drops": float(run.drops[-1, 0]),
                "utilisation": run.utilisation(after=after),
                "cpu [s]": run.cpu_time,
            }
        )
        values[case, "mean"] = Value(mean.mean, expected=d.mean, note=mean.describe())
        values[case, "CoV"] = Value(cov, expected=d.cov)
        ax.hist(w, bins=60, density=True, alpha=0.5, label="ns-3")
        ax.plot(d.w, d.pdf, "k", lw=1.2, label="PDMP (17)")
        ax.set_xlim(0, float(np.quantile(w, 0.999)) * 1.1)
        ax.set_xlabel("window [packets]")
        ax.set_title(f"{case}: mean {mean.mean:.1f} (PDMP {d.mean:.1f})", fontsize=9)
    axes[0].set_ylabel("density")
    axes[0].legend(fontsize=8)
    ctx.table("packet_window", rows)
    ctx.figure("packet_window", fig)
    if set(cases) == set(CASES):
        base, c2, alpha = (stats[c] for c in CASES)
        values["c2 trend"] = Value(
            bool(c2[0] > base[0] and c2[1] < base[1]),
            shown=f"mean {base[0]:.1f} -> {c2[0]:.1f}, CoV {base[1]:.3f} -> {c2[1]:.3f}",
        )
        values["alpha trend"] = Value(
            bool(alpha[0] > base[0] and alpha[1] > base[1]),
            shown=f"mean {base[0]:.1f} -> {alpha[0]:.1f}, CoV {base[1]:.3f} -> {alpha[1]:.3f}",
        )
        err_base = abs(base[0] / base[2] - 1)
        err_alpha = abs(alpha[0] / alpha[2] - 1)
        values["accuracy"] = Value(
            bool(err_alpha > err_base),
            shown=f"|mean/PDMP - 1|: {err_base:.3f} at alpha = -1, {err_alpha:.3f} at -0.5",
        )
    return values
