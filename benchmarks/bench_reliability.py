"""Reliability benchmarks (issues 18 and 23): memory of nonlinear charts, build, compile and
equilibrium times of large models.

1. ``fluidnet.nonlinear_chart`` over a 90 x 90 grid with 2 initial conditions and 4001 output
   times (a delayed damped oscillator ``x' = y, y' = -a x(t-1) - b y``): peak resident memory
   above the process's before the chart, against the size of the result and of the
   trajectories (90 x 90 x 2 x 2 states x 4001 doubles = 1037 MB), and the wall time.
2. Large models, each in a fresh process with an empty compile cache: a ring of 1000 states
   ``x_i' = k_i (1 - x_i(t-T_i) ((x_{i-1}(t-T_i) + x_i(t-T_i))/c)^2)`` (2000 lags) and Kelly's
   primal law on a ring network of 1000 flows and 1000 links (flow i uses links i and i+1,
   per-flow delays: 3000 lags, link loads, prices and path prices as signals). Times: writing
   the sympy expressions (the user's part), ``fluidnet.Model`` (which builds the canonical form),
   and compiling (code generation and numba), against the goals of issue 18 (Model <= 10 s,
   compile <= 30 s); ``equilibrium()`` of the model (issue 23: not done after 58 s before the
   sparse search of :mod:`fluidnet.symbolic.newton`; goal <= 10 s), checked against the closed
   forms (the ring's ``x^3 = 1``, Kelly's ``x^5 = 1/2``); for the Kelly network also
   ``linearize`` at its closed-form equilibrium
   (every rate ``x`` with ``2 x (2 x / c)^B = w``, ``x^5 = 1/2``; goal <= 2 s, the first call
   builds the numeric plans, a second call reuses them), with every ``T_n = 0.1``: a
   :class:`fluidnet.LinearDDE` holds one dense ``n x n`` matrix per distinct delay, and 1000
   distinct delays would take 8 GB. Wall and CPU times of the process: on a shared machine the
   wall time grows with the load, the CPU time does not.

Run with ``make bench`` or ``python benchmarks/run.py reliability``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

_CHART = textwrap.dedent(
    """
    import json, resource, time
    import numpy as np
    import fluidnet as fn
    x, y = fn.states("x y")
    a, b = fn.params("a b")
    m = fn.Model(rhs={x: y(fn.t), y: -a * x(fn.t - 1) - b * y(fn.t)}, params={a: 0.5, b: 1.0},
                 name="delayed oscillator")
    ics = [{"x": 1.0, "y": 0.0}, {"x": -0.5, "y": 0.5}]
    fn.nonlinear_chart(m, {"a": [0.5], "b": [1.0]}, ics=ics, t_end=1.0, progress=False)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    ds = fn.nonlinear_chart(m, {"a": np.linspace(0.1, 2.0, 90), "b": np.linspace(0.1, 2.0, 90)},
                            ics=ics, t_end=40.0, workers=2, progress=False)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_growth_MB": (peak - base) / 1024, "wall_s": wall,
                      "result_MB": ds.nbytes / 1e6, "stable_points": int(ds["stable"].sum())}))
    """
)

_LARGE = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    def now():
        return time.perf_counter(), time.process_time()
    def since(a, b):
        return b[0] - a[0], b[1] - a[1]
    import sympy
    import fluidnet as fn
    import fluidnet.models.kelly as kelly
    from fluidnet.dde.codegen import compile_model
    n, which = int(sys.argv[1]), sys.argv[2]
    t0 = now()
    if which == "ring":
        xs = [sympy.Function(f"x_{i}", real=True) for i in range(n)]
        ks = [sympy.Symbol(f"k_{i}", real=True) for i in range(n)]
        Ts = [sympy.Symbol(f"T_{i}", real=True) for i in range(n)]
        c, t = sympy.Symbol("c", real=True), fn.t
        rhs = {xs[i]: ks[i] * (1 - xs[i](t - Ts[i])
                               * ((xs[i - 1](t - Ts[i]) + xs[i](t - Ts[i])) / c) ** 2)
               for i in range(n)}
        params = {c: 2.0, **{k: 0.5 for k in ks}, **{T: 0.1 + 1e-4 * i for i, T in enumerate(Ts)}}
        t1 = now()
        m = fn.Model(rhs=rhs, params=params, name="ring")
        t2 = now()
    else:
        A = np.zeros((n, n), dtype=int)
        for i in range(n):
            A[i, i] = A[(i + 1) % n, i] = 1
        box = {}
        original = kelly.Model
        def timed(*args, **kw):
            box["t1"] = now()
            model = original(*args, **kw)
            box["t2"] = now()
            return model
        kelly.Model = timed
        m = fn.models.kelly_primal(A, w=1.0, kappa=0.5, c=2.0, B=4.0,
                                   T=list(np.linspace(0.05, 0.15, n)))
        t1, t2 = box["t1"], box["t2"]
    cm = compile_model(m)
    t3 = now()
    out = {"states": m.form.n, "lags": len(m.form.lags), "expressions_s": since(t0, t1),
           "model_s": since(t1, t2), "compile_s": since(t2, t3),
           "generated_lines": cm.path.read_text().count(chr(10))}
    t6 = now()
    eq = m.equilibrium()
    out["equilibrium_s"] = since(t6, now())
    # closed forms: the ring's x^3 = 1 (c = 2), Kelly's 2 x (2 x / c)^B = w, x^5 = 1/2
    exact = 1.0 if which == "ring" else 0.5 ** 0.2
    out["equilibrium_error"] = max(abs(v / exact - 1) for v in eq.values())
    if which == "kelly":
        eq = {s: 0.5 ** 0.2 for s in m.state_names}
        same = {f"T_{i + 1}": 0.1 for i in range(n)}
        t4 = now()
        lin = m.linearize(equilibrium=eq, params=same)
        t5 = now()
        m.linearize(equilibrium=eq, params=same)
        out["linearize_s"], out["linearize_again_s"] = since(t4, t5), since(t5, now())
        out["delays"] = len(lin.delays)
    print(json.dumps(out))
    """
)


def _run(code: str, *args: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FLUIDNET_CACHE=cache, OPENBLAS_NUM_THREADS="1")
        out = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True
        )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def chart_memory() -> dict:
    r = _run(_CHART)
    r["trajectories_MB"] = 90 * 90 * 2 * 2 * 4001 * 8 / 1e6
    print(
        f"nonlinear_chart 90x90 x 2 starts x 4001 points: peak memory +{r['peak_growth_MB']:.0f} "
        f"MB (trajectories {r['trajectories_MB']:.0f} MB, result {r['result_MB']:.2f} MB), "
        f"{r['wall_s']:.1f} s",
        flush=True,
    )
    return r


#: Goals of issues 18 and 23 for a model of 1000 states, seconds.
GOALS = {"model_s": 10.0, "compile_s": 30.0, "linearize_s": 2.0, "equilibrium_s": 10.0}


def _time(r: dict, key: str) -> str:
    wall, cpu = r[key]
    goal = f", goal <= {GOALS[key]:g} s" if key in GOALS else ""
    return f"{wall:.1f} s (CPU {cpu:.1f} s{goal})"


def large_models(n: int = 1000, which: tuple[str, ...] = ("ring", "kelly")) -> dict:
    out = {}
    for w in which:
        r = _run(_LARGE, str(n), w)
        line = (
            f"{w} of {r['states']} states, {r['lags']} lags: expressions "
            f"{_time(r, 'expressions_s')}, Model {_time(r, 'model_s')}, compile "
            f"{_time(r, 'compile_s')} ({r['generated_lines']} generated lines), equilibrium() "
            f"{_time(r, 'equilibrium_s')} (largest relative error against the closed form "
            f"{r['equilibrium_error']:.1e})"
        )
        if "linearize_s" in r:
            line += (
                f", linearize {_time(r, 'linearize_s')} ({r['delays']} delays; again "
                f"{_time(r, 'linearize_again_s')})"
            )
        print(line, flush=True)
        out[w] = r
    return out


def main() -> dict:
    return {"chart_memory": chart_memory(), "large_models": large_models()}


if __name__ == "__main__":
    main()
