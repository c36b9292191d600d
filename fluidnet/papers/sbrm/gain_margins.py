"""Figs 6.6.5/6.6.6 (Sec 6.6.2): gain margin of (6.5.21) as one SBRM parameter varies."""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.single_bit import sbrm_printed_loop_gain
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import GM_NOTE


def parameter_loops() -> dict[str, dict[float, fn.DelayTF]]:
    """(6.5.21) at N=30, c=10 pkts/ms, d=86 ms with one parameter set to each value of GM_NOTE."""
    return {
        name: {v: sbrm_printed_loop_gain(30, 10_000.0, 0.086, **{name: v}) for v in values}
        for name, values in GM_NOTE.items()
    }


def gamma_over_c_margins() -> list[float]:
    """Gain margins [dB] with ``gamma = 1/c``, c = 8, 15, 100 pkts/ms, d = 50...300 ms, N = 30."""
    return [
        fn.margins(
            sbrm_printed_loop_gain(30, 1000.0 * c, d / 1e3, gamma=1 / (1000.0 * c))
        ).gain_margin_db
        for c in (8, 15, 100)
        for d in (50, 100, 200, 300)
    ]


def _decreasing(d: dict[float, float]) -> bool:
    vals = [d[k] for k in sorted(d)]
    return all(a > b for a, b in zip(vals[:-1], vals[1:], strict=True))


@PAPER.item(
    title="Figs 6.6.5/6.6.6: gain margin against kappa, w, gamma, b0", quick={"gamma_1_c": False}
)
def figs_6_6_5_6(ctx: Context, gamma_1_c: bool = True) -> dict:
    """Bode plots and gain margins of (6.5.21) as one SBRM parameter varies (Sec 6.6.2); the
    recommendation gamma = 1/c checked over c and d when ``gamma_1_c``."""
    loops = parameter_loops()
    gm = {
        name: {v: fn.margins(L).gain_margin_db for v, L in ls.items()} for name, ls in loops.items()
    }
    _parameter_variation_figure(ctx, loops)
    values = {(name, v): g for name, d in gm.items() for v, g in d.items()}
    rows = [
        {"parameter": n, "value": v, "gain_margin_db": g}
        for n, d in gm.items()
        for v, g in d.items()
    ]
    ctx.table("figs_6_6_5_6_gain_margins", rows)
    values |= {"kappa": _decreasing(gm["kappa"]), "gamma": _decreasing(gm["gamma"])}
    span = {n: max(d.values()) - min(d.values()) for n, d in gm.items()}
    shown = f"w: {span['w']:.2f} dB, kappa: {span['kappa']:.2f} dB"
    values["w"] = Value(span["w"] < 0.1 * span["kappa"], shown)
    values["b0"] = Value(span["b0"] < 3.0, f"{span['b0']:.2f} dB")
    shown = ", ".join(f"b0={k:g}: {v:.2f} dB" for k, v in sorted(gm["b0"].items()))
    values["M7"] = Value(_decreasing(gm["b0"]), shown)
    if gamma_1_c:
        gms = gamma_over_c_margins()
        shown = f"{min(gms):.1f}-{max(gms):.1f} dB"
        values["1/c"] = Value(min(gms) >= 22.5 and max(gms) <= 39.5, shown)
    return values


def _parameter_variation_figure(ctx: Context, loops: dict[str, dict[float, fn.DelayTF]]) -> None:
    """Figs 6.6.5/6.6.6: Bode plots, one column per varied parameter."""
    fig, axes = ctx.new_figure(2, 4, figsize=(16, 6.5), sharex=True)
    for col, (name, ls) in enumerate(loops.items()):
        for k, (v, L) in enumerate(ls.items()):
            fn.bode(L, w=np.logspace(-1, 2.5, 500)).plot(
                ax=(axes[0, col], axes[1, col]),
                hz=True,
                margins=False,
                color=f"C{k}",
                lw=0.9,
                label=f"{name} = {v:g}",
            )
        axes[0, col].legend(fontsize="x-small")
        axes[0, col].set_title(f"variation of {name}", fontsize="small")
    ctx.figure("figs_6_6_5_6_parameter_variation", fig)
