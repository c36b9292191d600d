"""Bifurcation analysis benchmarks (issue 16), next to the simulation-based alternative.

1. Wright's equation ``x' = -a x(t-1)(1 + x)`` (Hopf at a = pi/2, amplitude coefficient
   ``2 sqrt(40/(3 pi - 2))`` peak-to-peak in ``sqrt(a - pi/2)``, Chow & Mallet-Paret 1977):
   * locate the Hopf point and compute its first Lyapunov coefficient (``fn.hopf_point``):
     time, error of a_c and of the amplitude coefficient;
   * the simulation way: bisect on "does a long run oscillate for good?" (``fn.simulate`` +
     ``fn.oscillation``), then fit the coefficient from simulated amplitudes: time, errors;
   * a branch of 50 orbits by collocation with Floquet multipliers (``fn.continue_orbits``) and
     the same 50 parameter values by long simulations: time per orbit and largest amplitude
     difference.
2. SBRM (state-dependent RTT delays), N = 30, c = 10 pkts/ms: ``fn.hopf_point`` in the delay
   (time, criticality) and the smooth orbit branch until it meets the marking threshold.
3. Kelly's delayed primal law with price ``(y/c)^4``: 50 orbits through the fold of cycles.
4. The neuron of Shayer & Campbell (DDE-BIFTOOL's demo; issue 27's speed goals), CPU time in
   this warm process: ``hopf_point`` (goal <= 50 ms), ``continue_hopf`` in (a21, taus) with the
   first Lyapunov coefficient, the other roots and the codimension-two points at every point
   (goal <= 20 ms per point), ``continue_orbits`` at DDE-BIFTOOL's accuracy (20 intervals,
   degree 4) with Floquet multipliers (goal <= 20 ms per orbit). Side by side, in the same
   run, DDE-BIFTOOL under GNU Octave on the same tasks (``benchmarks/ddebiftool_neuron.m``)
   when ``octave`` is installed and ``DDEBIFTOOL_DIR`` points at a DDE-BIFTOOL checkout (not
   part of fluidnet): its CPU time for one Hopf correction, for a Hopf curve with its
   Lyapunov coefficients and codimension-two tests (``LocateSpecialPoints``), and for a branch
   of orbits with their stability (``GetStability``).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import fluidnet as fn

K_WRIGHT = 2 * math.sqrt(40 / (3 * math.pi - 2))


def wright() -> fn.Model:
    x = fn.states("x")
    a = fn.params("a")
    return fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0}, name="wright")


def _osc(m, a: float, t_end: float = 400.0, x0: float = 0.2):
    sol = fn.simulate(m, t_end, params={"a": a}, history={"x": x0}, rtol=1e-8, atol=1e-10)
    return fn.oscillation(sol, "x", after=0.75 * t_end)


def _bisect(m, lo: float, hi: float, steps: int) -> float:
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if _osc(m, mid).sustained:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def bench_wright() -> dict:
    m = wright()
    out: dict = {}
    t0 = time.perf_counter()
    fn.hopf_point(wright(), "a", 1.0, 2.0)  # first call: imports and builds the caches
    out["hopf_first_call_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    hp = fn.hopf_point(m, "a", 1.0, 2.0)  # a fresh model: its own symbolic work included
    out["hopf_s"] = time.perf_counter() - t0
    out["hopf_a_err"] = abs(hp.value - math.pi / 2)
    out["K_rel_err"] = abs(hp.amplitude_coefficient["x"] / K_WRIGHT - 1)
    print(f"hopf_point: {out['hopf_s']:.2f} s, |a_c - pi/2| = {out['hopf_a_err']:.1e}, "
          f"K rel. error {out['K_rel_err']:.1e}, {hp.criticality}")  # fmt: skip

    # the simulation way: bisection on sustained oscillation, then a fit of K
    t0 = time.perf_counter()
    a_sim = _bisect(m, 1.3, 1.9, 10)
    das = np.array([0.02, 0.04, 0.08])
    amps = np.array([_osc(m, math.pi / 2 + da, t_end=600.0).amplitude for da in das])
    K_fit = float(np.sqrt(np.sum(amps**2 * das) / np.sum(das**2)))
    out["sim_s"] = time.perf_counter() - t0
    out["sim_a_err"] = abs(a_sim - math.pi / 2)
    out["sim_K_rel_err"] = abs(K_fit / K_WRIGHT - 1)
    print(f"simulation (10 bisection runs + 3 amplitude runs): {out['sim_s']:.2f} s, "
          f"|a_c - pi/2| = {out['sim_a_err']:.1e}, "
          f"K rel. error {out['sim_K_rel_err']:.1e}")  # fmt: skip

    t0 = time.perf_counter()
    br = fn.continue_orbits(hp, n_orbits=50)
    out["branch_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    fn.continue_orbits(hp, n_orbits=50, floquet=False)
    out["branch_no_floquet_s"] = time.perf_counter() - t0
    print(f"continue_orbits, 50 orbits: {out['branch_s']:.2f} s with Floquet multipliers, "
          f"{out['branch_no_floquet_s']:.2f} s without; a up to {br.x.max():.3f}")  # fmt: skip

    t0 = time.perf_counter()
    diffs = []
    for orb in br.orbits:
        a = orb.params["a"]
        ht = np.linspace(-1.5, 0.0, 200)
        sol = fn.simulate(
            m, 40 * orb.period, params={"a": a}, history={"x": (ht, 1.02 * orb(ht, "x"))},
            rtol=1e-9, atol=1e-11,
        )  # fmt: skip
        o = fn.oscillation(sol, "x", after=30 * orb.period)
        diffs.append(abs(o.amplitude / orb.amplitude["x"] - 1))
    out["sim_branch_s"] = time.perf_counter() - t0
    out["branch_vs_sim_max_rel"] = float(max(diffs))
    print(f"the same 50 orbits by simulation (40 periods each, started 2 % off): "
          f"{out['sim_branch_s']:.2f} s; largest amplitude difference "
          f"{out['branch_vs_sim_max_rel']:.1e} (relative)")  # fmt: skip
    return out


def bench_sbrm() -> dict:
    m = fn.models.sbrm()
    t0 = time.perf_counter()
    hp = fn.hopf_point(m, "d", 0.03, 0.2)
    t_h = time.perf_counter() - t0
    t0 = time.perf_counter()
    br = fn.continue_orbits(hp, n_orbits=50)
    t_b = time.perf_counter() - t0
    print(f"SBRM: hopf_point {t_h:.2f} s (d_c = {1e3 * hp.value:.3f} ms, {hp.criticality}); "
          f"{len(br)} smooth orbits in {t_b:.2f} s until d - d_c = "
          f"{1e6 * (br.x.max() - hp.value):.1f} us ({br.stop_reason[:40]}...)")  # fmt: skip
    return {"hopf_s": t_h, "branch_s": t_b, "orbits": len(br), "criticality": hp.criticality}


def bench_kelly() -> dict:
    m = fn.models.kelly_primal([[1]], T=1.0, B=4.0)
    hp = fn.hopf_point(m, "kappa_1", 0.05, 5.0)
    t0 = time.perf_counter()
    br = fn.continue_orbits(hp, n_orbits=50)
    t_b = time.perf_counter() - t0
    folds = [round(v, 4) for _, v in br.folds]
    print(f"Kelly primal: 50 orbits in {t_b:.2f} s; folds at {folds}, "
          f"stability changes {br.stability_changes}")  # fmt: skip
    return {"branch_s": t_b, "folds": br.folds}


HERE = Path(__file__).resolve().parent


def _neuron():
    sys.path.insert(0, str(HERE.parent / "tests"))
    from bifurcation_models import neuron

    return neuron()


def _cpu(f, repeat: int = 1):
    t0 = time.process_time()
    for _ in range(repeat):
        out = f()
    return (time.process_time() - t0) / repeat, out


def bench_neuron() -> dict:
    m = _neuron()
    eq = {"x1": 0.0, "x2": 0.0}
    fn.hopf_point(m, "a21", 0.3, 1.2, equilibrium=eq)  # builds the model's compiled pieces
    t_hopf, hp = _cpu(lambda: fn.hopf_point(m, "a21", 0.3, 1.2, equilibrium=eq), repeat=10)
    fn.continue_hopf(hp, "taus", n_points=4)
    t_curve, curve = _cpu(
        lambda: fn.continue_hopf(hp, "taus", n_points=70, direction=0, x_range=(0, 3),
                                 y_range=(0, 10))
    )  # fmt: skip
    per_point = t_curve / len(curve)
    fn.continue_orbits(hp, n_orbits=4, intervals=20, degree=4)
    t_orb, br = _cpu(lambda: fn.continue_orbits(hp, n_orbits=50, intervals=20, degree=4))
    per_orbit = t_orb / len(br)
    hh = [p for p in curve.special if p.kind == "hopf-hopf"]
    out = {
        "hopf_point_ms": 1e3 * t_hopf,
        "hopf_curve_points": len(curve),
        "hopf_curve_ms_per_point": 1e3 * per_point,
        "special": [repr(p) for p in curve.special],
        "orbits": len(br),
        "orbit_ms": 1e3 * per_orbit,
        "first_period": br.orbits[0].period,
        "load": os.getloadavg(),
    }
    print(f"neuron, CPU time (load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores):")
    print(f"  hopf_point: {1e3 * t_hopf:.1f} ms (goal <= 50); a21 = {hp.value:.8g}, "
          f"omega = {hp.omega:.8g}, l1 = {hp.lyapunov:.6g}")  # fmt: skip
    print(f"  continue_hopf: {len(curve)} points in {t_curve:.2f} s = {1e3 * per_point:.1f} ms "
          f"per point (goal <= 20) with l1, the other roots and {len(curve.special)} special "
          f"points: {'; '.join(out['special'])}")  # fmt: skip
    if hh:
        print(f"  Hopf-Hopf at (a21, taus) = ({hh[-1].x:.10f}, {hh[-1].y:.10f})")
    print(f"  continue_orbits (20 x 4, with multipliers): {len(br)} orbits in {t_orb:.2f} s = "
          f"{1e3 * per_orbit:.1f} ms per orbit (goal <= 20)")  # fmt: skip
    out["ddebiftool"] = bench_ddebiftool()
    return out


def bench_ddebiftool(n_hopf: int = 40, n_psol: int = 50) -> dict:
    """DDE-BIFTOOL on the same tasks under Octave (skipped when unavailable)."""
    base = os.environ.get("DDEBIFTOOL_DIR", "")
    octave = shutil.which("octave")
    if not (octave and base and Path(base, "ddebiftool").is_dir()):
        print("  DDE-BIFTOOL: not run (needs octave and DDEBIFTOOL_DIR pointing at DDE-BIFTOOL)")
        return {"skipped": True}
    env = {**os.environ, "N_HOPF": str(n_hopf), "N_PSOL": str(n_psol)}
    t0 = time.time()
    res = subprocess.run(
        [octave, "--no-gui", "--quiet", "--eval", f"run('{HERE / 'ddebiftool_neuron.m'}')"],
        capture_output=True, text=True, env=env, timeout=7200,
    )  # fmt: skip
    vals: dict = {}
    for line in res.stdout.splitlines():
        mt = re.match(r"RESULT (\S+) (.*)", line)
        if mt:
            vals.setdefault(mt.group(1), []).append(mt.group(2))
    try:
        hopf = float(vals["hopf_point_s"][0])
        pts = int(vals["hopf_curve_points"][0])
        curve = float(vals["hopf_curve_s"][0]) + float(vals["hopf_curve_special_s"][0])
        orbits = int(vals["psol_orbits"][0])
        psol = float(vals["psol_s"][0]) + float(vals["floquet_s"][0])
    except (KeyError, ValueError, IndexError):
        print(f"  DDE-BIFTOOL: run failed ({res.stderr[-300:]})")
        return {"error": res.stderr[-1000:]}
    out = {
        "hopf_point_ms": 1e3 * hopf,
        "hopf_curve_ms_per_point": 1e3 * curve / pts,
        "orbit_ms": 1e3 * psol / orbits,
        "special": vals.get("special_hoho", []),
        "first_period": float(vals["first_period"][0]),
        "wall_s": time.time() - t0,
    }
    print(f"  DDE-BIFTOOL (Octave, CPU time, same run): Hopf correction {out['hopf_point_ms']:.0f} "
          f"ms; Hopf curve {out['hopf_curve_ms_per_point']:.0f} ms per point ({pts} points, "
          f"L1 and codimension-two tests included); orbits {out['orbit_ms']:.0f} ms per orbit "
          f"({orbits} orbits, 20 x 4, stability included); "
          f"Hopf-Hopf at {out['special']}")  # fmt: skip
    return out


def main() -> dict:
    return {
        "neuron": bench_neuron(),
        "wright": bench_wright(),
        "sbrm": bench_sbrm(),
        "kelly": bench_kelly(),
    }


if __name__ == "__main__":
    main()
