"""Reliability benchmarks (issues 18 and 23): memory of nonlinear charts and of sweeps; build,
compile and equilibrium times of large models; analyses of large systems.

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

3. Analyses of large and degenerate systems (issue 23, item 10), each in a fresh process, the
   time of ``spectral_abscissa`` alone (wall and CPU; goal <= 10 s each): the cascade
   ``x_i' = -x_i + 0.5 x_{i-1}(t - 1)`` of 20 states, whose characteristic function is
   ``(s + 1)^20`` (closed form: abscissa -1, the only root, multiplicity 20; main failed at
   6 states and never answered at 20), and Kelly's primal law on the 200-state parking lot of
   ``bench_speed.py`` (linearized at ``x = 1``; main gave no answer in 55 s), whose rightmost
   root is checked against the zero of the Schur complement of its arrow-shaped
   characteristic matrix, computed by mpmath (see ``tests/test_linear_large.py``).
4. ``fluidnet.sweep.sweep`` of ``a * b`` over a 10 000 x 1000 grid (10^7 points; issue 23: it
   peaked at 5.7 GB for an 80 MB result, goal <= 2x the result): peak resident memory above
   the process's before the sweep (the peak is reset first where Linux allows,
   ``/proc/self/clear_refs``), against the size of the returned Dataset; then the same sweep
   of 10^6 points with a checkpoint store, written and then read back (digests checked).
   Measured on the development machine (Linux, 2 cores shared with other jobs, load about 8;
   28 Nov 2026): +81 MB for the 80 MB result (1.01x), 76 s wall, 28 s CPU; with the store,
   +62 MB writing and +58 MB reading back for an 8 MB result (Zarr's threads and buffers,
   about 50 MB whatever the size).
5. The probe of stores, compiled libraries, files and signals (issue 33, part A;
   ``benchmarks/probe_stores.py``): 23 cases, each in a fresh process, counted as right values,
   named errors, silent wrong answers, data lost, raw errors, crashes and hangs. On main before
   issue 33: silent wrong 6, data lost 6, raw 10, crash 1.

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
    from fluidnet.codegen.compiled import compile_model
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


_ANALYSIS = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    import fluidnet as fn
    which = sys.argv[1]
    if which == "cascade":
        n = 20
        lin = fn.LinearDDE(-np.eye(n), [(1.0, 0.5 * np.eye(n, k=-1))])
    else:
        sys.path.insert(0, sys.argv[2])
        from bench_speed import network_model
        model = network_model(199)
        lin = model.linearize(equilibrium={s: 1.0 for s in model.state_names})
    t0, c0 = time.perf_counter(), time.process_time()
    a = lin.spectral_abscissa()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    roots = lin.roots(k=2)
    top = roots[0]
    out = {"states": lin.n, "delays": len(lin.delays), "abscissa": a, "wall_s": wall,
           "cpu_s": cpu, "certified": roots.certified, "line": roots.certificate,
           "multiplicity": top.multiplicity, "root": [top.value.real, top.value.imag],
           "error": top.error}
    if which == "cascade":
        out["closed_form_ok"] = bool(a == -1.0 and top.multiplicity == 20 and len(roots) == 1)
    else:
        import mpmath as mp
        L, T = 199, [mp.mpf(0.05 + 0.001 * i) for i in range(200)]
        def h(s):
            d = [s + 3 * mp.exp(-s * T[i]) for i in range(1, L + 1)]
            cross = sum(4 * mp.exp(-s * (T[0] + T[i + 1])) / d[i] for i in range(L))
            return s + 3 * L * mp.exp(-s * T[0]) - cross
        with mp.workdps(30):
            exact = complex(mp.findroot(h, mp.mpc(top.value)))
        out["closed_form_ok"] = bool(abs(exact - top.value) <= max(top.error, 1e-12 * abs(exact)))
    print(json.dumps(out))
    """
)


_SWEEP = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from fluidnet.sweep import sweep

    def product(a, b):
        return a * b

    def memory(field):
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field):
                    return int(line.split()[1]) * 1024

    na, nb = int(sys.argv[1]), int(sys.argv[2])
    store = sys.argv[3] if len(sys.argv) > 3 else None
    sweep(product, {"a": [1.0, 2.0], "b": [3.0]})  # imports and first calls
    try:
        with open("/proc/self/clear_refs", "w") as fh:  # peak := current
            fh.write("5")
    except OSError:
        pass
    base = memory("VmRSS:")
    t0, c0 = time.perf_counter(), time.process_time()
    a, b = np.linspace(0, 1, na), np.linspace(1, 2, nb)
    ds = sweep(product, {"a": a, "b": b}, store=store)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = memory("VmHWM:")
    v = ds["value"].values
    right = bool(v[-1, -1] == a[-1] * b[-1] and v[na // 3, nb // 7] == a[na // 3] * b[nb // 7])
    print(json.dumps({"points": int(v.size), "result_MB": ds.nbytes / 1e6,
                      "peak_growth_MB": (peak - base) / 1e6, "wall_s": wall, "cpu_s": cpu,
                      "values_right": right}))
    """
)


def large_analyses() -> dict:
    out = {}
    here = os.path.dirname(os.path.abspath(__file__))
    for which, label in (("cascade", "cascade of 20 states"), ("parking", "parking lot")):
        r = _run(_ANALYSIS, which, here)
        out[which] = r
        print(
            f"spectral_abscissa, {label} ({r['states']} states, {r['delays']} delays): "
            f"{r['wall_s']:.2f} s (CPU {r['cpu_s']:.2f} s, goal <= 10 s); abscissa "
            f"{r['abscissa']:.10g} (multiplicity {r['multiplicity']}, error {r['error']:.1e}), "
            f"certified {r['certified']} right of {r['line']:.6g}; closed form "
            f"{'agrees' if r['closed_form_ok'] else 'DISAGREES'}",
            flush=True,
        )
    return out


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


def sweep_memory() -> dict:
    out = {"plain": _run(_SWEEP, "10000", "1000")}
    r = out["plain"]
    print(
        f"sweep of {r['points']:.0e} points: peak memory +{r['peak_growth_MB']:.0f} MB for a "
        f"result of {r['result_MB']:.0f} MB ({r['peak_growth_MB'] / r['result_MB']:.2f}x, goal "
        f"<= 2x), {r['wall_s']:.0f} s ({r['cpu_s']:.0f} s CPU), values right: "
        f"{r['values_right']}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        for phase in ("store_write", "store_read"):
            r = out[phase] = _run(_SWEEP, "1000", "1000", f"{tmp}/squares")
            print(
                f"sweep of {r['points']:.0e} points with a store ({phase[6:]}): peak memory "
                f"+{r['peak_growth_MB']:.0f} MB for a result of {r['result_MB']:.0f} MB, "
                f"{r['wall_s']:.0f} s ({r['cpu_s']:.0f} s CPU), values right: "
                f"{r['values_right']}",
                flush=True,
            )
    return out


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


def store_probe() -> dict:
    """Part 5: the probe of stores, compiled libraries, files and signals (its counts)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import probe_stores

    return probe_stores.main()


def main() -> dict:
    return {
        "chart_memory": chart_memory(),
        "large_models": large_models(),
        "large_analyses": large_analyses(),
        "sweep_memory": sweep_memory(),
        "store_probe": store_probe(),
    }


if __name__ == "__main__":
    main()
