"""Figs 6.6.1-6.6.3: Nyquist and Bode plots of the printed loop gains at N = 30, c = 10 pkts/ms."""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ..registry import Context
from ..targets import Value
from . import PAPER
from .critical_delay import loop_gain_factory
from .data import FIG_VALUES_NOTE, GRID_MS, PROTOCOLS


def margin_rows(grid) -> list[dict]:
    """Gain and phase margins, phase crossover [Hz] and stability margin per protocol and delay."""
    rows = []
    for proto in PROTOCOLS:
        fac = loop_gain_factory(proto, 30, 10)
        for d in grid:
            mg = fn.margins(fac(d / 1000.0))
            rows.append(
                {
                    "protocol": proto,
                    "d_ms": d,
                    "gain_margin_db": mg.gain_margin_db,
                    "phase_margin_deg": mg.phase_margin,
                    "phase_crossover_hz": mg.phase_crossover / (2 * math.pi),
                    "stability_margin": mg.stability_margin,
                }
            )
    return rows


@PAPER.item(
    title="Figs 6.6.1-6.6.3: Nyquist and Bode plots, N=30, c=10", quick={"grid": (50, 62, 86, 102)}
)
def figs_6_6_1_to_3(ctx: Context, grid=GRID_MS) -> dict:
    """Nyquist curves over the delay ``grid`` (with zoom near -1) and Bode plots, both
    protocols."""
    values = {}
    for proto, fig_no in (("SBRM", "6_6_1"), ("RED", "6_6_2")):
        fac = loop_gain_factory(proto, 30, 10)
        _nyquist_figure(ctx, proto, fig_no, fac, grid)
        values |= curve_values(proto, fac)
    _bode_figure(ctx, grid)
    rows = margin_rows(grid)
    ctx.table("figs_6_6_1_to_3_margins", rows)
    red = {r["d_ms"]: r for r in rows if r["protocol"] == "RED"}
    sb = {r["d_ms"]: r for r in rows if r["protocol"] == "SBRM"}
    shown = (
        f"GM at 102 ms: RED {red[102]['gain_margin_db']:.1f} dB, SBRM "
        f"{sb[102]['gain_margin_db']:.1f} dB"
    )
    values["RED beyond"] = Value(
        red[102]["gain_margin_db"] < sb[102]["gain_margin_db"] - 6.0, shown
    )
    return values


def curve_values(proto: str, fac) -> dict:
    """The crossing, phase crossover, phase margin and DC gain at the delays of
    :data:`.data.FIG_VALUES_NOTE`."""
    values = {}
    for d in FIG_VALUES_NOTE[proto]:
        mg = fn.margins(fac(d / 1000.0))
        values[proto, d, "cross"] = 1.0 / mg.gain_margin
        values[proto, d, "fpc"] = mg.phase_crossover / (2 * math.pi)
        values[proto, d, "pm"] = mg.phase_margin
        values[proto, d, "dc"] = float(np.real(fac(d / 1000.0)(0.0)))
    return values


def _nyquist_figure(ctx: Context, proto: str, fig_no: str, fac, grid) -> None:
    """Fig 6.6.1 (SBRM) or 6.6.2 (RED): Nyquist curves over the grid, and a zoom near -1."""
    fig, (ax, axz) = ctx.new_figure(1, 2, figsize=(11, 4.6))
    for k, d in enumerate(grid):
        ny = fn.nyquist(fac(d / 1000.0))
        for a in (ax, axz):
            ny.plot(ax=a, mirror=False, color=f"C{k % 10}", lw=0.9, label=f"{d} ms")
    axz.set_aspect("auto")
    axz.set_xlim(-1.6, -0.4)
    axz.set_ylim(-0.6, 0.6)
    ax.set_title(f"({'a'}) {proto}, N=30, c=10 pkts/ms", fontsize="small")
    axz.set_title(f"(b) {proto} (zoom)", fontsize="small")
    axz.legend(fontsize="x-small", ncol=2)
    ctx.figure(f"fig_{fig_no}_nyquist_{proto.lower()}", fig)


def _bode_figure(ctx: Context, grid) -> None:
    """Fig 6.6.3: Bode plots over the grid, SBRM (left) and RED (right)."""
    fig, axes = ctx.new_figure(2, 2, figsize=(11, 6.5), sharex="col")
    for col, proto in enumerate(PROTOCOLS):
        fac = loop_gain_factory(proto, 30, 10)
        for k, d in enumerate(grid):
            fn.bode(fac(d / 1000.0), w=np.logspace(-1, 2.5, 600)).plot(
                ax=(axes[0, col], axes[1, col]),
                hz=True,
                margins=False,
                color=f"C{k % 10}",
                lw=0.9,
                label=f"{d} ms",
            )
        axes[0, col].set_title(f"({'ab'[col]}) {proto}, N=30, c=10 pkts/ms", fontsize="small")
    axes[0, 1].legend(fontsize="x-small", ncol=2)
    ctx.figure("fig_6_6_3_bode", fig)
