"""Sec IV: the throughput of 50 + 50 users with different utilities on one link of capacity 300."""

from __future__ import annotations

from scipy.optimize import brentq

from ...models import capacity_optimum
from ..registry import Context
from . import PAPER
from .data import sec4_network


def closed_form_b() -> tuple[float, float, float]:
    """``-1/x^2`` against ``-1/x``: ``(2/lam)^(1/3) + lam^(-1/2) = 6`` (KKT, plain scipy)."""
    lam = brentq(lambda v: (2 / v) ** (1 / 3) + v**-0.5 - 6, 0.01, 1.0, xtol=1e-16, rtol=1e-15)
    return (2 / lam) ** (1 / 3), lam**-0.5, lam


@PAPER.item("allocations", title="Sec IV: mixed-utility allocations on C = 300 (50 + 50 users)")
def allocations(ctx: Context) -> None:
    rows = []
    # Case A: the printed prose calls the first 50 users TCP users, but its equation gives them
    # log utilities (throughput ~ 1/(1 - alpha)); the printed numbers follow the equation
    a = capacity_optimum(sec4_network(0))
    b = capacity_optimum(sec4_network(2))
    for case, opt, printed in (("log vs -1/x", a, (4.0, 2.0)), ("-1/x^2 vs -1/x", b, (2.76, 3.24))):
        for who, v, e in zip(("i <= 50", "j > 50"), opt.x, printed, strict=True):
            ctx.check("Sec IV", f"{case}: x_{who}", e, v, tol=0.005 if case[0] == "-" else 0.05)
        rows.append(
            {"case": case, "x_i": opt.x[0], "x_j": opt.x[1], "multiplier": opt.multipliers[0]}
        )
    # s^2 + s - 6 = 0 for case A; the KKT root for case B
    ctx.check(
        "Sec IV",
        "log vs -1/x: multiplier 1/x_i = 1/x_j^2",
        0.25,
        a.multipliers[0],
        tol=1e-12,
        source="derived",
    )
    xi, xj, lam = closed_form_b()
    for name, v, e in (
        ("x_i", b.x[0], xi),
        ("x_j", b.x[1], xj),
        ("multiplier", b.multipliers[0], lam),
    ):
        ctx.check(
            "Sec IV",
            f"-1/x^2 vs -1/x: {name} (KKT root)",
            e,
            v,
            tol=1e-9,
            rel=True,
            source="derived",
            note="KKT root computed independently: 2.75918, 3.24082, 0.095212",
        )
    ctx.check("Sec IV", "-1/x^2 vs -1/x: x_i", 2.75918, b.x[0], tol=5e-6, source="derived")
    ctx.check("Sec IV", "-1/x^2 vs -1/x: x_j", 3.24082, b.x[1], tol=5e-6, source="derived")
    ctx.check_true(
        "Sec IV",
        "log users out-compete TCP (-1/x); -1/x^2 users do not",
        a.x[0] > a.x[1] and b.x[0] < b.x[1],
    )
    ctx.check(
        "Sec IV",
        "the link is full (sum = 300)",
        300.0,
        50 * (a.x.sum()),
        tol=1e-9,
        source="derived",
    )
    ctx.table("sec4_allocations", rows)
