"""fluidnet.linear.inclusion: inclusion discs verify Lambert-W roots of a scalar DDE, count
a double root of a polynomial as one root of multiplicity 2 at its exact value, and refuse
points that are not roots."""

import numpy as np
from scipy.special import lambertw

from fluidnet.linear.inclusion import Inclusion, enclose, winding_numbers

A, B, TAU = -0.1, -20.0, 1.0


def _dde(s):
    s = np.asarray(s, dtype=complex)
    e = np.exp(-s * TAU)
    f = s - A - B * e
    with np.errstate(all="ignore"):
        return f, (1.0 + B * TAU * e) / f


def _polynomial(zeros):
    def evaluate(s):
        s = np.asarray(s, dtype=complex)
        f = np.prod(s[:, None] - zeros[None, :], axis=1)
        with np.errstate(all="ignore"):
            g = np.sum(1.0 / (s[:, None] - zeros[None, :]), axis=1)
        return f, g

    return evaluate


def test_lambert_w_roots_are_verified_and_enclosed():
    roots = np.array([A + lambertw(B * TAU * np.exp(-A * TAU), k) / TAU for k in range(-4, 5)])
    inc = enclose(_dde, roots, 1.0 + np.abs(roots))
    assert isinstance(inc, Inclusion)
    assert np.all(inc.verified) and np.all(inc.multiplicity == 1)
    assert np.all(inc.radius < 1e-9 * (1.0 + np.abs(roots)))
    np.testing.assert_array_equal(inc.value, roots)


def test_points_that_are_not_roots_are_refused():
    roots = np.array([A + lambertw(B * TAU * np.exp(-A * TAU), 0) / TAU])
    inc = enclose(_dde, np.array([roots[0] + 0.3, 5.0 + 0.0j]), np.array([1.0, 1.0]))
    assert not inc.verified.any()
    assert np.all(np.isnan(inc.radius))
    empty = enclose(_dde, np.zeros(0), np.zeros(0))
    assert empty.value.size == 0


def test_a_double_root_is_one_root_of_multiplicity_two():
    """(s - 1)^2 (s + 2) computed from its factors: the cluster's mean is the root, to far
    better than the sqrt(eps) split of the two zeros a perturbed candidate sees."""
    f = _polynomial(np.array([1.0, 1.0, -2.0]))
    inc = enclose(f, np.array([1.0 + 1e-9 + 0.0j]), np.array([2.0]), real_system=True)
    assert inc.multiplicity[0] == 2
    assert abs(inc.value[0] - 1.0) < 1e-12 and inc.value[0].imag == 0.0
    assert inc.radius[0] >= 1e-9


def test_a_candidate_where_f_is_rounding_noise_is_enclosed():
    """A double root split by rounding, written out: f = (s + 1)^2 + c with c = 1.1e-16 has
    the zeros -1 +- sqrt(c) j, whose mean is -1. At the candidate -1 - 8e-16, f is c and
    Newton's correction is 0.07, beyond the largest circle (1e-4): the candidate was refused
    and the rightmost root of x' = -x(t - 1)/e dropped (NumPy 2.4.6, SciPy 1.17.1 gave such a
    candidate). Read again 1.5e-8 away, f'/f is the cluster's."""
    c = 1.1e-16

    def f(s):
        s = np.asarray(s, dtype=complex)
        v = (s + 1.0) ** 2 + c
        with np.errstate(all="ignore"):
            return v, 2.0 * (s + 1.0) / v

    z = np.array([-1.0 - 8e-16 + 0.0j])
    assert abs(1.0 / f(z)[1][0]) > 1e-4  # the case: Newton's correction beyond the limit
    inc = enclose(f, z, np.array([1.0]), real_system=True)
    assert inc.multiplicity[0] == 2
    assert abs(inc.value[0] + 1.0) < 1e-12 and inc.value[0].imag == 0.0
    assert np.sqrt(c) < inc.radius[0] < 1e-6  # both zeros inside, as tight as the split


def test_winding_numbers_count_zeros_inside_circles():
    f = _polynomial(np.array([0.0, 0.5, 3.0 + 1.0j]))
    count, resolved, h, g = winding_numbers(
        f, np.array([0.0, 0.0, 3.0 + 1.0j, 10.0]), np.array([0.25, 1.0, 0.1, 1.0]), 256
    )
    assert list(count) == [1, 2, 1, 0] and resolved.all()
    assert h.shape == g.shape == (4, 256)
    # a circle through a zero is not resolved
    _, resolved, _, _ = winding_numbers(f, np.array([0.0]), np.array([0.5]), 32)
    assert not resolved[0]
