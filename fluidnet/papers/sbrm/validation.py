"""Figs 6.6.8-6.6.11, 6.7.1/6.7.3: the nonlinear fluid models against the linear critical delay.

Where sustained oscillation sets in and at what frequency, against the grid rule on the printed
loop gains; the amplitudes, empty queues and mean values of Secs 6.6.3 and 6.7.
"""

from __future__ import annotations

import math

from ..registry import Context
from ..targets import Value
from . import PAPER
from .critical_delay import grid_rule, loop_gain_factory, phase_crossover_hz
from .data import GRID_MS, NONLINEAR_PAIRS, PROTOCOLS
from .nonlinear import TRACE_DELAYS_MS, nonlinear_sweep, oscillation_onset


def sweep_delays(proto: str, near_onset: bool = False) -> tuple[int, ...]:
    """The delays [ms] to simulate: the grid, or four around the N=30, c=10 d_crit."""
    if near_onset:
        d_lin = 86 if proto == "SBRM" else 62
        return (d_lin - 4, d_lin, d_lin + 4, 102)
    return GRID_MS


def onset_summary(proto: str, N: int, c: int, rows: list[dict]) -> dict:
    """The linear d_crit and f_crit (grid rule) next to the simulated onset and its frequency."""
    fac = loop_gain_factory(proto, N, c)
    d_grid, f_grid, _ = grid_rule(fac)
    onset = oscillation_onset(rows)
    on_row = next((r for r in rows if r["d_ms"] == onset), None)
    return {"protocol": proto, "N": N, "c_pkts_per_ms": c, "d_crit_linear_ms": d_grid,
            "f_crit_linear_hz": f_grid, "onset_ms": onset,
            "frequency_at_onset_hz": on_row["frequency_hz"] if on_row else None}  # fmt: skip


def _by_delay(rows: list[dict], proto: str) -> dict[int, dict]:
    """``d_ms -> row`` of ``proto`` at N = 30, c = 10 pkts/ms."""
    return {r["d_ms"]: r for r in rows if r["protocol"] == proto and r["N"] == 30
            and r["c_pkts_per_ms"] == 10}  # fmt: skip


@PAPER.item(
    title="Figs 6.6.8-6.6.11, 6.7.1/6.7.3: nonlinear fluid model against the linear d_crit",
    quick={"near_onset": True, "pairs": {"SBRM": (), "RED": ()}},
)
def nonlinear_validation(ctx: Context, near_onset: bool = False, pairs=NONLINEAR_PAIRS) -> dict:
    """Onset of sustained oscillation in the nonlinear DDEs against the Table 6.6.2 rule, at
    N=30, c=10 and the (N, c) ``pairs`` (over the delays of :func:`sweep_delays`)."""
    all_rows, summary, values = [], [], {}
    traces = {}  # the N = 30, c = 10 sweeps, for Figs 6.6.8/6.6.9
    for proto in PROTOCOLS:
        for N, c in ((30, 10), *pairs[proto]):
            delays = sweep_delays(proto, near_onset)
            sw = nonlinear_sweep(proto, N, c, delays)
            rows = sw["rows"]
            all_rows += rows
            s = onset_summary(proto, N, c, rows)
            summary.append(s)
            if (N, c) == (30, 10):
                traces[proto] = sw
                values[proto, "switch"] = switch_value(proto, rows)
            values |= onset_values(s, delays)
    ctx.table("nonlinear_validation", all_rows)
    ctx.table("nonlinear_onsets", summary)
    sb = _by_delay(all_rows, "SBRM")
    rd = _by_delay(all_rows, "RED")
    values |= past_critical_values(sb, rd)
    _nonlinear_figures(ctx, traces, all_rows, summary)
    return values | means_values(sb, rd)


def switch_value(proto: str, rows: list[dict]) -> Value:
    """N=30, c=10: stable one grid step below the paper's d_crit, oscillating at it."""
    d_stable, d_osc = (86, 90) if proto == "SBRM" else (58, 62)
    by_d = {r["d_ms"]: r for r in rows}
    shown = (
        f"{d_stable} ms: {by_d[d_stable]['oscillating']}, {d_osc} ms: {by_d[d_osc]['oscillating']}"
    )
    return Value((not by_d[d_stable]["oscillating"]) and by_d[d_osc]["oscillating"], shown)


def onset_values(s: dict, delays) -> dict:
    """Onset within one grid step of the linear d_crit, and its frequency (``s``: a summary
    row) against the linear critical frequency at that delay, to the change of f_crit over one
    grid step."""
    proto, N, c = s["protocol"], s["N"], s["c_pkts_per_ms"]
    onset, d_grid, f_onset = s["onset_ms"], s["d_crit_linear_ms"], s["frequency_at_onset_hz"]
    ok = onset is not None and (
        abs(onset - d_grid) <= 4 or (onset == delays[0] and d_grid == delays[0])
    )
    values = {(proto, N, c, "onset"): Value(ok, f"onset {onset} ms, linear d_crit {d_grid} ms")}
    if f_onset is not None and math.isfinite(f_onset):
        fac = loop_gain_factory(proto, N, c)
        f_lin = phase_crossover_hz(fac, float(onset))
        step = abs(phase_crossover_hz(fac, float(onset) - 4.0) - f_lin)
        values[proto, N, c, "f"] = Value(f_onset, expected=f_lin, tol=step, name=str(onset))
    return values


def past_critical_values(sb: dict, rd: dict) -> dict:
    """Sec 6.6.3, 6.7.2: past both critical delays, RED's amplitude and its emptying queue."""
    d_far = max(set(sb) & set(rd))
    shown = (
        f"RED {rd[d_far]['amplitude_pkts']:.1f}, SBRM {sb[d_far]['amplitude_pkts']:.1f} pkts "
        "peak to peak"
    )
    amplitude = Value(rd[d_far]["amplitude_pkts"] > 3 * sb[d_far]["amplitude_pkts"], shown)
    shown = (
        f"time at b = 0: RED {rd[d_far]['time_on_boundary_s']:.1f} s, SBRM "
        f"{sb[d_far]['time_on_boundary_s']:.1f} s"
    )
    holds = rd[d_far]["time_on_boundary_s"] > 0 and sb[d_far]["time_on_boundary_s"] == 0
    return {"amplitude": amplitude, "empties": Value(holds, shown)}


def means_values(sb: dict, rd: dict) -> dict:
    """Figs 6.7.1/6.7.3: simulated means against Table 5.5.1 as the delay grows."""
    red_unst = [rd[d] for d in sorted(rd) if rd[d]["oscillating"]]
    sb_unst = [sb[d] for d in sorted(sb) if sb[d]["oscillating"]]

    def listing(rows, var, fmt):
        return ", ".join(
            f"{r['d_ms']} ms: {r[f'mean_{var}']:{fmt}} vs {r[f'model_{var}']:{fmt}}" for r in rows
        )

    values = {}
    if red_unst:
        emptying = [r for r in red_unst if r["time_on_boundary_s"] > 0]
        holds = bool(emptying) and all(r["mean_W"] < r["model_W"] for r in emptying)
        values["RED W"] = Value(holds, listing(red_unst, "W", ".3f"))
        gaps = [r["model_b"] - r["mean_b"] for r in red_unst]
        last = red_unst[-1]
        holds = gaps[-1] == max(gaps) and last["mean_b"] < 0.9 * last["model_b"]
        values["RED b"] = Value(holds, listing(red_unst, "b", ".1f"))
    if sb_unst:
        holds = all(abs(r["mean_W"] / r["model_W"] - 1) < 0.02 for r in sb_unst)
        values["SBRM W"] = Value(holds, listing(sb_unst, "W", ".3f"))
        gaps = [r["model_b"] - r["mean_b"] for r in sb_unst]
        values["SBRM b"] = Value(
            gaps[-1] == max(gaps) and gaps[-1] > 0, listing(sb_unst, "b", ".2f")
        )
        if red_unst and sb_unst[-1]["d_ms"] == red_unst[-1]["d_ms"]:
            rel = {
                k: (r["model_b"] - r["mean_b"]) / r["model_b"]
                for k, r in (("SBRM", sb_unst[-1]), ("RED", red_unst[-1]))
            }
            shown = f"SBRM {100 * rel['SBRM']:.1f} %, RED {100 * rel['RED']:.1f} %"
            values["deficit"] = Value(rel["SBRM"] < 0.25 * rel["RED"], shown)
    return values


def _nonlinear_figures(ctx: Context, traces: dict, rows: list, summary: list) -> None:
    """Figs 6.6.8/6.6.9 (queues at N=30, c=10), 6.6.10/6.6.11 (onsets), 6.7.1/6.7.3 (means)."""
    for proto, fig_no in (("SBRM", "6_6_8"), ("RED", "6_6_9")):
        sw = traces[proto]
        fig, axes = ctx.new_figure(2, 3, figsize=(13, 6), sharey=True)
        for ax, d in zip(axes.ravel(), TRACE_DELAYS_MS, strict=True):
            if d in sw["delays_ms"]:
                i = sw["delays_ms"].index(d)
                ax.plot(sw["t"], sw["b"][i], lw=0.6)
            ax.set_title(f"d = {d} ms", fontsize="small")
            ax.set_xlabel("t [s]")
        axes[0, 0].set_ylabel("queue b [pkts]")
        fig.suptitle(f"{proto}, N=30, c=10 pkts/ms: queue of the nonlinear fluid model")
        fig.tight_layout()
        ctx.figure(f"fig_{fig_no}_queue_{proto.lower()}", fig)
    fig, axes = ctx.new_figure(1, 2, figsize=(10, 4.4))
    for proto, marker in (("SBRM", "o"), ("RED", "s")):
        ss = [r for r in summary if r["protocol"] == proto and r["onset_ms"] is not None]
        axes[0].plot([r["d_crit_linear_ms"] for r in ss], [r["onset_ms"] for r in ss], marker,
                     label=proto)  # fmt: skip
        fs = [r for r in ss if r["frequency_at_onset_hz"] is not None]
        axes[1].plot([r["f_crit_linear_hz"] for r in fs], [r["frequency_at_onset_hz"] for r in fs],
                     marker, label=proto)  # fmt: skip
    for ax, lim, lab in ((axes[0], (45, 110), "d_crit [ms]"), (axes[1], (0.4, 3.0), "f_crit [Hz]")):
        ax.plot(lim, lim, color="0.6", lw=0.8)
        ax.set_xlabel(f"linear model {lab}")
        ax.set_ylabel(f"nonlinear simulation {lab}")
        ax.legend(fontsize="small")
    ctx.figure("figs_6_6_10_11_model_vs_simulation", fig)
    fig, axes = ctx.new_figure(1, 2, figsize=(10, 4.4))
    for proto, marker in (("SBRM", "o"), ("RED", "s")):
        rr = [r for r in rows if r["protocol"] == proto and r["N"] == 30
              and r["c_pkts_per_ms"] == 10]  # fmt: skip
        for ax, var in ((axes[0], "W"), (axes[1], "b")):
            for r in rr:
                ax.plot(r[f"model_{var}"], r[f"mean_{var}"], marker,
                        color="0.6" if r["oscillating"] else "k", mfc="none" if proto == "RED"
                        else None)  # fmt: skip
    for ax, lab in ((axes[0], "mean window [pkts]"), (axes[1], "mean queue [pkts]")):
        lo, hi = ax.get_xlim()
        ax.plot((lo, hi), (lo, hi), color="0.6", lw=0.8)
        ax.set_xlabel(f"Table 5.5.1 {lab}")
        ax.set_ylabel(f"simulated {lab}")
    axes[0].set_title("N=30, c=10: black stable, grey oscillating; o SBRM, s RED",
                      fontsize="small")  # fmt: skip
    ctx.figure("figs_6_7_1_3_means", fig)
