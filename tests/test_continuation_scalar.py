"""fluidnet.continuation.scalar: the Illinois zero finder against closed-form zeros, as a
generator and called directly."""

import math

import pytest

from fluidnet.continuation.scalar import RTOL, illinois, illinois_steps

DOTTIE = 0.7390851332151607  # the zero of cos x - x


@pytest.mark.parametrize(
    ("f", "a", "b", "zero"),
    [
        (lambda x: x**3 - 2.0, 0.0, 2.0, 2.0 ** (1 / 3)),
        (lambda x: math.cos(x) - x, 0.0, 1.0, DOTTIE),
        (lambda x: math.exp(x) - 10.0, 5.0, 0.0, math.log(10.0)),  # reversed bracket
        (lambda x: math.tanh(50 * (x - 0.3)), -1.0, 1.0, 0.3),  # steep: plain regula falsi stalls
    ],
)
def test_zero_to_rounding(f, a, b, zero):
    calls = []

    def counted(x):
        calls.append(x)
        return f(x)

    x = illinois(counted, a, b, f(a), f(b))
    assert x == pytest.approx(zero, rel=1e-12, abs=1e-14)
    assert len(calls) < 40  # superlinear, not bisection-slow


def test_generator_protocol_keeps_the_bracket():
    """Every point asked for lies inside the bracket; the return value is the zero."""
    f = lambda x: x * x - 3.0  # noqa: E731
    gen = illinois_steps(1.0, 2.0, f(1.0), f(2.0))
    asked = [next(gen)]
    try:
        while True:
            asked.append(gen.send(f(asked[-1])))
    except StopIteration as stop:
        result = stop.value
    assert all(1.0 < x < 2.0 for x in asked)
    assert result == pytest.approx(math.sqrt(3.0), rel=1e-13)


def test_exact_zero_returns_at_once():
    """f(c) = 0 at the first secant point (x - 0.5 on [0, 1]) ends the search there."""
    gen = illinois_steps(0.0, 1.0, -0.5, 0.5)
    assert next(gen) == 0.5
    with pytest.raises(StopIteration) as stop:
        gen.send(0.0)
    assert stop.value.value == 0.5


def test_tolerance_is_honoured():
    loose = illinois(lambda x: x**3 - 2.0, 0.0, 2.0, -2.0, 6.0, rtol=1e-4)
    assert abs(loose - 2.0 ** (1 / 3)) < 1e-3
    assert RTOL == 1e-13


def test_a_zero_at_zero_ends_on_the_absolute_floor():
    """sinh x on [-1, 0.5]: no relative tolerance is met near a zero at 0 itself (the estimates
    would shrink towards underflow); atol ends the search there (issue 33: a gain crossing at
    b = 0)."""
    calls = []

    def counted(x):
        calls.append(x)
        return math.sinh(x)

    x = illinois(counted, -1.0, 0.5, math.sinh(-1.0), math.sinh(0.5), atol=1e-15)
    assert abs(x) <= 1e-15
    assert len(calls) < 40 and min(abs(c) for c in calls) > 1e-300
