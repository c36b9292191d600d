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
