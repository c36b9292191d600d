"""Sec IV-B and Appendix II: the equilibrium, the linearization eq (8) and the loop gain eq (9)."""

from __future__ import annotations

import numpy as np
import sympy

from ...models.rate_control import rcp
from ...symbolic.loopgain import loop_gain_expr
from ...symbolic.model import Model
from ...symbolic.symbols import s as S
from ..registry import Context
from . import PAPER


def loop_gain_change_with_n_and_c(m: Model) -> float:
    """Largest ``|G(jw; N, C) / G(jw) - 1|`` of eq (9) over three (N, C) pairs, 0.01 <= w <= 100."""
    w = np.logspace(-2, 2, 41)
    base = m.loop_gain("R").freqresp(w)
    return max(
        float(np.max(np.abs(m.loop_gain("R", N=n, C=c).freqresp(w) / base - 1)))
        for n, c in ((100.0, 18750.0), (10.0, 1e6), (5000.0, 700.0))
    )


def loop_gain_change_with_d0(m: Model) -> float:
    """Largest ``|G(lambda / d0; d0) / G(lambda; d0 = 1) - 1|`` of eq (9) for imaginary lambda."""
    lam = 1j * np.logspace(-2, 1, 31)
    g_ref = m.loop_gain("R", d0=1.0)(lam)
    return max(
        float(np.max(np.abs(m.loop_gain("R", d0=d)(lam / d) / g_ref - 1))) for d in (0.01, 0.5, 2.0)
    )


@PAPER.item("linearization", title="Equilibrium (Sec IV-B), linearization eq (8), loop gain eq (9)")
def linearization(ctx: Context) -> None:
    """Sec IV-B and Appendix II: equilibrium, the partial derivatives of eq (8), eq (9)."""
    m = rcp()
    alpha, beta, C, N, d0, T = sympy.symbols("alpha beta C N d0 T", real=True)
    v = m.resolve_params()

    eq = m.equilibrium()
    ctx.check(
        "Sec IV-B",
        "equilibrium rate R* = C/N [pkts/s]",
        v["C"] / v["N"],
        eq["R"],
        tol=1e-12,
        rel=True,
    )
    ctx.check("Sec IV-B", "equilibrium queue q* = 0 [pkts]", 0.0, eq["q"], tol=0.0)

    lin = m.linearize()
    jac = lin.jacobians
    zero = sympy.S.Zero
    ctx.check_expr("eq (8)", "df/dR_d = -alpha/d0", -alpha / d0, jac[d0][0, 0])
    ctx.check_expr(
        "eq (8)",
        "df/dq = -beta/(N d0^2)",
        -beta / (N * d0**2),
        jac[zero][0, 1],
        note="App. II prints -beta R_T (q/C - d)/(C (q/C + d)^3), whose sign inside gives "
        "+beta/(N d0^2); the Sec IV-B value -beta/(N d0^2) is the correct derivative",
    )
    ctx.check_expr("eq (8)", "dg/dR_d = N", N, jac[d0][1, 0])
    ctx.check_expr(
        "eq (8)",
        "df/dR_T = 0",
        0,
        jac[T][0, 0],
        note="App. II prints -alpha/d - N alpha R_d/(C d) - beta q/(d^2 C); the correct "
        "+alpha/d - ... vanishes at the equilibrium, as the paper states",
    )
    ctx.check_true(
        "eq (8)",
        "the update interval T drops out of the linearization",
        lin.delays == (v["d0"],),
        value=f"delays {lin.delays}",
    )

    G = sympy.exp(-S * d0) * (alpha * S * d0 + beta) / (S * d0) ** 2
    ctx.check_expr("eq (9)", "loop gain cut at R equals G(s)", G, loop_gain_expr(m, "R"))

    # eq (9) does not depend on N and C; with lambda = s d0 it does not depend on d0 either.
    dev_nc = loop_gain_change_with_n_and_c(m)
    ctx.check(
        "eq (9)",
        "max relative change of G(jw) when N, C change",
        0.0,
        dev_nc,
        tol=1e-12,
        source="derived",
    )
    dev_d0 = loop_gain_change_with_d0(m)
    ctx.check(
        "eq (9)",
        "max relative change of G(lambda/d0) when d0 changes",
        0.0,
        dev_d0,
        tol=1e-12,
        source="derived",
    )
