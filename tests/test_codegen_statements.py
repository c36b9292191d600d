"""fluidnet.codegen.statements: generated statements (with common subexpressions hoisted and
repeated shapes looped over index tables) compute what sympy.lambdify computes from the same
expressions, for a ring of flows large enough to be looped."""

import math

import numpy as np
import pytest
import sympy

from fluidnet.codegen.statements import (
    LOOP_MIN_GROUP,
    Tables,
    code_lines,
    delay_groups,
    looped_lines,
)

N = 12  # flows on a ring: N statements of each shape, >= LOOP_MIN_GROUP
X = [sympy.Symbol(f"x[{i}]", real=True) for i in range(N)]
Z = [sympy.Symbol(f"z[{i}]", real=True) for i in range(N)]
P = [sympy.Symbol(f"p[{i}]", real=True) for i in range(2)]


def _ring():
    """Each flow: a shared subexpression (the neighbour's load) and one common formula."""
    exprs = []
    for i in range(N):
        load = X[i] + X[(i + 1) % N]
        exprs.append(
            P[0] * Z[i] - P[1] * X[i] * load + sympy.exp(-load) * sympy.sin(Z[(i + 3) % N])
        )
    for i in range(N):  # the same loads again: hoisted into a looped temporary array
        load = X[i] + X[(i + 1) % N]
        exprs.append(sympy.cos(load) * P[1] + load**2)
    exprs.append(sum(X) / N - P[0])  # one odd statement
    return exprs


def _run(lines, tables, nout):
    source = "\n".join(
        ["import math", "import numpy as np", *tables.lines, "def f(x, z, p, out):", *lines]
    )
    namespace = {}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102
    out = np.full(nout, np.nan)
    return namespace, out, source


def _reference(exprs, x, z, p):
    f = sympy.lambdify([X, Z, P], exprs, modules="numpy")
    return np.array(f(list(x), list(z), list(p)), dtype=float)


@pytest.fixture(scope="module")
def values():
    rng = np.random.default_rng(5)
    return rng.uniform(0.1, 2.0, N), rng.uniform(-1.0, 1.0, N), np.array([0.7, 1.3])


def test_looped_lines_compute_the_expressions(values):
    exprs = _ring()
    tables = Tables("t")
    targets = list(range(len(exprs)))
    lines = looped_lines(exprs, targets, tables)
    namespace, out, source = _run(lines, tables, len(exprs))
    assert any(line.strip().startswith("for r in range(") for line in lines), source  # looped
    assert tables.lines  # with index tables
    assert any("np.empty(" in line for line in lines), source  # and looped temporaries
    x, z, p = values
    namespace["f"](x, z, p, out)
    np.testing.assert_allclose(out, _reference(exprs, x, z, p), rtol=1e-14)


def test_looped_lines_with_targets_out_of_order(values):
    exprs = _ring()
    targets = list(reversed(range(len(exprs))))
    tables = Tables("u")
    namespace, out, _ = _run(looped_lines(exprs, targets, tables), tables, len(exprs))
    x, z, p = values
    namespace["f"](x, z, p, out)
    np.testing.assert_allclose(out[targets], _reference(exprs, x, z, p), rtol=1e-14)


def test_code_lines_hoist_common_subexpressions(values):
    exprs = _ring()[:3]
    lines = code_lines(exprs, [f"out[{k}]" for k in range(3)])
    assert any(line.strip().startswith("_c0 =") for line in lines)
    namespace, out, _ = _run(lines, Tables("v"), 3)
    x, z, p = values
    namespace["f"](x, z, p, out)
    np.testing.assert_allclose(out, _reference(exprs, x, z, p), rtol=1e-14)
    assert code_lines([], []) == [] and looped_lines([], [], Tables("w")) == []


def test_few_statements_are_not_looped():
    exprs = _ring()[: LOOP_MIN_GROUP - 1]
    lines = looped_lines(exprs, list(range(len(exprs))), Tables("s"))
    assert not any("for r in range" in line for line in lines)


def test_delay_groups_read_each_lag_from_its_row():
    """Lags tau0 + x[i] / p[1] for each flow, and one odd lag: two groups."""
    delays = [P[0] + X[i] / P[1] for i in range(N)] + [sympy.Float(0.5)]
    tables = Tables("d")
    group_table, row_table, bodies = delay_groups(delays, tables)
    assert len(bodies) == 2
    namespace = {"np": np, "math": math}
    exec("\n".join(tables.lines), namespace)  # noqa: S102
    x, p = np.linspace(0.2, 1.4, N), np.array([0.1, 2.0])
    for k, d in enumerate(delays):
        g, r = namespace[group_table][k], namespace[row_table][k]
        got = eval(bodies[g], namespace | {"x": x, "p": p, "r": r})  # noqa: S307
        expected = float(d.subs({**dict(zip(X, x, strict=True)), **dict(zip(P, p, strict=True))}))
        assert got == pytest.approx(expected, rel=1e-15)
