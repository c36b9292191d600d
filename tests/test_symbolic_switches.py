"""fluidnet.symbolic.switches: with every weight set by the sign of its surface, the rewritten
expressions equal the originals (evaluated by sympy itself) at random points; shared and
mirrored surfaces, nesting, and the errors."""

import numpy as np
import pytest
import sympy

from fluidnet.errors import ModelError
from fluidnet.symbolic.switches import Switch, extract_switches

x, y, z = sympy.symbols("x y z", real=True)

EXPRS = [
    sympy.Heaviside(x - 1) * y,
    sympy.sign(y) * x**2 + sympy.Abs(x - y),
    sympy.Max(x, y, z) - sympy.Min(x, 2 * y),
    sympy.Piecewise((x, y > 0.5), (-x, x < z), (z**2, True)),
    sympy.Abs(sympy.Max(x, 0) - y),  # nested: the outer surface holds an inner weight
]


def _evaluate(new, switches, point):
    """Weights in evaluation order: 1 where the surface is positive, 0 where negative."""
    values = dict(point)
    for sw in switches:
        s = float(sw.surface.subs(values))
        values[sw.weight] = 1.0 if s > 0 else 0.0
    return [float(e.subs(values)) for e in new]


def test_rewritten_expressions_agree_with_the_originals():
    new, switches = extract_switches(EXPRS)
    assert all(isinstance(sw, Switch) for sw in switches)
    rng = np.random.default_rng(3)
    for _ in range(20):
        point = dict(zip((x, y, z), rng.uniform(-2.0, 2.0, 3), strict=True))
        expected = [float(e.subs(point)) for e in EXPRS]
        np.testing.assert_allclose(
            _evaluate(new, switches, point), expected, rtol=1e-12, atol=1e-12
        )
    # every weight appears linearly: the new expressions are free of switching functions
    for e in new:
        assert not e.has(
            sympy.Heaviside, sympy.sign, sympy.Abs, sympy.Max, sympy.Min, sympy.Piecewise
        )


def test_identical_and_mirrored_surfaces_share_a_weight():
    new, switches = extract_switches(
        [sympy.Heaviside(x - y), sympy.sign(x - y), sympy.Heaviside(y - x)]
    )
    assert len(switches) == 1
    w = switches[0].weight
    assert str(w) == "w[0]"
    assert new == [w, 2 * w - 1, 1 - w]


def test_inner_switches_come_first():
    _, switches = extract_switches([sympy.Abs(sympy.Max(x, 0) - y)], prefix="m")
    assert [str(s.weight) for s in switches] == ["m[0]", "m[1]"]
    assert switches[0].surface in (x, -x)  # Max(x, 0) is stored as Max(0, x)
    assert switches[1].surface.has(switches[0].weight)


def test_smooth_expressions_are_left_alone():
    e = sympy.exp(-x) * y + z**3
    new, switches = extract_switches([e])
    assert new == [e] and switches == []


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        (sympy.Piecewise((x, sympy.Eq(y, 0)), (y, True)), "single\ninequality|single inequality"),
        (sympy.Piecewise((x, (y > 0) & (x > 0)), (y, True)), "single inequality"),
        (sympy.Piecewise((x, y > 0), (y, x > 0)), r"\(value, True\)"),
    ],
)
def test_unsupported_piecewise_is_a_model_error(expr, message):
    with pytest.raises(ModelError, match=message):
        extract_switches([expr])
