"""Sec IV-F: the phase-plane region does not change with C, d0 and N (Fig 44)."""

from __future__ import annotations

import numpy as np

from ...models.rate_control import PACKET_BITS, rcp
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import INVARIANCE, QUICK_INVARIANCE, T_END_RTT, invariance_label, parameter_grid
from .phase_plane import phase_plane_region

#: The grid near the onset and the parameter values of the full run.
ALPHAS = parameter_grid(0.1, 1.0, 1.8)
CASES = tuple((k, x) for k, xs in INVARIANCE.items() for x in xs)


@PAPER.item(
    title="Sec IV-F: the region does not change with C, d0 and N",
    quick={
        "alphas": (1.2, 1.3, 1.4, 1.5),
        "betas": (0.4,),
        "cases": QUICK_INVARIANCE,
        "t_rtt": 200.0,
    },
)
def invariance(
    ctx: Context,
    alphas=ALPHAS,
    betas=(0.1, 0.4, 0.6),
    cases=CASES,
    t_rtt: float = T_END_RTT,
) -> dict:
    """The phase-plane classification near the onset for several C, d0 and N."""
    m = rcp()
    T0 = m.resolve_params()["T"]
    ref, _ = phase_plane_region(m, alphas, betas, t_end_rtt=t_rtt)
    values = {}
    for name, x in cases:
        val = x / PACKET_BITS if name == "C" else x
        st, ds = phase_plane_region(m.with_params(**{name: val}), alphas, betas, t_end_rtt=t_rtt)
        failed = int(np.sum(ds["ic_status"].values == "failed"))
        label = invariance_label(name, x)
        note = f"alpha {alphas[0]:g}-{alphas[-1]:g}, beta {[float(b) for b in betas]}"
        if failed:
            note += (
                f"; {failed} trajectories fail: with T = {T0:g} s and d0 = {label} s "
                f"(T/d0 = {T0 / val:g}) the 5x-overload starts drive R(t) negative and eq (4) "
                "blows up; the paper's program must have kept the rate positive (see README)"
            )
        values[name, x] = Value(int(np.sum(st != ref)), note=note)
        if name == "d0" and T0 / val >= 1.0:
            # the same d0 with the base T/d0 = 0.05: exact invariance of the dimensionless form
            st2, _ = phase_plane_region(
                m.with_params(d0=val, T=0.05 * val), alphas, betas, t_end_rtt=t_rtt
            )
            values[name, x, "T/d0 = 0.05"] = int(np.sum(st2 != ref))
    return values
