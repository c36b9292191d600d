"""Sec V-D and VI-C (Experiment 3, Figs 4/5): the adaptive marking level, fluid analogue.

Fig 1's network with 300 users (classes of 100 on links {1, 2}, {1}, {2}; 50 log and 50 ``-1/x``
users each), gamma = 1, beta = 0.5, unit weights and gains; 32-byte packets and rates in pkt/s:
``C = (7812.5, 3906.25)``. The step size of the adaptive law is not stated (packet-level: one
update per K = 1000 packets); eta = 0.05 /s here. The steady state has the load at ``gamma C`` on
both links; the marking levels it needs are found independently by solving for the mark
fractions that make both loads equal C (plain scipy), then ``C~ = C (1 - p)``.

Units: ``beta`` and ``w`` are not unit-free. With rates in packets per 0.02 s (Experiment 1's
unit) and the same numbers, the 200 users of a link need more than its capacity even when every
packet is marked, and no marking level exists: the model refuses with a ParameterError.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models import adaptive_marking, marking_level
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import BETA, TIME_UNIT, exp3_network, steady_levels

ETA = 0.05


def run(t_end: float):
    """The adaptive law from C~ = C/2 and rates of 1 pkt/s."""
    net = exp3_network()
    m = adaptive_marking(net, beta=BETA, eta=ETA, gamma=1.0)
    hist = {f"x_{n}": 1.0 for n in net.names}
    hist.update(Ct_1=0.5 * net.C[0], Ct_2=0.5 * net.C[1])
    return net, m, fn.simulate(m, t_end, history=hist, rtol=1e-8)


@PAPER.item(
    title="Sec V-D/VI-C: adaptive marking level, Figs 4/5 (fluid)",
    quick={"t_end": 400.0, "settle": 2e-2},
)
def experiment3(ctx: Context, t_end: float = 800.0, settle: float = 1e-3) -> dict:
    """The adaptive law run to ``t_end``, its levels settled to within ``settle``."""
    net, m, sol = run(t_end)
    p_ref, _ = steady_levels(net.C)
    end = {n: float(sol[n][-1]) for n in m.state_names}
    eq = m.equilibrium(guess=end)  # the model layer's equilibrium, started at the run's end
    lv = np.array([eq["Ct_1"], eq["Ct_2"]])
    values = {("steady", ll): lv[ll] for ll in range(2)} | {
        ("level", ll): lv[ll] for ll in range(2)
    }
    final = np.array([end["Ct_1"], end["Ct_2"]])
    holds = bool(np.all(np.abs(final / lv - 1) < settle))
    values["converge"] = Value(holds, ", ".join(f"{v:.2f}" for v in final))
    t, ct1, ct2 = sol.t, sol["Ct_1"], sol["Ct_2"]
    holds = bool(
        ct1.min() >= 0
        and ct2.min() >= 0
        and ct1.max() <= net.C[0] * (1 + 1e-12)
        and ct2.max() <= net.C[1] * (1 + 1e-12)
    )
    values["projection"] = Value(holds, f"max {ct1.max():.3f}, {ct2.max():.3f}")
    y = np.array([net.loads([sol[f"x_{n}"][i] for n in net.names]) for i in range(len(t))])
    overload = np.maximum(y - net.C, 0) / y
    late = t > t[-1] / 2
    values["no loss"] = Value(bool(overload[late].max() < 1e-3), f"{overload[late].max():.2g}")
    # Prop 3's decentralised levels are conservative on this network
    lv27 = marking_level(net, BETA)
    values["conservative"] = Value(bool(np.all(lv27 < lv)), ", ".join(f"{v:.2f}" for v in lv27))
    # Units: the same numbers with rates per 0.02 s have no feasible marking level
    small = exp3_network(C=list(net.C * TIME_UNIT), rate_unit="pkts/(0.02 s)")
    try:
        adaptive_marking(small, beta=BETA)
        raised = ""
    except fn.ParameterError as exc:
        raised = str(exc)
    values["units"] = Value("no feasible marking level on link 1" in raised, raised[:80])
    ctx.table(
        "experiment3_levels",
        [
            {
                "link": ll + 1,
                "C": net.C[ll],
                "adaptive steady C~": lv[ll],
                "C~/C": lv[ll] / net.C[ll],
                "mark fraction": p_ref[ll],
                "Prop 3 (27) level": lv27[ll],
            }
            for ll in range(2)
        ],
    )
    fig, ax = ctx.new_figure(1, 2, figsize=(11, 4))
    for a, ct, ll in ((ax[0], ct1, 0), (ax[1], ct2, 1)):
        a.plot(t, ct, label="adaptive C~")
        a.axhline(lv[ll], color="0.4", ls=":", lw=0.8, label="steady level")
        a.axhline(net.C[ll], color="k", ls="--", lw=0.8, label="gamma C")
        a.set_xlabel("t [s]")
        a.set_ylabel(f"C~_{ll + 1} [pkt/s]")
        a.set_title(
            f"Fig {4 + ll} analogue: link {ll + 1} (fluid; ns-2 not reproducible)", fontsize="small"
        )
        a.legend(fontsize="small")
    ctx.figure("figs4_5_marking_levels_fluid", fig)
    return values
