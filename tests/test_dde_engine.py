"""The compiled integrator (fluidnet.dde._integrator, fluidnet.dde.engine): its build, its checks
of the arrays it is given, the GIL, a fresh process.

Until the commit that removed numba's kernel, the C integrator was checked bit for bit against
it at every call of every test of the suite and every paper item (``FLUIDNET_ENGINE=compare``);
the numbers of both are in the tests of each model family and paper.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.dde import engine as E
from fluidnet.dde._state import ModelData, new_run
from fluidnet.dde.methods import METHODS, NCOEF

t = fn.t


def _sample_run():
    """A state record and the arrays of a one-state run whose model is never called."""
    z1, zi = np.zeros(1), np.zeros(1, dtype=np.int64)
    md = ModelData(1, 1, 1, 1, 0, z1, zi, zi, zi, z1, zi, z1)  # addresses never called
    return new_run(md, METHODS["DP5"], np.zeros(2), np.zeros((1, 1, NCOEF)), z1, z1, z1, 1)


def test_the_integrator_releases_the_gil(monkeypatch):
    """While one thread is inside the compiled integrator, another keeps running Python code."""
    x = fn.states("x")
    m = fn.Model(rhs={x: 0.2 * (1 - x(t) * x(t - 1) ** 10)}, params={}, name="gil")
    fn.simulate(m, 10.0, history={"x": 0.5})  # compiled and loaded
    from fluidnet.dde import simulation as S

    calls = []
    real = E.integrator().advance

    def advance(st, run, budget):
        calls.append(counter[0])
        status = real(st, run, 10**9)  # no pause (the mesh still asks for room: dense=False)
        calls.append(counter[0])
        return status

    monkeypatch.setattr(S, "integrator", lambda: SimpleNamespace(advance=advance))
    counter = [0]
    done = threading.Event()
    errors = []

    def work():
        try:
            fn.simulate(m, 200000.0, history={"x": 0.5}, dense=False, t_eval=[200000.0])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            done.set()

    th = threading.Thread(target=work)
    th.start()
    while not done.is_set():
        counter[0] += 1
    th.join()
    assert not errors
    inside = sum(b - a for a, b in zip(calls[::2], calls[1::2], strict=True))
    # with the GIL held during the calls, this loop could not have advanced inside them: not
    # once. How often it did depends on the scheduler (each call lasts about 0.3 ms; on 2 cores
    # with the other test worker busy, 40 000 time units (27 ms inside C) saw none), so the run
    # is 5 times longer and any advance counts.
    assert len(calls) > 100 and inside > 0


def test_arrays_of_another_shape_or_type_are_refused():
    st, run = _sample_run()
    advance = E.integrator().advance
    bad = run._replace(hs=run.hs._replace(cc=np.zeros((2, 5))))  # 2 states, not 1
    with pytest.raises(ValueError, match=r"run\.hs\.cc has shape \(2, 5\), not the \(1, 5\)"):
        advance(st, bad, 10)
    strided = np.zeros((run.hs.mc.shape[0], 1, 10))[:, :, ::2]  # the right shape, not contiguous
    bad = run._replace(hs=run.hs._replace(mc=strided))
    with pytest.raises(TypeError, match=r"run\.hs\.mc must be a C-contiguous"):
        advance(st, bad, 10)
    bad = run._replace(fw=run.fw._replace(hints=np.zeros(1)))  # float, not int64
    with pytest.raises(TypeError, match=r"run\.fw\.hints must be an aligned int64"):
        advance(st, bad, 10)
    frozen = np.zeros(1)
    frozen.flags.writeable = False
    bad = run._replace(sw=run.sw._replace(y=frozen))
    with pytest.raises(TypeError, match=r"run\.sw\.y must be a C-contiguous writable"):
        advance(st, bad, 10)
    with pytest.raises(TypeError, match="RUN_STATE record"):
        advance(np.zeros(3), run, 10)
    bad = run._replace(md=run.md._replace(rhs=0))
    with pytest.raises(ValueError, match=r"run\.md\.rhs must be the address"):
        advance(st, bad, 10)
    implicit = new_run(run.md, METHODS["ROS2"], np.zeros(2), np.zeros((1, 1, NCOEF)), *[
        np.zeros(1)] * 3, 1)[1]  # fmt: skip
    with pytest.raises(ValueError, match=r"run\.md\.jac must be the address"):
        advance(st, implicit, 10)  # a linearly implicit method needs the Jacobian
    bad = run._replace(md=run.md._replace(lag_state=np.array([3]), lag_sdep=np.zeros(1, int)))
    with pytest.raises(ValueError, match="lag 0 refers to state 3 of 1"):
        advance(st, bad, 10)
    st["nm"] = 0
    with pytest.raises(ValueError, match="nm and nh"):
        advance(st, run, 10)


def test_the_build_matches_its_sources_and_driver():
    """The module records the hash of the C sources it was built from (setup.py), and its
    record, arrays and codes are the driver's."""
    module = E.integrator()
    src = Path(E.__file__).parent / "src"
    assert module.SOURCE_DIGEST == E.source_digest(src)
    assert E._layout_errors(module) == []


def test_a_stale_or_foreign_build_is_named():
    module = E.integrator()
    fields = {k: getattr(module, k) for k in dir(module) if k.isupper()}
    stale = SimpleNamespace(**dict(fields, SOURCE_DIGEST="0" * 20))
    assert E._layout_errors(stale) == [
        f"the C sources in {Path(E.__file__).parent / 'src'}, which changed after the build"
    ]
    record = list(module.STATE_FIELDS)
    record[1], record[2] = record[2], record[1]
    foreign = SimpleNamespace(**dict(fields, STATE_FIELDS=tuple(record), CODES={"ST_OK": 1}))
    assert E._layout_errors(foreign) == ["the state record", "the status and event codes"]


def test_sliding_on_more_surfaces_than_the_kernel_holds_is_a_named_error():
    """11 relays sliding at once need 2**11 corner fields (the kernel holds 2**10): an
    IntegrationError naming the count (numba's kernel wrote past its array here and aborted
    the process with 'double free or corruption')."""
    xs = fn.states(" ".join(f"x{i}" for i in range(11)))
    m = fn.Model(rhs={x: -sympy.sign(x(t)) + sympy.sin(t) / 2 for x in xs}, params={})
    hist = {f"x{i}": 0.0 for i in range(11)}
    with pytest.raises(fn.IntegrationError, match="slides on 11 switching surfaces at once"):
        fn.simulate(m, 1.0, history=hist)
    ten = fn.Model(rhs={x: -sympy.sign(x(t)) + sympy.sin(t) / 2 for x in xs[:10]}, params={})
    sol = fn.simulate(ten, 1.0, history={f"x{i}": 0.0 for i in range(10)})
    assert np.max(np.abs(sol.y)) < 1e-12  # all ten slide on their surfaces


_FRESH = """
import json, resource, sys


def cpu():
    own, cc = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + cc.ru_utime + cc.ru_stime  # cc: the C compiler


import numpy, sympy  # what any symbolic model costs, whatever the integrator

imported = cpu()
import fluidnet as fn

x = fn.states("x")
m = fn.Model(rhs={x: -x(fn.t - 1)}, params={})
sol = fn.simulate(m, 5.0, history={"x": 1.0}, rtol=1e-10, atol=1e-12)
heavy = [k for k in ("numba", "llvmlite", "scipy") if k in sys.modules]
print(json.dumps({"x": float(sol(5.0)[0]), "heavy": heavy, "imports": imported,
                  "total": cpu()}))
"""


def test_a_fresh_process_compiles_only_the_model_and_imports_no_numba(tmp_path):
    """With an empty compile cache, a new process simulates with the integrator built with the
    package: numba is never imported, the cache then holds the model's library only, and the
    process spends at most 0.6 s of CPU (the C compiler's included) beyond importing numpy and
    sympy, which any symbolic model needs. The whole process's goal, <= 1 s of CPU after ``pip
    install``, is measured by ``make bench`` (``benchmarks/bench_dde.py`` part 3): numpy and sympy
    alone take 0.4 s to 1.2 s of CPU depending on the machine's load, too variable for a test.
    Before the C integrator, numba compiled its kernel here (many seconds) or loaded it from its
    cache, importing numba."""
    package = Path(fn.__file__).parent
    # byte-compiled as pip install does (PYTHONDONTWRITEBYTECODE may have left none); a package
    # directory that is not writable is timed as it is
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], capture_output=True)
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("FLUIDNET_BACKEND", "FLUIDNET_ENGINE")}
    env["FLUIDNET_CACHE"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_FRESH)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["heavy"] == []
    assert res["total"] - res["imports"] <= 0.6, res
    assert res["x"] == pytest.approx(19 / 120, abs=1e-9)  # x' = -x(t - 1), x = 1 before 0
    files = {p.name for p in cache.iterdir()}
    model = {f for f in files if f.startswith("fluidnet_cgen_")}  # the model's source, library
    assert {Path(f).suffix for f in model} == {".c", ".so", ".lock"}  # and its file lock
    assert len({Path(f).stem for f in model}) == 1
    assert files - model == {"index.json", "index.json.lock", "__pycache__"}  # the digests
    assert not any((cache / "__pycache__").iterdir())  # made for numba's cache, unused
