"""Ball functions of sympy expressions (fluidnet.proof.arbcode) and exact inputs
(fluidnet.proof.exact): every ball contains the exact value, checked against sympy's
high-precision evaluation at sample points of the input balls."""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np
import pytest
import sympy

from fluidnet.errors import ParameterError
from fluidnet.proof.arbcode import NotProved, compile_balls
from fluidnet.proof.exact import (
    ball,
    decimal_string,
    exact_value,
    fixed_interval,
    interval_of,
    read_interval,
)

x, y = sympy.symbols("x y", real=True)
EXPRS = [
    x**2 + y / 3,
    (x - y) ** 4 - 2 * x**3,
    sympy.exp(-x) * sympy.sin(3 * y) / (1 + y**2),
    sympy.sqrt(1 + x**2) + sympy.log(2 + y),
    sympy.Max(0, x - 0.5) / (2 + y) + sympy.Min(x, y) + sympy.Abs(x - y),
    sympy.Piecewise((x * y, y > 0.25), (x - y, True)),
    0.1 * x + sympy.Rational(1, 7) * y**-2,
    sympy.atan(x) * sympy.tanh(y) + x ** sympy.Rational(3, 2),
]


@pytest.mark.parametrize("box", [((0.1, 0.4), (0.3, 0.9)), ((0.6, 1.0), (0.5, 0.6))])
def test_balls_contain_the_exact_values(box):
    f = compile_balls(EXPRS, [x, y])
    balls = [flint.arb(0.5 * (lo + hi), 0.5 * (hi - lo)) for lo, hi in box]
    out = f(balls)
    rng = np.random.default_rng(0)
    for _ in range(25):
        pt = {x: sympy.Float(rng.uniform(*box[0]), 30), y: sympy.Float(rng.uniform(*box[1]), 30)}
        for e, b in zip(EXPRS, out, strict=True):
            exact = sympy.N(e.subs(pt), 30)
            lo, hi = interval_of(flint.arb(b))
            assert lo <= Fraction(str(exact)) <= hi, (e, pt)


def test_even_powers_of_a_ball_around_zero_are_nonnegative():
    f = compile_balls([x**2, x**4 - 1], [x])
    sq, q = f([flint.arb(0, 1)])
    # [0, 1] and [-1, 0] up to arb's radius rounding (30 bits), not [-1, 1] and [-2, 0]
    tol = 1e-7
    assert interval_of(sq)[0] >= -tol and interval_of(sq)[1] <= 1 + tol
    assert interval_of(q)[0] >= -1 - tol and interval_of(q)[1] <= tol
    (wide,) = compile_balls([x**2], [x])([flint.arb(0.6, 0.3)])  # [0.09, 0.81], not [-0.09, ..]
    assert wide > 0.089 and wide < 0.811


def test_undecided_switches_and_domains_raise():
    f = compile_balls([sympy.Heaviside(x - 1) * y], [x, y])
    assert f([flint.arb(2, 0.5), flint.arb(3)])[0] == 3
    with pytest.raises(NotProved, match="switching function x - 1"):
        f([flint.arb(1, 0.5), flint.arb(3)])
    g = compile_balls([sympy.log(x)], [x])
    with pytest.raises(NotProved, match="not proved positive"):
        g([flint.arb(0, 0.5)])
    h = compile_balls([sympy.Piecewise((x, x < 1), (1, True))], [x])
    with pytest.raises(NotProved, match="not decided"):
        h([flint.arb(1, 0.1)])
    with pytest.raises(NotProved, match="cannot be enclosed"):
        compile_balls([sympy.gamma(x)], [x])


def test_exact_inputs():
    assert exact_value("v", 0.1) == Fraction(1, 10)
    assert exact_value("v", Fraction(1, 3)) == Fraction(1, 3)
    assert exact_value("v", sympy.Rational(2, 7)) == Fraction(2, 7)
    assert exact_value("v", np.float64(0.25)) == Fraction(1, 4)
    with pytest.raises(ParameterError):
        exact_value("v", "0.1")
    with pytest.raises(ParameterError):
        exact_value("v", math.nan)
    lo, hi = fixed_interval("v", 0.1)  # the decimal 1/10 and the double above it
    assert lo == Fraction(1, 10) and hi == Fraction(0.1) and lo < hi
    assert fixed_interval("v", 3) == (3, 3)
    lo, hi = fixed_interval("v", sympy.pi)
    assert lo < Fraction(str(sympy.N(sympy.pi, 40))) < hi
    b = ball((Fraction(1, 3), Fraction(1, 2)))
    lo, hi = interval_of(b)
    assert lo <= Fraction(1, 3) and hi >= Fraction(1, 2)
    third = read_interval([decimal_string(Fraction(1, 3), d) for d in ("down", "up")])
    assert third[0] < Fraction(1, 3) < third[1]
    down, up = (Fraction(decimal_string(Fraction(2, 3), d)) for d in ("down", "up"))
    assert down < Fraction(2, 3) < up
