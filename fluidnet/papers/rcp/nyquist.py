"""Sec IV-D: the Nyquist analysis of ``G1`` (exact delay and Padé), Figs 34-36.

``alpha G1(s)`` is the loop gain of eq (9) cut so that ``-1/alpha`` is the critical point; the
stable alpha interval is where ``Z = N + P`` vanishes.
"""

from __future__ import annotations

import numpy as np
import sympy
from scipy import optimize

import fluidnet as fn

from ...errors import AnalysisError
from ...linear.delaytf import DelayTF
from ...symbolic.symbols import s as S
from ..registry import Context
from ..targets import Value
from . import PAPER
from .bode import bode_alpha_range, exact_boundary
from .data import FIG34


def g1_exact(beta: float, d0: float = 0.2) -> DelayTF:
    """``G1(s) = d0 s e^{-s d0} / (d0^2 s^2 + beta e^{-s d0})`` (Sec IV-D) with the exact delay."""
    e = sympy.exp(-S * d0)
    return DelayTF.from_expr(d0 * S * e / (d0**2 * S**2 + beta * e), S)


def g1_pade(beta: float, d0: float = 0.2, printed: bool = False) -> DelayTF:
    """``G1`` with the [2/2] Padé approximation of footnote 11.

    The denominator printed in the paper, ``(d0^4/12) s^4 + (d0^3/2) s^3 + (d0^2 + beta d0^2/12
    - d0 beta/2) s + beta``, has lost its ``s^2`` term; substituting the Padé form gives
    ``(d0^4/12) s^4 + (d0^3/2) s^3 + (d0^2 + beta d0^2/12) s^2 - (beta d0/2) s + beta``, used
    unless ``printed=True`` (see the misprints in ``papers/rcp/README.md``).
    """
    num = [d0**3 / 12, -(d0**2) / 2, d0, 0.0]
    if printed:
        den = [d0**4 / 12, d0**3 / 2, 0.0, d0**2 + beta * d0**2 / 12 - d0 * beta / 2, beta]
    else:
        den = [d0**4 / 12, d0**3 / 2, d0**2 + beta * d0**2 / 12, -beta * d0 / 2, beta]
    return DelayTF(num, den)


def negative_real_crossings(L: DelayTF, w_max: float, n: int = 20000) -> list[tuple[float, float]]:
    """``(omega, Re L(j omega))`` where the Nyquist curve crosses the negative real axis."""
    w = np.geomspace(1e-4, w_max, n)
    im = L.freqresp(w).imag
    out = []
    for k in np.flatnonzero(np.sign(im[:-1]) * np.sign(im[1:]) < 0):
        wk = optimize.brentq(lambda x: L.freqresp(x).imag, w[k], w[k + 1], xtol=1e-14)
        re = float(L.freqresp(wk).real)
        if re < 0:
            out.append((float(wk), re))
    return out


def nyquist_alpha_range(beta: float, exact: bool = True, d0: float = 0.2):
    """The stable alpha interval at ``beta`` by the Nyquist procedure of Sec IV-D.

    ``-1/alpha`` must lie where ``G1`` encircles it ``P`` times counter-clockwise. The candidate
    intervals are bounded by consecutive negative-real-axis crossings of ``G1(j omega)``; each
    is tested at its midpoint with :func:`fluidnet.nyquist` on ``alpha G1`` (``Z = N + P``).
    Returns ``(interval or None, crossings, P)``.
    """
    G1 = g1_exact(beta, d0) if exact else g1_pade(beta, d0)
    cross = negative_real_crossings(G1, w_max=60.0 / d0)
    pts = sorted({round(re, 12) for _, re in cross})
    edges = [-np.inf, *pts, 0.0]
    stable = []
    P = None
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        mid = (b - 1.0) if np.isinf(a) else 0.5 * (a + b)
        alpha = -1.0 / mid
        resp = fn.nyquist(alpha * G1)
        P = resp.open_loop_rhp_poles
        if resp.closed_loop_rhp_roots == 0 and not resp.marginal:
            stable.append((-1.0 / a if np.isfinite(a) else 0.0, -1.0 / b if b < 0 else np.inf))
    if not stable:
        return None, cross, P
    if len(stable) > 1:
        raise AnalysisError(f"beta={beta}: several stable alpha intervals {stable}")
    return stable[0], cross, P


def rightmost_pole(G1: DelayTF, d0: float) -> complex:
    """The pole of ``G1`` with the largest real part, in ``lambda = s d0``."""
    poles = np.asarray(G1.poles(k=4)) * d0
    return poles[np.argmax(poles.real + 1e-9 * poles.imag)]


def nyquist_points(G1: DelayTF, d0: float) -> np.ndarray:
    """``G1(j w)`` on the plotting grid ``1e-3 <= w <= 60 / d0`` (4000 points)."""
    w = np.geomspace(1e-3, 60.0 / d0, 4000)
    return G1.freqresp(w)


def nyquist_vs_bode_intervals(betas, d0: float) -> tuple[list[dict], float]:
    """Fig 36: the stable alpha interval per beta by Nyquist (exact delay) and by Bode.

    Returns the table rows and the largest difference of the interval ends (``inf`` if one
    procedure finds an interval where the other finds none).
    """
    rows, dev = [], 0.0
    for beta in betas:
        rng, _, P = nyquist_alpha_range(float(beta), exact=True, d0=d0)
        brng = bode_alpha_range(float(beta))
        rows.append(
            {
                "beta": beta,
                "P": P,
                "alpha_lo_nyquist": rng[0] if rng else None,
                "alpha_hi_nyquist": rng[1] if rng else None,
                "alpha_lo_bode": brng[0] if brng else None,
                "alpha_hi_bode": brng[1] if brng else None,
            }
        )
        if (rng is None) != (brng is None):
            dev = np.inf
        elif rng is not None:
            dev = max(dev, abs(rng[0] - brng[0]), abs(rng[1] - brng[1]))
    return rows, dev


def fig34_values(kind: str, G1: DelayTF, d0: float) -> dict:
    """Points A and B, the count P, the RHP pole of ``G1`` and the stable alpha interval at
    beta = 0.3 (``kind``: ``"exact"`` or ``"pade"``)."""
    cross = negative_real_crossings(G1, w_max=60.0 / d0)
    A, B = cross[0][1], cross[1][1]
    P = G1.rhp_pole_count()  # the open-loop RHP poles of G1 (the zeros of its denominator)
    top = rightmost_pole(G1, d0)
    rng, _, _ = nyquist_alpha_range(0.3, exact=(kind == "exact"), d0=d0)
    lo, hi = rng if rng else (np.nan, np.nan)
    values = {(kind, "A"): A, (kind, "B"): B, (kind, "P"): P, (kind, "lo"): lo, (kind, "hi"): hi}
    values[kind, "pole"] = Value(abs(top), note=f"{top:.5f}")
    if kind == "pade":
        values |= {"A printed": A, "B printed": B, "lo printed": lo, "hi printed": hi}
    return values


def fig35_values(d0: float) -> dict:
    """beta = 0.6: no alpha stabilizes, with the exact delay or the Padé form."""
    rng, _, P = nyquist_alpha_range(0.6, exact=True, d0=d0)
    rngp, _, _ = nyquist_alpha_range(0.6, exact=False, d0=d0)
    return {
        "beta 0.6": Value(rng is None, f"P = {P}, interval {rng}"),
        "beta 0.6 pade": Value(rngp is None, f"interval {rngp}"),
    }


def _plot_fig36(ctx: Context, rows: list[dict]) -> None:
    """Fig 36: the Nyquist interval ends (+) on the exact boundary of the Bode region."""
    fig, ax = ctx.new_figure(figsize=(6.0, 5.0))
    xa, xb = exact_boundary()
    ax.plot(xa, xb, "k-", label="Bode region boundary")
    for r in rows:
        if r["alpha_lo_nyquist"] is not None:
            ax.plot([r["alpha_lo_nyquist"], r["alpha_hi_nyquist"]], [r["beta"]] * 2, "r+", ms=9)
    ax.plot([], [], "r+", label="Nyquist interval ends")
    ax.set(
        xlabel="alpha",
        ylabel="beta",
        xlim=(0, 1.8),
        ylim=(0, 0.7),
        title="Fig 36: Bode (line) and Nyquist (+) regions",
    )
    ax.legend(fontsize=8)
    ctx.figure("fig36_bode_vs_nyquist", fig)


@PAPER.item(title="Figs 34-36: Nyquist analysis of G1 (exact delay and Padé)", quick={"step": 0.1})
def nyquist(ctx: Context, step: float = 0.05) -> dict:
    """Sec IV-D: P = 2, the crossings A and B, the stable alpha interval, beta = 0.6, Fig 36."""
    d0 = 0.2
    values = {}
    fig, axes = ctx.new_figure(1, 2, figsize=(12.0, 4.8))
    for kind, G1 in (("exact", g1_exact(0.3, d0)), ("pade", g1_pade(0.3, d0))):
        label = "exact delay" if kind == "exact" else "Padé [2/2]"
        values |= fig34_values(kind, G1, d0)
        ax = axes[0]
        g = nyquist_points(G1, d0)
        ax.plot(g.real, g.imag, "-" if kind == "exact" else "--", label=label)
        ax.plot(
            g.real,
            -g.imag,
            "-" if kind == "exact" else "--",
            color=ax.lines[-1].get_color(),
            alpha=0.4,
        )
    axes[0].plot([FIG34["pade"]["A"], FIG34["pade"]["B"]], [0, 0], "ko")
    axes[0].annotate("A", (FIG34["pade"]["A"], 0.1))
    axes[0].annotate("B", (FIG34["pade"]["B"], 0.1))
    axes[0].set(
        xlim=(-3.5, 1.5),
        ylim=(-3, 3),
        xlabel="Re G1",
        ylabel="Im G1",
        title="Fig 34: Nyquist of G1, beta = 0.3",
    )
    axes[0].legend(fontsize=8)

    # Fig 35: beta = 0.6, no interval of -1/alpha with Z = 0
    values |= fig35_values(d0)
    g = nyquist_points(g1_exact(0.6, d0), d0)
    axes[1].plot(g.real, g.imag, "C0-", label="exact delay")
    axes[1].plot(g.real, -g.imag, "C0-", alpha=0.4)
    axes[1].legend(fontsize=8)
    axes[1].set(
        xlim=(-3.5, 1.5),
        ylim=(-3, 3),
        xlabel="Re G1",
        ylabel="Im G1",
        title="Fig 35: Nyquist of G1, beta = 0.6",
    )
    ctx.figure("fig34_35_nyquist", fig)

    # Fig 36: Nyquist-derived intervals (+) against the Bode curve
    betas = np.round(np.arange(0.05, 0.56, step), 10)
    rows, values["fig36"] = nyquist_vs_bode_intervals(betas, d0)
    ctx.table("fig36_nyquist_vs_bode", rows, columns=list(rows[0]))
    _plot_fig36(ctx, rows)
    return values
