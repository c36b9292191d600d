"""Nonlinear DDE engine against jitcdde and ddeint (issue 3).

1. Kelly's primal law with a delayed power-law price, one trajectory, 2000 time units:
   ``x' = kappa (w - x(t) (x(t-T)/c)^10)`` with kappa = 0.2, w = c = T = 1, history 0.5 (the
   equilibrium x = 1 is unstable: a limit cycle). The rate multiplies the delayed price; with
   ``x(t-T) p(t-T)`` instead, jitcdde 1.8.3 returns NaN from t = 2 on (its right-hand side
   then has no current-state term), so the comparison uses this form. Wall time including
   compilation (first process, and a second process using the caches), for fluidnet, jitcdde
   and ddeint, at the same tolerance, with the error against a reference (fluidnet, rtol = 1e-12,
   cross-checked against jitcdde at rtol = 1e-10).
2. 400 RCP fluid trajectories (seed 004) over a 20 x 20 (alpha, beta) grid, 200 RTTs each,
   from a 5x overload (R = C/2, q = 0): ``fluidnet.simulate_ensemble`` against a loop of
   jitcdde compiled once with (alpha, beta) as control parameters. jitcdde has no projected
   states; its queue uses its smooth ``conditional`` for ``q' = max(y - C, 0)`` at ``q = 0``
   (sigmoids one packet wide: with the default width the integration stalls at the start).

3. Installing and start-up (issue 14: a new model's first run <= 1 s, a later process
   <= 0.3 s; issue 26: after ``pip install <checkout>`` into a fresh virtual environment, the
   first ``simulate`` of a new model in a new process <= 1 s of CPU with an empty
   ``FLUIDNET_CACHE``, without numba). A fresh virtual environment; ``pip install`` of this
   checkout into it (not editable: the build compiles the C integrator, the dependencies come
   from the package index); then, in that environment and outside the checkout (each process
   checks that it imported the installed package), a new model's first process with an empty
   compile cache (the C compiler compiles the model's functions), a later process with the
   model cached, a process running the model saved by ``fn.save_compiled`` (no sympy, no
   numba), and what the compile cache holds afterwards. Then ``python -m build`` (an sdist, and
   a wheel built from it): the wheel's integrator and the sdist's C sources are listed, and the
   wheel, installed in place of the first install, runs one more new-model process. Wall and
   CPU time of each process, the heavy modules it loaded, and ``x(5)``, which every process and
   this environment's own build must compute to the same bits.

4. Stiff models (issue 15): the linearly implicit ROS2 against DP5 on Prothero-Robinson
   ``x' = -1e4 (x - sin t) + cos t`` (exact ``sin t``) and on a rate/queue model with a very fast
   AQM filter ``p' = 1e5 (q / B - p)`` (reference: DP5 at 1e-10): steps and largest error.
   Measured: Prothero-Robinson at 1e-4, 351 steps (error 2.0e-4) against 30198 (2.3e-4); at
   1e-6, 3365 (1.9e-6) against 30212 (2.4e-6). Fast AQM: ROS2 at 1e-6, 6821 steps (4.0e-5);
   DP5 at 1e-4, 274861 steps (3.5e-4).

Run with ``make bench`` (or ``python benchmarks/bench_dde.py``); ``main()`` returns the numbers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
import warnings
from pathlib import Path

import numpy as np

KELLY = {"kappa": 0.2, "T": 1.0, "t_end": 2000.0, "x0": 0.5}
RTOL, ATOL = 1e-6, 1e-9
TIMES = np.arange(0.0, KELLY["t_end"] + 0.5, 1.0)
CHECK = TIMES >= 5.0  # jitcdde starts reporting after its initial discontinuity steps

C, N, D0, TU = 18750.0, 10.0, 0.2, 0.01
RCP_T = 200 * D0
# jitcdde stops at its minimum step from q = 0 with atol = 1e-9; both tools use atol = 1e-6 here
RCP_RTOL, RCP_ATOL = 1e-6, 1e-6


# ----------------------------------------------------------------------------- subprocesses
_FLUIDNET_KELLY = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import fluidnet as fn
t1 = time.perf_counter()
x = fn.states("x")
kappa, T = fn.params("kappa_{salt} T")  # a parameter name of its own: a model never compiled
rhs = {{x: kappa * (1 - x(fn.t) * x(fn.t - T) ** 10)}}
m = fn.Model(rhs=rhs, params={{kappa: {kappa}, T: {T}}})
sol = fn.simulate(m, {t_end}, history={{"x": {x0}}}, rtol={rtol}, atol={atol},
                  t_eval=np.arange(0.0, {t_end} + 0.5, 1.0))
t2 = time.perf_counter()
np.save(sys.argv[1], sol["x"])
heavy = [k for k in ("sympy", "numba", "scipy") if k in sys.modules]
print(json.dumps({{"import": t1 - t0, "total": t2 - t0, "steps": sol.counters.steps,
                  "loaded": heavy}}))
"""

# the like-for-like of jitcdde's second process: machine code saved by an earlier process
_FLUIDNET_SAVED = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import fluidnet as fn
t1 = time.perf_counter()
m = fn.load_compiled(sys.argv[2])
sol = fn.simulate(m, {t_end}, history={{"x": {x0}}}, rtol={rtol}, atol={atol},
                  t_eval=np.arange(0.0, {t_end} + 0.5, 1.0))
t2 = time.perf_counter()
np.save(sys.argv[1], sol["x"])
heavy = [k for k in ("sympy", "numba", "scipy") if k in sys.modules]
print(json.dumps({{"import": t1 - t0, "total": t2 - t0, "steps": sol.counters.steps,
                  "loaded": heavy}}))
"""

_JITCDDE_KELLY = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import numpy as np
from jitcdde import jitcdde, y, t
t1 = time.perf_counter()
path = sys.argv[2]
if sys.argv[3] == "compile":
    f = [{kappa} * (1 - y(0) * y(0, t - {T}) ** 10)]
    dde = jitcdde(f, verbose=False)
    dde.compile_C(verbose=False)
    dde.save_compiled(path, overwrite=True)
else:
    dde = jitcdde(n=1, module_location=path, delays=[{T}], max_delay={T}, verbose=False)
dde.constant_past([{x0}])
dde.set_integration_parameters(rtol={rtol}, atol={atol})
dde.step_on_discontinuities()
vals = np.array([dde.integrate(T)[0] for T in np.arange(0.0, {t_end} + 0.5, 1.0)])
t2 = time.perf_counter()
np.save(sys.argv[1], vals)
print(json.dumps({{"import": t1 - t0, "total": t2 - t0}}))
"""


def _run(
    code: str,
    args: list[str],
    env: dict[str, str],
    python: str = sys.executable,
    cwd: Path | None = None,
) -> tuple[dict, float]:
    start = time.perf_counter()
    out = subprocess.run(
        [python, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if out.returncode:
        raise RuntimeError(f"benchmark subprocess failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1]), wall


def _run_cpu(code: str, args: list[str], env: dict[str, str]) -> tuple[dict, float]:
    """``_run`` plus the CPU time of the process (user + system, children included)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    info, wall = _run(code, args, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    info["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return info, wall


def _kelly_params(rtol: float, atol: float) -> dict:
    return dict(KELLY, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- part 1
def _kelly_model():
    import fluidnet as fn

    x = fn.states("x")
    kappa, T = fn.params("kappa T")
    return fn.Model(
        rhs={x: kappa * (1 - x(fn.t) * x(fn.t - T) ** 10)},
        params={kappa: KELLY["kappa"], T: KELLY["T"]},
        name="kelly_primal_1link",
    )


def _reference() -> np.ndarray:
    import fluidnet as fn

    sol = fn.simulate(
        _kelly_model(),
        KELLY["t_end"],
        history={"x": KELLY["x0"]},
        rtol=1e-12,
        atol=1e-14,
        t_eval=TIMES,
    )
    return sol["x"]


def _jitcdde_inprocess(ref: np.ndarray) -> dict:
    from jitcdde import jitcdde, t, y

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dde = jitcdde([KELLY["kappa"] * (1 - y(0) * y(0, t - KELLY["T"]) ** 10)], verbose=False)
        dde.constant_past([KELLY["x0"]])
        dde.compile_C(verbose=False)
        dde.set_integration_parameters(rtol=RTOL, atol=ATOL)
        start = time.perf_counter()
        dde.step_on_discontinuities()
        vals = np.array([dde.integrate(T)[0] for T in TIMES])
        wall = time.perf_counter() - start
    return {"wall": wall, "error": float(np.max(np.abs(vals - ref)[CHECK]))}


def _ddeint_run(dt: float) -> tuple[np.ndarray, float]:
    from ddeint import ddeint

    kappa, T = KELLY["kappa"], KELLY["T"]

    def rhs(Y, t):
        return kappa * (1 - Y(t) * Y(t - T) ** 10)

    tt = np.arange(0.0, KELLY["t_end"] + dt / 2, dt)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        vals = ddeint(rhs, lambda s: KELLY["x0"], tt)
    wall = time.perf_counter() - start
    return np.interp(TIMES, tt, np.asarray(vals).reshape(-1)), wall


def bench_kelly(ddeint_steps=(0.1, 0.05)) -> dict:
    """Part 1: one Kelly primal trajectory; returns timings (s) and max errors."""
    ref = _reference()
    res: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        code_f = _FLUIDNET_KELLY.format(salt=uuid.uuid4().hex[:12], **_kelly_params(RTOL, ATOL))
        out = str(tmp / "x.npy")
        # the integrator as installed (built with the package), the model new
        info, wall = _run_cpu(code_f, [out], base)
        res["fluidnet, first process (new model)"] = {"wall": wall, **info}
        info, wall = _run_cpu(code_f, [out], base)
        err = float(np.max(np.abs(np.load(out) - ref)))
        res["fluidnet, second process (model cached)"] = {"wall": wall, **info, "error": err}
        res["fluidnet, first process (new model)"]["error"] = err
        import fluidnet as fn

        saved = str(tmp / "kelly.fnc")
        fn.save_compiled(_kelly_model(), saved, equilibrium=False)
        code_s = _FLUIDNET_SAVED.format(**_kelly_params(RTOL, ATOL))
        walls = []
        for _ in range(5):
            info, wall = _run_cpu(code_s, [out, saved], base)
            walls.append((wall, info))
        wall, info = sorted(walls, key=lambda w: w[0])[2]  # the median of 5
        err = float(np.max(np.abs(np.load(out) - ref)))
        res["fluidnet, saved model (fn.load_compiled)"] = {"wall": wall, **info, "error": err}

        code_j = _JITCDDE_KELLY.format(**_kelly_params(RTOL, ATOL))
        so = str(tmp / "kelly_jitcdde.so")
        info, wall = _run_cpu(code_j, [out, so, "compile"], base)
        err_j = float(np.max(np.abs(np.load(out) - ref)[CHECK]))
        res["jitcdde, first process (C compile)"] = {"wall": wall, **info, "error": err_j}
        walls = []
        for _ in range(5):
            info, wall = _run_cpu(code_j, [out, so, "load"], base)
            walls.append((wall, info))
        wall, info = sorted(walls, key=lambda w: w[0])[2]
        err_j = float(np.max(np.abs(np.load(out) - ref)[CHECK]))
        res["jitcdde, second process (compiled module)"] = {"wall": wall, **info, "error": err_j}
        tight = _JITCDDE_KELLY.format(**_kelly_params(1e-10, 1e-12))
        info, _ = _run(tight, [out, so, "load"], base)
        ref_check = float(np.max(np.abs(np.load(out) - ref)[CHECK]))

    # in-process integration only (compiled code loaded)
    import fluidnet as fn

    m = _kelly_model()
    fn.simulate(m, 10.0, history={"x": KELLY["x0"]})
    start = time.perf_counter()
    sol = fn.simulate(
        m, KELLY["t_end"], history={"x": KELLY["x0"]}, rtol=RTOL, atol=ATOL, t_eval=TIMES
    )
    res["fluidnet, integration only"] = {
        "wall": time.perf_counter() - start,
        "error": float(np.max(np.abs(sol["x"] - ref))),
        "steps": sol.counters.steps,
    }
    res["jitcdde, integration only"] = _jitcdde_inprocess(ref)
    start = time.perf_counter()
    sol = fn.simulate(
        m, KELLY["t_end"], history={"x": KELLY["x0"]}, rtol=RTOL / 10, atol=ATOL / 10, t_eval=TIMES
    )
    res["fluidnet, integration only, rtol 1e-7"] = {
        "wall": time.perf_counter() - start,
        "error": float(np.max(np.abs(sol["x"] - ref))),
        "steps": sol.counters.steps,
    }
    for dt in ddeint_steps:
        vals, wall = _ddeint_run(dt)
        res[f"ddeint, grid dt = {dt:g}"] = {
            "wall": wall,
            "error": float(np.max(np.abs(vals - ref))),
        }
    return {
        "runs": res,
        "reference_vs_jitcdde_1e-10": ref_check,
        "amplitude": float(np.ptp(ref[TIMES > 1000])),
    }


# ----------------------------------------------------------------------------- part 2
def _grid():
    a, b = np.meshgrid(np.arange(1, 21) * 0.1, np.arange(1, 21) * 0.1)
    return a.ravel(), b.ravel()


def _jitcdde_rcp():
    import symengine
    from jitcdde import jitcdde, t, y
    from jitcxde_common import conditional

    alpha, beta = symengine.symbols("alpha beta")
    q = y(1)
    d = D0 + q / C
    yagg = N * y(0, t - D0)
    dR = y(0, t - TU) * (alpha * (C - yagg) - beta * q / d) / (C * d)
    excess = yagg - C
    # smooth steps over one packet and one packet per second (the default width is 1e-5)
    dq = conditional(q, 0, conditional(excess, 0, 0, excess, width=1.0), excess, width=1.0)
    dde = jitcdde([dR, dq], control_pars=[alpha, beta], verbose=False)
    return dde


def bench_rcp_ensemble(n_check: int = 20) -> dict:
    """Part 2: 400 RCP trajectories; returns timings (s) and errors in R/C and q/(C d0)."""
    import fluidnet as fn

    al, be = _grid()
    times = np.linspace(0.0, RCP_T, 401)
    ic = {"R": 0.5 * C, "q": 0.0}
    m = fn.models.rcp()
    start = time.perf_counter()
    fn.simulate_ensemble(
        m, 1.0, params={"alpha": al[:2], "beta": be[:2]}, history=ic, progress=False
    )
    first = time.perf_counter() - start
    runs, cpu = [], []
    for _ in range(3):
        start = time.perf_counter()
        cstart = time.process_time()
        ds = fn.simulate_ensemble(
            m,
            RCP_T,
            params={"alpha": al, "beta": be},
            history=ic,
            t_eval=times,
            rtol=RCP_RTOL,
            atol=RCP_ATOL,
            progress=False,
        )
        runs.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cstart)
    t_fluid = float(np.median(runs))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        dde = _jitcdde_rcp()
        dde.compile_C(verbose=False)
        t_compile = time.perf_counter() - start
        start = time.perf_counter()
        cstart = time.process_time()
        jres = np.full((al.size, times.size, 2), np.nan)
        failures = 0
        for k in range(al.size):
            try:
                dde.purge_past()
                dde.constant_past([ic["R"], ic["q"]], time=0.0)
                dde.set_parameters(al[k], be[k])
                dde.set_integration_parameters(rtol=RCP_RTOL, atol=RCP_ATOL)
                dde.step_on_discontinuities()
                jres[k] = [dde.integrate(T) for T in times]
            except Exception:  # noqa: BLE001 - count jitcdde's failures, keep going
                failures += 1
        t_jit = time.perf_counter() - start
        cpu_jit = time.process_time() - cstart

    rng = np.random.default_rng(0)
    check = np.sort(rng.choice(al.size, n_check, replace=False))
    ok = times >= 2.0  # after jitcdde's initial discontinuity steps
    err_f = err_j = 0.0
    for k in check:
        ref = fn.simulate(
            m,
            RCP_T,
            params={"alpha": al[k], "beta": be[k]},
            history=ic,
            t_eval=times,
            rtol=1e-11,
            atol=1e-9,
        )
        scale = np.array([C, C * D0])[:, None]
        ef = np.abs(np.stack([ds["R"][k], ds["q"][k]]) - ref.y) / scale
        ej = np.abs(jres[k].T - ref.y) / scale
        err_f = max(err_f, float(np.max(ef[:, ok])))
        err_j = max(err_j, float(np.nanmax(ej[:, ok])))
    return {
        "members": int(al.size),
        "fluidnet_ensemble": t_fluid,
        "fluidnet_ensemble_cpu": float(np.median(cpu)),
        "jitcdde_loop_cpu": cpu_jit,
        "fluidnet_first_call": first,
        "jitcdde_compile": t_compile,
        "jitcdde_loop": t_jit,
        "jitcdde_failures": failures,
        "speedup_vs_jitcdde_loop": t_jit / t_fluid,
        "max_error_fluidnet": err_f,
        "max_error_jitcdde": err_j,
        "mean_steps_fluidnet": float(ds["steps"].mean()),
    }


# ----------------------------------------------------------------------------- part 3
ROOT = Path(__file__).resolve().parent.parent

# Each process below also reports where fluidnet and its integrator came from and the value it
# computed: ``python -c`` puts the working directory first on ``sys.path``, so a process started
# in the checkout would time the checkout's in-place build instead of the installed package.
_REPORT = """
t2 = time.perf_counter()
import fluidnet.dde._integrator as integrator
heavy = [k for k in ("sympy", "numba", "llvmlite", "scipy") if k in sys.modules]
print(json.dumps({"import": t1 - t0, "simulate": t2 - t1, "loaded": heavy, "x5": x5,
                  "files": [fn.__file__, integrator.__file__]}))
"""

_NEW_MODEL = (
    """
import json, sys, time
t0 = time.perf_counter()
import fluidnet as fn
t1 = time.perf_counter()
x = fn.states("x")
m = fn.Model(rhs={x: -x(fn.t - 1) + 1e-3 * fn.t}, params={})
x5 = float(fn.simulate(m, 5.0, history={"x": 1.0})(5.0)[0])
"""
    + _REPORT
)

_SAVE_MODEL = """
import sys
import fluidnet as fn
x = fn.states("x")
m = fn.Model(rhs={x: -x(fn.t - 1) + 1e-3 * fn.t}, params={})
fn.save_compiled(m, sys.argv[1], equilibrium=False)
print("{}")
"""

_SAVED_MODEL = (
    """
import json, sys, time
t0 = time.perf_counter()
import fluidnet as fn
t1 = time.perf_counter()
m = fn.load_compiled(sys.argv[1])
x5 = float(fn.simulate(m, 5.0, history={"x": 1.0})(5.0)[0])
"""
    + _REPORT
)


def _run_timed(
    code: str,
    env: dict[str, str],
    args: list[str] | None = None,
    python: str = sys.executable,
    cwd: Path | None = None,
) -> dict:
    """Wall and CPU time of a fresh Python process running ``code``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    info, wall = _run(code, args or [], env, python, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, **info}


def _median_of(runs: list[dict]) -> dict:
    """The run of median CPU time, with the CPU times of all of them."""
    ordered = sorted(runs, key=lambda r: r["cpu"])
    return {**ordered[len(ordered) // 2], "cpu_all": [r["cpu"] for r in runs]}


def _timed_command(cmd: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Wall and CPU time (children included) of a command."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode:
        raise RuntimeError(f"{' '.join(cmd[:6])} failed:\n{out.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "import": float("nan"), "simulate": float("nan")}


def _installed(run: dict, venv: Path) -> dict:
    """``run``, after checking that it used the package installed in ``venv``."""
    for f in run["files"]:
        if not Path(f).resolve().is_relative_to(venv.resolve()):
            raise RuntimeError(f"the benchmark process imported {f}, not the package in {venv}")
    return run


def bench_compile(repeats: int = 3) -> dict:
    """Part 3: ``pip install <checkout>`` into a fresh virtual environment, then processes in it.

    Each kind of process runs ``repeats`` times (the one of median CPU time is reported): a new
    model with an empty compile cache (a new cache each time), the same model cached, and the
    model saved by ``fn.save_compiled``. Then the wheel and sdist of ``python -m build`` (whose
    wheel is built from the sdist) are checked and the wheel is installed in place of the first
    install, for one more new-model process. Every process runs outside the checkout, must
    import the installed package, and must compute the same ``x(5)``.
    """
    import tarfile
    import zipfile

    res: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        for var in ("FLUIDNET_CACHE", "FLUIDNET_BACKEND", "PYTHONPATH", "VIRTUAL_ENV"):
            base.pop(var, None)
        venv = tmp / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        python = str(venv / "bin" / "python")
        pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        label = "pip install <checkout> (dependencies included)"
        res[label] = _timed_command([*pip, str(ROOT)], base, tmp)

        def process(code: str, cache: Path, args: list[str] | None = None) -> dict:
            # run in tmp, not in the checkout, whose fluidnet/ would shadow the installed one
            env = dict(base, FLUIDNET_CACHE=str(cache))
            return _installed(_run_timed(code, env, args, python, cwd=tmp), venv)

        caches = [tmp / f"cache{k}" for k in range(repeats)]  # each empty: nothing compiled
        res["new model, empty compile cache"] = _median_of([process(_NEW_MODEL, c) for c in caches])
        res["later process, model cached"] = _median_of(
            [process(_NEW_MODEL, caches[0]) for _ in range(repeats)]
        )
        saved = tmp / "model.fnc"
        _run(_SAVE_MODEL, [str(saved)], dict(base, FLUIDNET_CACHE=str(caches[0])), python, tmp)
        res["later process, saved model (fn.load_compiled)"] = _median_of(
            [process(_SAVED_MODEL, caches[0], [str(saved)]) for _ in range(repeats)]
        )
        cache_files = sorted(
            str(p.relative_to(caches[0])) for p in caches[0].rglob("*") if p.is_file()
        )

        dist = tmp / "dist"
        subprocess.run([*pip, "build"], check=True, cwd=tmp, env=base, capture_output=True)
        label_build = "python -m build (sdist, then the wheel from it)"
        res[label_build] = _timed_command(
            [python, "-m", "build", "--outdir", str(dist), str(ROOT)], base, tmp
        )
        (wheel,) = dist.glob("*.whl")
        (sdist,) = dist.glob("*.tar.gz")
        with zipfile.ZipFile(wheel) as z:
            in_wheel = [n for n in z.namelist() if "/dde/_integrator" in n]
        with tarfile.open(sdist) as tf:
            in_sdist = sorted(Path(n).name for n in tf.getnames() if "/dde/src/" in n)
        subprocess.run(
            [*pip, "--no-deps", "--force-reinstall", str(wheel)], check=True, cwd=tmp, env=base
        )
        res["new model, empty cache, the wheel of python -m build"] = process(
            _NEW_MODEL, tmp / "cache_wheel"
        )
    import fluidnet as fn  # and this environment's build (in place, for development)

    x = fn.states("x")
    m = fn.Model(rhs={x: -x(fn.t - 1) + 1e-3 * fn.t}, params={})
    here = float(fn.simulate(m, 5.0, history={"x": 1.0})(5.0)[0])
    values = {here} | {r["x5"] for r in res.values() if "x5" in r}
    if len(values) != 1:
        raise RuntimeError(f"the installs computed different x(5): {sorted(values)}")
    return {
        "runs": res,
        "cache_files": cache_files,
        "wheel_integrator": in_wheel,
        "sdist_sources": in_sdist,
        "x5": values.pop(),
    }


# ----------------------------------------------------------------------------- part 4
def bench_stiff() -> dict:
    """Part 4: ROS2 against DP5 on two stiff problems (steps, evaluations, largest error)."""
    import sympy

    import fluidnet as fn

    t = fn.t
    x = fn.states("x")
    pr = fn.Model(rhs={x: -1e4 * (x(t) - sympy.sin(t)) + sympy.cos(t)}, params={})
    xr, q, p = fn.states("x q p")
    aqm = fn.Model(
        rhs={
            xr: 1.0 / 0.1 - xr(t) * xr(t - 0.1) * p(t - 0.1) / 2,
            q: xr(t) - 10.0,
            p: 1e5 * (q(t) / 5.0 - p(t)),
        },
        params={},
        nonnegative=[q],
    )
    h_aqm = {"x": 1.0, "q": 0.0, "p": 0.0}
    ref = fn.simulate(aqm, 10.0, history=h_aqm, method="DP5", rtol=1e-10, atol=1e-10)
    tt = np.linspace(0.0, 10.0, 2001)
    cases = {
        "Prothero-Robinson, lambda = 1e4": (pr, {"x": 0.0}, lambda s: s(tt)[0] - np.sin(tt)),
        "rate, queue, AQM filter at 1e5": (aqm, h_aqm, lambda s: s(tt) - ref(tt)),
    }
    res: dict[str, dict] = {}
    for label, (model, hist, error) in cases.items():
        for tol in (1e-4, 1e-6):
            for method in ("ROS2", "DP5"):
                start = time.perf_counter()
                sol = fn.simulate(model, 10.0, history=hist, method=method, rtol=tol, atol=tol)
                res[f"{label}, {method}, tol {tol:g}"] = {
                    "steps": sol.counters.steps,
                    "evaluations": sol.counters.rhs_evaluations,
                    "error": float(np.max(np.abs(error(sol)))),
                    "wall": time.perf_counter() - start,
                }
    return res


# ----------------------------------------------------------------------------- report
def main() -> dict:
    print(textwrap.dedent(__doc__).split("\n\n")[0])
    kelly = bench_kelly()
    print("\n1. Kelly primal law, one trajectory of 2000 time units, rtol = 1e-6, atol = 1e-9")
    print(
        f"   (limit cycle, peak-to-peak {kelly['amplitude']:.3f}; reference vs jitcdde at "
        f"rtol 1e-10: {kelly['reference_vs_jitcdde_1e-10']:.1e})"
    )
    print(f"   {'run':46s} {'wall (s)':>9s} {'CPU (s)':>8s} {'imports':>8s} {'max error':>10s}")
    for name, r in kelly["runs"].items():
        imp = f"{r['import']:8.2f}" if "import" in r else " " * 8
        cpu = f"{r['cpu']:8.2f}" if "cpu" in r else " " * 8
        print(f"   {name:46s} {r['wall']:9.3f} {cpu} {imp} {r['error']:10.2e}")
    runs = kelly["runs"]
    jit = runs["jitcdde, second process (compiled module)"]["wall"]
    for name in (
        "fluidnet, saved model (fn.load_compiled)",
        "fluidnet, second process (model cached)",
    ):
        print(f"   {name} / jitcdde second process: {runs[name]['wall'] / jit:.2f}x (goal <= 0.8x)")
    print(
        "   heavy libraries loaded by the saved-model process: "
        f"{runs['fluidnet, saved model (fn.load_compiled)']['loaded'] or 'none'}"
    )
    ens = bench_rcp_ensemble()
    print(
        f"\n2. RCP ensemble: {ens['members']} trajectories (20 x 20 alpha, beta), 200 RTTs, "
        f"rtol = {RCP_RTOL:g}, atol = {RCP_ATOL:g}"
    )
    print(
        f"   fluidnet simulate_ensemble   {ens['fluidnet_ensemble']:8.2f} s  "
        f"(first call incl. model compile {ens['fluidnet_first_call']:.2f} s), "
        f"max error {ens['max_error_fluidnet']:.1e}"
    )
    print(
        f"   jitcdde loop (compiled once) {ens['jitcdde_loop']:8.2f} s  "
        f"(+ C compile {ens['jitcdde_compile']:.1f} s), max error "
        f"{ens['max_error_jitcdde']:.1e}, failures {ens['jitcdde_failures']}"
    )
    print(
        f"   speed-up: {ens['speedup_vs_jitcdde_loop']:.1f}x wall; CPU time "
        f"{ens['fluidnet_ensemble_cpu']:.2f} s vs {ens['jitcdde_loop_cpu']:.2f} s "
        "(errors relative to C and C d0)"
    )
    comp = bench_compile()
    print(
        "\n3. A fresh virtual environment with this checkout installed (not editable); one small "
        "model\n   per process, each outside the checkout (medians of 3 by CPU time)"
    )
    print(
        f"   {'process':52s} {'wall (s)':>9s} {'CPU (s)':>8s} {'import':>7s} {'simulate':>9s}"
        "  heavy modules loaded"
    )
    for name, r in comp["runs"].items():
        loaded = ", ".join(r.get("loaded", [])) or ("-" if "loaded" not in r else "none")
        print(
            f"   {name:52s} {r['wall']:9.2f} {r['cpu']:8.2f} {r['import']:7.2f} "
            f"{r['simulate']:9.2f}  {loaded}"
        )
    first = comp["runs"]["new model, empty compile cache"]
    print(
        f"   new model, CPU of each process: {', '.join(f'{c:.2f}' for c in first['cpu_all'])} s "
        "(goal <= 1 s)"
    )
    print(f"   compile cache afterwards: {', '.join(comp['cache_files'])}")
    print(f"   integrator in the wheel: {', '.join(comp['wheel_integrator'])}")
    print(f"   integrator sources in the sdist: {', '.join(comp['sdist_sources'])}")
    print(f"   x(5) of every process and of this environment's build: {comp['x5']!r}")
    stiff = bench_stiff()
    print("\n4. Stiff models: ROS2 (linearly implicit) against DP5, t in [0, 10]")
    print(f"   {'problem, method, tolerance':52s} {'steps':>8s} {'f evals':>9s} {'max error':>10s}")
    for name, r in stiff.items():
        print(f"   {name:52s} {r['steps']:8d} {r['evaluations']:9d} {r['error']:10.2e}")
    return {"kelly": kelly, "rcp_ensemble": ens, "compile": comp, "stiff": stiff}


if __name__ == "__main__":
    main()
