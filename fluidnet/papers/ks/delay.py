"""The delayed extension (not in the paper): a feedback delay T in the primal law (9).

The paper's "round-trip delay" is a constant in the window laws, not a feedback delay (it
refers to its refs [16], [25] for that). The usual delayed Kelly primal law (Johari & Tan 2001,
Vinnicombe 2002) on one link with N log users, ``x' = kappa (w/beta_r - beta x(t-T) p(y(t-T)))``,
linearizes to ``delta' = -kappa beta delta(t - T)`` because ``p + y p' = 1`` for
``p = (y - C)^+/y``: it is stable iff ``kappa beta T < pi/2``, whatever N, C and w. With only the
price delayed, ``s + a + b e^{-sT} = 0`` with ``a = kappa beta p*`` and ``b = kappa beta C/y*``,
and ``kappa beta T_c = arccos(-a/b)/sqrt(b^2 - a^2) = 2.170`` for ``p* = 1/6`` (N = 10, C = 100,
beta = 0.5, w = 1: ``x* = 12``).

Every critical value registered is checked against its closed form and by counting the roots in
the right half-plane just below and above it (the scan of :func:`fluidnet.critical_value` could
otherwise report a later crossing when two fall in one scan interval).
"""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models import UserNetwork, log_utility, utility_primal
from ..registry import Context
from . import PAPER

BETA = 0.5
P_STAR = 1 / 6


def network() -> UserNetwork:
    return UserNetwork([[1]], log_utility(), C=100.0, N=10)


def price_only_closed_form(p: float = P_STAR) -> float:
    """``kappa beta T_c`` with only the price delayed: ``a = p``, ``b = 1 - p`` (per kappa beta)."""
    a, b = p, 1 - p
    return math.acos(-a / b) / math.sqrt(b * b - a * a)


def rhp_count(m, **params) -> int:
    """Number of characteristic roots with ``Re >= 0`` (counted with the roots' region search)."""
    return len(m.linearize(**params).roots(region=0.0))


def critical_gain(delay: str, T: float = 1.0):
    """``fn.critical_value`` of ``kappa_1`` at delay ``T`` and the root counts around it."""
    m = utility_primal(network(), beta=BETA, delay=delay, T=T)
    hi = 5.0 / (BETA * T)  # kappa beta T up to 5 < 5 pi/2: one crossing of each kind at most
    cv = fn.critical_value(m, "kappa_1", 0.2 / (BETA * T), hi, n_scan=24)
    below = rhp_count(m, kappa_1=cv.value * (1 - 1e-4))
    above = rhp_count(m, kappa_1=cv.value * (1 + 1e-4))
    return cv, below, above


def nonlinear_status(delay: str, gain: float, t_end: float) -> tuple[str, float]:
    """Classify a run of the nonlinear law at ``kappa beta T = gain`` (T = 1) from x = 10."""
    m = utility_primal(network(), beta=BETA, delay=delay, T=1.0)
    sol = fn.simulate(m, t_end, params={"kappa_1": gain / BETA}, history={"x_1": 10.0}, rtol=1e-8)
    o = fn.oscillation(sol, "x_1")
    return o.status, o.period


@PAPER.item("delay", title="Delayed primal law: kappa beta T = pi/2, price-only 2.170, boundary")
def delay(ctx: Context) -> None:
    closed = {"full": math.pi / 2, "price": price_only_closed_form()}
    ctx.check(
        "delayed extension",
        "price-only closed form kappa beta T_c",
        2.170,
        closed["price"],
        tol=5e-4,
        source="derived",
        note="computed independently of fluidnet for p* = 1/6",
    )
    for kind in ("full", "price"):
        cv, below, above = critical_gain(kind)
        ctx.check(
            "delayed extension",
            f"{kind} delay: critical kappa beta T by critical_value",
            closed[kind],
            cv.value * BETA,
            tol=1e-10,
            rel=True,
            source="derived",
            note="closed form " + ("pi/2" if kind == "full" else "arccos(-a/b)/sqrt(b^2-a^2)"),
        )
        ctx.check_true(
            "delayed extension",
            f"{kind} delay: roots in Re >= 0 just below / above",
            below == 0 and above == 2,
            value=f"{below} / {above}",
            source="derived",
        )
        omega = (
            BETA * cv.value
            if kind == "full"
            else math.sqrt((BETA * cv.value) ** 2 * ((1 - P_STAR) ** 2 - P_STAR**2))
        )
        ctx.check(
            "delayed extension",
            f"{kind} delay: crossing frequency",
            omega,
            cv.omega,
            tol=1e-9,
            rel=True,
            source="derived",
            note="full: omega = kappa beta; price: omega = sqrt(b^2 - a^2)",
        )
    # nonlinear confirmation either side of the boundary
    t_end = 250.0 if ctx.quick else 400.0
    rows = []
    for kind, gains in (("full", (1.50, 1.65)), ("price", (2.0, 2.4))):
        for g in gains:
            status, period = nonlinear_status(kind, g, t_end)
            stable_side = g < closed[kind]
            rows.append(
                {
                    "delay": kind,
                    "kappa beta T": g,
                    "linear": "stable" if stable_side else "unstable",
                    "nonlinear run": status,
                    "period": period,
                }
            )
            ok = status in ("converged", "decaying") if stable_side else status == "sustained"
            ctx.check_true(
                "delayed extension",
                f"{kind} delay, kappa beta T = {g}: nonlinear run "
                f"{'settles' if stable_side else 'oscillates (limit cycle)'}",
                ok,
                value=status,
                source="derived",
            )
    per = next(
        r["period"] for r in rows if r["delay"] == "full" and r["nonlinear run"] == "sustained"
    )
    ctx.check(
        "delayed extension",
        "full delay: limit-cycle period near the crossing, 2 pi/omega = 4 T",
        4.0,
        per,
        tol=0.02,
        source="derived",
        note="at kappa beta T = 1.65, 5 % past the boundary, the nonlinear period is the "
        "linear one at the crossing to 0.5 %",
    )
    ctx.table("delay_nonlinear", rows)
    _boundary_figure(ctx, closed, rows)


def _boundary_figure(ctx: Context, closed, rows) -> None:
    Ts = np.array([0.5, 1.0, 2.0, 4.0]) if ctx.quick else np.geomspace(0.25, 8.0, 9)
    found = {"full": [], "price": []}
    for kind in found:
        for T in Ts:
            cv, below, above = critical_gain(kind, T)
            found[kind].append(cv.value)
    for kind in found:
        kbT = np.array(found[kind]) * BETA * Ts
        ctx.check_true(
            "delayed extension",
            f"{kind} delay: kappa_c T_c constant along the (kappa, T) boundary",
            bool(np.all(np.abs(kbT / closed[kind] - 1) < 1e-9)),
            value=f"max rel. dev {np.max(np.abs(kbT / closed[kind] - 1)):.2g}",
            source="derived",
        )
    fig, ax = ctx.new_figure()
    kk = np.geomspace(0.05, 20.0, 200)
    for kind, color, label in (
        ("full", "C0", "every feedback delayed: kappa beta T = pi/2"),
        ("price", "C1", "price only delayed: kappa beta T = 2.170"),
    ):
        ax.plot(kk, closed[kind] / (BETA * kk), color=color, label=label)
        ax.plot(found[kind], Ts, "o", color=color, ms=4, mfc="none")
    for r in rows:
        g = r["kappa beta T"]
        marker = "s" if r["nonlinear run"] in ("converged", "decaying") else "x"
        ax.plot(g / BETA, 1.0, marker, color="C0" if r["delay"] == "full" else "C1", ms=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("kappa")
    ax.set_ylabel("T")
    ax.set_title(
        "Delayed primal law, 1 link, 10 log users, beta = 0.5: stable below the curves\n"
        "circles: fn.critical_value; squares/crosses: nonlinear runs settle/oscillate",
        fontsize="small",
    )
    ax.legend(fontsize="small")
    ctx.figure("delay_boundary", fig)
