"""Saved compiled models (fluidnet.codegen.compiled): the same runs as the symbolic model, in a
process that imports neither sympy nor numba."""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.errors import IntegrationError, ModelError, OptionError, ParameterError

t = fn.t


def _kelly():
    x = fn.states("x")
    kappa, T = fn.params("kappa T")
    return fn.Model(
        rhs={x: kappa * (1 - x(t) * x(t - T) ** 10)},
        params={kappa: fn.Param(0.2, bounds=(0.0, 5.0)), T: 1.0},
        name="kelly",
    )


def _relay():
    x = fn.states("x")
    return fn.Model(rhs={x: -sympy.sign(x(t)) + 2 * sympy.sin(t)}, params={}, name="relay")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("saved")
    # the three ways to give the equilibrium: given, computed, none
    models = {
        "kelly": (_kelly(), {"x": 1.0}),
        "rcp": (fn.models.rcp(), True),
        "relay": (_relay(), False),
    }
    return {
        k: (m, fn.load_compiled(fn.save_compiled(m, d / f"{k}.fnc", equilibrium=eq)))
        for k, (m, eq) in models.items()
    }


CASES = [
    ("kelly", 300.0, {"history": {"x": 0.5}}),
    ("kelly", 300.0, {"history": {"x": 0.5}, "params": {"kappa": 0.35, "T": 0.8}}),
    ("kelly", 30.0, {"history": {"x": 0.5}, "method": "ROS2"}),
    ("rcp", 60.0, {"history": {"R": 3750.0, "q": 0.0}}),
    ("rcp", 60.0, {"history": {"R": lambda s: 3750.0 + 100 * np.sin(s), "q": 0.0}}),
    ("relay", 20.0, {"history": {"x": 0.0}}),
    ("rcp", 20.0, {}),  # the equilibrium (computed when saved) as history
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{sorted(c[2])}")
def test_saved_model_runs_bit_identical_to_the_symbolic_model(saved, case):
    name, t_end, kw = case
    model, loaded = saved[name]
    te = np.linspace(0.0, t_end, 301)
    a = fn.simulate(loaded, t_end, t_eval=te, **kw)
    b = fn.simulate(model, t_end, t_eval=te, **kw)
    np.testing.assert_array_equal(a.y, b.y)
    assert repr(a.counters) == repr(b.counters)
    assert a.state_names == b.state_names and a.counters.steps > 10


def test_saved_model_knows_its_names_and_defaults(saved):
    _, k = saved["kelly"]
    assert k.state_names == ("x",) and k.param_names == ("kappa", "T")
    assert k.params == {"kappa": 0.2, "T": 1.0}
    assert k.equilibrium() == {"x": 1.0}
    m, r = saved["rcp"]
    assert r.equilibrium() == {k: float(v) for k, v in m.equilibrium().items()}
    assert r.nonnegative == ("q",)
    assert "SavedModel('rcp'" in repr(r)


def test_bad_parameters_are_named(saved):
    _, k = saved["kelly"]
    with pytest.raises(ParameterError, match="'gain' is not a parameter"):
        fn.simulate(k, 1.0, history={"x": 1.0}, params={"gain": 1.0})
    with pytest.raises(ParameterError, match="'kappa'.*above its upper bound 5"):
        fn.simulate(k, 1.0, history={"x": 1.0}, params={"kappa": 7.0})
    with pytest.raises(ParameterError, match="'T'.*not finite"):
        fn.simulate(k, 1.0, history={"x": 1.0}, params={"T": float("nan")})
    with pytest.raises(OptionError, match="params="):
        fn.simulate(k, 1.0, history={"x": 1.0}, kappa=0.3)


def test_equilibrium_is_known_only_at_the_defaults(saved):
    _, k = saved["kelly"]
    with pytest.raises(ModelError, match="history of every state"):
        fn.simulate(k, 1.0, params={"kappa": 0.3})
    _, relay = saved["relay"]  # saved without one
    with pytest.raises(ModelError, match="history of every state"):
        fn.simulate(relay, 1.0)


def test_a_delay_negative_at_t0_is_reported_like_the_symbolic_model(tmp_path):
    x = fn.states("x")
    m = fn.Model(rhs={x: -x(t - (1 - x(t)))}, params={}, name="neg")
    loaded = fn.load_compiled(fn.save_compiled(m, tmp_path / "neg.fnc"))
    messages = []
    for model in (m, loaded):
        with pytest.raises(IntegrationError, match="negative") as info:
            fn.simulate(model, 1.0, history={"x": 2.0})
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def _rewritten(src, dst, **changes):
    with zipfile.ZipFile(src) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(parts["meta.json"])
    meta.update(changes)
    parts["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)
    return dst


def test_files_that_are_not_saved_models_are_refused(saved, tmp_path):
    _, k = saved["kelly"]
    junk = tmp_path / "junk.fnc"
    junk.write_bytes(b"not a zip")
    with pytest.raises(OptionError, match="not a saved fluidnet model"):
        fn.load_compiled(junk)
    with pytest.raises(OptionError, match="not a saved fluidnet model"):
        fn.load_compiled(tmp_path / "missing.fnc")
    other = _rewritten(k.path, tmp_path / "arm.fnc", machine="riscv128")
    with pytest.raises(OptionError, match="riscv128.*save the model again"):
        fn.load_compiled(other)
    old = _rewritten(k.path, tmp_path / "old.fnc", version=0)
    with pytest.raises(OptionError, match="another version"):
        fn.load_compiled(old)


_CHILD = """
import sys, json
import numpy as np
import fluidnet as fn
m = fn.load_compiled(sys.argv[1])
sol = fn.simulate(m, 300.0, history={"x": 0.5}, t_eval=np.linspace(0.0, 300.0, 301))
heavy = [k for k in ("sympy", "numba", "llvmlite", "scipy") if k in sys.modules]
print(json.dumps({"heavy": heavy, "y": sol["x"].tolist()}))
"""


def test_a_saved_model_runs_without_sympy_or_numba(saved):
    model, k = saved["kelly"]
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD), str(k.path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["heavy"] == []
    ref = fn.simulate(model, 300.0, history={"x": 0.5}, t_eval=np.linspace(0.0, 300.0, 301))
    np.testing.assert_array_equal(np.array(res["y"]), ref["x"])


def test_ensembles_ask_for_the_symbolic_model(saved):
    _, k = saved["kelly"]
    with pytest.raises(OptionError, match="simulate_ensemble needs the symbolic model"):
        fn.simulate_ensemble(k, 1.0, params={"kappa": [0.1, 0.2]}, history={"x": 1.0})


# ------------------------------------------------------------------ tampered metadata (issue 23)
def _tampered(src, dst, edit):
    with zipfile.ZipFile(src) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(parts["meta.json"])
    edit(meta)
    parts["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)
    return dst


@pytest.fixture(scope="module")
def delayed_decay(tmp_path_factory):
    """x' = -k x(t - T), k = 1, T = 1, x = 1 before 0: by steps x(2) = -1/2 (on [0, 1]
    x = 1 - t, on [1, 2] x = -(t - 1) + (t - 1)^2/2)."""
    x = fn.states("x")
    k, T = fn.params("k T")
    m = fn.Model(rhs={x: -k * x(t - T)}, params={k: 1.0, T: 1.0}, name="delayed decay")
    path = fn.save_compiled(m, tmp_path_factory.mktemp("decay") / "decay.fnc")
    sol = fn.simulate(fn.load_compiled(path), 2.0, history={"x": 1.0}, t_eval=[2.0])
    assert sol["x"][0] == pytest.approx(-0.5, rel=1e-6)
    return m, path


def _drop_param(meta):
    del meta["params"]["T"]


TAMPERING = {
    # was: the parameter vector [k] read past its end by the library (N_PARAMS = 2)
    "a parameter dropped": (_drop_param, r"params.* lists 1 entries, but its library has 2"),
    "a lag more": (
        lambda m: m["lags"].append(dict(m["lags"][0])),
        r"lags.* lists 2 entries, but its library has 1",
    ),
    "a state more": (
        lambda m: m.update(states=[*m["states"], "y"], equilibrium=None),
        r"states.* lists 2 entries, but its library has 1 \(N_STATES\)",
    ),
    "a surface more": (lambda m: m["surfaces"].append("x"), r"surfaces.* lists 1 entries"),
    "a lag reads another state": (
        lambda m: m["lags"][0].update(state=1),
        r"lags\[0\]\['state'\].* is 1, not a state index",
    ),
    "a lag's kind": (
        lambda m: m["lags"][0].update(kind="state"),
        r"lags\[0\]\['kind'\].* is 'state', but its library does not",
    ),
    "a key that is a path": (
        lambda m: m.update(key="../../evil"),
        r"key.* is '../../evil', not a hexadecimal digest",
    ),
    "no states": (lambda m: m.pop("states"), r"states.* is missing"),
    "params as a list": (lambda m: m.update(params=[1.0, 2.0]), r"params.* is a list, not a dict"),
    "a value that is text": (
        lambda m: m["params"]["k"].update(value="1"),
        r"params\['k'\]\['value'\].* is '1', not a finite number",
    ),
    "a value out of its bounds": (
        lambda m: m["params"]["k"].update(bounds=[2.0, None]),
        r"params\['k'\]\['value'\].* 1.0 is outside its bounds",
    ),
    "sizes": (
        lambda m: m.update(sizes=[1, 1, 0, 3]),
        r"sizes.* is \[1, 1, 0, 3\], but its library",
    ),
    "a projected state out of range": (
        lambda m: m.update(nonnegative=[5]),
        r"nonnegative.* is \[5\], not distinct state indices < 1",
    ),
    # names are written NFKC-normalized: a look-alike could be reached by no spelling
    "a state renamed to a look-alike": (
        lambda m: m.update(states=["\U0001d465"]),
        r"states\[0\].* is '𝑥', not a \(NFKC-normalized\) name",
    ),
    "a parameter renamed to a look-alike": (
        lambda m: m.update(params={"\U0001d458": m["params"]["k"], "T": m["params"]["T"]}),
        r"params\['𝑘'\].* is not a parameter name",
    ),
    "an equilibrium of another model": (
        lambda m: m.update(equilibrium={"y": 0.0}),
        r"equilibrium.* does not give one value per state",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_tampered_metadata_is_refused_naming_the_field(delayed_decay, tmp_path, case):
    edit, match = TAMPERING[case]
    _, path = delayed_decay
    bad = _tampered(path, tmp_path / "bad.fnc", edit)
    with pytest.raises(fn.StoreError, match=match) as info:
        fn.load_compiled(bad)
    assert str(bad) in str(info.value) and "save the model again" in str(info.value)


def test_load_compiled_warns_that_it_runs_native_code():
    doc = fn.load_compiled.__doc__
    assert "Warnings\n    --------\n    **Loading a saved model runs native code.**" in doc


def test_a_saved_model_reads_either_spelling_of_a_name(delayed_decay):
    """ "𝑘" and "𝑥" (mathematical italic, U+1D458 and U+1D465) are the identifiers k and x, as
    for the symbolic model. With k = 2: x = 1 - 2t on [0, 1] and x = -1 - 2((t - 1) - (t - 1)^2)
    on [1, 2]."""
    m, path = delayed_decay
    saved = fn.load_compiled(path)
    for model in (m, saved):
        sol = fn.simulate(
            model, 1.5, history={"𝑥": 1.0}, params={"𝑘": 2.0}, t_eval=[0.25, 1.5], rtol=1e-10
        )
        np.testing.assert_allclose(sol["𝑥"], [0.5, -1.5], rtol=1e-8)
        with pytest.raises(fn.ModelError, match=r"'k' .*'𝑘'.* Unicode-normalized"):
            fn.simulate(model, 1.0, history={"x": 1.0}, params={"k": 1.0, "𝑘": 2.0})
    with pytest.raises(fn.ParameterError, match=r"'ℌ' is not a parameter of model"):
        saved.resolve_params({"ℌ": 1.0})


# ------------------------------------------------------------------ digests (issue 33)
def _other_kelly():
    """Another model with the same counts as _kelly() (1 state, 2 parameters, 1 lag)."""
    x = fn.states("x")
    kappa, T = fn.params("kappa T")
    return fn.Model(
        rhs={x: kappa * (2 - x(t) * x(t - T) ** 2)},
        params={kappa: fn.Param(0.2, bounds=(0.0, 5.0)), T: 1.0},
        name="other",
    )


def _with_members(src, dst, **members):
    """A copy of the saved file ``src`` whose members (``model_so=...``) are replaced."""
    with zipfile.ZipFile(src) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    parts.update({k.replace("_so", ".so"): v for k, v in members.items()})
    with zipfile.ZipFile(dst, "w") as z:
        for n, data in parts.items():
            z.writestr(n, data)
    return dst


@pytest.mark.parametrize("member", ["model.so", "jac.so"])
def test_a_library_of_another_model_is_refused_before_it_is_loaded(saved, tmp_path, member):
    # main ran the other model: x(50) = 1.26 (its equilibrium 2^(1/3)) for kelly's 1.096
    model, k = saved["kelly"]
    other = fn.save_compiled(_other_kelly(), tmp_path / "other.fnc", equilibrium=False)
    with zipfile.ZipFile(other) as z:
        theirs = z.read(member)
    mixed = _with_members(k.path, tmp_path / "mixed.fnc", **{member.replace(".", "_"): theirs})
    with pytest.raises(fn.StoreError, match=f"its library {member} .*does not match the SHA-256"):
        fn.load_compiled(mixed)


_TRUNCATED = """
import sys
import fluidnet as fn
try:
    fn.load_compiled(sys.argv[1])
except fn.StoreError as exc:
    print("REFUSED:", exc)
"""


def test_a_truncated_library_is_refused_not_mapped(saved, tmp_path):
    # main: the interpreter died of SIGBUS inside dlopen
    _, k = saved["kelly"]
    with zipfile.ZipFile(k.path) as z:
        so = z.read("model.so")
    cut = _with_members(k.path, tmp_path / "cut.fnc", model_so=so[: len(so) // 2])
    out = subprocess.run(
        [sys.executable, "-c", _TRUNCATED, str(cut)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, f"exit status {out.returncode}: {out.stderr[-500:]}"
    assert f"REFUSED: {cut}: its library model.so ({len(so) // 2} bytes)" in out.stdout


def test_edited_metadata_the_library_cannot_contradict_is_refused(saved, tmp_path):
    _, k = saved["kelly"]
    edited = _rewritten(k.path, tmp_path / "edited.fnc", name="renamed")
    with pytest.raises(fn.StoreError, match="metadata does not match the digest"):
        fn.load_compiled(edited)


def test_a_file_of_the_previous_format_says_why_it_is_refused(saved, tmp_path):
    _, k = saved["kelly"]
    old = _rewritten(k.path, tmp_path / "old.fnc", version=1)
    with pytest.raises(OptionError, match="format 1, whose libraries carry no digests"):
        fn.load_compiled(old)


def test_a_negative_parameter_delay_is_refused_like_the_symbolic_model(saved):
    # main: "non-finite right-hand side ... the step size fell to 6.86e-15"
    model, k = saved["kelly"]
    for m in (model, k):
        with pytest.raises(ParameterError, match=r"delay T of x\(t - \(T\)\) evaluates to -1"):
            fn.simulate(m, 10.0, history={"x": 0.5}, params={"T": -1.0})
    assert fn.simulate(k, 1.0, history={"x": 0.5}, params={"T": 0.0})["x"].size > 0


def test_paths_that_cannot_take_a_saved_model_are_named_and_the_remedy_works(saved, tmp_path):
    model, _ = saved["kelly"]
    with pytest.raises(OptionError, match=f"path {tmp_path} is a directory: .* such as") as info:
        fn.save_compiled(model, tmp_path)
    suggested = str(info.value).rsplit("such as ", 1)[1]
    assert fn.load_compiled(fn.save_compiled(model, suggested)).name == "kelly"
    (tmp_path / "afile").write_text("")
    with pytest.raises(OptionError, match=f"{tmp_path / 'afile'} is a file, not a directory"):
        fn.save_compiled(model, tmp_path / "afile" / "m.fnc")
    with pytest.raises(OptionError, match="does not exist; create it first"):
        fn.save_compiled(model, tmp_path / "no" / "such" / "m.fnc")
    with pytest.raises(OptionError, match="is a directory, not a saved fluidnet model"):
        fn.load_compiled(tmp_path)
