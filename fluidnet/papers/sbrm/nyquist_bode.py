"""Figs 6.6.1-6.6.3: Nyquist and Bode plots of the printed loop gains at N = 30, c = 10 pkts/ms."""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ..registry import Context
from . import PAPER
from .critical_delay import loop_gain_factory
from .data import GRID_MS, PROTOCOLS

#: Values of the Nyquist/Bode curves at N = 30, c = 10 pkts/ms ((6.5.21) as printed, (6.5.22)
#: with e^{-RTT* s}), evaluated independently of fluidnet with numpy/scipy (the text prints none):
#: d [ms] -> (negative-real-axis crossing |L|, f_pc [Hz], phase margin [deg], DC gain L(0)).
FIG_VALUES_NOTE = {
    "SBRM": {
        50: (0.600, 2.92, 36.4, 52.7),
        62: (0.729, 2.41, 24.5, 63.9),
        86: (0.986, 1.78, 1.2, 86.5),
        102: (1.157, 1.52, -13.3, 101.5),
    },
    "RED": {
        50: (0.577, 0.89, 16.3, 10.8),
        62: (1.017, 0.74, -0.5, 18.3),
        78: (1.863, 0.60, -18.0, 33.4),
        102: (3.696, 0.48, -41.0, 69.8),
    },
}


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


@PAPER.item("figs_6_6_1_to_3", title="Figs 6.6.1-6.6.3: Nyquist and Bode plots, N=30, c=10")
def figs_6_6_1_to_3(ctx: Context) -> None:
    """Nyquist curves over the delay grid (with zoom near -1) and Bode plots, both protocols."""
    grid = GRID_MS if not ctx.quick else (50, 62, 86, 102)
    for proto, fig_no in (("SBRM", "6_6_1"), ("RED", "6_6_2")):
        fac = loop_gain_factory(proto, 30, 10)
        _nyquist_figure(ctx, proto, fig_no, fac, grid)
        _check_curve_values(ctx, proto, fig_no, fac)
    _bode_figure(ctx, grid)
    rows = margin_rows(grid)
    ctx.table("figs_6_6_1_to_3_margins", rows)
    red = {r["d_ms"]: r for r in rows if r["protocol"] == "RED"}
    sb = {r["d_ms"]: r for r in rows if r["protocol"] == "SBRM"}
    ctx.check_true(
        "Sec 6.6.3, Fig 6.6.3",
        "past d_crit RED's loop is much further beyond -1 than SBRM's (larger oscillations)",
        red[102]["gain_margin_db"] < sb[102]["gain_margin_db"] - 6.0,
        value=f"GM at 102 ms: RED {red[102]['gain_margin_db']:.1f} dB, SBRM "
        f"{sb[102]['gain_margin_db']:.1f} dB",
        note="the text reads the larger RED amplitude off the Bode plots; 6 dB = a factor 2",
    )


def _check_curve_values(ctx: Context, proto: str, fig_no: str, fac) -> None:
    """The crossing, phase crossover, phase margin and DC gain against independent values."""
    for d, (cross, fpc, pm, dc) in FIG_VALUES_NOTE[proto].items():
        mg = fn.margins(fac(d / 1000.0))
        L0 = float(np.real(fac(d / 1000.0)(0.0)))
        where = f"Fig {fig_no.replace('_', '.')}/6.6.3"
        ctx.check(
            where,
            f"{proto} d={d} ms: |L| at the -180 deg crossing",
            cross,
            1.0 / mg.gain_margin,
            tol=0.0005,
            source="derived",
            note="independent numpy/scipy evaluation of the printed loop gain",
        )
        ctx.check(
            where,
            f"{proto} d={d} ms: phase crossover [Hz]",
            fpc,
            mg.phase_crossover / (2 * math.pi),
            tol=0.005,
            source="derived",
            note="independent numpy/scipy evaluation of the printed loop gain",
        )
        ctx.check(
            where,
            f"{proto} d={d} ms: phase margin [deg]",
            pm,
            mg.phase_margin,
            tol=0.05,
            source="derived",
            note="independent numpy/scipy evaluation of the printed loop gain",
        )
        ctx.check(
            where,
            f"{proto} d={d} ms: DC gain L(0)",
            dc,
            L0,
            tol=0.05,
            source="derived",
            note="independent numpy/scipy evaluation of the printed loop gain",
        )


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
