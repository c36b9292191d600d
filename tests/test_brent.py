"""fluidnet.brent: Brent's root finder in plain Python (scipy.optimize's import cost 0.3 s of
a first margins call, issue 34), against closed forms and SciPy's brentq."""

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.brent import brentq

# (f, a, b, the root in closed form)
CASES = [
    (math.cos, 0.0, 2.0, math.pi / 2),
    (lambda x: x**3 - 2.0, 0.0, 3.0, 2.0 ** (1 / 3)),
    (lambda x: math.exp(x) - 2.0, -5.0, 5.0, math.log(2.0)),
    (lambda x: math.atan(1e6 * (x - 0.3)), -1.0, 1.0, 0.3),  # steep
    # a triple root: interpolation creeps (to 1e-18: 180 evaluations for SciPy, 146 here)
    (lambda x: (x - 1e-3) ** 3, -1.0, 1.0, 1e-3),
    (lambda x: math.tanh(x - 7.0) ** 1, 0.0, 1e4, 7.0),  # far from the ends
    (lambda x: x * math.exp(x) + 2 * math.exp(-2), -2.5, -1.2, -2.0),  # W_-1(-2 e^-2) = -2
    (lambda x: x / 1e300 - 1.0, 1.0, 1e305, 1e300),  # a huge root
    (lambda x: x - 1e-200, 0.0, 1.0, 1e-200),  # a tiny one (xtol below it)
]


@pytest.mark.parametrize("f, a, b, root", CASES)
def test_roots_in_closed_form_to_the_asked_tolerance(f, a, b, root):
    for xtol, rtol in ((1e-300, 1e-15), (2e-12, 4 * np.finfo(float).eps), (1e-6, 1e-10)):
        x = brentq(f, a, b, xtol=xtol, rtol=rtol, maxiter=500)
        assert isinstance(x, float)
        # the located point within the tolerance of the root (a triple root is flat: its
        # point is only as good as the function's rounding allows)
        slack = 1e-5 if "** 3" in repr(f) else 0.0
        assert abs(x - root) <= xtol + rtol * abs(root) + 4e-16 * abs(root) + slack


@pytest.mark.parametrize("f, a, b, root", CASES)
def test_as_few_evaluations_as_scipys_brentq_give_or_take(f, a, b, root):
    from scipy.optimize import brentq as scipy_brentq

    calls = []

    def counted(x):
        calls.append(x)
        return f(x)

    x = brentq(counted, a, b, xtol=1e-300, rtol=1e-15, maxiter=500)
    ref, info = scipy_brentq(f, a, b, xtol=1e-300, rtol=1e-15, full_output=True, maxiter=500)
    assert info.converged
    assert abs(x - ref) <= 2e-15 * abs(ref) + 1e-300
    assert len(calls) <= info.function_calls + 4


def test_an_endpoint_root_and_a_sign_change_without_a_root():
    assert brentq(lambda x: x - 1.0, 1.0, 3.0) == 1.0
    assert brentq(lambda x: x - 3.0, 1.0, 3.0) == 3.0
    # a jump (no root): the bracket closes on the jump, as bisection would
    x = brentq(lambda x: -1.0 if x < 0.25 else 1.0, 0.0, 1.0, xtol=1e-12)
    assert abs(x - 0.25) <= 1e-12


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="same sign"):
        brentq(math.cos, 0.0, 1.0)
    with pytest.raises(ValueError, match="not finite"):
        brentq(lambda x: math.nan if x > 0.5 else -1.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="rtol"):
        brentq(math.cos, 0.0, 2.0, rtol=1e-17)
    with pytest.raises(ValueError, match="xtol"):
        brentq(math.cos, 0.0, 2.0, xtol=0.0)
    with pytest.raises(fn.OptionError, match="tolerance"):
        brentq(math.cos, 0.0, 2.0, tolerance=1e-3)
    with pytest.raises(RuntimeError, match="2 iterations"):
        brentq(math.cos, 0.0, 2.0, xtol=1e-300, rtol=1e-15, maxiter=2)
    x = brentq(math.cos, 0.0, 2.0, xtol=1e-300, rtol=1e-15, maxiter=2, disp=False)
    assert 0.0 < x < 2.0


def test_extra_arguments():
    assert brentq(lambda x, c: x * x - c, 0.0, 3.0, args=(2.0,), xtol=1e-15) == pytest.approx(
        math.sqrt(2.0), abs=2e-15
    )


def test_the_full_output_form_is_refused():
    with pytest.raises(fn.OptionError, match="full_output"):
        brentq(math.cos, 0.0, 2.0, full_output=True)
