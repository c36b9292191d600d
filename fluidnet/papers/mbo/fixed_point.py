"""Sec III: the mean-value fixed point for two flows, Experiments A and B (Figs 1-5).

The paper's figures plot ns-2 simulations next to the fixed point; only the fixed point (the
"theoretical" curves) is reproducible. Experiment A: equal RTTs, profiles 1.5 and 3 Mb/s;
Experiment B: equal profiles 1.5 Mb/s, RTTs 20 and 100 ms. Link capacity 4.5-12 Mb/s.
"""

from __future__ import annotations

import numpy as np

from ...models.generalized_tcp import assured_service_fixed_point
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import (
    EXP_A_AIMD_QUEUE,
    EXP_A_RATES,
    EXP_A_RATIO,
    EXP_A_RTT,
    EXP_A_SET1_RHO,
    EXP_A_SET1_WINDOWS,
    EXP_B_COLUMNS,
    EXP_B_RATES,
    EXP_B_RTTS,
    EXP_B_SET1,
    EXP_B_SET3_RATIO,
    EXP_B_SET24,
    MBPS,
    MSS,
    PARAMETER_SETS,
    THRESHOLDS_PKTS,
)


def fixed_point(set_id: int, C: float, rates, rtts) -> dict[str, float]:
    """The Sec III fixed point for parameter set ``set_id`` at ``C`` Mb/s, in the paper's
    plotting units: queue and windows in packets, throughputs in Mb/s."""
    alpha, beta, c1, c2, p_max = PARAMETER_SETS[set_id]
    fp = assured_service_fixed_point(
        C=C * MBPS,
        R=[r * MBPS for r in rates],
        RTT=list(rtts),
        M=[MSS] * len(rates),
        alpha=alpha,
        beta=beta,
        c1=c1,
        c2=c2,
        min_th=THRESHOLDS_PKTS[0] * MSS,
        max_th=THRESHOLDS_PKTS[1] * MSS,
        p_max=p_max,
    )
    rho = fp.throughputs / MBPS
    T = np.asarray(rtts) + fp.queue / (C * MBPS)
    return {
        "set": set_id,
        "C": C,
        "Q": fp.queue / MSS,
        "W1": fp.windows[0],
        "W2": fp.windows[1],
        "rho1": rho[0],
        "rho2": rho[1],
        "p1": fp.marking[0],
        "p2": fp.marking[1],
        "T1": T[0],
        "T2": T[1],
    }


def capacity_grid(lo: float = 4.5, n: int | None = None) -> list[float]:
    """``n`` link capacities [Mb/s] from ``lo`` to 12, the top of the paper's range (default:
    every 0.25)."""
    n = int(round((12.0 - lo) / 0.25)) + 1 if n is None else n
    return [float(x) for x in np.linspace(lo, 12.0, n)]


def sweep(rates, rtts, capacities) -> dict[int, list[dict[str, float]]]:
    """The fixed point of the four parameter sets over ``capacities``."""
    return {k: [fixed_point(k, C, rates, rtts) for C in capacities] for k in PARAMETER_SETS}


# ------------------------------------------------------------------------------ Experiment B
def exp_b_table_values() -> dict:
    """The fixed point at the capacities of the derived Exp B tables (sets 1, 2/4 and 3)."""
    values = {}
    for label, set_id, table in (("set 1", 1, EXP_B_SET1), ("sets 2/4", 2, EXP_B_SET24)):
        for C, printed in table.items():
            fp = fixed_point(set_id, C, EXP_B_RATES, EXP_B_RTTS)
            ours = (fp["Q"], fp["W1"], fp["W2"], fp["rho1"], fp["rho2"], fp["rho1"] / fp["rho2"])
            ours += (fp["p1"], fp["p2"])
            columns = EXP_B_COLUMNS[: len(printed)]
            values |= {(label, C, name): v for name, v in zip(columns, ours, strict=False)}
    for C in EXP_B_SET3_RATIO:
        fp = fixed_point(3, C, EXP_B_RATES, EXP_B_RTTS)
        values["set 3", C] = fp["rho1"] / fp["rho2"]
    return values


def invariant_values(runs: dict[int, list[dict]], R) -> dict:
    """sum rho = C (eq (9)); the exact zero-drift invariant; sets 2 and 4 identical."""
    rows = [r for k in runs for r in runs[k]]
    values = {"sum rho": max(abs((r["rho1"] + r["rho2"]) / r["C"] - 1) for r in rows)}
    # eq (8) corrected, rewritten with rho = W M / T and gamma = (rho - R)/rho:
    # rho^(b-a-1) (rho - R) T^(b-a) / (1 - p) = (c1/c2) M^(b-a) / f_mark is common to all flows.
    worst = 0.0
    for k, rs in runs.items():
        a, b = PARAMETER_SETS[k][:2]
        Rs = (R, R) if np.ndim(R) == 0 else R
        for r in rs:
            inv = [
                r[f"rho{i}"] ** (b - a - 1)
                * (r[f"rho{i}"] - Rs[i - 1])
                * r[f"T{i}"] ** (b - a)
                / (1 - r[f"p{i}"])
                for i in (1, 2)
            ]
            worst = max(worst, abs(inv[0] / inv[1] - 1))
    values["invariant"] = worst
    values["sets 2 = 4"] = max(
        abs(r2[key] / r4[key] - 1)
        for r2, r4 in zip(runs[2], runs[4], strict=True)
        for key in ("Q", "W1", "W2", "rho1", "rho2")
    )
    return values


def _plot_windows_throughputs(ax_w, ax_r, rows: list[dict], title: str) -> None:
    C = [r["C"] for r in rows]
    ax_w.plot(C, [r["W1"] for r in rows], "o-", ms=3, label="TCP1")
    ax_w.plot(C, [r["W2"] for r in rows], "s-", ms=3, label="TCP2")
    ax_w.set(xlabel="link capacity C (Mb/s)", ylabel="mean window (segments)", title=title)
    ax_w.legend(fontsize=8)
    ax_r.plot(C, [r["rho1"] for r in rows], "o-", ms=3, label="TCP1")
    ax_r.plot(C, [r["rho2"] for r in rows], "s-", ms=3, label="TCP2")
    ax_r.set(xlabel="link capacity C (Mb/s)", ylabel="throughput (Mb/s)", title=title)
    ax_r.legend(fontsize=8)


def _plot_ratios(ax, runs, num: str, den: str, ylabel: str, title: str) -> None:
    labels = {1: "set 1 SAIMD (1, 0.5)", 2: "set 2 AIMD (0.2, 0.1)", 3: "set 3 SAIMD (0.5, 0.1)"}
    labels[4] = "set 4 AIMD (0.4, 0.2)"
    styles = {1: "o-", 2: "s-", 3: "^-", 4: "x--"}
    for k, rows in runs.items():
        ax.plot(
            [r["C"] for r in rows],
            [r[num] / r[den] for r in rows],
            styles[k],
            ms=3,
            label=labels[k],
        )
    ax.set(xlabel="link capacity C (Mb/s)", ylabel=ylabel, title=title)
    ax.legend(fontsize=8)


@PAPER.item(title="Sec III fixed point, Experiment B (Figs 3 and 5, theory)", quick={"n_caps": 5})
def exp_b(ctx: Context, n_caps: int | None = None) -> dict:
    """Equal profiles, RTTs 20/100 ms: the fixed point against the derived tables, eq (9), the
    zero-drift invariant, sets 2 = 4, and the ordering of Fig 5 (on ``n_caps`` capacities;
    default every 0.25 Mb/s)."""
    runs = sweep(EXP_B_RATES, EXP_B_RTTS, capacity_grid(n=n_caps))
    values = exp_b_table_values() | invariant_values(runs, EXP_B_RATES[0])
    # the SAIMD small-p invariant rho (rho - R) T^2 (Mb/s, s): equal across flows up to the
    # dropped "-1" of (8), i.e. to a relative O(max p)
    r = fixed_point(1, 6.0, EXP_B_RATES, EXP_B_RTTS)
    inv = [r[f"rho{i}"] * (r[f"rho{i}"] - 1.5) * r[f"T{i}"] ** 2 for i in (1, 2)]
    shown = f"{inv[0]:.6f} vs {inv[1]:.6f} (max p = {max(r['p1'], r['p2']):.2g})"
    values["small p"] = Value(abs(inv[0] / inv[1] - 1) <= max(r["p1"], r["p2"]), shown)
    ratio = {k: np.array([x["rho1"] / x["rho2"] for x in rows]) for k, rows in runs.items()}
    values["short RTT"] = all(np.all(v > 1) and np.all(np.diff(v) > 0) for v in ratio.values())
    values["closeness"] = bool(
        np.all(np.abs(ratio[2] - 1) < np.abs(ratio[3] - 1))
        and np.all(np.abs(ratio[3] - 1) < np.abs(ratio[1] - 1))
    )
    ctx.table("exp_b_fixed_point", [x for rows in runs.values() for x in rows])
    fig, axes = ctx.new_figure(1, 2, figsize=(12.0, 4.2))
    _plot_windows_throughputs(axes[0], axes[1], runs[1], "Fig 3 (theory): set 1, RTT 20/100 ms")
    ctx.figure("fig3_exp_b_set1", fig)
    fig, ax = ctx.new_figure()
    _plot_ratios(ax, runs, "rho1", "rho2", "rho1 / rho2", "Fig 5 (theory): Exp B, RTT 20 vs 100 ms")
    ax.axhline(1.0, color="k", lw=0.6)
    ctx.figure("fig5_exp_b_ratio", fig)
    return values


# ------------------------------------------------------------------------------ Experiment A
@PAPER.item(
    title="Sec III fixed point, Experiment A (Figs 1, 2 and 4, theory)", quick={"n_caps": 5}
)
def exp_a(ctx: Context, n_caps: int | None = None) -> dict:
    """Profiles 1.5/3 Mb/s, a common RTT: ratios against the closed forms and the derived
    table, sets 2 = 4, throughputs independent of the RTT, the AIMD queue near C = 4.5 (on
    ``n_caps`` capacities from 5 Mb/s; default every 0.25 Mb/s)."""
    caps = [4.55, 4.75] + capacity_grid(5.0, n_caps)
    runs = sweep(EXP_A_RATES, (EXP_A_RTT, EXP_A_RTT), caps)
    R1, R2 = EXP_A_RATES
    worst = {"SAIMD": 0.0, "AIMD": 0.0}
    for k, rows in runs.items():
        law = "SAIMD" if PARAMETER_SETS[k][0] == -1 else "AIMD"
        for r in rows:
            C = r["C"]
            closed = (C - R1) / (C - R2) if law == "SAIMD" else (C + R2 - R1) / (C - R2 + R1)
            worst[law] = max(worst[law], abs(r["rho2"] / r["rho1"] - closed))
    values = dict(worst)
    for group, table in EXP_A_RATIO.items():
        set_id = 1 if group == "sets 1, 3" else 2
        for C in table:
            r = fixed_point(set_id, C, EXP_A_RATES, (EXP_A_RTT, EXP_A_RTT))
            values["ratio", group, C] = r["rho2"] / r["rho1"]
    values |= invariant_values(runs, np.array(EXP_A_RATES))
    r1 = np.array([x["rho2"] / x["rho1"] for x in runs[1]])
    r3 = np.array([x["rho2"] / x["rho1"] for x in runs[3]])
    values["sets 1 ~ 3"] = float(np.max(np.abs(r1 - r3)))
    ratio = {k: np.array([x["rho2"] / x["rho1"] for x in rows]) for k, rows in runs.items()}
    holds = all(np.all(np.diff(v) < 0) and v[0] > 1.95 and 1 < v[-1] < 1.3 for v in ratio.values())
    shown = ", ".join(f"set {k}: {v[0]:.3f} -> {v[-1]:.3f}" for k, v in ratio.items())
    values["falls"] = Value(holds, shown)
    values["AIMD closer"] = bool(np.all(ratio[2] > ratio[1]) and np.all(ratio[4] > ratio[3]))
    # throughputs independent of the common RTT; windows and queue are not
    for C in EXP_A_SET1_RHO:
        for rtt in (0.02, 0.05, 0.1):
            r = fixed_point(1, C, EXP_A_RATES, (rtt, rtt))
            values |= {("rho", C, rtt, i): r[f"rho{i}"] for i in (1, 2)}
    for rtt in EXP_A_SET1_WINDOWS:
        r = fixed_point(1, 6.0, EXP_A_RATES, (rtt, rtt))
        values |= {("windows", rtt, "W1"): r["W1"], ("windows", rtt, "W2"): r["W2"]}
        values["windows", rtt, "Q*"] = r["Q"]
    r = fixed_point(1, 12.0, EXP_A_RATES, (0.02, 0.02))
    values |= {("C = 12", "W1"): r["W1"], ("C = 12", "W2"): r["W2"], ("C = 12", "Q*"): r["Q"]}
    for C in EXP_A_AIMD_QUEUE:
        values["AIMD queue", C] = fixed_point(2, C, EXP_A_RATES, (0.02, 0.02))["Q"]
    ctx.table("exp_a_fixed_point", [x for rows in runs.values() for x in rows])
    for k, fig_no in ((1, 1), (2, 2)):
        fig, axes = ctx.new_figure(1, 2, figsize=(12.0, 4.2))
        _plot_windows_throughputs(
            axes[0], axes[1], runs[k], f"Fig {fig_no} (theory): set {k}, profiles 1.5/3 Mb/s"
        )
        ctx.figure(f"fig{fig_no}_exp_a_set{k}", fig)
    fig, ax = ctx.new_figure()
    _plot_ratios(ax, runs, "rho2", "rho1", "rho2 / rho1", "Fig 4 (theory): Exp A, profiles 3 : 1.5")
    C = np.linspace(caps[0], caps[-1], 200)
    ax.plot(C, (C - R1) / (C - R2), "k:", lw=1, label="(C-R1)/(C-R2)")
    ax.plot(C, (C + R2 - R1) / (C - R2 + R1), "k-.", lw=1, label="(C+R2-R1)/(C-R2+R1)")
    ax.axhline(2.0, color="k", lw=0.6)
    ax.legend(fontsize=7)
    ctx.figure("fig4_exp_a_ratio", fig)
    return values
