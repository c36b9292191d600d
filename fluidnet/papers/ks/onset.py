"""Derived targets: the onset map of Kelly's delayed primal law in the plane (kappa, T).

Not in the paper (see :mod:`fluidnet.papers.ks.bifurcation`). Kelly's primal law with the
smooth price ``(y/c)^B`` and feedback delay ``T`` (``w = c = 1``) loses stability in a
supercritical Hopf bifurcation at ``kappa (B + 1) T = pi/2``; its stable cycles end at a fold
of cycles, where they meet the unstable cycles that bound the basin of the bounded motion:
past it every solution tried blows up. :func:`fluidnet.onset_map` continues the Hopf curve
in (kappa, T), follows the cycles born on it and continues the fold of cycles in ``T``.

Rescaling time by ``T`` turns the law at (kappa, T) into the law at (kappa T, 1), so both curves
are lines ``kappa T = const``: the Hopf curve at ``pi / (2 (B + 1))`` (closed form) and the fold
of cycles at the value of ``T = 1``. The fold's value is checked against the fold detected
between the orbits of the one-parameter branch (a second method) and against simulations at
``T = 1.5`` on both sides of it.
"""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models import kelly_primal
from ..registry import Context
from ..targets import Value
from . import PAPER
from .bifurcation import B

T_SIM = 1.5  # the delay of the simulations across the fold
KAPPA_RANGE, T_RANGE = (0.02, 2.0), (0.5, 2.0)


def _bounded(m, kappa: float, T: float) -> tuple[bool, float]:
    """Whether a run from near the equilibrium stays bounded, and its late peak-to-peak."""
    t_end = 150.0 * T
    try:
        sol = fn.simulate(
            m, t_end, params={"kappa_1": kappa, "T_1": T}, history={"x_1": 0.9}, rtol=1e-8
        )
    except fn.IntegrationError:
        return False, math.inf
    late = np.linspace(0.6 * t_end, t_end, 3000)
    x = sol(late, "x_1")
    return bool(np.all(np.isfinite(x))), float(np.ptp(x))


@PAPER.item(
    title="Onset map of the delayed primal law in (kappa, T) (derived)",
    quick={"n_points": 8, "fold_points": 4},
)
def onset_map(ctx: Context, n_points: int = 20, n_orbits: int = 30, fold_points: int = 12) -> dict:
    """The Hopf curve (``n_points`` each way), the branch of ``n_orbits`` cycles from
    ``T = 1`` and its fold continued in ``T`` (``fold_points`` each way)."""
    mk = kelly_primal([[1]], T=1.0, B=B)
    hp = fn.hopf_point(mk, "kappa_1", 0.05, 5.0)
    om = fn.onset_map(
        hp, "T_1", x_range=KAPPA_RANGE, y_range=T_RANGE, n_points=n_points, n_orbits=n_orbits,
        fold_points=fold_points,
    )  # fmt: skip
    h = om.hopf
    dev = np.abs(h.x * (B + 1) * h.y - math.pi / 2)
    values: dict = {
        "hopf curve": Value(
            float(dev.max()), note=f"{h.y.min():.3g} <= T <= {h.y.max():.3g}, {len(h)} points"
        )
    }
    branch_folds = om.branches[0].folds if om.branches else []
    if om.folds and branch_folds:
        kt = np.concatenate([f.x * f.y for f in om.folds])
        ts = np.concatenate([f.y for f in om.folds])
        start = om.folds[0].x[0] * om.folds[0].y[0]
        values["fold line"] = Value(
            float(np.max(np.abs(kt / start - 1.0))),
            note=(f"{start:.6f}", f"{ts.min():.3g} <= T <= {ts.max():.3g}", f"{len(kt)}"),
        )
        _, k_branch = branch_folds[0]
        values["fold kT"] = Value(float(start), expected=float(k_branch), note=f"{k_branch:.5f}")
        k_fold = start / T_SIM
        below, amp = _bounded(mk, 0.97 * k_fold, T_SIM)
        above, _ = _bounded(mk, 1.03 * k_fold, T_SIM)
        at_below = f"bounded, cycle of peak-to-peak {amp:.3g}" if below else "blows up"
        values["fold sim"] = Value(
            below and amp > 0.1 and not above,
            f"0.97 x: {at_below}; 1.03 x: {'bounded' if above else 'blows up'}",
        )
    else:
        why = "; ".join(om.notes) or "no fold of cycles on the branch"
        for key in ("fold line", "fold kT"):
            values[key] = Value(math.nan, note=(why[:80], "", ""))
        values["fold sim"] = Value(False, why[:100])
    ctx.table(
        "onset_map",
        [{"curve": "hopf", "kappa": x, "T": y} for x, y in zip(h.x, h.y, strict=True)]
        + [
            {"curve": f"fold {i}", "kappa": x, "T": y}
            for i, f in enumerate(om.folds)
            for x, y in zip(f.x, f.y, strict=True)
        ],
    )
    fig, ax = ctx.new_figure(figsize=(7.0, 4.8))
    om.plot(ax=ax)
    ts = np.linspace(*T_RANGE, 100)
    ax.plot(math.pi / (2 * (B + 1) * ts), ts, "k:", lw=1, label="kappa (B + 1) T = pi/2")
    if om.folds:
        ax.plot(values["fold kT"].value / ts, ts, "C1:", lw=1, label="kappa T = const")
    ax.set(
        xlim=(0.0, 1.2), ylim=T_RANGE, xlabel="source gain kappa", ylabel="feedback delay T",
        title=f"Kelly primal, price (y/c)^{B:g}: stable | stable cycles | runs blow up",
    )  # fmt: skip
    ax.legend(fontsize=7)
    ctx.figure("onset_map_primal_delay", fig)
    return values
