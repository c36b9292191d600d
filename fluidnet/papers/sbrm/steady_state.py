"""Table 5.5.1: the equilibria of the SBRM and Reno+RED fluid models against the closed forms."""

from __future__ import annotations

import math

from ...models.reno import reno_red, reno_red_steady_state
from ...models.single_bit import sbrm, sbrm_network, sbrm_steady_state
from ..registry import Context
from . import PAPER
from .data import C_VALUES, N_VALUES

#: Heterogeneous sources on one link for (5.5.5): three classes of 10 flows, c = 10 pkts/ms.
HETEROGENEOUS_D = (0.02, 0.05, 0.1)
HETEROGENEOUS_W = (10, 20, 40)


def heterogeneous_rates() -> list[float]:
    """Equilibrium per-flow rates [pkts/s] of the three SBRM source classes sharing one link."""
    net = sbrm_network(
        [[1, 1, 1]], N=[10, 10, 10], d=list(HETEROGENEOUS_D), w=list(HETEROGENEOUS_W)
    )
    eqn = net.equilibrium()
    rates = []
    for n, d_n in enumerate(HETEROGENEOUS_D):
        rtt = d_n + eqn["b_1"] / 10_000.0
        rates.append(eqn[f"W_{n + 1}"] / rtt)
    return rates


def steady_state_rows() -> list[dict]:
    """Closed-form SBRM and Reno+RED steady states over N, c and d = 50, 86, 102 ms."""
    rows = []
    for N in N_VALUES:
        for c in C_VALUES:
            for d in (50, 86, 102):
                s = sbrm_steady_state(N, 1000.0 * c, d / 1000.0)
                r = reno_red_steady_state(N, 1000.0 * c, d / 1000.0)
                rows.append(
                    {
                        "N": N,
                        "c_pkts_per_ms": c,
                        "d_ms": d,
                        "sbrm_p": s["p"],
                        "sbrm_b": s["b"],
                        "sbrm_rtt_ms": 1e3 * s["rtt"],
                        "sbrm_cwnd": s["W"],
                        "red_p": r["p"],
                        "red_b": r["b"],
                        "red_rtt_ms": 1e3 * r["rtt"],
                        "red_cwnd": r["W"],
                    }
                )
    return rows


@PAPER.item("steady_states", title="Table 5.5.1: steady states of SBRM and Reno+RED")
def steady_states(ctx: Context) -> None:
    """Equilibria of the nonlinear models against the closed forms of Table 5.5.1."""
    _check_sbrm(ctx)
    _check_heterogeneous(ctx)
    _check_reno_red(ctx)
    rows = steady_state_rows()
    ctx.table("table_5_5_1", rows)
    ctx.check_true(
        "Table 6.6.1 / M27",
        "RED operates between its thresholds at every Table 6.6.2 point (th_min < b* < th_max)",
        all(50 < r["red_b"] < 550 for r in rows),
        source="derived",
        note="the footnote of Table 5.5.1; b* ranges "
        f"{min(r['red_b'] for r in rows):.1f}-{max(r['red_b'] for r in rows):.1f} pkts",
    )


def _check_sbrm(ctx: Context) -> None:
    """(5.5.6)-(5.5.8): SBRM queue, marking probability and window at the equilibrium."""
    m = sbrm()
    for N, c, d, b_expected in (
        (30, 10_000.0, 0.086, 60.31),
        (20, 15_000.0, 0.086, 54.50),
        (60, 8_000.0, 0.086, 77.09),
    ):
        eq = m.equilibrium(N=N, c=c, d=d)
        ctx.check(
            "Table 5.5.1 (5.5.7)",
            f"SBRM b* = b0 - ln(1 - Nw/c)/gamma, N={N}, c={c / 1000:g} pkts/ms [pkts]",
            b_expected,
            eq["b"],
            tol=0.005,
            source="derived",
            note="(5.5.7) evaluated independently with Table 6.6.1 values; ours is the model "
            "equilibrium of (6.4.2)-(6.4.7)",
        )
        p_model = 1 - math.exp(-0.006 * (eq["b"] - 50.0))
        ctx.check(
            "Table 5.5.1 (5.5.6)",
            f"SBRM p* = sum w / c, N={N}, c={c / 1000:g} pkts/ms",
            N * 20.0 / c,
            p_model,
            tol=1e-9,
            rel=True,
            source="printed",
            note="printed formula evaluated with Table 6.6.1 values; ours is m(b*) (6.4.7)",
        )
    eq = m.equilibrium(N=30, c=10_000.0, d=0.086)
    ctx.check(
        "(5.5.8)",
        "SBRM cwnd* = RTT* c/N, N=30, c=10, d=86 ms [pkts]",
        30.68,
        eq["W"],
        tol=0.005,
        source="derived",
        note="(5.5.8) evaluated independently: RTT* = d + b*/c = 92.0 ms, cwnd* = 30.68 "
        "(printed RTT*_m read RTT*_n)",
    )


def _check_heterogeneous(ctx: Context) -> None:
    """(5.5.5): heterogeneous sources on one link get ``x_n* = w_n / sum(w) c``."""
    for n, (w_n, x_n) in enumerate(zip(HETEROGENEOUS_W, heterogeneous_rates(), strict=True)):
        ctx.check(
            "Table 5.5.1 (5.5.5)",
            f"heterogeneous SBRM x_{n + 1}* = w_n/sum(w) c (w = {w_n}, 30 flows, c = 10 pkts/ms)",
            w_n / 700.0 * 10_000.0,
            x_n,
            tol=1e-6,
            rel=True,
            note="printed formula; sum(w) = 10 (10 + 20 + 40) = 700 pkts/s; the RTTs differ "
            "(20/50/100 ms) and do not enter",
        )


def _check_reno_red(ctx: Context) -> None:
    """Table 5.5.1: the Reno+RED fixed point at N=30, c=10 pkts/ms, d=62 ms."""
    rm = reno_red()
    eq = rm.equilibrium(N=30, c=10_000.0, d=0.062)
    ss = reno_red_steady_state(30, 10_000.0, 0.062)
    ctx.check(
        "Table 5.5.1",
        "Reno+RED b*, N=30, c=10, d=62 ms [pkts]",
        68.9,
        eq["b"],
        tol=0.05,
        source="derived",
        note="Table 5.5.1 solved independently as a fixed point with RTT* = d + b*/c; the printed "
        "beta is rho (M13)",
    )
    p_model = 0.1 / 500.0 * (eq["r"] - 50.0)
    ctx.check(
        "Table 5.5.1",
        "Reno+RED p* = 2/(2 + cwnd*^2), N=30, c=10, d=62 ms",
        0.00378,
        p_model,
        tol=5e-6,
        source="derived",
        note="Table 5.5.1 solved independently as a fixed point",
    )
    ctx.check(
        "Table 5.5.1",
        "Reno+RED cwnd*, N=30, c=10, d=62 ms [pkts]",
        22.96,
        eq["W"],
        tol=0.005,
        source="derived",
        note="Table 5.5.1 solved independently as a fixed point",
    )
    ctx.check(
        "Table 5.5.1",
        "Reno+RED RTT* [ms]",
        68.9,
        1000 * ss["rtt"],
        tol=0.05,
        source="derived",
        note="closed-form fixed point (reno_red_steady_state)",
    )
