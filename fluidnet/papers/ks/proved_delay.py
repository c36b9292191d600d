"""The delayed primal law's region proved: ``kappa beta T < pi/2`` certified in interval arithmetic.

The delayed extension of :mod:`~fluidnet.papers.ks.delay` (not in the paper: Johari & Tan 2001,
Vinnicombe 2002) linearizes to ``delta' = -kappa beta delta(t - T)`` on one link of ten log
users (the price ``(y - C)^+ / y`` has ``p + y p' = 1`` above capacity), stable iff
``kappa beta T < pi/2``. :func:`fluidnet.certified_chart` proves the plane
``0.2 <= kappa_1 <= 4``, ``0.2 <= T_1 <= 3`` cell by cell from the nonlinear model: the
equilibrium is enclosed over each cell, the price's switch ``y > C`` is decided there (no cell
meets the kink), and every proved cell is checked against the closed form. Past the boundary a
pair of roots has crossed at ``omega = kappa beta``; the next crossing, ``kappa beta T = 5 pi/2``,
lies outside the plane, so every unstable cell has two roots in the right half-plane.
"""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models import utility_primal
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import BETA
from .delay import network

#: The plane certified.
KAPPA_RANGE, T_RANGE = (0.2, 4.0), (0.2, 3.0)


def delayed_model() -> fn.Model:
    return utility_primal(network(), beta=BETA, delay="full", T=1.0)


def contradicts(leaf) -> bool:
    """Whether a proved cell disagrees with ``kappa beta T < pi/2`` anywhere in it."""
    (k0, k1), (t0, t1) = leaf.box["kappa_1"], leaf.box["T_1"]
    if leaf.verdict == "stable":
        return not k1 * t1 * BETA < math.pi / 2
    if leaf.verdict == "unstable":
        return not k0 * t0 * BETA > math.pi / 2
    return False


@PAPER.item(title="Delayed primal law: kappa beta T < pi/2 proved", quick={"depth": 5})
def proved_delay_region(ctx: Context, depth: int = 7) -> dict:
    """The certified (kappa, T) chart to ``depth`` quadtree levels, checked against the closed
    form and re-checked from its file."""
    model = delayed_model()
    cert = fn.certified_chart(
        model, "kappa_1", "T_1", x_range=KAPPA_RANGE, y_range=T_RANGE, depth=depth
    )
    path = ctx.tables_dir / "delay_region_certificate.json"
    cert.save(path)
    ctx.files.append(path)
    checked = fn.check_certificate(path, model=model)
    bad = [leaf for leaf in cert.leaves if contradicts(leaf)]
    counts = sorted({leaf.count for leaf in cert.leaves if leaf.verdict == "unstable"})
    fig, ax = ctx.new_figure(figsize=(6.0, 5.0))

    kk = np.linspace(*KAPPA_RANGE, 300)
    ax.plot(kk, math.pi / 2 / (BETA * kk), "k-", lw=1.2, label="kappa beta T = pi/2")
    cert.plot(ax, boundary=False)
    ax.set_ylim(*T_RANGE)
    ctx.figure("delay_region_proved", fig)
    frac = cert.fraction_proved
    return {
        "proved": Value(frac >= 0.95, f"{100 * frac:.1f} %"),
        "contradictions": len(bad),
        "counts": Value(counts == [2], str(counts)),
        "rechecked": Value(
            checked.checked and checked.work["check_evaluations"] <= cert.work["evaluations"],
            note=f"found in {cert.work['cpu_seconds']:.2f} s, checked in "
            f"{checked.work['check_cpu_seconds']:.2f} s of CPU",
        ),
    }
