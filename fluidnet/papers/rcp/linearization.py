"""Sec IV-B and Appendix II: the equilibrium, the linearization eq (8) and the loop gain eq (9)."""

from __future__ import annotations

import numpy as np
import sympy

from ...models.rate_control import rcp
from ...symbolic.loopgain import loop_gain_expr
from ...symbolic.model import Model
from ..registry import Context
from ..targets import Value
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


@PAPER.item(title="Equilibrium (Sec IV-B), linearization eq (8), loop gain eq (9)")
def linearization(ctx: Context) -> dict:
    """Sec IV-B and Appendix II: equilibrium, the partial derivatives of eq (8), eq (9)."""
    m = rcp()
    d0, T = sympy.symbols("d0 T", real=True)
    eq = m.equilibrium()
    lin = m.linearize()
    jac = lin.jacobians
    return {
        "R*": eq["R"],
        "q*": eq["q"],
        "df/dR_d": jac[d0][0, 0],
        "df/dq": jac[sympy.S.Zero][0, 1],
        "dg/dR_d": jac[d0][1, 0],
        "df/dR_T": jac[T][0, 0],
        "no T": Value(lin.delays == (m.resolve_params()["d0"],), f"delays {lin.delays}"),
        "G": loop_gain_expr(m, "R"),
        # eq (9) does not depend on N and C; with lambda = s d0 it does not depend on d0 either
        "G(N, C)": loop_gain_change_with_n_and_c(m),
        "G(d0)": loop_gain_change_with_d0(m),
    }
