"""Fig 7.2.3, Sec 7.2: the Erlang-B reference curve for call admission control."""

from __future__ import annotations

import numpy as np

from ..registry import Context
from . import PAPER


def erlang_b(load: float, servers: int) -> float:
    """Erlang-B blocking probability by the stable recursion ``B_k = A B_{k-1}/(k + A B_{k-1})``."""
    if servers < 0 or load < 0:
        raise ValueError(f"need servers >= 0 and load >= 0, got {servers}, {load}")
    b = 1.0
    for k in range(1, int(servers) + 1):
        b = load * b / (k + load * b)
    return b


@PAPER.item(title="Fig 7.2.3: Erlang-B reference for call admission control")
def fig_7_2_3(ctx: Context) -> dict:
    """The ideal (Erlang-B) blocking curve of Fig 7.2.3 with 460 servers (90 % of 513)."""
    loads = np.arange(300, 701, 5)
    fig, ax = ctx.new_figure()
    ax.semilogy(loads, [erlang_b(a, 460) for a in loads])
    ax.set_xlabel("offered load [Erlang]")
    ax.set_ylabel("blocking probability")
    ax.set_title("Erlang-B, 460 servers", fontsize="small")
    ctx.figure("fig_7_2_3_erlang_b", fig)
    values = {"streams": 100e6 / 8 / 24_360}
    values |= {("blocking", load): erlang_b(load, 460) for load in (400, 460, 513, 560, 600, 650)}
    return values
