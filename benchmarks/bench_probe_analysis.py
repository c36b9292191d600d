"""Probe of the analyses and models (issue 33, part B): every case of the probe of main that was
a silent wrong answer, a false or raw error, run again and classified, so the counts stay
visible.

Each case states what a right outcome is, checked against an independent source (a closed
form, Lambert W, a second method) or the named error it must raise (a
:class:`fluidnet.FluidnetError` whose message matches). The outcome of each case is one of

* ``right``: the value agrees with the reference (or the warning the result owes is given);
* ``named``: the expected :class:`~fluidnet.FluidnetError`, its message matching;
* ``silent wrong``: a value that disagrees with the reference, without an error;
* ``raw error``: an exception that is not a :class:`~fluidnet.FluidnetError` (numpy's,
  sympy's, Python's);
* ``wrong error``: a :class:`~fluidnet.FluidnetError` where a value was due, or one whose
  message does not say what it must.

On main (04242c3, 5 Dec 2026) the 21 cases gave 0 right, 0 named, 9 silent wrong (bode's
phase twice, the Hopf prediction past the projection, continue_orbits' direction=-1, the
PI-over-TCP roots listed twice, the neutral term accepted, is_stable(margin=nan),
roots(k=10**6), the default output of simulate), 7 raw errors (the neuron branch's LinAlgError
twice, Abs twice, simulate(None), two bad seeds) and 5 wrong errors (x' = b x(t-1) twice, the
PI-over-TCP count, phase_portrait's option blamed on simulate_ensemble, simulate's n_points);
on branch honest: 14 right, 7 named, none of the others.

Run with ``make bench`` or ``python benchmarks/run.py probe_analysis``.
"""

from __future__ import annotations

import math
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import fluidnet as fn

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


@dataclass
class Case:
    """One probe: ``run()`` and what a right outcome is (``check(value, warnings)`` True, or
    an error of type ``error`` whose message matches ``match``)."""

    name: str
    run: Callable[[], Any]
    check: Callable[[Any, list], bool] | None = None
    error: type[BaseException] | None = None
    match: str = ""


def _classify(case: Case) -> tuple[str, str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = case.run()
        except fn.FluidnetError as exc:
            ok = case.error is not None and isinstance(exc, case.error)
            ok = ok and re.search(case.match, str(exc)) is not None
            return ("named" if ok else "wrong error"), f"{type(exc).__name__}: {exc}"[:160]
        except Exception as exc:  # noqa: BLE001 - a raw error is what is counted
            return "raw error", f"{type(exc).__module__}.{type(exc).__name__}: {exc}"[:160]
    if case.error is not None:
        return "silent wrong", f"returned {value!r:.120} where {case.error.__name__} was due"
    assert case.check is not None
    try:
        good = bool(case.check(value, [str(w.message) for w in caught]))
    except Exception:  # noqa: BLE001 - a result without what the check reads is not right
        good = False
    if good:
        return "right", repr(value)[:120]
    return "silent wrong", repr(value)[:160]


# ----------------------------------------------------------------------------------- cases
def _scalar_gain():
    x, b = fn.states("x"), fn.params("b")
    return fn.Model({x: b * x(fn.t - 1)}, {b: -0.5}, name="scalar")


PI_TCP = {
    "N": 300.3389312633782,
    "Tp": 0.47661413691627375,
    "q_ref": 8.261160380386503,
    "K_pi": 1.071014629338844e-09,
    "z": 0.049543634017343796,
}


def _bode_phase(w_range: bool):
    L = 3 * fn.sympy.exp(-0.8 * fn.s) / (fn.s + 0.5)
    b = fn.bode(L, w_range=(7.0, 40.0)) if w_range else fn.bode(L, [7.0, 40.0])
    return b.omega, b.phase


def _phase_right(v, _):
    w, phase = v
    return bool(np.allclose(phase, -0.8 * w - np.arctan(2 * w), atol=1e-9))


def _critical_b():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fn.EquilibriumWarning)
        return fn.critical_value(_scalar_gain(), "b", -1.5, 1.5)


def _switches_b():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fn.EquilibriumWarning)
        sw = fn.stability_switches(_scalar_gain(), "b", -3.0, 1.5)
    return [(c.value, c.change) for c in sw.crossings]


def _neuron_branch():
    from bifurcation_models import neuron

    hp = fn.hopf_point(neuron(), "a21", 0.3, 1.2, equilibrium={"x1": 0.0, "x2": 0.0})
    return fn.continue_orbits(hp, n_orbits=100, intervals=40, degree=4, max_step=1.0, hi=2.5)


_BRANCH: dict[str, Any] = {}


def _branch():
    if "b" not in _BRANCH:
        _BRANCH["b"] = _neuron_branch()
    return _BRANCH["b"]


def _pi_critical():
    m = fn.models.hollot_pi()
    cv = fn.critical_value(m, "C", 42131.969460442684, 421319.69460442686, params=PI_TCP)
    verdicts = []
    for f in (1 - 1e-6, 1 + 1e-6):
        verdicts.append(fn.nyquist(m.loop_gain("p", params={**PI_TCP, "C": cv.value * f})).stable)
    return cv.value, verdicts


def _pi_roots():
    lin = fn.models.hollot_pi().linearize(params={**PI_TCP, "C": 106260.831072})
    return lin.roots(k=8)


def _distinct(roots, _):
    v = roots.values
    return bool(roots.certified) and min(abs(a - b) for i, a in enumerate(v) for b in v[:i]) > 1e-6


def _abs_model(shift: float):
    x, a = fn.states("x"), fn.params("a")
    return fn.Model({x: -a * fn.sympy.Abs(x(fn.t - 1)) - x(fn.t) + shift}, {a: 0.5})


def _wright_direction():
    x, a = fn.states("x"), fn.params("a")
    m = fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0}, name="wright")
    br = fn.continue_orbits(fn.hopf_point(m, "a", 1.0, 2.0), n_orbits=4, max_step=0.1)
    return fn.continue_orbits(br.orbits[-1], "a", direction=-1, n_orbits=3, max_step=0.05).x


def _steps(tq):
    """x' = -x(t - 1), x = 1 before 0: the method of steps on [0, 3]."""
    return np.select(
        [tq <= 1.0, tq <= 2.0],
        [1.0 - tq, 1.0 - tq + (tq - 1.0) ** 2 / 2],
        1.0 - tq + (tq - 1.0) ** 2 / 2 - (tq - 2.0) ** 3 / 6,
    )


def _steps_model():
    x = fn.states("x")
    return fn.Model({x: -x(fn.t - 1)}, {}, name="steps")


def _drawn_error():
    sol = fn.simulate(_steps_model(), 3.0, history={"x": 1.0})
    fine = np.linspace(0.0, 3.0, 30001)
    return float(np.max(np.abs(np.interp(fine, sol.t, sol["x"]) - _steps(fine))) / 1.5)


def _oscillator():
    x, y = fn.states("x y")
    a = fn.params("a")
    return fn.Model({x: y(fn.t), y: -a * x(fn.t - 1) - y(fn.t)}, {a: 0.5}, name="osc")


def cases() -> list[Case]:
    w, p = fn.sympy.symbols("w p")
    lin = fn.LinearDDE(0.0, [(1.0, -1.0)])
    return [
        Case("bode(L, [7, 40]).phase = -0.8 w - atan 2w", lambda: _bode_phase(False), _phase_right),
        Case("bode(L, w_range=(7, 40)).phase", lambda: _bode_phase(True), _phase_right),
        Case(
            "critical_value of x' = b x(t-1) on [-1.5, 1.5]: b = 0, real root",
            _critical_b,
            lambda cv, _: abs(cv.value) < 1e-12 and cv.omega == 0 and cv.count_after == 1,
        ),
        Case(
            "stability_switches of x' = b x(t-1) on [-3, 1.5]: -pi/2 (pair), 0 (real)",
            _switches_b,
            lambda c, _: (
                np.allclose([v for v, _ in c], [-math.pi / 2, 0.0], atol=1e-12)
                and [k for _, k in c] == [-2, 1]
            ),
        ),
        Case(
            "HopfPoint.predict past the projected queue says so (hollot_pi, q_ref = 40)",
            lambda: fn.hopf_point(fn.models.hollot_pi(q_ref=40.0), "Tp", 0.2, 0.6).predict(0.57),
            lambda pr, ws: (
                pr["smooth"] is False
                and "q = 0" in pr["crosses"]
                and any("crosses q = 0" in m for m in ws)
            ),
        ),
        Case(
            "continue_orbits into a homoclinic orbit (neuron): orbits and a reason",
            _branch,
            lambda br, _: len(br) >= 30 and "cannot be computed" in br.stop_reason,
        ),
        Case(
            "PeriodicOrbit repr claims no uncertified stability",
            lambda: repr(_branch().orbits[-1]),
            lambda r, _: "stability not certified" in r and "stable)" not in r,
        ),
        Case(
            "continue_orbits(orbit, direction=-1) goes down (Wright, towards pi/2)",
            _wright_direction,
            lambda x, _: bool(np.all(np.diff(x) < 0)),
        ),
        Case(
            "critical_value of PI over TCP in C, against Nyquist on both sides",
            _pi_critical,
            lambda v, _: v[1] == [True, False],
        ),
        Case("roots(k=8) of PI over TCP: distinct, certified", _pi_roots, _distinct),
        Case(
            "linearize with Abs: A1 = -a sign(x*) = -0.5",
            lambda: _abs_model(1.0).linearize().A[0].tolist(),
            lambda v, _: v == [[-0.5]],
        ),
        Case(
            "linearize on the kink of Abs: the surface named",
            lambda: _abs_model(0.0).linearize(),
            error=fn.AnalysisError,
            match=r"switching surface .* of Abs",
        ),
        Case(
            "a neutral term Derivative(x(t-1), t): refused by Model",
            lambda: fn.Model(
                {
                    fn.states("x"): -fn.states("x")(fn.t)
                    + fn.sympy.Derivative(fn.states("x")(fn.t - 1), fn.t)
                },
                {},
            ),  # fmt: skip
            error=fn.ModelError,
            match="neutral",
        ),
        Case(
            "is_stable(margin=nan)",
            lambda: lin.is_stable(margin=float("nan")),
            error=fn.OptionError,
            match="margin",
        ),
        Case(
            "roots(k=10**6) says how many it found",
            lambda: len(lin.roots(k=10**6)),
            lambda n, ws: any(f"only {n} roots returned" in m for m in ws),
        ),
        Case(
            "phase_portrait(foo=1) names phase_portrait",
            lambda: fn.phase_portrait(_oscillator(), [{"x": 1.0}], x="x", y="y", t_end=1.0, foo=1),
            error=fn.OptionError,
            match=r"^phase_portrait\(\)",
        ),
        Case("simulate(None)", lambda: fn.simulate(None, 10.0), error=fn.ModelError, match="Model"),
        Case(
            "monte_carlo(seed='abc')",
            lambda: fn.monte_carlo(fn.WindowChain(1 / w, w / 2, p, params={p: 0.01}), seed="abc"),
            error=fn.OptionError,
            match="seed",
        ),
        Case(
            "iterate_map(seed=-1)",
            lambda: fn.iterate_map(fn.DiscreteMap({"x": "u"}, random="u"), [0.0], 3, seed=-1),
            error=fn.OptionError,
            match="seed",
        ),
        Case(
            "simulate(m, 3, n_points=301) against the method of steps",
            lambda: fn.simulate(_steps_model(), 3.0, history={"x": 1.0}, n_points=301, rtol=1e-10),
            lambda sol, _: sol.t.size == 301 and np.allclose(sol["x"], _steps(sol.t), atol=1e-8),
        ),
        Case(
            "simulate's default output drawn within 2e-3 of the range",
            _drawn_error,
            lambda err, _: err < 2e-3,
        ),
    ]


def main() -> dict:
    rows = []
    for case in cases():
        t0 = time.process_time()
        outcome, detail = _classify(case)
        rows.append((case.name, outcome, time.process_time() - t0, detail))
        print(f"{outcome:>13}  {rows[-1][2]:6.2f} s CPU  {case.name}", flush=True)
        if outcome not in ("right", "named"):
            print(f"{'':>13}  {detail}", flush=True)
    counts = Counter(r[1] for r in rows)
    print(
        "counts: "
        + ", ".join(
            f"{k} {counts.get(k, 0)}"
            for k in ("right", "named", "silent wrong", "raw error", "wrong error")
        ),
        flush=True,
    )
    return {"counts": dict(counts), "cases": [{"name": r[0], "outcome": r[1]} for r in rows]}


if __name__ == "__main__":
    main()
