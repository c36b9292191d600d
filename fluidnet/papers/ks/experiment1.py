"""Sec VI-A, Experiment 1: the NLP (6)-(8), the fluid equilibrium and Fig 2's fluid analogue.

The paper compares its ns-2 averages with the solution of (6)-(8) ("Proposition 5" in the text is
a slip: the printed numbers solve (6)-(8) with unit weights). The fluid laws (9)/(10) -- and the
window laws (12)/(13), whose equilibrium is theirs -- converge to the maximiser of (5), which
tends to that NLP as beta -> oo (Corollary 1); at the experiment's beta = 0.5 it is about 1.5 %
away.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models import capacity_optimum, penalty_optimum, utility_primal, utility_window
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import EXP1_BETAS, EXP1_BETAS_QUICK, EXP1_NS2, EXP1_PRINTED, exp1_network

NAMES = ("x_0", "x_1", "x_2")


def model_equilibria(betas=EXP1_BETAS) -> dict[float, np.ndarray]:
    """``m.equilibrium()`` of the rate laws (9)/(10) on Experiment 1, per ``beta``."""
    m = utility_primal(exp1_network())
    out = {}
    guess = None
    for b in sorted(betas):  # continuation in beta: each equilibrium starts the next search
        eq = m.equilibrium(beta=b, guess=guess)
        out[b] = np.array([eq[n] for n in NAMES])
        guess = eq
    return out


def window_run(t_end: float):
    """The window laws (12)/(13) from windows of 1 packet, to ``t_end`` (units of 0.02 s)."""
    m = utility_window(exp1_network(), beta=0.5)
    return fn.simulate(m, t_end, history={"W_0": 1.0, "W_1": 1.0, "W_2": 1.0}, rtol=1e-8)


@PAPER.item(
    title="Sec VI-A: NLP (6)-(8), fluid equilibria, Fig 2 (fluid analogue)",
    quick={"betas": EXP1_BETAS_QUICK, "t_end": 300.0, "settle": 2e-2},
)
def experiment1(ctx: Context, betas=EXP1_BETAS, t_end: float = 800.0, settle: float = 1e-4):
    """The NLP, the equilibria for ``betas``, and Fig 2's windows (run to ``t_end``, settled to
    within ``settle``)."""
    net = exp1_network()
    nlp = capacity_optimum(net)
    values = {("nlp", i): v for i, v in enumerate(nlp.x)}
    values |= {("multiplier", i): nlp.multipliers[i] for i in range(2)}
    eqs = model_equilibria(betas)
    x05 = eqs[0.5]
    ref = penalty_optimum(net, 0.5)  # the convex program (5), scipy, no ODE involved
    values |= {("(5)", i): Value(x05[i], expected=ref[i]) for i in range(3)}
    values |= {("beta 0.5", i): x05[i] for i in range(3)}
    gaps = {b: float(np.max(np.abs(x - nlp.x))) for b, x in eqs.items()}
    bs = sorted(gaps)
    holds = all(gaps[a] > gaps[b] for a, b in zip(bs, bs[1:], strict=False))
    holds = holds and abs(gaps[bs[0]] * bs[0] / (gaps[bs[-1]] * bs[-1]) - 1) < 0.05
    values["Cor 1"] = Value(holds, ", ".join(f"beta {b:g}: {gaps[b]:.4g}" for b in bs))
    values |= {("beta 5000", i): eqs[5000.0][i] for i in range(3)}
    ns2 = np.array(EXP1_NS2)
    dev_fluid = float(np.max(np.abs(x05 / ns2 - 1)))
    dev_nlp = float(np.max(np.abs(np.array(EXP1_PRINTED) / ns2 - 1)))
    values["ns-2"] = Value(dev_fluid <= dev_nlp, f"{dev_fluid:.4f}")
    rows = [
        {"rates": "printed NLP", **dict(zip(NAMES, EXP1_PRINTED, strict=True))},
        {"rates": "NLP (6)-(8)", **dict(zip(NAMES, nlp.x, strict=True))},
        {"rates": "printed ns-2 average", **dict(zip(NAMES, EXP1_NS2, strict=True))},
    ]
    rows += [
        {"rates": f"fluid equilibrium beta={b:g}", **dict(zip(NAMES, x, strict=True))}
        for b, x in eqs.items()
    ]
    ctx.table("experiment1_rates", rows, columns=["rates", *NAMES])
    sol = window_run(t_end)
    W_end = np.array([sol[f"W_{r}"][-1] for r in "012"])
    W_eq = x05 * net.d
    values["Fig 2"] = Value(
        bool(np.all(np.abs(W_end / W_eq - 1) < settle)), str(np.round(W_end, 3))
    )
    _fig2(ctx, sol, net.d, nlp.x, x05)
    return values


def _fig2(ctx: Context, sol, d, x_nlp, x_eq) -> None:
    """Windows (Fig 2's quantity) and rates ``x = W/d`` of the fluid window laws."""
    fig, ax = ctx.new_figure(1, 2, figsize=(11, 4))
    for r, c in zip("012", ("C0", "C1", "C2"), strict=True):
        i = int(r)
        for a, scale in ((ax[0], d[i]), (ax[1], 1.0)):
            a.plot(sol.t, sol[f"W_{r}"] * (scale / d[i]), color=c, label=f"user {r}")
            a.axhline(x_eq[i] * scale, color=c, ls=":", lw=0.8)
            a.axhline(x_nlp[i] * scale, color=c, ls="--", lw=0.8)
    ax[0].set_ylabel("window W [packets]")
    ax[1].set_ylabel("rate x = W/d [packets per 0.02 s]")
    for a in ax:
        a.set_xlabel("t [units of 0.02 s]")
        a.legend(fontsize="small")
    ax[0].set_title(
        "Experiment 1, window laws (12)/(13), fluid (the ns-2 Fig 2 is not reproducible)",
        fontsize="small",
    )
    ax[1].set_title("dotted: equilibrium at beta = 0.5; dashed: NLP (6)-(8)", fontsize="small")
    ctx.figure("fig2_windows_fluid", fig)
