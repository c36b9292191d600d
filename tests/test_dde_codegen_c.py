"""The C backend of code generation (fluidnet.codegen.csource, fluidnet.codegen.build).

Its functions are checked against the numba backend's (an independent compiler of the same
model, and the backend the integrator was validated with) and, for the printed functions
(``Max``, ``Heaviside`` with its value at zero, ``sign``, ``Piecewise``, ``Mod`` in a delay),
against sympy; whole trajectories of both backends against each other; the library cache
against tampering; and the choice of backend against missing or broken compilers.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import sympy
from process_helpers import run_together

import fluidnet as fn
from fluidnet.codegen import backend as backend_module
from fluidnet.codegen import build, clib, compiled, csource, keys, loading
from fluidnet.codegen import cache as cache_module
from fluidnet.codegen.compiled import compile_form, jacobian_address
from fluidnet.errors import ModelError, OptionError
from fluidnet.models.sliding_mode import single_link_network, tcp_law

t = fn.t
_DP = ctypes.POINTER(ctypes.c_double)
_FUNC = ctypes.CFUNCTYPE(None, ctypes.c_double, *[_DP] * 6)

pytestmark = pytest.mark.skipif(
    build.known_broken() or shutil.which("cc") is None and shutil.which("gcc") is None,
    reason="no working C compiler",
)


def _call(address, tt, x, z, p, w, aux, nout) -> np.ndarray:
    """``f(t, x, z, p, w, aux, out)`` through the machine address of a generated function."""
    arrs = [np.ascontiguousarray(a, dtype=float) for a in (x, z, p, w, aux)]
    out = np.full(nout, -12345.0)
    _FUNC(int(address))(float(tt), *[a.ctypes.data_as(_DP) for a in (*arrs, out)])
    return out


# --------------------------------------------------------------------------------- models
def _switchy():
    """Every switching and printed function: Max/Min (n-ary), Heaviside, sign, Abs, Piecewise
    and integer, negative, half and symbolic powers in the right-hand side (extracted into
    mode weights), and Max, Min, Heaviside with h0 = 0.25, sign, Piecewise and Mod printed
    as such in a state-dependent delay."""
    x, y = fn.states("x y")
    a, b, c = fn.params("a b c")
    inner = sympy.Mod(x(t) - 5 * y(t), 1.7) * sympy.Heaviside(y(t), 0.25)
    inner += sympy.sign(x(t)) / 10
    inner += sympy.Piecewise((0.2, y(t) > x(t)), (sympy.Min(0.1, x(t) ** 2, y(t)), True))
    rhs = {
        x: sympy.Max(x(t - a), y(t), 0.3)
        - sympy.Min(x(t), 2 * y(t - b))
        + sympy.Heaviside(x(t) - c) * y(t) ** 3
        + sympy.sign(y(t) - x(t - a))
        + sympy.Abs(x(t) * y(t) - 1),
        y: sympy.Piecewise(
            (x(t) ** -2, x(t) > 1),
            (sympy.sqrt(abs(y(t))) + 1 / sympy.sqrt(1 + x(t) ** 2), y(t) < 0.5),
            (sympy.exp(-y(t)) * sympy.Rational(1, 3), True),
        )
        - y(t - 1 - sympy.Max(0, x(t)) / (1 + c)) * y(t) ** sympy.Rational(3, 2)
        + x(t) ** b
        + x(t - 2 + inner),
    }
    return fn.Model(rhs=rhs, params={a: 0.5, b: 0.7, c: 1.2}, name="switchy")


def _state_delay():
    x = fn.states("x")
    c = fn.params("c")
    return fn.Model(rhs={x: -x(t - 1 - x(t - 1) / c)}, params={c: 2.0}, name="state_delay")


def _ring(n: int) -> np.ndarray:
    A = np.zeros((n, n), dtype=int)
    for i in range(n):
        A[i, i] = A[(i + 1) % n, i] = 1
    return A


def _kelly_ring(n: int):
    return fn.models.kelly_primal(
        _ring(n), w=1.0, kappa=0.5, c=2.0, B=4.0, T=list(np.linspace(0.05, 0.15, n))
    )


MODELS = {
    "rcp": fn.models.rcp,
    "sbrm": fn.models.sbrm,
    "reno_red": fn.models.reno_red,
    "sliding": lambda: single_link_network([tcp_law(0.6), tcp_law(0.2)], 10.0).model(),
    "kelly": lambda: fn.models.kelly_primal([[1]], T=1.0, B=10.0),
    "state_delay": _state_delay,
    "switchy": _switchy,
    "kelly_ring": lambda: _kelly_ring(34),
}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One private cache for the module (each model compiled once per backend)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLUIDNET_CACHE", str(tmp_path_factory.mktemp("cgen") / "cache"))
        mp.delenv("FLUIDNET_BACKEND", raising=False)
        yield


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """An empty cache and a process that has compiled nothing yet."""
    monkeypatch.setenv("FLUIDNET_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("FLUIDNET_BACKEND", raising=False)
    for name in ("_MEMO", "_JACOBIANS"):
        monkeypatch.setattr(compiled, name, {})
    monkeypatch.setattr(loading, "_WARNED", set())
    return tmp_path / "cache"


def _values(cm, jac: int, tt, x, z, p, w, aux) -> np.ndarray:
    """Every output of the five functions at one point, concatenated."""
    n, nlag, nsw = cm.n, cm.nlag, cm.nswitch
    rhs, delay, switch, sgrad = cm.addresses
    parts = [_call(rhs, tt, x, z, p, w, aux, n)]
    parts += [_call(delay, tt, x, z, p, w, [float(k)], 1) for k in range(nlag)]
    parts += [_call(switch, tt, x, z, p, w, aux, max(nsw, 1))]
    parts += [_call(sgrad, tt, x, z, p, w, aux, max(nsw * (n + 1), 1))]
    parts += [_call(jac, tt, x, z, p, w, aux, n * (n + 1))]
    return np.concatenate(parts)


@pytest.mark.parametrize("name", list(MODELS))
def test_c_and_numba_functions_agree(cache, name):
    m = MODELS[name]()
    c = compile_form(m.form, "c")
    nb = compile_form(m.form, "numba")
    assert (c.backend, nb.backend) == ("c", "numba")
    assert c.key != nb.key and c.path.suffix == ".c" and nb.path.suffix == ".py"
    for field in ("nswitch", "lag_state", "lag_statedep", "switch_lagdep", "nonnegative"):
        np.testing.assert_array_equal(getattr(c, field), getattr(nb, field), err_msg=field)
    jc, jn = jacobian_address(c), jacobian_address(nb)
    rng = np.random.default_rng(11)
    n, nlag, nsw, npar = c.n, max(c.nlag, 1), max(c.nswitch, 1), max(c.nparam, 1)
    points = [
        (
            rng.uniform(0, 5),
            rng.uniform(-2, 3, n),
            rng.uniform(-2, 3, nlag),
            rng.uniform(0.1, 3, npar),
            rng.uniform(0, 1, nsw),
            rng.uniform(-1, 1, nlag),
        )
        for _ in range(12)
    ]
    # zeros: Heaviside at 0 (h0), sign(0), 0**negative (inf), 0/0 (nan)
    points.append((0.0, np.zeros(n), np.zeros(nlag), np.ones(npar), np.zeros(nsw), np.ones(nlag)))
    for point in points:
        got, want = _values(c, jc, *point), _values(nb, jn, *point)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=0, equal_nan=True)


def _sym_delay(lag, form, x, z, p) -> float:
    subs = {s: sympy.Float(v) for s, v in zip(form.x, x, strict=True)}
    subs.update({g.symbol: sympy.Float(v) for g, v in zip(form.lags, z, strict=True)})
    subs.update({s: sympy.Float(v) for s, v in zip(form.p, p, strict=True)})
    return float(lag.delay.xreplace(subs).evalf(30))


def test_printed_functions_equal_sympy(cache):
    # the delay of the last lag of _switchy is printed with Max, Min, Heaviside(., 0.25),
    # sign, Piecewise and Mod (delays are not split into modes)
    m = _switchy()
    form = m.form
    cm = compile_form(form, "c")
    p = np.array([m.values[k] for k in form.params])
    rng = np.random.default_rng(4)
    cases = [rng.uniform(-3, 3, 2) for _ in range(30)]
    cases += [np.array([0.3, 0.0]), np.array([0.0, 0.0]), np.array([-2.2, 0.0])]  # y = 0: h0
    for x in cases:
        z = rng.uniform(-1, 1, cm.nlag)
        for k, lag in enumerate(form.lags):
            got = _call(cm.addresses[1], 0.0, x, z, p, [0.0], [float(k)], 1)[0]
            assert got == pytest.approx(_sym_delay(lag, form, x, z, p), rel=1e-14, abs=1e-15)


def test_unknown_lag_index_gives_nan(cache):
    for m in (fn.models.rcp(), _kelly_ring(34)):
        cm = compile_form(m.form, "c")
        x, z, p = np.ones(cm.n), np.ones(cm.nlag), np.ones(cm.nparam)
        for k in (cm.nlag, cm.nlag + 0.5, -1.0, -7.0, np.nan, np.inf, 1e300):
            assert np.isnan(_call(cm.addresses[1], 0.0, x, z, p, [0.0], [k], 1)[0]), k
        # int(aux[0]) truncates toward zero like Python: -0.5 and 0.9 select lag 0
        first = _call(cm.addresses[1], 0.0, x, z, p, [0.0], [0.0], 1)[0]
        for k in (-0.5, 0.9):
            assert _call(cm.addresses[1], 0.0, x, z, p, [0.0], [k], 1)[0] == first


TRAJECTORIES = {
    "rcp": (fn.models.rcp, 3.0, {"R": 1500.0, "q": 50.0}, "DP5"),
    "reno_red": (fn.models.reno_red, 2.0, {"W": 15.0, "b": 120.0, "r": 60.0}, "DP5"),
    "sliding": (MODELS["sliding"], 20.0, {"x_1": 1.0, "x_2": 2.0}, "DP5"),
    "state_delay": (_state_delay, 8.0, {"x": 1.5}, "ROS2"),
    "kelly_ring": (lambda: _kelly_ring(34), 3.0, {f"x_{i + 1}": 0.2 for i in range(34)}, "DP5"),
}


@pytest.mark.parametrize("name", list(TRAJECTORIES))
def test_simulations_of_both_backends_agree(cache, monkeypatch, name):
    make, t_end, history, method = TRAJECTORIES[name]
    m = make()
    sols = {}
    for backend in ("c", "numba"):
        monkeypatch.setenv("FLUIDNET_BACKEND", backend)
        assert compiled.compile_model(m).backend == backend
        sols[backend] = fn.simulate(
            m,
            t_end,
            history=history,
            rtol=1e-8,
            atol=1e-10,
            method=method,
            t_eval=np.linspace(0.0, t_end, 41),
        )
    c, nb = sols["c"], sols["numba"]
    assert np.ptp(nb.y) > 0  # the run moves
    scale = np.max(np.abs(nb.y), axis=1, keepdims=True)
    np.testing.assert_allclose(c.y, nb.y, rtol=1e-10, atol=1e-12 * float(np.max(scale)))


# --------------------------------------------------------------------------------- cache
def _model():
    x = fn.states("x")
    a = fn.params("a")
    return fn.Model(rhs={x: -a * x(t - 1) + sympy.sin(x(t))}, params={a: 1.0}, name="cache_c")


def _rhs_value(cm) -> float:
    """``rhs`` at x = 0.5, z = 0.25, a = 2: -2*0.25 + sin(0.5) (see _EXPECTED)."""
    return float(_call(cm.addresses[0], 0.0, [0.5], [0.25], [2.0], [0.0], [0.0], 1)[0])


_EXPECTED = -2 * 0.25 + np.sin(0.5)


def _forget(key):
    compiled._MEMO.pop(key, None)
    loading._WARNED.discard(key)


def _compile_warnings(form, backend="c"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cm = compile_form(form, backend)
    return cm, [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def test_library_is_cached_and_recorded_with_its_source(isolated):
    m = _model()
    cm, msgs = _compile_warnings(m.form)
    assert not msgs and cm.backend == "c" and _rhs_value(cm) == pytest.approx(_EXPECTED, 1e-15)
    index = cache_module.read_index(isolated)
    so, c = cm.path.with_suffix(".so"), cm.path
    assert index[so.name] == cache_module.digest(so.read_bytes())
    assert index[c.name] == cache_module.digest(c.read_bytes())
    assert isinstance(cm.module, clib.CLibrary)
    assert not list(isolated.glob(".load-*")) and not list(isolated.glob(".tmp-*"))
    _forget(cm.key)
    again, msgs = _compile_warnings(m.form)
    assert not msgs and again is not cm and _rhs_value(again) == pytest.approx(_EXPECTED, 1e-15)


def _tamper(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def _truncate(path):
    path.write_bytes(path.read_bytes()[:1000])


def _garbage(path):
    path.write_bytes(b"\x80\x04 not json" * 10)


@pytest.mark.parametrize(
    ("suffix", "damage"), [(".so", _tamper), (".so", _truncate), ("index.json", _garbage)]
)
def test_altered_library_is_not_loaded_but_rebuilt_with_one_warning(isolated, suffix, damage):
    m = _model()
    cm, _ = _compile_warnings(m.form)
    target = isolated / "index.json" if suffix == "index.json" else cm.path.with_suffix(suffix)
    damage(target)
    _forget(cm.key)
    cm2, msgs = _compile_warnings(m.form)
    assert len(msgs) == 1 and "corrupt" in msgs[0] and str(isolated) in msgs[0], msgs
    assert _rhs_value(cm2) == pytest.approx(_EXPECTED, rel=1e-15)
    _forget(cm.key)
    _, msgs = _compile_warnings(m.form)  # sound again
    assert not msgs


def test_planted_library_never_runs(isolated, tmp_path):
    # a shared object whose constructor would leave a marker, in place of the model's library
    m = _model()
    key = keys.form_key(m.form, "c")
    marker = tmp_path / "marker"
    planted = textwrap.dedent(
        f"""
        #include <stdio.h>
        __attribute__((constructor)) static void planted(void) {{
            FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("ran", f); fclose(f); }}
        }}
        """
    ).encode()
    isolated.mkdir(mode=0o700)
    so = isolated / f"fluidnet_cgen_{key}.so"
    so.write_bytes(build.compile_library(planted, isolated, "planted", so.with_suffix(".c")))
    cm, msgs = _compile_warnings(m.form)  # not in the index: replaced without a warning
    assert not marker.exists()
    assert _rhs_value(cm) == pytest.approx(_EXPECTED, rel=1e-15)
    # planted over a recorded library: replaced with a warning, still never run
    so.write_bytes(build.compile_library(planted, isolated, "planted", so.with_suffix(".c")))
    _forget(key)
    cm, msgs = _compile_warnings(m.form)
    assert len(msgs) == 1 and "does not match" in msgs[0]
    assert not marker.exists()
    assert _rhs_value(cm) == pytest.approx(_EXPECTED, rel=1e-15)


def test_altered_source_is_regenerated_before_compiling(isolated):
    m = _model()
    cm, _ = _compile_warnings(m.form)
    cm.path.with_suffix(".so").unlink()
    cm.path.write_text("void fluidnet_rhs(void) {}\n")  # would not define the other functions
    _forget(cm.key)
    cm2, msgs = _compile_warnings(m.form)
    assert len(msgs) == 1 and "does not match" in msgs[0]
    assert "fluidnet_sgrad" in cm2.path.read_text()
    assert _rhs_value(cm2) == pytest.approx(_EXPECTED, rel=1e-15)


# ----------------------------------------------------------------------- backend choice
def test_forced_c_with_a_broken_compiler_is_a_clear_error(isolated, monkeypatch):
    m = _model()
    monkeypatch.setenv("CC", "/bin/false")
    with pytest.raises(OptionError, match=r"C backend.*cache_c.*'/bin/false'.*status 1"):
        compile_form(m.form, "c")
    monkeypatch.setenv("FLUIDNET_BACKEND", "c")
    with pytest.raises(OptionError, match="/bin/false"):
        compile_form(m.form)
    # the compiler's own message is passed on
    monkeypatch.setenv("CC", "sh -c 'echo compiler-licence-expired >&2; exit 3' cc")
    with pytest.raises(OptionError, match="compiler-licence-expired"):
        compile_form(m.form)
    monkeypatch.setenv("CC", str(isolated / "no-such-compiler"))
    with pytest.raises(OptionError, match="no-such-compiler.*cannot be run"):
        compile_form(m.form)


def test_auto_falls_back_to_numba_without_a_compiler(isolated, monkeypatch):
    m = _model()
    monkeypatch.setenv("CC", "/bin/false")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cm = compile_form(m.form)
    assert cm.backend == "numba" and cm.path.suffix == ".py"
    assert _rhs_value(cm) == pytest.approx(_EXPECTED, rel=1e-15)
    assert not list(isolated.glob("*.so"))


def test_auto_uses_a_cached_library_even_without_a_compiler(isolated, monkeypatch):
    m = _model()
    compile_form(m.form, "c")
    compiled._MEMO.clear()
    monkeypatch.setenv("CC", "/bin/false")
    monkeypatch.setitem(build._BROKEN, ("/bin/false",), "known broken")
    cm = compile_form(m.form)
    assert cm.backend == "c" and _rhs_value(cm) == pytest.approx(_EXPECTED, rel=1e-15)


def test_compiler_errors_on_generated_source_name_model_and_file(isolated, monkeypatch):
    monkeypatch.setattr(backend_module, "generate_c_source", lambda form: "this is not C;\n")
    m = _model()
    with pytest.raises(ModelError, match=r"cache_c.*rejected.*fluidnet_cgen_\w+\.c") as info:
        compile_form(m.form)
    assert "fluidnet_cgen_" in str(info.value) and "error" in str(info.value)


def test_a_model_c_cannot_express_falls_back_to_numba(isolated, monkeypatch):
    def untranslatable(form):
        raise csource.Untranslatable(f"model {form.name!r} uses a function without C")

    monkeypatch.setattr(backend_module, "generate_c_source", untranslatable)
    m = _model()
    cm = compile_form(m.form)
    assert cm.backend == "numba" and _rhs_value(cm) == pytest.approx(_EXPECTED, rel=1e-15)
    with pytest.raises(ModelError, match="cache_c.*without C"):
        compile_form(m.form, "c")


def test_unknown_backend_is_an_option_error(monkeypatch):
    with pytest.raises(OptionError, match="backend.*'fortran'"):
        compile_form(_model().form, "fortran")
    monkeypatch.setenv("FLUIDNET_BACKEND", "cuda")
    with pytest.raises(OptionError, match="FLUIDNET_BACKEND.*'cuda'"):
        compile_form(_model().form)


# ----------------------------------------------------------------------- other processes
_NO_NUMBA = textwrap.dedent(
    """
    import sys
    import fluidnet
    # the code generation alone (not fluidnet.dde, whose integrator is numba's)
    from fluidnet.codegen import compiled
    x = fluidnet.states("x")
    a = fluidnet.params("a")
    m = fluidnet.Model(rhs={x: -a * x(fluidnet.t - 1) + fluidnet.sympy.sin(x(fluidnet.t))},
                       params={a: 1.0}, name="no_numba")
    cm = compiled.compile_form(m.form)
    jac = compiled.jacobian_address(cm)
    import ctypes
    dp = ctypes.POINTER(ctypes.c_double)
    arrs = [(ctypes.c_double * 2)(v) for v in (0.5, 0.25, 2.0, 0.0, 0.0, 0.0)]
    cm.module.rhs.ctypes(0.0, *[ctypes.cast(a, dp) for a in arrs])
    print(cm.backend, arrs[-1][0], jac != 0, "numba" in sys.modules)
    """
)


def test_c_backend_compiles_and_runs_without_importing_numba(tmp_path):
    env = dict(os.environ, FLUIDNET_CACHE=str(tmp_path / "cache"))
    env.pop("FLUIDNET_BACKEND", None)
    for _ in range(2):  # compiling, then loading the cached library
        out = subprocess.run(
            [sys.executable, "-c", _NO_NUMBA], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        assert out[0] == "c" and float(out[1]) == pytest.approx(_EXPECTED, rel=1e-15)
        assert out[2:] == ["True", "False"]


_COUNT = textwrap.dedent(
    """
    import sys, time, pathlib
    import fluidnet as fn
    from fluidnet.codegen import loading
    from fluidnet.codegen.compiled import compile_form
    calls = []
    real = loading.compile_library
    loading.compile_library = lambda *a: calls.append(1) or real(*a)
    x = fn.states("x")
    a, b = fn.params("a b")
    m = fn.Model(rhs={x: -a * x(fn.t - 1) + fn.sympy.cos(b * x(fn.t))}, params={a: 1.0, b: 2.0},
                 name="concurrent_c")
    form = m.form
    pathlib.Path(sys.argv[1]).write_text("ready")
    go = pathlib.Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.01)
    cm = compile_form(form)
    print(cm.backend, len(calls))
    """
)


def test_second_and_concurrent_processes_compile_a_library_once(tmp_path):
    env = dict(os.environ, FLUIDNET_CACHE=str(tmp_path / "cache"))
    env.pop("FLUIDNET_BACKEND", None)
    outs = run_together(_COUNT, env, tmp_path, timeout=120)
    assert sorted(o.split()[1] for o, _ in outs) == ["0", "1"]
    assert all(o.split()[0] == "c" for o, _ in outs)
    # a later process with no working compiler and the C backend forced loads the library
    late = subprocess.run(
        [sys.executable, "-c", _COUNT, str(tmp_path / "ready2"), str(tmp_path / "go")],
        env=dict(env, CC="/bin/false", FLUIDNET_BACKEND="c"),
        capture_output=True,
        text=True,
        check=True,
    )
    assert late.stdout.split() == ["c", "0"]
    assert len(list((tmp_path / "cache").glob("fluidnet_cgen_*.so"))) == 1
