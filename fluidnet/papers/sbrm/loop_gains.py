"""(6.5.20)-(6.5.22): the loop gains of the linearized fluid models against the printed ones.

Reno+RED's derived loop equals (6.5.22) once its delay is read as the round trip (M2); SBRM's
differs from (6.5.21) only by the small RTT-increase path (M1, M10). Also the critical delays of
the three SBRM forms and, for two source classes, their critical gains.
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

import fluidnet as fn

from ...models.reno import reno_red
from ...models.single_bit import (
    sbrm,
    sbrm_network,
    sbrm_printed_linear,
    sbrm_printed_loop_gain_network,
    sbrm_steady_state,
)
from ..registry import Context
from ..targets import Value
from . import PAPER
from .critical_delay import exact_critical, loop_gain_factory, red_printed, sbrm_printed

if TYPE_CHECKING:
    from ...stability import CriticalValue

#: Two source classes on one link for the (6.5.20) comparison.
HET = {"N": (15, 15), "d": (0.03, 0.09), "w": (10.0, 40.0), "c": 10_000.0}


# ------------------------------------------------------------------------------- computations
def _max_rel_diff(L1: fn.DelayTF, L2: fn.DelayTF, w: np.ndarray) -> float:
    a, b = L1.freqresp(w), L2.freqresp(w)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def red_loop_differences(N: int, c: float, d: float, w_rad: np.ndarray) -> tuple[float, float]:
    """Max relative differences of the derived Reno+RED loop (cut at p) from (6.5.22).

    Returns
    -------
    (with the loop delay ``e^{-RTT* s}``, as printed with ``e^{-tau^f s}``)
    """
    Ld = reno_red().loop_gain("p", N=N, c=c, d=d)
    err = _max_rel_diff(Ld, red_printed(N, c, d), w_rad)
    err_tf = _max_rel_diff(Ld, red_printed(N, c, d, delay="printed"), w_rad)
    return err, err_tf


def sbrm_derived_loop(
    N: int, c: float, w_rad: np.ndarray
) -> tuple[fn.DelayTF, float, float, float]:
    """The SBRM model's loop cut at p (d = 86 ms) against (6.5.21) at the same cut.

    Returns
    -------
    (the model's loop, max relative difference from the corrected (6.5.21), from the printed
    one, weight of the RTT-increase path relative to the marking path)
    """
    m = sbrm()
    Ld = m.loop_gain("p", N=N, c=c, d=0.086)
    ss = sbrm_steady_state(N, c, 0.086)
    ratio = (20.0 / c) / (0.006 * (1 - ss["p"]) * ss["W"])  # RTT path / marking path, (6.5.21)
    err_c = _max_rel_diff(
        Ld, sbrm_printed_linear("corrected", N=N, c=c, d=0.086).loop_gain("p"), w_rad
    )
    err_p = _max_rel_diff(
        Ld, sbrm_printed_linear("printed", N=N, c=c, d=0.086).loop_gain("p"), w_rad
    )
    return Ld, err_c, err_p, ratio


def sbrm_critical_delays(N: int, c: float) -> dict[str, CriticalValue]:
    """Critical delays at N, c of the nonlinear SBRM model and of (6.5.21) printed and corrected."""
    c_pkts_per_ms = c / 1000.0
    return {
        "nonlinear model": fn.critical_value(sbrm(N=N, c=c), "d", 0.05, 0.13),
        "(6.5.21) printed": exact_critical(loop_gain_factory("SBRM", N, c_pkts_per_ms)),
        "(6.5.21) corrected": exact_critical(
            loop_gain_factory("SBRM", N, c_pkts_per_ms, form="corrected")
        ),
    }


def _het_factory(form: str, gamma: float) -> fn.DelayTF:
    return sbrm_printed_loop_gain_network(
        HET["N"], HET["d"], HET["c"], w=HET["w"], gamma=gamma, form=form
    )


def heterogeneous_critical_gammas() -> tuple[dict[str, CriticalValue], float]:
    """(6.5.20), classes :data:`HET`: critical gamma of the network model and of (6.5.20).

    Returns
    -------
    ({"network model", "(6.5.20) corrected", "(6.5.20) printed": CriticalValue}, the largest
    weight of a class's RTT-increase path relative to its marking path at the corrected gamma)
    """
    net = sbrm_network([[1, 1]], N=HET["N"], d=HET["d"], w=HET["w"], c=HET["c"])
    lo, hi = 0.0075, 0.0095  # brackets the crossing of all three (a scan over 0.002-0.03 finds it)
    cv_m = fn.critical_value(net, "gamma_1", lo, hi)
    cv_c = fn.critical_value(partial(_het_factory, "corrected"), "gamma", lo, hi)
    cv_p = fn.critical_value(partial(_het_factory, "printed"), "gamma", lo, hi)
    g = cv_c.value
    p = sum(n * w for n, w in zip(HET["N"], HET["w"], strict=True)) / HET["c"]
    b = 50.0 - math.log1p(-p) / g
    ratio = max(
        (w / HET["c"]) / (g * (1 - p) * (w / p) * (d + b / HET["c"]))
        for w, d in zip(HET["w"], HET["d"], strict=True)
    )
    cvs = {"network model": cv_m, "(6.5.20) corrected": cv_c, "(6.5.20) printed": cv_p}
    return cvs, ratio


# ---------------------------------------------------------------------------------------- item
@PAPER.item(
    title="(6.5.20)-(6.5.22): derived against printed loop gains", quick={"heterogeneous": False}
)
def loop_gains(ctx: Context, heterogeneous: bool = True) -> dict:
    """The linearized models' loops against the printed (6.5.21), (6.5.22), and M1, M2, M10
    (and the two-class network of (6.5.20) when ``heterogeneous``)."""
    N, c, w_rad = 30, 10_000.0, np.logspace(-1, 2.5, 400)
    values, rows = {}, []
    # Reno+RED: the derived loop (cut at p) is (6.5.22) with the full-RTT delay (M2)
    for d in (0.050, 0.062, 0.102):
        err, err_tf = red_loop_differences(N, c, d, w_rad)
        rows.append(
            {
                "loop": "RED derived vs (6.5.22) with e^{-RTT* s}",
                "d_ms": 1e3 * d,
                "max_rel_diff": err,
            }
        )
        rows.append(
            {
                "loop": "RED derived vs (6.5.22) as printed (e^{-tau^f s})",
                "d_ms": 1e3 * d,
                "max_rel_diff": err_tf,
            }
        )
        if d == 0.062:
            values["RED loop"] = err
    cv = exact_critical(loop_gain_factory("RED", N, 10, delay="printed"), near_ms=74)
    values["RED printed delay"] = 1e3 * cv.value
    # SBRM: two constructions of the printed (6.5.21) agree
    for form in ("printed", "corrected"):
        lin_model = sbrm_printed_linear(form, N=N, c=c, d=0.086)
        values["forms", form] = _max_rel_diff(
            lin_model.loop_gain("q"), sbrm_printed(N, c, 0.086, form), w_rad
        )
    # SBRM: derived (nonlinear model) loop vs printed, at the same cut (p)
    Ld, err_c, err_p, ratio = sbrm_derived_loop(N, c, w_rad)
    rows += [
        {
            "loop": "SBRM derived vs (6.5.21) corrected (M1), cut at p",
            "d_ms": 86.0,
            "max_rel_diff": err_c,
        },
        {
            "loop": "SBRM derived vs (6.5.21) as printed, cut at p",
            "d_ms": 86.0,
            "max_rel_diff": err_p,
        },
        {
            "loop": "SBRM RTT-increase path / marking path, (6.5.21) numerator",
            "d_ms": 86.0,
            "max_rel_diff": ratio,
        },
    ]
    values["M10"] = Value(
        err_c <= 2 * ratio, f"{err_c:.4f}", expected=f"{2 * ratio:.4f}", note=f"{ratio:.4f}"
    )
    values["M1"] = Value(err_p > err_c, f"printed {err_p:.4f} vs corrected {err_c:.4f}")
    # critical delays of the three SBRM forms, N = 30, c = 10
    cvs = sbrm_critical_delays(N, c)
    rows += [
        {
            "loop": f"SBRM critical delay, {label}",
            "d_ms": 1e3 * cv.value,
            "max_rel_diff": None,
            "f_crit_hz": cv.frequency,
        }
        for label, cv in cvs.items()
    ]
    values["d* printed"] = 1e3 * cvs["(6.5.21) printed"].value
    values["d* model"] = 1e3 * cvs["nonlinear model"].value
    if heterogeneous:
        het, rows_het = heterogeneous_comparison()
        values["(6.5.20)"] = het
        rows += rows_het
    ctx.table("loop_gain_comparison", rows, columns=["loop", "d_ms", "max_rel_diff", "f_crit_hz"])
    _loop_gains_figure(ctx, N, c, Ld)
    return values


def heterogeneous_comparison() -> tuple[Value, list[dict]]:
    """(6.5.20): the critical gamma of the network model against the printed heterogeneous loop."""
    cvs, ratio = heterogeneous_critical_gammas()
    cv_m, cv_c, cv_p = cvs["network model"], cvs["(6.5.20) corrected"], cvs["(6.5.20) printed"]
    rel = abs(cv_m.value / cv_c.value - 1)
    shown = (
        f"{rel:.4f} (model {cv_m.value:.6g}, corrected {cv_c.value:.6g}, printed {cv_p.value:.6g})"
    )
    rows = [
        {"loop": f"SBRM 2-class critical gamma [1/pkt], {label}", "d_ms": None,
         "max_rel_diff": cv.value, "f_crit_hz": cv.frequency}
        for label, cv in cvs.items()
    ]  # fmt: skip
    return Value(rel <= 2 * ratio, shown, expected=f"{2 * ratio:.4f}"), rows


def _loop_gains_figure(ctx: Context, N: int, c: float, Ld: fn.DelayTF) -> None:
    """Nyquist curves of the printed SBRM forms, and of the model against (6.5.21) cut at p."""
    fig, ax = ctx.new_figure(1, 2, figsize=(11, 4.6))
    for L, label in (
        (sbrm_printed(N, c, 0.086), "(6.5.21) printed"),
        (sbrm_printed(N, c, 0.086, "corrected"), "(6.5.21) corrected (M1)"),
    ):
        fn.nyquist(L).plot(ax=ax[0], mirror=False, label=label)
    lp = sbrm_printed_linear("corrected", N=N, c=c, d=0.086).loop_gain("p")
    for L, label in ((Ld, "model, cut at p"), (lp, "(6.5.21) corrected, cut at p")):
        fn.nyquist(L).plot(ax=ax[1], mirror=False, label=label)
    for a, title in zip(
        ax, ("printed forms (cut of Fig 6.5.1)", "model vs printed, same cut"), strict=True
    ):
        a.set_aspect("auto")
        a.set_xlim(-2.0, 0.5)
        a.set_ylim(-1.5, 1.0)
        a.set_title(f"SBRM N=30, c=10 pkts/ms, d=86 ms: {title}", fontsize="small")
        a.legend(fontsize="small")
    ctx.figure("loop_gains_sbrm", fig)
