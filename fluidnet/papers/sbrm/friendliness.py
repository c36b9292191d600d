"""Fig 5.6.1, Sec 5.6.1: TCP-friendliness, the bandwidth TCP and SBRM claim at a marking rate."""

from __future__ import annotations

import math

import numpy as np

from ...models.single_bit import sbrm
from ..registry import Context
from . import PAPER


def claimed_bandwidth(p, *, rtt: float = 0.1, w: float = 1.0, packet: float = 1500.0):
    """Fig 5.6.1: claimed bandwidth [bytes/s] of TCP (2.4.1) and SBRM (``w B / p``)."""
    p = np.asarray(p, dtype=float)
    return 1.5 * math.sqrt(2 / 3) * packet / (rtt * np.sqrt(p)), w * packet / p


@PAPER.item(title="Fig 5.6.1: TCP-friendliness, claimed bandwidth against p")
def fig_5_6_1(ctx: Context) -> dict:
    """TCP's ``p^-1/2`` against SBRM's ``p^-1`` (Sec 5.6.1) and the quoted 10 Gb/s numbers."""
    p = np.logspace(-8, 0, 400)
    tcp, sb = claimed_bandwidth(p)
    fig, ax = ctx.new_figure()
    ax.loglog(p, 8 * tcp, label="TCP (2.4.1)")
    ax.loglog(p, 8 * sb, label="SBRM, w = 1 pkt/s")
    ax.set_xlabel("marking probability p")
    ax.set_ylabel("claimed bandwidth [bit/s]")
    ax.set_title("RTT = 100 ms, B = 1500 bytes", fontsize="small")
    ax.legend()
    ctx.figure("fig_5_6_1_tcp_friendliness", fig)
    cross = (1.0 * 0.1 / (1.5 * math.sqrt(2 / 3))) ** 2
    t_c, s_c = claimed_bandwidth(cross)
    bw = 10 * 2**30 / 8  # 10 Gb/s with binary giga, bytes/s (M20)
    # the fluid model's equilibrium sits on the SBRM curve: x* = w/p*
    eq = sbrm().equilibrium(N=30, c=10_000.0, d=0.1)
    p_eq = 1 - math.exp(-0.006 * (eq["b"] - 50.0))
    x_eq = eq["W"] / (0.1 + eq["b"] / 10_000.0)
    return {
        "p cross": cross,
        "gap": abs(float(t_c) / float(s_c) - 1),
        "p TCP": (1.5 * math.sqrt(2 / 3) * 1500.0 / (0.1 * bw)) ** 2,
        "p SBRM": 1.0 * 1500.0 / bw,
        "x* p*": x_eq * p_eq / 20.0,
    }
