"""to_numpy: numpy functions of sympy expressions, arguments named like lags."""

import time

import numpy as np
import sympy

from fluidnet.symbolic.numeric import to_numpy


def test_arguments_that_are_not_identifiers():
    # lag symbols are named like "x_1(t - (T_1))"; a keyword is not an identifier either
    z = sympy.symbols("x_1(t\\ -\\ (T_1)) lambda x_1", real=True)
    assert [s.name for s in z] == ["x_1(t - (T_1))", "lambda", "x_1"]
    p = sympy.Symbol("_arg0", real=True)  # the name a renamed argument would take first
    f = to_numpy((z, (p,)), [z[0] * z[1] - z[2] / p, z[0] ** 2 + p])
    got = f([2.0, 3.0, 5.0], [4.0])
    np.testing.assert_array_equal(got, [2.0 * 3.0 - 5.0 / 4.0, 4.0 + 4.0])
    J = to_numpy((z,), sympy.Matrix([[z[0], z[1]], [z[2], z[0] * z[2]]]))
    np.testing.assert_array_equal(J([2.0, 3.0, 5.0]), [[2.0, 3.0], [5.0, 10.0]])


def test_many_arguments_that_are_not_identifiers_is_linear():
    # sympy renames such arguments one at a time, each time substituting into every
    # expression: 3000 of them took minutes; here they are renamed in one pass
    n = 3000
    z = [sympy.Symbol(f"x_{i}(t - (T_{i}))", real=True) for i in range(n)]
    exprs = [z[i] * z[i - 1] for i in range(n)]
    start = time.process_time()
    f = to_numpy((z,), exprs)
    assert time.process_time() - start < 20.0
    v = np.arange(1.0, n + 1)
    np.testing.assert_array_equal(f(v), v * np.roll(v, 1))


def test_same_code_and_values_as_sympys_numpy_module():
    """to_numpy evaluates lambdify's code in a namespace of its own (see
    ``numeric._numpy_namespace``); sympy's ``lambdify(modules="numpy")`` is the reference:
    the same source (up to the names of its dummies) and the same values, bit for bit, for
    the functions fluid models use (exp, log, powers, switches, Min/Max, piecewise)."""
    import inspect
    import re

    x, y = sympy.symbols("x y", real=True)
    exprs = [
        y * sympy.exp(-x) + sympy.log(y) + sympy.sqrt(y) * sympy.tanh(x) + sympy.atan(x),
        sympy.Heaviside(x - 1) + sympy.sign(y - 2) + sympy.Max(x, y) + sympy.Min(x, 2),
        sympy.Piecewise((x**2 / y, x > 1), (sympy.Abs(y) ** 1.5, True)),
        sympy.exp(sympy.I * x) * sympy.exp(-sympy.I * x),
    ]
    from fluidnet.symbolic import numeric

    ours = sympy.lambdify([(x,), (y,)], exprs, modules=numeric._MODULES, cse=True)
    ref = sympy.lambdify([(x,), (y,)], exprs, modules=[{"DiracDelta": 0}, "numpy"], cse=True)

    def source(f):
        return re.sub(r"_Dummy_\d+", "_D", inspect.getsource(f))

    assert source(ours) == source(ref)
    X = np.array([[-2.0, 0.0, 0.5, 1.0, 1.5, 3.0]])
    Y = np.array([[0.25, 2.0, 2.0, 1.0, 3.5, 7.0]])
    with np.errstate(all="ignore"):
        for a, b in zip(ours(X, Y), ref(X, Y), strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


_NO_F2PY = """
import sys
import numpy
import sympy
from fluidnet.symbolic.numeric import to_numpy

x = sympy.Symbol("x")
f = to_numpy(((x,),), [sympy.exp(-x) * x])
assert f([1.0])[0] == numpy.exp(-1.0)
print(sorted(m for m in ("numpy.f2py", "numpy.testing") if m in sys.modules))
"""


def test_first_function_does_not_load_numpys_lazy_submodules():
    """Issue 34: sympy makes the namespace of ``lambdify(modules="numpy")`` with ``from numpy
    import *``, which loads the submodules NumPy keeps lazy (``numpy.f2py``,
    ``numpy.testing``: 140 modules, 50 ms of CPU) at the first linearization of a process (a
    ``critical_value`` right after ``equilibrium()`` paid it: 134 ms on tandem_two_class, 90
    without). On main this child lists both."""
    import subprocess
    import sys

    res = subprocess.run(
        [sys.executable, "-c", _NO_F2PY], capture_output=True, text=True, check=True
    )
    assert res.stdout.strip().splitlines()[-1] == "[]", res.stdout
