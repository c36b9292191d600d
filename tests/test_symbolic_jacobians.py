"""fluidnet.symbolic.jacobians: forward-mode sparse Jacobians through shared subexpressions
equal sympy's dense Jacobian, entry by entry, and list no zero entries."""

import sympy

from fluidnet.symbolic.jacobians import forward_jacobian, sparse_jacobian

x = sympy.symbols("x0:6", real=True)
p = sympy.Symbol("p", positive=True)


def _exprs():
    load = x[0] + x[1] + x[2]  # a sum shared by several rows (a link's load)
    return [
        p * x[0] - x[0] * sympy.exp(-load),
        x[1] ** 2 / (1 + load) + sympy.sin(x[3]),
        sympy.Max(load - 1, 0) * x[2],
        x[4] * x[5] + sympy.log(1 + x[4] ** 2),
        p,  # constant row: no entries
    ]


def _dense(definitions, entries, shape):
    subs = {}
    for sym, val in definitions:
        subs[sym] = val.xreplace(subs)
    J = sympy.zeros(*shape)
    for row, col, d in entries:
        J[row, col] = d.xreplace(subs)
    return J


def test_sparse_jacobian_equals_sympy_jacobian():
    exprs = _exprs()
    definitions, entries = sparse_jacobian(exprs, list(x))
    J = _dense(definitions, entries, (len(exprs), len(x)))
    expected = sympy.Matrix(exprs).jacobian(sympy.Matrix(x))
    point = {v: sympy.Rational(k + 2, 7) for k, v in enumerate(x)} | {p: sympy.Rational(3, 2)}
    for i in range(len(exprs)):
        for j in range(len(x)):
            diff = (J[i, j] - expected[i, j]).subs(point)
            assert abs(float(diff)) < 1e-14, (i, j)
    # sparsity: exactly the structurally nonzero entries
    nonzero = {(i, j) for i in range(len(exprs)) for j in range(len(x)) if expected[i, j] != 0}
    assert {(r, c) for r, c, _ in entries} == nonzero


def test_forward_jacobian_outputs_rebuild_the_expressions():
    exprs = _exprs()
    values, derivs, outputs, entries = forward_jacobian(exprs, list(x))
    subs = {}
    for sym, val in values:
        subs[sym] = val.xreplace(subs)
    for e, out in zip(exprs, outputs, strict=True):
        assert sympy.simplify(sympy.sympify(out).xreplace(subs) - e) == 0
    assert not [e for e in entries if e[0] == 4]
