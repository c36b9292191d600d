"""Speed on the user's own law (issue 34): laws written from scratch, as a user meets them.

Every law of ``tests/user_laws.py`` (written with ``fn.Model``, none from ``fluidnet.models``)
and, as a second table, some of the library's own models, each in new processes that import
NumPy before fluidnet (the user's situation: NumPy's OpenBLAS then keeps a thread per core),
measured in CPU seconds of the process (``time.process_time``, all its threads), each timed
call after a garbage collection (a collection that the work before it made due, 40-60 ms
after the charts and the boundary, would otherwise land in whichever call comes next):

* **first equilibrium**: ``m.equilibrium()`` in a new process with an empty compile cache
  (symbolic and code-generation work included), and in a second new process with the cache
  the first one left (``cached``);
* **first linearization**: ``m.linearize()`` right after it (the linearization's code
  generated, no goal of its own);
* **chart**: ``fn.stability_chart`` on the law's parameter plane, 100 x 100 points (20 x 20
  for more than 10 states), the first chart of the process after the first equilibrium, and a second
  chart of other values (``repeat``);
* **boundary**: ``fn.stability_boundary`` on the same plane;
* **critical**: ``fn.critical_value`` of the law's sweep, first call and repeat, and
  ``alone``: the first analysis of a new process (after its equilibrium and linearization,
  the compile cache warm), as a script that asks for a critical delay meets it: the imports
  the charts had paid fall in it;
* the window/queue law's **first chart** of a process with dask installed and without it (a
  pip install without the ``dask`` extra);
* the 100-state network's chart at **100 x 100** (points/s and the process's peak memory);

against the goals of issue 34: first equilibrium <= 50 ms up to 10 states (<= 5 ms cached),
chart >= 5,000 points/s up to 10 states (>= 500 at 100 states), boundary <= 1 s, critical
value <= 50 ms. And bifurcation continuation (the neuron of ``tests/bifurcation_models.py``,
50 orbits) with NumPy imported before fluidnet and after it. Each process has a time limit;
a law that exceeds it is reported as such. The machine is shared: numbers vary by tens of
percent between runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: CPU-time goals of issue 34.
GOALS = {
    "eq_ms": 50.0,
    "eq_cached_ms": 5.0,
    "chart_pts_s": 5000.0,
    "chart_pts_s_100": 500.0,
    "boundary_s": 1.0,
    "critical_ms": 50.0,
}
#: Wall-clock limit of one measuring process (s).
LIMIT = 300

_PRELUDE = """
import gc, json, sys, time
import numpy as np  # the user's situation: NumPy (and a multi-threaded OpenBLAS) first
sys.path.insert(0, {tests!r})
import fluidnet as fn

def cpu(f):
    # a collection the work before made due (the charts' and boundary's objects: 40-60 ms)
    # falls in no timed call; those the call's own allocations make due are its own
    gc.collect()
    t0 = time.process_time()
    r = f()
    return time.process_time() - t0, r

out = {{}}
"""

_USER = """
import user_laws as U
law = U.LAWS[{name!r}]
m = law.build()
def grid(shift):
    return {{k: np.linspace(lo, hi, {n}) * (1 + shift) for k, (lo, hi) in law.plane.items()}}
(px, prange), = [law.sweep]
"""

_LIBRARY = """
from fluidnet.models import {factory}
m = {factory}()
plane = {plane!r}
def grid(shift):
    return {{k: np.linspace(lo, hi, {n}) * (1 + shift) for k, (lo, hi) in plane.items()}}
(px, prange) = {sweep!r}
class law:
    pass
law.plane = plane
"""

_EQUILIBRIUM = """
out["eq_s"], _ = cpu(m.equilibrium)
print(json.dumps(out))
"""

_ALL = """
out["eq_s"], _ = cpu(m.equilibrium)
out["lin_s"], _ = cpu(m.linearize)
print(json.dumps(out), flush=True)
for key, shift in (("chart", 0.0), ("chart_repeat", 0.013)):
    g = grid(shift)
    npts = int(np.prod([v.size for v in g.values()]))
    t, ds = cpu(lambda: fn.stability_chart(m, g, on_error="nan", progress=False))
    out[key + "_pts_s"] = npts / t
    out[key + "_points"] = npts
    out[key + "_fallback"] = int((ds["fallback"].values != "").sum())
    out[key + "_errors"] = int((ds["error"].values != "").sum())
    print(json.dumps(out), flush=True)
(xn, xr), (yn, yr) = law.plane.items()
try:
    out["boundary_s"], b = cpu(
        lambda: fn.stability_boundary(m, xn, yn, x_range=xr, y_range=yr, progress=False)
    )
    out["boundary_points"] = int(sum(len(c) for c in b.curves))
    out["boundary_method"] = b.method
    out["boundary_edges"] = b.edges_checked
except fn.FluidnetError as exc:
    out["boundary_error"] = str(exc)[:200]
print(json.dumps(out), flush=True)
for key in ("critical", "critical_repeat"):
    try:
        out[key + "_s"], cv = cpu(lambda: fn.critical_value(m, px, *prange))
        out["critical_value"] = cv.value
    except fn.FluidnetError as exc:
        out[key + "_error"] = str(exc)[:200]
    print(json.dumps(out), flush=True)
"""

_CRITICAL_FIRST = """
m.equilibrium()
m.linearize()
try:
    out["critical_s"], cv = cpu(lambda: fn.critical_value(m, px, *prange))
except fn.FluidnetError as exc:
    out["critical_error"] = str(exc)[:200]
print(json.dumps(out))
"""

_ORBITS = """
{numpy_first}
import sys, time
sys.path.insert(0, {tests!r})
import fluidnet as fn
from bifurcation_models import neuron
m = neuron()
eq = {{"x1": 0.0, "x2": 0.0}}
hp = fn.hopf_point(m, "a21", 0.3, 1.2, equilibrium=eq)
fn.continue_orbits(hp, n_orbits=4, intervals=20, degree=4)
import gc
gc.collect()  # a collection the imports made due falls in neither timed run (as timeit)
t0 = time.process_time()
br = fn.continue_orbits(hp, n_orbits=50, intervals=20, degree=4)
print(1e3 * (time.process_time() - t0) / len(br))
"""

#: The library's own models: (factory, plane, sweep, states).
LIBRARY = {
    "rcp": ("rcp", {"alpha": (0.05, 1.0), "beta": (0.05, 1.0)}, ("alpha", (0.05, 2.0)), 2),
    "mgt_red": ("mgt_red", {"N": (20.0, 120.0), "Tp": (0.05, 0.5)}, ("Tp", (0.05, 1.0)), 3),
    "hollot_pi": ("hollot_pi", {"N": (20.0, 120.0), "Tp": (0.05, 0.5)}, ("Tp", (0.05, 1.0)), 3),
}


def _env(cache: str) -> dict[str, str]:
    # a user's interpreter writes and reads bytecode caches: a PYTHONDONTWRITEBYTECODE of the
    # calling shell would make every lazily imported module of fluidnet compile from source
    # inside the measured calls (1-2 ms each)
    drop = ("OPENBLAS_NUM_THREADS", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["FLUIDNET_CACHE"] = cache
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _process(code: str, cache: str) -> subprocess.CompletedProcess:
    """``code`` run in a new Python process (the bench's environment, time limit ``LIMIT``;
    raises :class:`subprocess.TimeoutExpired`)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=_env(cache),
        timeout=LIMIT,
    )


def _run(code: str, cache: str) -> dict:
    """Run ``code`` in a new process; its last JSON line (what it reached), or the error."""
    try:
        res = _process(code, cache)
        stdout, err = res.stdout, res.stderr if res.returncode else ""
        if res.returncode < 0:  # the kernel's out-of-memory killer, say
            err = f"killed by signal {-res.returncode}"
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = f"timeout after {LIMIT} s"
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{")]
    out = json.loads(lines[-1]) if lines else {}
    if err:
        lines = err.strip().splitlines()
        errors = [ln for ln in lines if "Error" in ln or "timeout" in ln or "Killed" in ln]
        out["failed"] = (errors or lines or ["failed"])[-1][:200]
    return out


def measure(setup: str, states: int) -> dict:
    """The measurements of one law (see the module docstring)."""
    n = 20 if states > 10 else 100
    tests = str(ROOT / "tests")
    with tempfile.TemporaryDirectory(prefix="fluidnet-bench-") as cache:
        head = _PRELUDE.format(tests=tests) + setup.replace("{n}", str(n))
        out = _run(head + _ALL, cache)
        again = _run(head + _EQUILIBRIUM, cache)
        alone = _run(head + _CRITICAL_FIRST, cache)
    if "eq_s" in again:
        out["eq_cached_s"] = again["eq_s"]
    if "critical_s" in alone:
        out["critical_alone_s"] = alone["critical_s"]
    out["states"] = states
    return out


def _fmt(v, scale=1.0, digits=0):
    return "-" if v is None else f"{v * scale:.{digits}f}"


def _row(name: str, r: dict) -> str:
    big = r["states"] > 10
    goal_chart = GOALS["chart_pts_s_100"] if big else GOALS["chart_pts_s"]
    marks = []

    def mark(value, goal, higher=False):
        if value is None:
            return "?"
        ok = value >= goal if higher else value <= goal
        return "ok" if ok else "MISS"

    eq_ms = r.get("eq_s") and 1e3 * r["eq_s"]
    lin_ms = r.get("lin_s") and 1e3 * r["lin_s"]
    eqc_ms = r.get("eq_cached_s") and 1e3 * r["eq_cached_s"]
    crit_ms = r.get("critical_s") and 1e3 * r["critical_s"]
    crit2_ms = r.get("critical_repeat_s") and 1e3 * r["critical_repeat_s"]
    crit1_ms = r.get("critical_alone_s") and 1e3 * r["critical_alone_s"]
    crits = [c for c in (crit_ms, crit2_ms, crit1_ms) if c]
    marks = [
        mark(eq_ms, GOALS["eq_ms"]) if r["states"] <= 10 else "n/a",
        mark(eqc_ms, GOALS["eq_cached_ms"]) if r["states"] <= 10 else "n/a",
        mark(r.get("chart_pts_s"), goal_chart, higher=True),
        mark(r.get("boundary_s"), GOALS["boundary_s"]),
        # the goal holds for every call, the first of a process included
        mark(max(crits) if len(crits) == 3 else None, GOALS["critical_ms"]),
    ]
    cols = [
        f"{name:<20}",
        f"{r['states']:>4}",
        f"{_fmt(eq_ms, 1, 1):>9} {marks[0]:<4}",
        f"{_fmt(eqc_ms, 1, 2):>8} {marks[1]:<4}",
        f"{_fmt(lin_ms, 1, 1):>7}",
        f"{_fmt(r.get('chart_pts_s')):>8} {_fmt(r.get('chart_repeat_pts_s')):>8} {marks[2]:<4}",
        f"{_fmt(r.get('boundary_s'), 1, 2):>7}{'e' if r.get('boundary_edges') else ' '}"
        f"{marks[3]:<4}",
        f"{_fmt(crit_ms, 1, 0):>7} {_fmt(crit2_ms, 1, 0):>6} {_fmt(crit1_ms, 1, 0):>6} "
        f"{marks[4]:<4}",
    ]
    extra = [f"{k}: {r[k]}" for k in r if k.endswith(("error", "failed")) and r[k]]
    if r.get("boundary_edges") is False:
        extra.append("the boundary's edge check was not certified")
    fb = r.get("chart_fallback")
    if fb:
        extra.append(f"{fb} chart points settled pointwise")
    return " ".join(cols) + ("  [" + "; ".join(extra) + "]" if extra else "")


HEADER = (
    f"{'law':<20} {'n':>4} {'1st eq ms':>14} {'cached':>13} {'lin ms':>7} "
    f"{'chart pts/s (repeat)':>22} "
    f"{'boundary s':>12} {'critical ms (rep., alone)':>26}"
)


def _last_number(code: str, cache: str) -> float | None:
    """Run ``code`` in a new process; the number on its last line (None on failure)."""
    try:
        return float(_process(code, cache).stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError):
        return None


def bench_orbits() -> dict:
    """Neuron continuation, ms of CPU per orbit, NumPy imported first and last."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="fluidnet-bench-") as cache:
        for key, first in (("numpy_first", "import numpy"), ("fluidnet_first", "")):
            code = _ORBITS.format(numpy_first=first, tests=str(ROOT / "tests"))
            out[key + "_ms_per_orbit"] = _last_number(code, cache)
    return out


_ONE_CHART = """
import sys
if {no_dask}:
    sys.modules["dask"] = None  # as a pip install without the dask extra
import json, resource, time
import numpy as np
sys.path.insert(0, {tests!r})
import fluidnet as fn
import user_laws as U
law = U.LAWS[{law!r}]
m = law.build()
m.equilibrium()
g = {{k: np.linspace(lo, hi, 100) for k, (lo, hi) in law.plane.items()}}
t0 = time.process_time()
ds = fn.stability_chart(m, g, on_error="nan", progress=False)
print(json.dumps({{
    "pts_s": 1e4 / (time.process_time() - t0),
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "fallback": int((ds["fallback"].values != "").sum()),
}}))
"""


def _one_chart(law: str, cache: str, no_dask: bool = False) -> dict:
    """A 100 x 100 chart of ``law`` as the first analysis of a new process (after its first
    equilibrium; compile cache ``cache``): ``{"pts_s", "peak_mb" (the process's peak
    memory), "fallback" (points the batch did not settle)}``, or ``{"failed": ...}``."""
    return _run(_ONE_CHART.format(no_dask=no_dask, tests=str(ROOT / "tests"), law=law), cache)


def bench_first_chart() -> dict:
    """The window/queue law's first chart of a process (points/s), with and without dask:
    with dask installed, xarray imports ``dask.base`` (0.1 s) on its first Dataset, which a pip
    install without the ``dask`` extra does not pay (``dask.array``, 0.3 s more, is left out
    by :mod:`fluidnet._daskcheck`)."""
    with tempfile.TemporaryDirectory(prefix="fluidnet-bench-") as cache:
        return {
            key + "_pts_s": _one_chart("tcp_red_rtt", cache, no_dask).get("pts_s")
            for key, no_dask in (("with_dask", False), ("without_dask", True))
        }


def bench_large_chart() -> dict:
    """The 100-state network's chart at 100 x 100 (as a user would draw it, not the 20 x 20 of
    the table): points/s, the process's peak memory (MB) and the points the batch did not
    settle (``fallback``). Its dense matrices fit 666 points at a time
    (:func:`fluidnet.symbolic.linearize.dense_batch_points`): the chart is cut into blocks of
    that size."""
    with tempfile.TemporaryDirectory(prefix="fluidnet-bench-") as cache:
        return _one_chart("kelly_hundred", cache)


def main(names: list[str] | None = None) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    import user_laws

    results: dict = {"user": {}, "library": {}}
    print("CPU time of the process (one core), NumPy imported before fluidnet; goals of issue 34")
    print("(boundary s: 'e' marks a boundary whose box edges were checked, check_edges)")
    print("user-written laws (tests/user_laws.py):")
    print(HEADER)
    for name, law in user_laws.LAWS.items():
        if names and name not in names:
            continue
        r = measure(_USER.format(name=name, n="{n}"), law.states)
        results["user"][name] = r
        print(_row(name, r), flush=True)
    print("the library's own models:")
    print(HEADER)
    for name, (factory, plane, sweep, states) in LIBRARY.items():
        if names and name not in names:
            continue
        setup = _LIBRARY.format(factory=factory, plane=plane, sweep=sweep, n="{n}")
        r = measure(setup, states)
        results["library"][name] = r
        print(_row(name, r), flush=True)
    orbits = bench_orbits()
    results["orbits"] = orbits
    first = bench_first_chart()
    results["first_chart"] = first
    large = bench_large_chart() if not names or "kelly_hundred" in names else {}
    results["large_chart"] = large
    print(
        "first chart of a process (window/queue law, 100 x 100): "
        f"{_fmt(first.get('with_dask_pts_s'))} points/s with dask installed, "
        f"{_fmt(first.get('without_dask_pts_s'))} without"
    )
    if large:
        print(
            "the 100-state network's chart at 100 x 100: "
            f"{_fmt(large.get('pts_s'))} points/s, peak memory {_fmt(large.get('peak_mb'))} MB, "
            f"{large.get('fallback', large.get('failed'))} points not settled by the batch"
        )
    print(
        "bifurcation continuation (neuron, 50 orbits, 20 x 4): "
        f"{_fmt(orbits.get('numpy_first_ms_per_orbit'), 1, 1)} ms/orbit with NumPy imported "
        f"first, {_fmt(orbits.get('fluidnet_first_ms_per_orbit'), 1, 1)} ms/orbit with "
        "fluidnet first"
    )
    results["goals"] = GOALS
    return results


if __name__ == "__main__":
    main(sys.argv[1:] or None)
