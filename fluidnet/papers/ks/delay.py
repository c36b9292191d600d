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
from ..targets import Value
from . import PAPER
from .data import BETA, price_only_closed_form

P_STAR = 1 / 6
#: The feedback delays T at which the (kappa, T) boundary is traced.
BOUNDARY_DELAYS = tuple(np.geomspace(0.25, 8.0, 9))


def network() -> UserNetwork:
    return UserNetwork([[1]], log_utility(), C=100.0, N=10)


def rhp_count(m, **params) -> int:
    """Number of characteristic roots with ``Re >= 0`` (counted with the roots' region search)."""
    return len(m.linearize(**params).roots(region=0.0))


def critical_gain(delay: str, T: float = 1.0):
    """``fn.critical_value`` of ``kappa_1`` at delay ``T`` and the root counts around it."""
    m = utility_primal(network(), beta=BETA, delay=delay, T=T)
    hi = 5.0 / (BETA * T)  # kappa beta T up to 5 < 5 pi/2: one crossing of each kind at most
    cv = fn.critical_value(m, "kappa_1", 0.2 / (BETA * T), hi)
    below = rhp_count(m, kappa_1=cv.value * (1 - 1e-4))
    above = rhp_count(m, kappa_1=cv.value * (1 + 1e-4))
    return cv, below, above


def nonlinear_status(delay: str, gain: float, t_end: float) -> tuple[str, float]:
    """Classify a run of the nonlinear law at ``kappa beta T = gain`` (T = 1) from x = 10."""
    m = utility_primal(network(), beta=BETA, delay=delay, T=1.0)
    sol = fn.simulate(m, t_end, params={"kappa_1": gain / BETA}, history={"x_1": 10.0}, rtol=1e-8)
    o = fn.oscillation(sol, "x_1")
    return o.status, o.period


@PAPER.item(
    title="Delayed primal law: kappa beta T = pi/2, price-only 2.170, boundary",
    quick={"t_end": 250.0, "delays": (0.5, 1.0, 2.0, 4.0)},
)
def delay(ctx: Context, t_end: float = 400.0, delays=BOUNDARY_DELAYS) -> dict:
    """Critical gains and frequencies, nonlinear runs of ``t_end`` either side, and the boundary
    traced at the feedback ``delays`` T."""
    closed = {"full": math.pi / 2, "price": price_only_closed_form()}
    values = {"2.170": closed["price"]}
    for kind in ("full", "price"):
        cv, below, above = critical_gain(kind)
        values["kbT", kind] = cv.value * BETA
        values["roots", kind] = Value(below == 0 and above == 2, f"{below} / {above}")
        omega = (
            BETA * cv.value
            if kind == "full"
            else math.sqrt((BETA * cv.value) ** 2 * ((1 - P_STAR) ** 2 - P_STAR**2))
        )
        values["omega", kind] = Value(cv.omega, expected=omega)
    # nonlinear confirmation either side of the boundary
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
            values["run", kind, g] = Value(ok, status)
    values["period"] = next(
        r["period"] for r in rows if r["delay"] == "full" and r["nonlinear run"] == "sustained"
    )
    ctx.table("delay_nonlinear", rows)
    return values | _boundary_figure(ctx, closed, rows, np.asarray(delays, dtype=float))


def _boundary_figure(ctx: Context, closed, rows, Ts) -> dict:
    found = {"full": [], "price": []}
    for kind in found:
        for T in Ts:
            cv, below, above = critical_gain(kind, T)
            found[kind].append(cv.value)
    values = {}
    for kind in found:
        dev = np.abs(np.array(found[kind]) * BETA * Ts / closed[kind] - 1)
        values["boundary", kind] = Value(
            bool(np.all(dev < 1e-9)), f"max rel. dev {np.max(dev):.2g}"
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
    return values
