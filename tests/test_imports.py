"""Lazy imports: ``import fluidnet`` imports only what defines the package, and every public
name is still there (PEP 562 ``__getattr__`` in fluidnet/_lazy.py)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

import fluidnet

HEAVY = ["numba", "llvmlite", "scipy", "matplotlib", "xarray", "dask", "control", "tqdm", "zarr"]

#: The packages whose public names are lazy.
LAZY_PACKAGES = [
    "fluidnet",
    "fluidnet.linear",
    "fluidnet.symbolic",
    "fluidnet.dde",
    "fluidnet.stability",
    "fluidnet.bifurcation",
    "fluidnet.stochastic",
    "fluidnet.sweep",
    "fluidnet.models",
]


def _loaded_after(code: str) -> set[str]:
    """The top-level packages in sys.modules after running ``code`` in a fresh interpreter."""
    script = textwrap.dedent(code) + (
        "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(fluidnet.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_fluidnet_imports_no_heavy_library():
    loaded = _loaded_after("import fluidnet")
    assert "fluidnet" in loaded
    assert loaded.isdisjoint(HEAVY + ["sympy", "numpy"]), sorted(
        loaded & set(HEAVY + ["sympy", "numpy"])
    )


def test_import_subpackages_stays_light():
    # the simulation path's packages: no compiler, no scipy until a model is run
    loaded = _loaded_after(
        "import fluidnet.dde, fluidnet.symbolic, fluidnet.linear, fluidnet.models"
    )
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_building_a_model_imports_sympy_only():
    loaded = _loaded_after(
        """
        import fluidnet as fn
        x = fn.states("x")
        kappa, T = fn.params("kappa T")
        m = fn.Model(rhs={x: kappa * (1 - x(fn.t) * x(fn.t - T) ** 10)},
                     params={kappa: 0.2, T: 1.0})
        assert m.state_names == ("x",)
        """
    )
    assert "sympy" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_a_simulation_imports_no_analysis_library():
    loaded = _loaded_after(
        """
        import fluidnet as fn
        import math
        x = fn.states("x")
        kappa = fn.params("kappa")
        m = fn.Model(rhs={x: -kappa * x(fn.t)}, params={kappa: 0.2})
        sol = fn.simulate(m, 5.0, history={"x": 1.0}, rtol=1e-8, atol=1e-10)
        assert abs(float(sol(5.0, "x")) - math.exp(-1.0)) < 1e-6
        """
    )
    # numba too: the integrator is built with the package, the model's functions by C
    unused = set(HEAVY) | {"threadpoolctl"}
    assert loaded.isdisjoint(unused), sorted(loaded & unused)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_resolves(package):
    mod = importlib.import_module(package)
    listed = dir(mod)
    for name in mod.__all__:
        value = getattr(mod, name)
        assert value is not None, name
        assert name in listed, name
        namespace: dict = {}
        exec(f"from {package} import {name}", namespace)
        assert namespace[name] is value, name


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_unknown_attribute_raises_naming_it(package):
    mod = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"{package}.*no_such_name"):
        mod.no_such_name  # noqa: B018


def test_top_level_names_are_the_subpackages_objects():
    import fluidnet.dde
    import fluidnet.stability
    import fluidnet.symbolic

    assert fluidnet.simulate is fluidnet.dde.simulate
    assert fluidnet.oscillation is fluidnet.dde.oscillation
    assert fluidnet.bode is fluidnet.stability.bode
    assert fluidnet.Model is fluidnet.symbolic.Model
    assert fluidnet.t is fluidnet.symbolic.t
    assert fluidnet.models is importlib.import_module("fluidnet.models")
    assert fluidnet.flowlevel is importlib.import_module("fluidnet.models.flow_level")
    assert fluidnet.sympy is importlib.import_module("sympy")
    assert "sympy" not in dir(fluidnet) and "sympy" not in fluidnet.__all__


def test_subpackages_are_attributes_on_first_access():
    loaded = _loaded_after(
        """
        import fluidnet as fn
        assert fn.dde.__name__ == "fluidnet.dde"
        assert fn.errors.ModelError is fn.ModelError
        """
    )
    assert "numba" not in loaded


def test_a_function_named_like_its_module_is_not_hidden_by_the_module():
    # importing the submodule first must not replace the function in its package
    _loaded_after(
        """
        import fluidnet.dde.oscillation, fluidnet.stability.bode, fluidnet.symbolic.linearize
        import fluidnet as fn
        for pkg, name in [(fn.dde, "oscillation"), (fn.stability, "bode"),
                          (fn.stability, "nyquist"), (fn.stability, "margins"),
                          (fn.symbolic, "linearize")]:
            assert callable(getattr(pkg, name)) and not hasattr(getattr(pkg, name), "__path__")
            assert type(getattr(pkg, name)).__name__ == "function", (pkg, name)
        assert type(fn.oscillation).__name__ == "function"
        """
    )


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_names_do_not_collide_with_submodules(package):
    # a lazy name that is also a submodule's name would be shadowed by the module once the
    # submodule is imported: such names must be bound eagerly by __init__.py
    from fluidnet._lazy import _submodules, stub_table

    mod = importlib.import_module(package)
    table = stub_table(package, mod.__file__)
    eager = vars(mod)
    clashes = {
        name
        for name, (module, attr) in table.items()
        if name in _submodules(list(mod.__path__))
        and f"{module}.{attr}" != f"{package}.{name}"
        and not (
            name in eager
            and not hasattr(eager[name], "__path__")
            and eager[name].__class__.__name__ != "module"
        )
    }
    assert not clashes, clashes


@pytest.mark.parametrize("package", [*LAZY_PACKAGES, "fluidnet.packet"])
def test_one_list_of_names_from_the_stub(package):
    # __all__, dir() and the stub file agree, every listed name resolves, and the stub is valid
    import ast

    from fluidnet._lazy import stub_table

    mod = importlib.import_module(package)
    stub = os.path.splitext(mod.__file__)[0] + ".pyi"
    imported = [
        alias.asname or alias.name
        for node in ast.parse(open(stub, encoding="utf-8").read()).body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    assert mod.__all__ == imported
    assert list(stub_table(package, mod.__file__)) == imported
    assert set(mod.__all__) <= set(dir(mod))
    for name in mod.__all__:
        getattr(mod, name)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'fluidnet' has no attribute 'no_such_name'"):
        fluidnet.no_such_name  # noqa: B018
    assert not hasattr(fluidnet.models, "no_such_model")
    assert "simulate" in dir(fluidnet) and "sympy" not in dir(fluidnet)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_dir_offers_the_public_names_only(package):
    """``dir()`` (and so tab completion) lists the public names and the dunders: not the
    helpers an ``__init__`` binds (``annotations``, ``attach_stub``), nor ``fn.sympy``."""
    mod = importlib.import_module(package)
    listed = set(dir(mod))
    extra = {n for n in listed - set(mod.__all__) if not (n.startswith("__") and n.endswith("__"))}
    assert not extra, sorted(extra)
    assert {"__version__", "__name__"} <= set(dir(fluidnet))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(fluidnet.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    return env


_CHART = """
import xarray as xr
ds = xr.Dataset({"stable": ("k", [True, False]), "abscissa": ("k", [-1.0, 1.0])},
                coords={"k": [1.0, 2.0]})
"""


@pytest.mark.parametrize("order", ["fluidnet first", "xarray first"])
def test_the_stability_accessor_needs_no_special_import(order, tmp_path):
    """A chart opened from a file in a new process has ``ds.stability`` after ``import
    fluidnet`` alone, whichever of fluidnet and xarray is imported first (issue 24), and
    ``import fluidnet`` still does not import xarray."""
    path = tmp_path / "chart.nc"
    code = f"""
import sys
{"import fluidnet" if order == "fluidnet first" else "import xarray"}
assert ("xarray" in sys.modules) == {order == "xarray first"}
{_CHART}
ds.to_netcdf({str(path)!r})
opened = xr.open_dataset({str(path)!r})
import fluidnet
assert "fluidnet.stability.chart" not in sys.modules
import matplotlib
matplotlib.use("Agg")
ax = opened.stability.plot()
print(type(opened.stability).__name__, ax.get_xlabel(), [float(v) for v in ax.lines[0].get_ydata()])
"""
    out = subprocess.run(
        [sys.executable, "-W", "error::Warning", "-c", code],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["StabilityAccessor", "k", "[-1.0,", "1.0]"]


def test_import_before_numpy_asks_for_one_openblas_thread_unless_told():
    """OpenBLAS's threads cost every short process CPU at numpy's import (issue 26): fluidnet
    asks for one thread when imported first, and keeps a value the user set."""
    code = "import os, fluidnet, numpy; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    env = _env()
    env.pop("OPENBLAS_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "1", out.stderr
    env["OPENBLAS_NUM_THREADS"] = "3"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "3", out.stderr
    first = "import os, numpy, fluidnet; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    env.pop("OPENBLAS_NUM_THREADS")
    out = subprocess.run([sys.executable, "-c", first], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "None", out.stderr  # numpy first: too late, left alone


def test_installing_the_accessor_twice_registers_it_once():
    import warnings

    import xarray as xr

    from fluidnet import _accessors

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # xarray warns when an accessor is registered again
        _accessors.install()
        _accessors.install()
    assert hasattr(xr.Dataset, _accessors.ACCESSOR)
