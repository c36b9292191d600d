"""LinearDDE construction, validation and the characteristic function."""

import numpy as np
import pytest

import fluidnet as fn


def test_scalar_characteristic_closed_form():
    lin = fn.LinearDDE(-0.5, [(1.0, -1.2)])
    s = np.array([0.3 + 2j, -1 + 0.5j, 4.0])
    np.testing.assert_allclose(lin.characteristic(s), s + 0.5 + 1.2 * np.exp(-s), rtol=1e-14)
    assert lin.n == 1 and lin.max_delay == 1.0


def test_matrix_characteristic_closed_form():
    A0 = np.array([[0.0, 1.0], [-2.0, -0.1]])
    A1 = np.array([[0.0, 0.0], [-0.5, 0.0]])
    lin = fn.LinearDDE(A0, {0.7: A1})
    s = 0.2 + 1.3j
    expected = s * (s + 0.1) + 2.0 + 0.5 * np.exp(-0.7 * s)
    assert lin.characteristic(s) == pytest.approx(expected, rel=1e-13)
    assert lin.characteristic_matrix(np.zeros((3, 4))).shape == (3, 4, 2, 2)


def test_derivative_matches_finite_difference():
    lin = fn.LinearDDE([[0.0, 1.0], [-1.0, 0.0]], [(0.4, [[0.0, 0.0], [-0.3, 0.2]])])
    s, h = 0.1 + 0.9j, 1e-6
    fd = (lin.characteristic_matrix(s + h) - lin.characteristic_matrix(s - h)) / (2 * h)
    np.testing.assert_allclose(lin.characteristic_derivative(s), fd, atol=1e-8)


def test_merging_zero_delay_and_zero_blocks():
    lin = fn.LinearDDE(1.0, [(0.0, 2.0), (0.5, 1.0), (0.5 + 1e-15, -1.0), (0.3, 4.0)])
    assert lin.A0[0, 0] == 3.0
    assert lin.delays == (0.3,)  # the two 0.5 blocks cancel and are dropped


@pytest.mark.parametrize(
    "A0, delayed, match",
    [
        ([[1.0, 2.0]], [], "square"),
        ([[np.nan]], [], "non-finite"),
        (0.0, [(-1.0, 1.0)], "delay tau_0"),
        (0.0, [(np.inf, 1.0)], "delay tau_0"),
        (0.0, [(1.0, [[1.0, 0.0], [0.0, 1.0]])], "expected"),
        (0.0, [(1.0,)], "pair"),
        (np.zeros((0, 0)), [], "A0 is empty"),
    ],
)
def test_invalid_input(A0, delayed, match):
    with pytest.raises(fn.ModelError, match=match):
        fn.LinearDDE(A0, delayed)


def test_state_names_length():
    with pytest.raises(ValueError, match="state names"):
        fn.LinearDDE(np.eye(2), state_names=["a"])


def test_options_that_are_not_numbers_and_roots_that_are_not_there():
    """Issue 33: is_stable(margin=nan) returned False (NaN compares False); roots(k=10**6)
    returned 82 roots without a word. x' = -x(t - 1) is stable with abscissa -0.3181
    (Lambert W: W_0(-1))."""
    import warnings

    lin = fn.LinearDDE(0.0, [(1.0, -1.0)])
    for bad in (float("nan"), float("inf"), "0.1"):
        with pytest.raises(fn.OptionError, match="margin"):
            lin.is_stable(margin=bad)
    assert lin.is_stable(margin=0.3) and not lin.is_stable(margin=0.32)
    with pytest.warns(RuntimeWarning, match=r"roots\(k=1000000\).*only \d+ roots returned"):
        many = lin.roots(k=10**6)
    assert 10 < len(many) < 10**6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(lin.roots(k=20)) == 20  # found: no warning
        assert len(fn.LinearDDE(-np.eye(2)).roots(k=6)) == 1  # an ODE has its n roots: no warning
