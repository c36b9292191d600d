"""Fig 33 proved: the linear stable region of eq (15) certified cell by cell in interval arithmetic.

:func:`fluidnet.certified_chart` splits the paper's plane ``0 <= alpha <= 2``, ``0 <= beta <= 1``
(RCP's default model, eqs (4)-(7)) into cells proved stable or unstable (with their number of
roots in the right half-plane) in ball arithmetic; the undecided cells hug the boundary. Every
proved cell is checked against the exact region of ``papers/rcp/README.md`` ("Exact linear
region"): ``0 < beta < g(alpha)`` with ``g(alpha) = w^2 cos w`` where ``w sin w = alpha``,
``0 < alpha < pi/2`` (computed here with scipy, independently of fluidnet). Outside the lobe the
count is 2: a complex pair crossed the Hopf curve. The certificate is saved with the tables and
re-checked from the file.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize

import fluidnet as fn

from ...models.rate_control import rcp
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import LINEAR_VERDICTS


def lobe_beta(alpha: float) -> float:
    """``g(alpha) = w^2 cos w`` with ``w sin w = alpha`` (0 at the ends of ``[0, pi/2]``)."""
    if alpha <= 0 or alpha >= math.pi / 2:
        return 0.0
    w = optimize.brentq(lambda v: v * math.sin(v) - alpha, 0.0, math.pi / 2, xtol=1e-15)
    return w * w * math.cos(w)


def lobe_top() -> tuple[float, float]:
    """``(alpha, beta)`` of the top of the lobe (the maximum of ``g``)."""
    res = optimize.minimize_scalar(
        lambda w: -w * w * math.cos(w), bounds=(0.5, 1.5), method="bounded",
        options={"xatol": 1e-12},
    )  # fmt: skip
    w = float(res.x)
    return w * math.sin(w), w * w * math.cos(w)


def contradicts(leaf, top: tuple[float, float]) -> bool:
    """Whether a proved cell disagrees with the exact region anywhere in it."""
    a0, a1 = leaf.box["alpha"]
    b0, b1 = leaf.box["beta"]
    if leaf.verdict == "stable":
        inside = b0 > 0 and a0 > 0 and a1 < math.pi / 2
        return not (inside and b1 < min(lobe_beta(a0), lobe_beta(a1)))
    if leaf.verdict == "unstable":
        if b0 <= 0:
            return True
        if a0 >= math.pi / 2:
            return False
        hi = min(a1, math.pi / 2)
        g = max(lobe_beta(a0), lobe_beta(hi), top[1] if a0 <= top[0] <= hi else 0.0)
        return not b0 > g
    return False


def point_verdict(cert: fn.RegionCertificate, alpha: float, beta: float) -> str:
    """The verdicts of the cells holding a point (``"undecided"`` unless one is proved)."""
    found = {
        leaf.verdict
        for leaf in cert.leaves
        if leaf.box["alpha"][0] <= alpha <= leaf.box["alpha"][1]
        and leaf.box["beta"][0] <= beta <= leaf.box["beta"][1]
    }
    proved = found - {"undecided"}
    return proved.pop() if len(proved) == 1 else "undecided"


@PAPER.item(title="Fig 33 proved: the linear region in interval arithmetic", quick={"depth": 5})
def proved_region(ctx: Context, depth: int = 7) -> dict:
    """The certified chart of Fig 33's plane to ``depth`` quadtree levels, checked against the
    exact region and re-checked from its file."""
    cert = fn.certified_chart(rcp(), "alpha", "beta", x_range=(0, 2), y_range=(0, 1), depth=depth)
    path = ctx.tables_dir / "fig33_certificate.json"
    cert.save(path)
    ctx.files.append(path)
    checked = fn.check_certificate(path, model=rcp())
    top = lobe_top()
    bad = [leaf for leaf in cert.leaves if contradicts(leaf, top)]
    counts = sorted({leaf.count for leaf in cert.leaves if leaf.verdict == "unstable"})
    points = {p: point_verdict(cert, *p) for p in LINEAR_VERDICTS}
    right = sum(
        (v == "stable") == stable and v != "undecided"
        for (v, (stable, _)) in zip(points.values(), LINEAR_VERDICTS.values(), strict=True)
    )
    ctx.table(
        "fig33_proved_cells",
        [
            {
                "alpha_lo": leaf.box["alpha"][0],
                "alpha_hi": leaf.box["alpha"][1],
                "beta_lo": leaf.box["beta"][0],
                "beta_hi": leaf.box["beta"][1],
                "verdict": leaf.verdict,
                "rhp_roots": leaf.count,
            }
            for leaf in cert.leaves
        ],
    )
    _plot(ctx, cert)
    frac = cert.fraction_proved
    cost = cert.work["cpu_seconds"]
    return {
        "proved": Value(frac >= 0.95, f"{100 * frac:.1f} %"),
        "contradictions": len(bad),
        "counts": Value(counts == [2], str(counts)),
        "points": Value(right, f"{right}/{len(points)}"),
        "rechecked": Value(
            checked.checked and checked.work["check_evaluations"] <= cert.work["evaluations"],
            note=f"found in {cost:.2f} s, checked in {checked.work['check_cpu_seconds']:.2f} s "
            f"of CPU ({cert.work['evaluations']} and {checked.work['check_evaluations']} "
            "evaluations of Delta)",
        ),
    }


def _plot(ctx: Context, cert: fn.RegionCertificate) -> None:
    fig, ax = ctx.new_figure(figsize=(6.0, 5.0))
    w = np.linspace(1e-4, math.pi / 2, 400)
    ax.plot(w * np.sin(w), w**2 * np.cos(w), "k-", lw=1.2, label="exact (w sin w, w² cos w)")
    cert.plot(ax, boundary=False)
    ax.set_title(
        f"Fig 33 proved: {100 * cert.fraction_proved:.1f} % of the plane, "
        f"{len(cert.leaves)} cells", fontsize="small",
    )  # fmt: skip
    ctx.figure("fig33_proved_region", fig)
