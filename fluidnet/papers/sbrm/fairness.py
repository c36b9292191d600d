"""(3.2.16)/(3.2.20)/(3.2.21), Sec 4.4: Kelly's primal and dual laws reach proportional fairness."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

import fluidnet as fn

from ...models.kelly import kelly_dual, kelly_primal
from ..registry import Context
from . import PAPER
from .data import PARKING_LOT_PRICES, PRIMAL_B

if TYPE_CHECKING:
    from ...dde import Solution

DOUBLE_BOTTLENECK = np.array([[1, 0, 1], [0, 1, 1]])  # users A (link 1), B (link 2), C (both)
#: The parking lot of Sec 4.4: rows are the core links L1..L4, columns the routes S3-S5, S5-S7,
#: S7-S9, S9-S11, S2-S6, S4-S8, S6-S10, S1-S12, reconstructed from the hop counts and minimum
#: RTTs of Table 4.4.1 (e.g. S1-S12 crosses all four: 2 (1 + 8 + 24 + 8 + 8 + 1) = 100 ms).
PARKING_LOT = np.array(
    [
        [1, 0, 0, 0, 1, 0, 0, 1],
        [0, 1, 0, 0, 1, 1, 0, 1],
        [0, 0, 1, 0, 0, 1, 1, 1],
        [0, 0, 0, 1, 0, 0, 1, 1],
    ]
)


class FairRates(NamedTuple):
    """Final link prices and rates of the dual and primal laws on one network, and their runs."""

    prices: np.ndarray
    x_dual: np.ndarray
    x_primal: np.ndarray
    dual_run: Solution
    primal_run: Solution


def _final(sol, names) -> np.ndarray:
    return np.array([float(sol[n][-1]) for n in names])


def double_bottleneck_rates(t_end: float) -> FairRates:
    """The two laws on :data:`DOUBLE_BOTTLENECK` (c = 1, w = 1), integrated to ``t_end``."""
    xs3 = ["x_1", "x_2", "x_3"]
    dual = kelly_dual(DOUBLE_BOTTLENECK)
    sol = fn.simulate(dual, t_end, history={"lam_1": 0.0, "lam_2": 0.0}, rtol=1e-9, atol=1e-12)
    lam = _final(sol, ["lam_1", "lam_2"])
    x_dual = 1.0 / np.array([lam[0], lam[1], lam[0] + lam[1]])
    primal = kelly_primal(DOUBLE_BOTTLENECK, B=PRIMAL_B)
    solp = fn.simulate(primal, t_end, history={n: 0.01 for n in xs3}, rtol=1e-9, atol=1e-12)
    x_primal = _final(solp, xs3)
    return FairRates(lam, x_dual, x_primal, sol, solp)


def parking_lot_rates(t_end: float) -> FairRates:
    """The two laws on :data:`PARKING_LOT` (c = 1, w = 1), integrated to ``t_end``."""
    names = [f"x_{i + 1}" for i in range(8)]
    dual = kelly_dual(PARKING_LOT)
    sol = fn.simulate(
        dual, t_end, history={f"lam_{i + 1}": 0.0 for i in range(4)}, rtol=1e-9, atol=1e-12
    )
    lam = _final(sol, [f"lam_{i + 1}" for i in range(4)])
    x_dual = 1.0 / (PARKING_LOT.T @ lam)
    primal = kelly_primal(PARKING_LOT, B=PRIMAL_B)
    solp = fn.simulate(primal, t_end, history={n: 0.01 for n in names}, rtol=1e-9, atol=1e-12)
    x_primal = _final(solp, names)
    return FairRates(lam, x_dual, x_primal, sol, solp)


@PAPER.item(
    title="(3.2.16)/(3.2.20)/(3.2.21): proportionally fair allocations",
    quick={"t_end": 60.0, "parking_lot": False},
)
def allocations(ctx: Context, t_end: float = 200.0, parking_lot: bool = True) -> dict:
    """Kelly's primal and the dual law reach the weighted proportionally fair rates (runs of
    ``t_end``; on the double bottleneck, and on the parking lot when ``parking_lot``)."""
    rows, values = [], {}
    # double bottleneck, equal w: the long flow gets 1/3 of each link (3.2.21 worked example)
    xs3 = ["x_1", "x_2", "x_3"]
    db = double_bottleneck_rates(t_end)
    for law, x in (("dual (3.2.20)", db.x_dual), ("primal (3.2.16)", db.x_primal)):
        values["double", law] = x[0] / (x[0] + x[2])
        rows.append(
            {
                "network": "double bottleneck",
                "law": law,
                **{f"x_{i + 1}": v for i, v in enumerate(x)},
            }
        )
    if not parking_lot:
        ctx.table("allocations", rows, columns=["network", "law", *xs3])
        return values
    names = [f"x_{i + 1}" for i in range(8)]
    pl = parking_lot_rates(t_end)
    values |= {("price", i): v for i, v in enumerate(pl.prices)}
    for law, x in (("dual", pl.x_dual), ("primal", pl.x_primal)):
        values |= {(law, i): v for i, v in enumerate(x)}
        rows.append(
            {"network": "parking lot", "law": law, **{f"x_{i + 1}": v for i, v in enumerate(x)}}
        )
    ctx.table("allocations", rows, columns=["network", "law"] + names)
    _allocations_figure(ctx, db.primal_run, pl.dual_run)
    return values


def _allocations_figure(ctx: Context, primal_run: Solution, prices_run: Solution) -> None:
    """Left: x_1, x_3 of the double-bottleneck primal run; right: the parking-lot dual prices."""
    xs3 = ["x_1", "x_2", "x_3"]
    fig, ax = ctx.new_figure(1, 2, figsize=(11, 4))
    for n in xs3[:1] + xs3[2:]:
        ax[0].plot(primal_run.t, primal_run[n], label=f"primal {n}")
    ax[0].axhline(2 / 3, color="0.5", ls="--", lw=0.8)
    ax[0].axhline(1 / 3, color="0.5", ls="--", lw=0.8)
    ax[0].set_title("double bottleneck (c = 1, w = 1)", fontsize="small")
    ax[0].set_xlim(0, 30)
    for i in range(4):
        ax[1].plot(prices_run.t, prices_run[f"lam_{i + 1}"], label=f"lam_{i + 1}")
    for v in PARKING_LOT_PRICES:
        ax[1].axhline(v, color="0.5", ls="--", lw=0.8)
    ax[1].set_title("parking lot, dual law: link prices", fontsize="small")
    for a in ax:
        a.set_xlabel("t")
        a.legend(fontsize="small")
    ctx.figure("allocations", fig)
