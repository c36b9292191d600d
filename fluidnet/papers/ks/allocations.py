"""Sec IV: the throughput of 50 + 50 users with different utilities on one link of capacity 300."""

from __future__ import annotations

from ...models import capacity_optimum
from ..registry import Context
from . import PAPER
from .data import sec4_network


@PAPER.item(title="Sec IV: mixed-utility allocations on C = 300 (50 + 50 users)")
def allocations(ctx: Context) -> dict:
    # Case A: the printed prose calls the first 50 users TCP users, but its equation gives them
    # log utilities (throughput ~ 1/(1 - alpha)); the printed numbers follow the equation
    a = capacity_optimum(sec4_network(0))
    b = capacity_optimum(sec4_network(2))
    values, rows = {}, []
    for case, opt in (("log vs -1/x", a), ("-1/x^2 vs -1/x", b)):
        values[case, "i <= 50"], values[case, "j > 50"] = opt.x
        rows.append(
            {"case": case, "x_i": opt.x[0], "x_j": opt.x[1], "multiplier": opt.multipliers[0]}
        )
    # s^2 + s - 6 = 0 for case A; the KKT root for case B
    values["multiplier a"] = a.multipliers[0]
    values |= {
        ("kkt", "x_i"): b.x[0],
        ("kkt", "x_j"): b.x[1],
        ("kkt", "multiplier"): b.multipliers[0],
    }
    values |= {"x_i": b.x[0], "x_j": b.x[1]}
    values["compete"] = a.x[0] > a.x[1] and b.x[0] < b.x[1]
    values["full"] = 50 * (a.x.sum())
    ctx.table("sec4_allocations", rows)
    return values
