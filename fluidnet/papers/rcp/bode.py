"""The paper's Bode procedure (Sec IV-C, eqs (12)-(14)) and Fig 33, the linear stable region.

The crossover frequencies of the loop gain eq (9) in closed form, the stable alpha interval they
give at each beta, and the exact D-subdivision boundary ``(w sin w, w^2 cos w)`` of eq (15)
(derived in ``papers/rcp/README.md``, "Exact linear region") that they, fluidnet's characteristic
roots and its boundary tracer are checked against.
"""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy import optimize

import fluidnet as fn

from ...models.rate_control import rcp
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import EXACT_ALPHA_RANGE, LINEAR_VERDICTS, omega_c, omega_z


def bode_margin(alpha: float, beta: float) -> float:
    """``omega_c d0 - omega_z d0`` (positive: stable by the Bode criterion (11)-(12)).

    ``-inf`` when the phase never returns to ``-pi`` (no omega_c, eq (14) violated).
    """
    wc = omega_c(alpha, beta)
    return -np.inf if wc is None else wc - omega_z(alpha, beta)


def bode_stable(alpha: float, beta: float) -> bool:
    """The paper's Bode procedure (Sec IV-C): (14), then (13) numerically, then (12)."""
    return bode_margin(alpha, beta) > 0


def bode_alpha_range(beta: float, alpha_max: float = 2.0) -> tuple[float, float] | None:
    """The interval of alpha that the Bode procedure finds stable at ``beta`` (None if empty)."""
    alphas = np.linspace(beta * (1 + 1e-9), alpha_max, 801)
    g = np.array([bode_margin(a, beta) for a in alphas])
    ok = np.flatnonzero(g > 0)
    if ok.size == 0:
        return None
    i, j = ok[0], ok[-1]

    def h(a):
        return bode_margin(a, beta)

    lo = alphas[0] if i == 0 else optimize.brentq(h, alphas[i - 1], alphas[i], xtol=1e-13)
    hi = alphas[-1] if j == alphas.size - 1 else optimize.brentq(h, alphas[j], alphas[j + 1])
    return float(lo), float(hi)


def bode_beta_max() -> tuple[float, float]:
    """Largest beta with a Bode-stable alpha, and that alpha (maximizing the Bode margin)."""

    def best(beta):
        res = optimize.minimize_scalar(
            lambda a: -bode_margin(a, beta),
            bounds=(beta * 1.0001, 1.6),
            method="bounded",
            options={"xatol": 1e-12},
        )
        return res.x, -res.fun

    beta = optimize.brentq(lambda b: best(b)[1], 0.4, 0.7, xtol=1e-12)
    return float(best(beta)[0]), float(beta)


def bode_stable_grid(step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid ``step, 2 step, ..., 2`` in alpha and in beta, and the Bode verdict on it.

    Returns ``(alpha, beta, stable[beta, alpha])``.
    """
    a = np.round(np.arange(step, 2.0 + 1e-9, step), 10)
    b = np.round(np.arange(step, 2.0 + 1e-9, step), 10)
    stable = np.array([[bode_stable(x, y) for x in a] for y in b])
    return a, b, stable


def exact_boundary(n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form D-subdivision boundary ``(w sin w, w^2 cos w)``, ``0 < w < pi/2``.

    Putting ``lambda = jw`` into eq (15), ``lambda^2 + (alpha lambda + beta) e^{-lambda} = 0``,
    and solving the real and imaginary parts for alpha and beta gives this curve, closed by the
    segment ``beta = 0``: the reference, independent of fluidnet, for Figs 33/36.
    """
    w = np.linspace(1e-4, np.pi / 2, n)
    return w * np.sin(w), w**2 * np.cos(w)


def distance_to_exact_boundary(x: np.ndarray, y: np.ndarray) -> float:
    """Largest ``|beta - w^2 cos w|`` with ``w sin w = alpha`` over boundary points (alpha, beta).

    Points on the closing segment ``beta = 0`` and outside ``0 < alpha < pi/2`` are skipped.
    """
    worst = 0.0
    for xa, yb in zip(np.ravel(x), np.ravel(y), strict=True):
        if not (1e-6 < xa < np.pi / 2 - 1e-9) or abs(yb) < 1e-9:
            continue
        w = optimize.brentq(lambda v, xa=xa: v * np.sin(v) - xa, 0.0, np.pi / 2, xtol=1e-15)
        worst = max(worst, abs(w**2 * np.cos(w) - yb))
    return worst


def roots_stable_chart(a: np.ndarray, b: np.ndarray) -> tuple[xr.Dataset, np.ndarray]:
    """:func:`fluidnet.stability_chart` of RCP on every other point of the grid with beta <= 1.

    Returns the chart and its boolean ``stable[beta, alpha]``.
    """
    sub = slice(None, None, 2)
    chart = fn.stability_chart(rcp(), {"alpha": a[sub], "beta": b[b <= 1.0][sub]}, progress=False)
    roots_stable = np.asarray(chart["stable"].transpose("beta", "alpha").values, dtype=bool)
    return chart, roots_stable


def traced_boundary() -> tuple[np.ndarray, np.ndarray]:
    """The (alpha, beta) points of :func:`fluidnet.stability_boundary` on RCP's default model.

    Traced in ``0 <= alpha <= 2``, ``0 <= beta <= 1``.
    """
    curve = fn.stability_boundary(
        rcp(), "alpha", "beta", x_range=(0.0, 2.0), y_range=(0.0, 1.0), progress=False
    )
    return np.asarray(curve.x, dtype=float), np.asarray(curve.y, dtype=float)


@PAPER.item(
    title="Fig 33: linear stable region by the Bode procedure (12)-(14)", quick={"step": 0.05}
)
def bode_region(ctx: Context, step: float = 0.02) -> dict:
    """Fig 33 and Sec IV-C: the Bode procedure, the exact boundary, classification of points."""
    # the paper's procedure against the exact (D-subdivision) stable intervals
    values = {}
    for beta in EXACT_ALPHA_RANGE:
        rng = bode_alpha_range(beta)
        values["lo", beta], values["hi", beta] = rng if rng else (float("nan"),) * 2
    a_top, b_top = bode_beta_max()
    sup = bode_alpha_range(1e-4)[1]
    values |= {"beta top": b_top, "alpha top": a_top, "beta 0.55": b_top, "sup alpha": sup}
    values["alpha 1.6"] = Value(sup <= 1.6, f"largest Bode-stable alpha {sup:.4f}")

    # grid: condition (14) is necessary
    a, b, stable = bode_stable_grid(step)
    A, B = np.meshgrid(a, b)
    holds = bool(np.all(A[stable] > B[stable]))
    values["eq (14)"] = Value(holds, f"{int(stable.sum())} stable points")

    # sample points of Secs IV-E/F and App. III (the verdicts are the paper's)
    for al, be in LINEAR_VERDICTS:
        values["bode", (al, be)] = bode_stable(al, be)
    for al, be in LINEAR_VERDICTS:
        values["roots", (al, be)] = rcp(alpha=al, beta=be).linearize().is_stable()

    # the library's own machinery: characteristic roots and the exact boundary
    chart, roots_stable = roots_stable_chart(a, b)
    sub = slice(None, None, 2)
    bode_sub = stable[: (b <= 1.0).sum()][sub][:, sub]
    values["disagree"] = int(np.sum(roots_stable != bode_sub))
    cx, cy = traced_boundary()
    values["boundary"] = distance_to_exact_boundary(cx, cy)
    _plot_fig33(ctx, A, B, stable, step, (a_top, b_top), (cx, cy), chart, roots_stable)
    return values


def _plot_fig33(ctx, A, B, stable, step, top, curve, chart, roots_stable) -> None:
    """Fig 33: the Bode procedure's region, the exact curve, the library's chart and curve."""
    fig, ax = ctx.new_figure(figsize=(6.0, 5.0))
    ax.contourf(A, B, stable.astype(float), levels=[0.5, 1.5], colors=["#9ecae1"])
    xa, xb = exact_boundary()
    ax.plot(xa, xb, "k-", lw=1.2, label="exact boundary (w sin w, w² cos w)")
    ax.plot([], [], "s", color="#9ecae1", label=f"Bode procedure (12)-(14), grid {step}")
    ax.plot(*top, "r^", label=f"top of lobe beta = {top[1]:.4f}")
    ax.plot(*curve, ".", color="C3", ms=2, label="fn.stability_boundary")
    Ac, Bc = np.meshgrid(chart["alpha"].values, chart["beta"].values)
    ax.plot(Ac[roots_stable], Bc[roots_stable], "+", color="C2", ms=5,
            label="stable roots (fn.stability_chart)")  # fmt: skip
    ax.set(xlabel="alpha", ylabel="beta", xlim=(0, 2), ylim=(0, 1),
           title="Fig 33: linear stable region of RCP")  # fmt: skip
    ax.legend(loc="upper right", fontsize=8)
    ctx.figure("fig33_bode_region", fig)
