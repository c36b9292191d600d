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


def test_an_estimate_rounded_onto_the_last_point_ends_there():
    """The values of a real search (a root's real part at the PI AQM model's crossing in Tp,
    issue 34): the fifth value, 2.3e-17 at a slope of about 3.5, puts the zero within 1e-17 of
    that point, below its rounding (1.1e-16). The next secant estimate rounds onto it, and the
    search ends there; it used to bisect from the far end, 24 more values."""
    start = (0.5128972665000315, 0.5288790577155593, -0.025195901626086457, 0.0036527411291482625)
    values = {
        0.5268554843160854: 9.716393600894604e-05,
        0.5268018634776248: 2.5733149387139537e-06,
        0.5267990238412132: -2.436528057301483e-06,
        0.5268004048932332: 6.798440647400204e-12,
        0.5268004048893797: 2.331865694672084e-17,
    }
    gen = illinois_steps(*start)
    asked = [next(gen)]
    with pytest.raises(StopIteration) as stop:
        while True:
            asked.append(gen.send(values[asked[-1]]))
    assert asked == list(values)  # the same points as the search asked for, no other
    assert stop.value.value == 0.5268004048893797
    # the slope between the two points either side: the zero is within 1e-16 of the answer
    rise = 6.798440647400204e-12 + 2.436528057301483e-06
    slope = rise / (0.5268004048932332 - 0.5267990238412132)
    assert abs(2.331865694672084e-17 / slope) < 1e-16
