"""The C integrator (fluidnet.dde._integrator) against numba's kernel, and its engines.

``FLUIDNET_ENGINE=compare`` runs the C integrator and, on a copy of the run, numba's kernel at
every call, and raises when any field of the state record or any byte of any array differs:
every trajectory below is bit-identical between the two, not only its outputs.
"""

import os
import shutil
import threading

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.dde import engine as E
from fluidnet.dde.codegen import _digest, _record
from fluidnet.errors import CacheError

t = fn.t
H = sympy.Heaviside


@pytest.fixture(scope="module")
def aot_path():
    """The ahead-of-time engine of this checkout (built here when the warm-up did not)."""
    path, _ = E.build_engine()
    return path


@pytest.fixture
def engine_mode(monkeypatch):
    def use(mode):
        monkeypatch.setenv("FLUIDNET_ENGINE", mode)
        assert E.engine().kind == mode

    return use


def _run(mode, model, t_end, **kw):
    old = os.environ.get("FLUIDNET_ENGINE")
    os.environ["FLUIDNET_ENGINE"] = mode
    try:
        assert E.engine().kind == mode
        return fn.simulate(model, t_end, **kw)
    finally:
        if old is None:
            del os.environ["FLUIDNET_ENGINE"]
        else:
            os.environ["FLUIDNET_ENGINE"] = old


# ------------------------------------------------------------------------ model families
def _custom():
    """Small models of each mechanism of the kernel."""
    x, q, y = fn.states("x q y")
    kappa, T = fn.params("kappa T")
    kelly = fn.Model(
        rhs={x: kappa * (1 - x(t) * x(t - T) ** 10)}, params={kappa: 0.2, T: 1.0}, name="k"
    )
    yield "kelly limit cycle", kelly, 300.0, {"history": {"x": 0.5}}
    queue = fn.Model(
        rhs={x: 1 - q(t - 1) / 5 - x(t) / 4, q: x(t - 1) - 1}, params={}, nonnegative=[q]
    )
    yield "projected queue", queue, 60.0, {"history": {"x": 2.0, "q": 0.0}}
    held = fn.Model(rhs={q: sympy.sin(t) - sympy.Rational(1, 2)}, params={}, nonnegative=[q])
    yield "held and released", held, 13.0, {"history": {"q": 0.0}, "rtol": 1e-10}
    relay = fn.Model(rhs={x: -sympy.sign(x(t)) + 2 * sympy.sin(t)}, params={})
    yield "sliding relay", relay, 20.0, {"history": {"x": 0.0}}
    delayed = fn.Model(rhs={x: sympy.Rational(1, 2) - H(x(t - 1))}, params={})
    yield "delayed relay", delayed, 20.0, {"history": {"x": 0.3}}
    two = fn.Model(
        rhs={x: -sympy.sign(x(t)) + 0.5 * sympy.cos(t), y: -sympy.sign(y(t) - x(t)) + x(t)},
        params={},
    )
    yield "two sliding surfaces", two, 10.0, {"history": {"x": 0.0, "y": 0.0}}
    sdep = fn.Model(rhs={x: -x(t - 1 - x(t) ** 2 / 10) + sympy.cos(t)}, params={})
    yield "state-dependent delay", sdep, 30.0, {"history": {"x": 1.0}}
    nested = fn.Model(rhs={x: -x(t - 1 - x(t - 1) ** 2 / 4) / 2}, params={})
    yield "nested state-dependent delay", nested, 20.0, {"history": {"x": lambda s: 1 + s}}
    stiff = fn.Model(rhs={x: -1000 * (x(t) - sympy.cos(t)) - x(t - 1)}, params={})
    yield "stiff, ROS2", stiff, 10.0, {"history": {"x": 1.0}, "method": "ROS2"}
    for method in ("BS3", "Tsit5"):
        yield f"limit cycle, {method}", kelly, 100.0, {"history": {"x": 0.5}, "method": method}
    iterated = fn.Model(rhs={x: -x(t - 0.05) + sympy.sin(3 * t)}, params={})
    yield "lags inside the step", iterated, 20.0, {"history": {"x": 1.0}, "rtol": 1e-3}


def _library():
    """The library models of the papers' families."""
    from fluidnet.models.sliding_mode import single_link_network, tcp_law, topology_one_network

    C, N = 18750.0, 10.0
    yield "RCP, overload", fn.models.rcp(), 30.0, {"history": {"R": 2 * C / N, "q": 0.0}}
    yield (
        "RCP, ROS2",
        fn.models.rcp(),
        10.0,
        {"history": {"R": 2 * C / N, "q": 0.0}, "method": "ROS2"},
    )
    yield (
        "Kelly primal, two links",
        fn.models.kelly_primal([[1, 1, 0], [0, 1, 1]], T=[0.1, 0.2, 0.15], kappa=0.5),
        40.0,
        {},
    )
    sbrm = fn.models.sbrm()
    eq = sbrm.equilibrium()
    yield "SBRM", sbrm, 30.0, {"history": {"W": 1.3 * eq["W"], "b": 0.0}}
    reno = fn.models.reno_red()
    eq = reno.equilibrium()
    yield "Reno/RED", reno, 20.0, {"history": {k: 0.5 * v for k, v in eq.items()}}
    net = single_link_network([tcp_law(m) for m in (0.6, 0.3, 0.1)], 10.0)
    yield (
        "binary feedback, one link",
        net.model(),
        200.0,
        {"history": {"x_1": 1.0, "x_2": 1.0, "x_3": 1.0}},
    )
    topo = topology_one_network("I", x_s=60.0)
    yield (
        "binary feedback, six surfaces",
        topo.model(),
        100.0,
        {"history": {"x_1": 1.0, "x_2": 2.0, "x_3": 3.0, "x_4": 1.0}},
    )
    yield "MGT/RED", fn.models.mgt_red(), 20.0, {}
    yield "DCTCP", fn.models.dctcp(), 0.05, {"history": {"W": 1.0, "alpha": 1.0, "q": 0.0}}
    yield "XCP", fn.models.xcp(), 5.0, {}


CASES = list(_custom()) + list(_library())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_the_c_integrator_is_bit_identical_to_numbas_kernel(case, engine_mode):
    """Every call of the kernel, every field and array, compared (the shadow engine)."""
    _, model, t_end, kw = case
    engine_mode("compare")
    te = np.linspace(0.0, t_end, 101)
    sol = fn.simulate(model, t_end, t_eval=te, **kw)
    assert sol.counters.steps > 10
    dense = fn.simulate(model, t_end, **kw)  # the mesh and dense output, enlarged as it grows
    assert dense.counters.steps > 10


def test_failures_are_bit_identical(engine_mode):
    """Failed runs stop at the same step with the same cause, time and value."""
    engine_mode("compare")
    x = fn.states("x")
    blowup = fn.Model(rhs={x: x(t) ** 2}, params={})
    with pytest.raises(fn.IntegrationError, match="underflow|non-finite"):
        fn.simulate(blowup, 5.0, history={"x": 1.0})
    negative = fn.Model(rhs={x: 1 - x(t - 1 + 2 * x(t)) / 10}, params={})
    with pytest.raises(fn.IntegrationError, match="became negative"):
        fn.simulate(negative, 5.0, history={"x": 0.0})
    with pytest.raises(fn.IntegrationError, match="max_steps"):
        fn.simulate(blowup, 0.5, history={"x": 1.0}, max_steps=5)


def test_sliding_on_more_surfaces_than_the_kernel_holds_is_a_named_error():
    """11 relays sliding at once need 2**11 corner fields (the kernel holds 2**10): an
    IntegrationError naming the count, where numba's kernel wrote past its array."""
    xs = fn.states(" ".join(f"x{i}" for i in range(11)))
    m = fn.Model(rhs={x: -sympy.sign(x(t)) + sympy.sin(t) / 2 for x in xs}, params={})
    hist = {f"x{i}": 0.0 for i in range(11)}
    with pytest.raises(fn.IntegrationError, match="slides on 11 switching surfaces at once"):
        fn.simulate(m, 1.0, history=hist)
    ten = fn.Model(rhs={x: -sympy.sign(x(t)) + sympy.sin(t) / 2 for x in xs[:10]}, params={})
    sol = fn.simulate(ten, 1.0, history={f"x{i}": 0.0 for i in range(10)})
    assert np.max(np.abs(sol.y)) < 1e-12  # all ten slide on their surfaces


def test_ensembles_are_bit_identical(engine_mode):
    """Threads, dense=False (the mesh trimmed between calls), several histories."""
    engine_mode("compare")
    a, b = np.meshgrid([0.4, 0.8, 1.2], [0.2, 0.6])
    ds = fn.simulate_ensemble(
        fn.models.rcp(),
        40.0,
        params={"alpha": a, "beta": b},
        history=[{"R": 375.0, "q": 0.0}, {"R": 3750.0, "q": 0.0}],
        workers=2,
        progress=False,
    )
    assert ds.sizes["member"] == 12 and (ds["error"] == "").all()


@pytest.mark.parametrize("item", ["ye:sliding_mode", "rcp:operating_point", "ks:experiment3"])
def test_paper_items_are_bit_identical(item, engine_mode, tmp_path):
    engine_mode("compare")
    report = fn.reproduce(item, out=tmp_path, quick=True, progress=False)
    assert report.targets and not report.errors, report.errors


def test_c_and_numba_results_agree_to_the_bit(engine_mode):
    """The plain engines too (no shadow): values and counters of a run of each kind."""
    for _, model, t_end, kw in CASES[:3]:
        te = np.linspace(0.0, t_end, 201)
        a = _run("c", model, t_end, t_eval=te, **kw)
        b = _run("jit", model, t_end, t_eval=te, **kw)
        assert repr(a.counters) == repr(b.counters)
        np.testing.assert_array_equal(a.y, b.y)


# ------------------------------------------------------------------------------ engines
@pytest.mark.parametrize("mode", ["c", "aot"])
def test_the_integrator_releases_the_gil(mode, aot_path):
    """While one thread is inside the compiled integrator, another keeps running Python code."""
    x = fn.states("x")
    m = fn.Model(rhs={x: 0.2 * (1 - x(t) * x(t - 1) ** 10)}, params={}, name="gil")
    _run(mode, m, 10.0, history={"x": 0.5})  # compiled and loaded
    from fluidnet.dde import simulation as S

    calls = []
    real = E.engine

    def slow_engine():
        eng = real()

        def advance(st, run, budget):
            calls.append(counter[0])
            status = eng.advance(st, run, 10**9)  # one call for the whole run
            calls.append(counter[0])
            return status

        return E.Engine(eng.kind, eng.path, advance)

    counter = [0]
    done = threading.Event()
    errors = []

    def work():
        old = S.engine
        S.engine = slow_engine
        try:
            _run(mode, m, 40000.0, history={"x": 0.5}, dense=False, t_eval=[40000.0])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            S.engine = old
            done.set()

    th = threading.Thread(target=work)
    th.start()
    while not done.is_set():
        counter[0] += 1
    th.join()
    assert not errors
    inside = sum(b - a for a, b in zip(calls[::2], calls[1::2], strict=True))
    # with the GIL held during the calls, this loop could not have advanced inside them
    assert inside > 1000


def test_arrays_of_another_shape_or_type_are_refused():
    st, run = E._sample_run()
    # addresses that are never called: every run below is refused before it starts
    run = run._replace(md=run.md._replace(rhs=1, delay=1, switch=1, sgrad=1))
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
    st["nm"] = 0
    with pytest.raises(ValueError, match="nm and nh"):
        advance(st, run, 10)


def test_the_build_matches_its_sources():
    """The module records the hash of the C sources it was built from (setup.py)."""
    from pathlib import Path

    module = E.integrator()
    src = Path(E.__file__).parent / "src"
    assert module.SOURCE_DIGEST == E.source_digest(src)
    assert E._layout_errors(module) == []


def test_unknown_engine_mode_is_refused(monkeypatch):
    monkeypatch.setenv("FLUIDNET_ENGINE", "fast")
    with pytest.raises(ValueError, match="FLUIDNET_ENGINE.*'fast'"):
        E.engine()


def test_required_engine_missing_names_the_warmup(monkeypatch, tmp_path):
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FLUIDNET_ENGINE", "aot")
    with pytest.raises(CacheError, match="fluidnet.dde.warmup"):
        E.engine()
    monkeypatch.setenv("FLUIDNET_ENGINE", "auto")
    assert E.engine().kind == "c"


def test_a_replaced_extension_is_never_loaded(aot_path, monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    monkeypatch.setenv("FLUIDNET_CACHE", str(cache))
    path = E.engine_path()
    shutil.copy2(aot_path, path)
    _record(path.parent, path.name, _digest(path.read_bytes()))
    monkeypatch.setenv("FLUIDNET_ENGINE", "aot")
    assert E.engine().kind == "aot"  # the verified copy loads
    E._ENGINES.clear()
    with open(path, "ab") as fh:
        fh.write(b"\0")  # planted or damaged after it was recorded
    with pytest.warns(RuntimeWarning, match="does not match the digest"):
        with pytest.raises(CacheError):
            E.engine()


def test_arrays_of_another_layout_are_refused_by_the_aot_engine(aot_path, monkeypatch):
    monkeypatch.setenv("FLUIDNET_ENGINE", "aot")
    st, run = E._sample_run()
    bad = run._replace(hs=run.hs._replace(mc=np.asfortranarray(np.zeros((4, 2, 5)))))
    with pytest.raises(TypeError, match="another layout"):
        E.engine().advance(st, bad, 10)


def test_build_is_idempotent(aot_path):
    path, spent = E.build_engine()  # found built and verified: nothing compiled
    assert path == aot_path and spent == 0.0
