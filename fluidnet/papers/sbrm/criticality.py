"""Derived targets: how the oscillation starts at every critical delay of Table 6.6.2.

Not in the dissertation, which finds the onset by simulation (Sec 6.6.3). For each (N, c) of a
grid of Table 6.6.2 the Hopf point of the nonlinear model in ``d`` and its first Lyapunov
coefficient (with the state-dependent RTT delays) are computed with
:func:`fluidnet.criticality_table`. For Reno/RED the Hopf delay is checked against the
continuous critical delay of the printed loop gain (6.5.22), derived independently
(``data.CONT_DCRIT_NOTE``). For SBRM the nonlinear model is the derived loop, with the
misprints M1 and M10 of the printed (6.5.21) corrected: its Hopf delays lie 0.2-1.9 ms above
the printed loop's continuous crossings, a difference the paper cannot show (it prints the
4 ms grid rule, checked in ``critical_table``), so only SBRM's criticality is a target.

The onset map (:func:`fluidnet.onset_map`) continues the Hopf curve of each protocol at
N = 40 in the plane (d, c) and follows the cycles born on it; the figure puts the curve next to
the derived continuous crossings and the printed grid delays.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.reno import reno_red
from ...models.single_bit import sbrm
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import C_VALUES, CONT_DCRIT_NOTE, PROTOCOLS, TABLE_6_6_2_PRINTED, is_number
from .targets import CRIT_C_QUICK, CRIT_N_GRID, CRIT_N_QUICK

N_MAP = 40  # the onset map's N
BRACKET_MS = 8.0  # the Hopf point is searched within +- this of the derived crossing


def _base(proto: str) -> fn.Model:
    return sbrm() if proto == "SBRM" else reno_red()


@PAPER.item(
    title="Criticality at every critical delay, onset map (derived)",
    quick={"ns": CRIT_N_QUICK, "cs": CRIT_C_QUICK, "n_map": 0},
)
def criticality(ctx: Context, ns=CRIT_N_GRID, cs=C_VALUES, n_map: int = 15) -> dict:
    """Hopf delays and first Lyapunov coefficients of both protocols over ``ns`` x ``cs``, and
    the onset maps in (d, c) with ``n_map`` Hopf-curve points each way (none if 0)."""
    values: dict = {}
    rows, tables = [], {}
    for proto in PROTOCOLS:
        cases, lo, hi = [], [], []
        for N in ns:
            for c in cs:
                cases.append({"N": float(N), "c": 1000.0 * c})
                d = CONT_DCRIT_NOTE[proto][N][C_VALUES.index(c)]
                lo.append((d - BRACKET_MS) / 1e3)
                hi.append((d + BRACKET_MS) / 1e3)
        tab = fn.criticality_table(_base(proto), "d", lo, hi, cases)
        tables[proto] = tab
        for r in tab.rows:
            N, c = int(r["N"]), int(round(r["c"] / 1000.0))
            d_star = CONT_DCRIT_NOTE[proto][N][C_VALUES.index(c)]
            if proto == "RED":
                values[proto, N, c, "d_c"] = 1e3 * r["value"]
            rows.append(
                {
                    "protocol": proto, "N": N, "c_pkts_per_ms": c, "d_hopf_ms": 1e3 * r["value"],
                    "d_cont_printed_loop_ms": d_star, "f_hopf_hz": r["omega"] / (2 * np.pi),
                    "l1": r["l1"], "criticality": r["criticality"], "why": r["why"],
                }
            )  # fmt: skip
        l1 = np.array([r["l1"] for r in tab.rows])
        n_super = tab.counts().get("supercritical", 0)
        shown = f"{n_super}/{len(tab)} supercritical"
        if np.all(np.isfinite(l1)):
            shown += f", l1 in [{l1.min():.3g}, {l1.max():.3g}]"
        values[proto, "supercritical"] = Value(n_super == len(tab) > 0, shown)
    ctx.table("criticality", rows)
    maps = {}
    for proto in PROTOCOLS if n_map else ():
        m = _base(proto).with_params(N=float(N_MAP), c=10_000.0)
        hp = fn.hopf_point(m, "d", 0.03, 0.2)
        maps[proto] = fn.onset_map(
            hp, "c", x_range=(0.02, 0.16), y_range=(8000.0, 15_000.0), n_points=n_map,
            n_orbits=8, fold_points=8,
        )  # fmt: skip
    _figure(ctx, tables, maps)
    return values


def _figure(ctx: Context, tables: dict, maps: dict) -> None:
    fig, axes = ctx.new_figure(1, 3, figsize=(17.0, 4.6))
    for ax, proto in zip(axes[:2], PROTOCOLS, strict=True):
        if proto not in maps:
            ax.set_axis_off()
            continue
        om = maps[proto]
        h = om.hopf
        sup = np.asarray(h.lyapunov) < 0
        ax.plot(1e3 * h.x, h.y / 1e3, "C0-", lw=1.8, label="Hopf curve (nonlinear model)")
        if not sup.all():
            ax.plot(1e3 * h.x[~sup], h.y[~sup] / 1e3, "C3x", label="subcritical")
        cs = np.array(C_VALUES)
        ax.plot(CONT_DCRIT_NOTE[proto][N_MAP], cs, "k+", ms=8,
                label="printed loop gain, continuous d* (derived)")  # fmt: skip
        col = 3 if proto == "SBRM" else 2
        pr = [(float(r[col]), r[1]) for r in TABLE_6_6_2_PRINTED
              if r[0] == N_MAP and is_number(r[col])]  # fmt: skip
        if pr:
            ax.plot(*zip(*pr, strict=True), "s", mfc="none", color="C2",
                    label="Table 6.6.2, printed (4 ms grid)")  # fmt: skip
        for f in om.folds:
            ax.plot(1e3 * f.x, f.y / 1e3, "C1-.", label="fold of cycles")
        ax.set(
            xlabel="propagation delay d [ms]", ylabel="capacity c [pkts/ms]",
            title=f"{proto}, N = {N_MAP}: stable left of the curve, cycles born on it",
        )  # fmt: skip
        ax.legend(fontsize=7)
    ax = axes[2]
    for k, proto in enumerate(PROTOCOLS):
        rs = tables[proto].rows
        ax.plot([1e3 * r["value"] for r in rs], [r["l1"] for r in rs], "os"[k], mfc="none",
                label=proto)  # fmt: skip
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set(xlabel="Hopf delay [ms]", ylabel="first Lyapunov coefficient l1 (< 0: supercritical)",
           title="criticality at the critical delays of Table 6.6.2's grid")  # fmt: skip
    ax.legend(fontsize=7)
    ctx.figure("criticality_onset_map", fig)
