"""Derived targets: how the pipe-full DDE starts to oscillate at its critical bdp, and where.

Not in the paper, which has no delay model (see :mod:`fluidnet.papers.mbo.mean_field`). For
each case of ``HOPF_CASES`` the Hopf point of :func:`fluidnet.models.generalized_tcp_pipe` in
``bdp`` and its first Lyapunov coefficient (with the state-dependent delay ``tau = W/C``) are
computed with :func:`fluidnet.criticality_table`, and checked three ways:

* **closed forms.** Linearized at its equilibrium the law is ``u' = a u + b u(t - tau)`` with
  ``tau = W_e / C`` (the delay's own dependence on ``W`` drops out at an equilibrium, where
  ``W'(t - tau) = 0``). A root ``lambda = i omega`` of ``lambda = a + b e^{-lambda tau}`` gives
  ``a + b cos(omega tau) = 0`` and ``omega = -b sin(omega tau)``, so ``omega^2 = b^2 - a^2``:
  ``omega = sqrt((b tau)^2 - (a tau)^2) / tau`` rad/s, with ``a tau``, ``b tau``, ``W_e`` from
  :func:`~fluidnet.papers.mbo.mean_field.pipe_coefficients` (scipy only) and ``C = 3 Mb/s`` in
  512-byte segments. The critical bdp is the Lambert-W crossing
  :func:`~fluidnet.papers.mbo.mean_field.hopf_bdp_closed_form` (Brent to ``1e-12``).
* **collocation.** Where the normal form predicts a cycle of peak-to-peak ``PROBE_P2P``
  segments, :func:`fluidnet.periodic_orbit` (a boundary-value problem on the nonlinear DDE,
  not the normal form) must find it, on the side the sign of ``l1`` says, with the predicted
  amplitude and with the Floquet multiplier ``exp(-2 Re(mu') (p - p0) T)`` of the normal form
  (``mu'`` the root speed): a subcritical Hopf point's cycles lie on the stable side and are
  unstable.
* **simulation** at ``BEYOND`` times the critical bdp from next to the equilibrium.

What was found: every case is **subcritical** (``l1 > 0``), but the smooth theory holds only on
a sliver. The ORED profile has kinks at ``min_th`` and ``max_th``, and at the Hopf point the
equilibrium sits ``0.63`` segments above ``min_th`` (``W - bdp = 15.63``; ``7`` segments above
it for ``alpha = -0.5``, ``11.6`` below ``max_th`` for ``alpha = 0``). The unstable cycle
reaches the kink within ``1e-5`` relative of the critical bdp; past onset the runs settle on a
cycle that crosses a kink (``~1.4`` segments peak-to-peak where the margin is ``0.63``; ``16``
and ``25`` for ``alpha = -0.5`` and ``0``). The cycles that could coexist with the stable
equilibrium cross the kinks, outside the smooth theory of :func:`fluidnet.onset_map` (whose
branch of cycles ends at the kink without a fold of cycles), so bistability is tested by
simulation along the Hopf curve in ``(bdp, alpha)``: the cycle of the run at ``BEYOND`` times
the critical bdp, continued to ``HYST`` times it (equilibrium stable), persists or dies out.
"""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models.generalized_tcp import generalized_tcp_pipe
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import HOPF_CASES, MBPS, MSS, PROBE_P2P, SEC4
from .mean_field import hopf_bdp_closed_form, pipe_coefficients

#: Link rate of Sec IV-C in segments/s (3 Mb/s, 512-byte segments): ``tau = W_e / C``.
C_SEGMENTS = SEC4["C"] * MBPS / MSS
BRACKET = (5.0, 400.0)  # bdp searched for the Hopf point (segments)
MIN_TH, MAX_TH = SEC4["min_th"], SEC4["max_th"]  # the ORED profile's kinks (W - bdp)
BEYOND = 1.02  # the simulation past onset, x critical bdp
HYST = 0.999  # the continued cycle's test of bistability, x critical bdp
SIM_T = 150.0  # s: each run (about 200 periods)
MAP_ALPHA = (-1.5, 0.02)  # the onset map's box in alpha (the Hopf curve ends near 0.03)
MAP_BDP = (5.0, 400.0)
SCAN_ALPHAS = (-1.0, -0.5, -0.25, 0.0, 0.02)  # alpha of the bistability scan


def closed_form_omega(bdp: float, **law: float) -> float:
    """``omega = sqrt((b tau)^2 - (a tau)^2) / tau`` [rad/s], ``tau = W_e / C`` (scipy only)."""
    We, a_tau, b_tau = pipe_coefficients(bdp, **law)
    return math.sqrt(b_tau**2 - a_tau**2) / (We / C_SEGMENTS)


def kink_margin(W: float, bdp: float) -> float:
    """Distance (segments) from ``W - bdp`` to the nearest kink of the ORED profile."""
    x = W - bdp
    return min(x - MIN_TH, MAX_TH - x)


def _late(sol, t_end: float, span: float = 5.0) -> np.ndarray:
    return sol(np.linspace(t_end - span, t_end, 1000), "W")


def _beyond(model, hp) -> tuple[object, dict]:
    """The run at ``BEYOND`` x critical from ``1.001 W_e``: its late cycle."""
    bdp = BEYOND * hp.value
    sol = fn.simulate(model, SIM_T, params={"bdp": bdp}, history={"W": 1.001 * hp.equilibrium["W"]})
    w = _late(sol, SIM_T) - bdp
    reaches = w.min() < MIN_TH or w.max() > MAX_TH
    return sol, {"p2p": float(np.ptp(w)), "lo": float(w.min()), "hi": float(w.max()),
                 "kink": reaches}  # fmt: skip


def _persists(model, hp, up) -> tuple[bool, float, float, object]:
    """Continue the run ``up`` at ``HYST`` x critical for ``2 SIM_T``: whether its cycle
    persists (late peak-to-peak above 1 segment and within 10 % of the one ``SIM_T / 3``
    after the switch), and the two peak-to-peaks."""
    t1 = 3.0 * SIM_T
    sol = fn.simulate(model, t1, params={"bdp": HYST * hp.value}, history=up)
    early = float(np.ptp(sol(np.linspace(SIM_T + 45.0, SIM_T + 50.0, 1000), "W")))
    late = float(np.ptp(_late(sol, t1)))
    return late > 1.0 and late > 0.9 * early, early, late, sol


def _probe(hp) -> dict:
    """The collocation orbit where the normal form predicts a cycle of ``PROBE_P2P``."""
    K = hp.amplitude_coefficient["W"]
    value = hp.value + hp.orbit_side * (PROBE_P2P / K) ** 2
    orb = fn.periodic_orbit(hp, value, intervals=20, degree=4)
    mult = np.asarray(orb.multipliers)
    outside = mult[np.abs(mult) > 1.0 + 1e-8]
    trivial = mult[np.argmin(np.abs(mult - 1.0))]
    growth = math.exp(-2.0 * hp.root_speed.real * (value - hp.value) * orb.period) - 1.0
    return {
        "value": value,
        "amplitude": orb.amplitude["W"],
        "outside": outside,
        "trivial": trivial,
        "growth": growth,
    }


@PAPER.item(
    title="Pipe-full DDE: criticality at every critical bdp, onset map (derived)",
    quick={"cases": {"baseline": {}}, "n_map": 4, "scan": ()},
)
def criticality(ctx: Context, cases=HOPF_CASES, n_map: int = 16, scan=SCAN_ALPHAS) -> dict:
    """Hopf points and criticality of ``cases``, checked by closed forms, collocation and
    simulation; the onset map in ``(bdp, alpha)`` with ``n_map`` Hopf-curve points each way,
    and the simulated test of bistability at the alphas of ``scan``."""
    base = generalized_tcp_pipe()
    tab = fn.criticality_table(base, "bdp", *BRACKET, list(cases.values()))
    values: dict = {}
    rows, runs = [], {}
    for (case, law), r in zip(cases.items(), tab.rows, strict=True):
        hp = r["hopf"]
        closed = hopf_bdp_closed_form(*BRACKET, **law)
        omega = closed_form_omega(closed, **law)
        values[case, "bdp"] = Value(r["value"], expected=closed)
        values[case, "omega"] = Value(r["omega"], expected=omega)
        values[case, "subcritical"] = Value(
            r["criticality"] == "subcritical", f"{r['criticality']}, l1 = {r['l1']:.4g}"
        )
        pr = _probe(hp)
        values[case, "probe amplitude"] = pr["amplitude"]
        n_out = len(pr["outside"])
        big = float(abs(pr["outside"][0])) if n_out else math.nan
        values[case, "probe multiplier"] = Value(big - 1.0, expected=pr["growth"])
        side = pr["value"] < hp.value
        values[case, "probe unstable"] = Value(
            side and n_out == 1,
            f"bdp {pr['value']:.7g} < {hp.value:.7g}: {n_out} outside, trivial "
            f"1{abs(pr['trivial']) - 1:+.1e}",
        )
        model = base.with_params(**law)
        up, b = _beyond(model, hp)
        runs[case] = up
        values[case, "beyond"] = Value(
            b["kink"] and b["p2p"] > 0.1,
            f"p2p {b['p2p']:.3g}, W - bdp in [{b['lo']:.4g}, {b['hi']:.4g}]",
        )
        We = hp.equilibrium["W"]
        rows.append(
            {
                "case": case, "critical_bdp": r["value"], "closed_form_bdp": closed,
                "omega_rad_s": r["omega"], "closed_form_omega": omega, "l1": r["l1"],
                "criticality": r["criticality"], "window": We,
                "kink_margin": kink_margin(We, hp.value),
                "probe_bdp": pr["value"], "probe_p2p": pr["amplitude"],
                "probe_multiplier_minus_1": big - 1.0,
                "normal_form_multiplier_minus_1": pr["growth"],
                f"p2p_at_{BEYOND:g}x": b["p2p"], "W_minus_bdp_min": b["lo"],
                "W_minus_bdp_max": b["hi"],
            }
        )  # fmt: skip
    ctx.table("criticality", rows)
    om, scanned = None, []
    if n_map:
        om = _onset_map(base, tab.rows[0]["hopf"], n_map, values)
    for alpha in scan:
        model = base.with_params(alpha=alpha)
        hp = fn.hopf_point(model, "bdp", *BRACKET)
        up, _ = _beyond(model, hp)
        holds, early, late, sol = _persists(model, hp, up)
        scanned.append((alpha, hp.value, holds, early, late))
        runs[f"alpha={alpha:g}", "hyst"] = sol
    if scan:
        on = [a for a, _, holds, *_ in scanned if holds]
        values["bistable"] = Value(
            bool(on) and -1.0 not in on,
            "bistable at alpha = " + (", ".join(f"{a:g}" for a in on) or "none"),
        )
        ctx.table(
            "bistability_scan",
            [
                {"alpha": a, "critical_bdp": p, f"bistable_at_{HYST:g}x": h,
                 "p2p_50s_after": e, "p2p_300s_after": lt}
                for a, p, h, e, lt in scanned
            ],
        )  # fmt: skip
    _figure(ctx, tab, om, scanned, runs, cases)
    return values


def _onset_map(base, hp, n_map: int, values: dict):
    """The onset map in ``(bdp, alpha)``; its Hopf curve against the closed forms."""
    om = fn.onset_map(
        hp, "alpha", x_range=MAP_BDP, y_range=MAP_ALPHA, n_points=n_map, n_orbits=8,
        fold_points=6,
    )  # fmt: skip
    h = om.hopf
    closed = np.array([hopf_bdp_closed_form(*BRACKET, alpha=float(a)) for a in h.y])
    omega = np.array(
        [closed_form_omega(float(b), alpha=float(a)) for b, a in zip(h.x, h.y, strict=True)]
    )
    values["map bdp"] = Value(
        float(np.max(np.abs(h.x / closed - 1.0))),
        note=(f"{len(h)}", f"{h.y.min():.3g}", f"{h.y.max():.3g}"),
    )
    values["map omega"] = float(np.max(np.abs(h.omega / omega - 1.0)))
    l1 = np.asarray(h.lyapunov)
    values["map subcritical"] = Value(
        bool(np.all(l1 > 0)) and not h.special,
        f"l1 in [{l1.min():.3g}, {l1.max():.3g}], special points: "
        f"{', '.join(p.kind for p in h.special) or 'none'}",
    )
    br = om.branches[0] if om.branches else None
    if br is not None:
        last = br.orbits[-1]
        t = np.linspace(0.0, last.period, 2000)
        x = last(t, "W") - last.params["bdp"]
        gap = min(float(x.min()) - MIN_TH, MAX_TH - float(x.max()))
        values["map branch"] = Value(
            gap < 0.01 and not om.folds,
            f"{len(br.orbits)} orbits, last {gap:.2g} segments from a kink; folds "
            f"{len(om.folds)}; stop: {br.stop_reason[:60]}",
        )
    else:
        values["map branch"] = Value(False, "; ".join(om.notes)[:100])
    return om


def _figure(ctx: Context, tab, om, scanned: list, runs: dict, cases: dict) -> None:
    fig, axes = ctx.new_figure(1, 3, figsize=(17.0, 4.8))
    ax = axes[0]
    if om is not None:
        om.plot(ax=ax)
        ys = np.linspace(*MAP_ALPHA, 9)
        ax.plot([hopf_bdp_closed_form(*BRACKET, alpha=float(a)) for a in ys], ys, "k+", ms=8,
                label="Lambert W closed form")  # fmt: skip
    for a, p, holds, *_ in scanned:
        what = "bistable" if holds else "no bistability"
        ax.plot([p], [a], "o" if holds else "s", color="C3" if holds else "C2", mfc="none",
                label=f"{what} at {HYST:g} x (simulated)")  # fmt: skip
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        uniq = dict(zip(labels, handles, strict=True))
        ax.legend(uniq.values(), uniq.keys(), fontsize=7)
    ax.set(xlabel="bandwidth-delay product (segments)", ylabel="alpha")
    ax.set_title("onset of cycles in (bdp, alpha): stable left of the curve", fontsize=10)
    ax = axes[1]
    tab.plot(ax=ax)
    for case, r in zip(cases, tab.rows, strict=True):
        ax.annotate(case, (r["value"], r["l1"]), fontsize=7, xytext=(4, 2),
                    textcoords="offset points")  # fmt: skip
    l1 = np.array([r["l1"] for r in tab.rows])
    if np.all(l1 > 0):
        ax.set_yscale("log")
    ax.set_title("l1 at the critical bdp (> 0: subcritical)", fontsize=10)
    ax = axes[2]
    for k, case in enumerate(c for c in ("baseline", "alpha=0") if c in runs):
        sol = runs[case]
        t = np.linspace(SIM_T - 4.0, SIM_T, 800)
        bdp = BEYOND * tab.rows[list(cases).index(case)]["value"]
        ax.plot(t - SIM_T, sol(t, "W") - bdp, f"C{k}", label=f"{case}, {BEYOND:g} x critical")
    if ("alpha=0", "hyst") in runs:
        sol = runs["alpha=0", "hyst"]
        p = next(p for a, p, *_ in scanned if a == 0.0)
        t = np.linspace(3 * SIM_T - 4.0, 3 * SIM_T, 800)
        ax.plot(t - 3 * SIM_T, sol(t, "W") - HYST * p, "C3--",
                label=f"alpha=0, continued to {HYST:g} x (equilibrium stable)")  # fmt: skip
    for v in (MIN_TH, MAX_TH):
        ax.axhline(v, color="k", ls=":", lw=0.8)
    ax.set(xlabel="t - t_end (s)", ylabel="W - bdp (segments); dotted: ORED kinks")
    ax.set_title("past onset the cycles cross the marking profile's kinks", fontsize=10)
    ax.legend(fontsize=7)
    ctx.figure("criticality_onset_map", fig)
