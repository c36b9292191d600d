"""Fig 6.6.4: the stability regions d_crit(c) per N, and the claims of Sec 6.6.1 about them."""

from __future__ import annotations

import numpy as np

from ..registry import Context
from ..targets import Value
from . import PAPER
from .critical_delay import table_results
from .data import PROTOCOLS, QUICK_TABLE_ROWS, TABLE_6_6_2_PRINTED, is_number


def exact_delays(res: list[dict]) -> dict[tuple[str, int, int], float]:
    """``(protocol, N, c [pkts/ms]) -> continuous d* [ms]`` from :func:`table_results` rows."""
    return {(r["protocol"], r["N"], r["c_pkts_per_ms"]): r["d_crit_exact_ms"] for r in res}


def relative_spread_over_n(exact: dict, Ns: list[int], Cs: list[int]) -> dict[str, float]:
    """Per protocol, the mean over c of (max - min) / mean of the continuous d* over N."""
    return {
        p: np.mean(
            [
                (max(exact[p, N, c] for N in Ns) - min(exact[p, N, c] for N in Ns))
                / np.mean([exact[p, N, c] for N in Ns])
                for c in Cs
            ]
        )
        for p in PROTOCOLS
    }


@PAPER.item(
    title="Fig 6.6.4: stability regions d_crit(c) per N, both protocols",
    quick={"rows": QUICK_TABLE_ROWS, "workers": 1},
)
def fig_6_6_4(ctx: Context, rows=TABLE_6_6_2_PRINTED, workers: int = 2) -> dict:
    """Stability regions from the Table 6.6.2 computation of ``rows`` (on ``workers``
    processes, shared with ``table_6_6_2``), and the claims of Sec 6.6.1."""
    res = table_results(rows, workers)
    _stability_regions_figure(ctx, res)
    exact = exact_delays(res)
    Ns = sorted({r["N"] for r in res})
    Cs = sorted({r["c_pkts_per_ms"] for r in res})
    values = {
        "capacity": all(
            exact[p, N, a] > exact[p, N, b]
            for p in PROTOCOLS
            for N in Ns
            for a, b in zip(Cs[:-1], Cs[1:], strict=True)
        )
    }
    values["RED N"] = all(
        exact["RED", a, c] < exact["RED", b, c]
        for c in Cs
        for a, b in zip(Ns[:-1], Ns[1:], strict=True)
    )
    spread = relative_spread_over_n(exact, Ns, Cs)
    shown = f"SBRM {spread['SBRM']:.3f}, RED {spread['RED']:.3f}"
    values["spread"] = Value(spread["SBRM"] < 0.5 * spread["RED"], shown)
    values["contains"] = all(exact["SBRM", N, c] >= exact["RED", N, c] for N in Ns for c in Cs)
    values["RED 50"], values["RED 20"] = exact.get(("RED", 50, 8)), exact.get(("RED", 20, 8))
    return values


def _stability_regions_figure(ctx: Context, res: list[dict]) -> None:
    """d_crit(c) per N: exact (lines), grid rule (o) and printed (x), one panel per protocol."""
    fig, axes = ctx.new_figure(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, proto in zip(axes, PROTOCOLS, strict=True):
        for k, N in enumerate(sorted({r["N"] for r in res})):
            rows = sorted(
                (r for r in res if r["protocol"] == proto and r["N"] == N),
                key=lambda r: r["c_pkts_per_ms"],
            )
            cs = [r["c_pkts_per_ms"] for r in rows]
            ax.plot(cs, [r["d_crit_exact_ms"] for r in rows], color=f"C{k}", label=f"N={N}")
            ax.plot(cs, [r["d_crit_grid_ms"] for r in rows], "o", ms=3, color=f"C{k}")
            pr = [
                (r["c_pkts_per_ms"], float(r["d_crit_printed_ms"]))
                for r in rows
                if is_number(r["d_crit_printed_ms"])
            ]
            if pr:
                ax.plot(*zip(*pr, strict=True), "x", ms=5, color=f"C{k}")
        ax.axhspan(50, 102, color="0.93", zorder=-1)
        ax.set_title(f"{proto}: exact (lines), grid rule (o), printed (x)", fontsize="small")
        ax.set_xlabel("c [pkts/ms]")
        ax.legend(fontsize="small")
    axes[0].set_ylabel("critical delay d_crit [ms] (stable below)")
    ctx.figure("fig_6_6_4_stability_regions", fig)
