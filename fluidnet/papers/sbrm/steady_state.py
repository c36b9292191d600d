"""Table 5.5.1: the equilibria of the SBRM and Reno+RED fluid models against the closed forms."""

from __future__ import annotations

import math

from ...models.reno import reno_red, reno_red_steady_state
from ...models.single_bit import sbrm, sbrm_network, sbrm_steady_state
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import C_VALUES, HETEROGENEOUS_D, HETEROGENEOUS_W, N_VALUES


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


@PAPER.item(title="Table 5.5.1: steady states of SBRM and Reno+RED")
def steady_states(ctx: Context) -> dict:
    """Equilibria of the nonlinear models against the closed forms of Table 5.5.1."""
    # (5.5.6)-(5.5.8): SBRM queue, marking probability and window at the equilibrium
    m = sbrm()
    values = {}
    for N, c in ((30, 10_000.0), (20, 15_000.0), (60, 8_000.0)):
        eq = m.equilibrium(N=N, c=c, d=0.086)
        values["b*", N] = eq["b"]
        values["p*", N] = 1 - math.exp(-0.006 * (eq["b"] - 50.0))
    values["cwnd*"] = m.equilibrium(N=30, c=10_000.0, d=0.086)["W"]
    # (5.5.5): heterogeneous sources on one link get x_n* = w_n / sum(w) c
    values |= {("x*", n): x_n for n, x_n in enumerate(heterogeneous_rates())}
    # Table 5.5.1: the Reno+RED fixed point at N=30, c=10 pkts/ms, d=62 ms
    eq = reno_red().equilibrium(N=30, c=10_000.0, d=0.062)
    values |= {"RED b*": eq["b"], "RED p*": 0.1 / 500.0 * (eq["r"] - 50.0), "RED cwnd*": eq["W"]}
    values["RED RTT*"] = 1000 * reno_red_steady_state(30, 10_000.0, 0.062)["rtt"]
    rows = steady_state_rows()
    ctx.table("table_5_5_1", rows)
    b = [r["red_b"] for r in rows]
    values["thresholds"] = Value(all(50 < x < 550 for x in b), note=f"{min(b):.1f}-{max(b):.1f}")
    return values
