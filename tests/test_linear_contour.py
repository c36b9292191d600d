"""fluidnet.linear.contour: zero counts and power sums in a rectangle, against polynomials with
known zeros and the Lambert-W roots of a scalar DDE; Newton's identities recover the zeros."""

import numpy as np
from scipy.special import lambertw

from fluidnet.linear.contour import RectangleCount, count_in_rectangle, zeros_from_power_sums

ZEROS = np.array([0.3 + 0.4j, -0.5 - 1.2j, 2.5 + 0.1j, 0.1 - 0.2j, -3.0 + 3.0j])


def _polynomial(zeros):
    def evaluate(s):
        s = np.asarray(s, dtype=complex)
        f = np.prod(s[:, None] - zeros[None, :], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.sum(1.0 / (s[:, None] - zeros[None, :]), axis=1)
        return f, g

    return evaluate


OPTIONS = {"powers": 3, "spacing": 0.1, "max_samples": 100_000}


def test_count_and_zeros_of_a_polynomial():
    """[-1, 1] x [-1.5, 1] holds 0.3+0.4j, -0.5-1.2j and 0.1-0.2j. The power sums come from
    the trapezoidal rule on the samples, a first guess whose error falls as spacing^2."""
    inside = ZEROS[[0, 1, 3]]
    exact = np.array([np.sum(inside**p) for p in (1, 2, 3)])
    errors = []
    for spacing in (0.1, 0.01):
        r = count_in_rectangle(
            _polynomial(ZEROS),
            -1.0,
            1.0,
            -1.5,
            1.0,
            symmetric=False,
            **dict(OPTIONS, spacing=spacing),
        )
        assert isinstance(r, RectangleCount)
        assert r.count == 3
        errors.append(np.max(np.abs(r.power_sums - exact)))
    assert errors[1] < 1e-4
    assert 50 < errors[0] / errors[1] < 200
    found = np.sort_complex(zeros_from_power_sums(r.power_sums, r.count))
    np.testing.assert_allclose(found, np.sort_complex(inside), atol=1e-4)


def test_symmetric_count_of_a_real_function():
    """s - a - b e^{-s tau} (real coefficients): only the upper half is sampled; the count
    and the power sums match the Lambert-W roots in the rectangle."""
    a, b, tau = -0.1, -20.0, 1.0

    def evaluate(s):
        s = np.asarray(s, dtype=complex)
        e = np.exp(-s * tau)
        f = s - a - b * e
        return f, (1.0 + b * tau * e) / f

    roots = np.array([a + lambertw(b * tau * np.exp(-a * tau), k) / tau for k in range(-30, 31)])
    lo, hi, y = -1.0, 2.0, 16.0
    inside = roots[(roots.real > lo) & (roots.real < hi) & (np.abs(roots.imag) < y)]
    r = count_in_rectangle(
        evaluate,
        lo,
        hi,
        -y,
        y,
        symmetric=True,
        powers=inside.size,
        spacing=0.05,
        max_samples=200_000,
    )
    assert r.count == inside.size == 6
    # a first guess (trapezoidal rule): 1e-4 relative at this spacing
    np.testing.assert_allclose(
        r.power_sums[:2], [np.sum(inside**p).real for p in (1, 2)], rtol=1e-4
    )
    found = zeros_from_power_sums(r.power_sums, r.count)
    distance = np.abs(found[:, None] - inside[None, :])
    assert np.all(distance.min(axis=0) < 1e-3) and np.all(distance.min(axis=1) < 1e-3)


def test_zero_on_the_boundary_or_no_budget_gives_no_count():
    on_edge = count_in_rectangle(
        _polynomial(np.array([1.0 + 0.5j])), -1.0, 1.0, -1.0, 1.0, symmetric=False, **OPTIONS
    )
    assert on_edge.count is None
    small = dict(OPTIONS, max_samples=10)
    assert (
        count_in_rectangle(_polynomial(ZEROS), -1.0, 1.0, -1.5, 1.0, symmetric=False, **small).count
        is None
    )


def test_newton_identities():
    z = np.array([1.0, 2.0, -3.0 + 1j])
    sums = np.array([np.sum(z**p) for p in (1, 2, 3)])
    np.testing.assert_allclose(
        np.sort_complex(zeros_from_power_sums(sums, 3)), np.sort_complex(z), atol=1e-12
    )
    assert zeros_from_power_sums(np.zeros(0), 0).size == 0
