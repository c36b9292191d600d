"""The MGT/RED fluid model against ns-3 (the packet half of Misra, Gong & Towsley 2000).

Misra, Gong & Towsley check their fluid model against ns packet simulations (Figs 1-5): the
model follows the mean queue, and Hollot et al. (2001) tie the oscillation of the RED queue to
the loss of stability of the linearized loop as the round-trip delay grows. ns-2's exact
curves cannot be matched (other sizes and seeds); the claims can.
:func:`fluidnet.packet.experiments.mgt_red_onset` runs ``fn.models.mgt_red`` with 10 NewReno
flows on a 10 Mb/s RED bottleneck (1250 packets/s, RED 20/200/0.1, weight 0.001 per packet,
one ACK per segment, as the fluid window law assumes) at propagation delays Tp = 0.1 s (fluid
stable) and Tp = 0.3 s (beyond the fluid critical delay), in ns-3 (seed 1) and in the fluid
model, each run's length and measured tail from the fluid time constants at its delay
(:func:`fluidnet.packet.transient`: five time constants of the slowest mode after the
start-up at 0.1 s, three periods of the fluid cycle at 0.3 s, then four periods).

The criteria, fixed before the run: the packet mean queue within 10 % of the fluid
equilibrium at Tp = 0.1 s and within 15 % of the fluid cycle's mean at Tp = 0.3 s (a documented
mismatch over the rule's tail: +23 %); the packet
queue's swing ``(q95 - q5)/mean`` at Tp = 0.3 s at least twice the one at Tp = 0.1 s (the
packet queue is never still: at Tp = 0.1 s its swing is about 1, from the sawtooth of 10
windows, against the fluid model's 0.06); its period within 25 % of the fluid cycle's.
"""

from __future__ import annotations

from ...packet import require_ns3
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER

#: The fluid-stable and the fluid-unstable delays (s).
STABLE_TP = 0.1
UNSTABLE_TP = 0.3


@PAPER.item(
    title="MGT/RED in ns-3: mean queue and oscillation against the fluid model (MGT Figs 1-5)",
    quick={"delays": (STABLE_TP,), "t_end": 15.0, "after": 5.0},
    pairs=[
        figure_pair(
            "mgt_red_packets",
            "mgt_red",
            "MGT/RED: ns-3's mean queue and swing against the fluid model at a stable and an "
            "unstable delay, beside the fluid queue's trajectories (Misra, Gong & Towsley)",
            fluid_item="mgt_red",
        )
    ],
)
def mgt_red_packets(
    ctx: Context,
    delays: tuple[float, ...] = (STABLE_TP, UNSTABLE_TP),
    t_end: float | None = None,
    after: float | None = None,
) -> dict:
    """ns-3 and the fluid model at each propagation delay of ``delays`` (run length and
    measured tail from the fluid time constants at each delay unless given)."""
    from ...packet.experiments import mgt_red_onset

    require_ns3()
    exp = mgt_red_onset("Tp", delays, params={"N": 10}, t_end=t_end, after=after, seeds=(1,))
    d = exp.data
    names = list(d.data_vars)
    ctx.table(
        "mgt_red_packets",
        [{"Tp": float(tp), **{k: float(d[k].sel(Tp=tp)) for k in names}} for tp in d["Tp"].values],
    )
    fig, axes = ctx.new_figure(1, 2, figsize=(10.4, 3.8))
    exp.plot(axes)
    ctx.figure("mgt_red_packets", fig)

    def at(name, tp):
        return float(d[name].sel(Tp=tp))

    values = {
        "queue stable": Value(
            at("packet_queue", STABLE_TP), expected=at("fluid_equilibrium", STABLE_TP)
        )
    }
    if UNSTABLE_TP in delays:
        crit = float(d.attrs["fluid_critical"])
        values["fluid verdicts"] = Value(
            bool(at("fluid_stable", STABLE_TP) == 1 and at("fluid_stable", UNSTABLE_TP) == 0),
            shown=f"critical Tp = {crit:.4g} s",
        )
        values["queue cycle"] = Value(
            at("packet_queue", UNSTABLE_TP), expected=at("fluid_queue", UNSTABLE_TP)
        )
        s0, s1 = at("packet_swing", STABLE_TP), at("packet_swing", UNSTABLE_TP)
        values["swing"] = Value(s1 >= 2 * s0, shown=f"{s1:.2f} vs {s0:.2f}")
        values["period"] = Value(
            at("packet_period", UNSTABLE_TP), expected=at("fluid_period", UNSTABLE_TP)
        )
    return values
