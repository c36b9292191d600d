"""fluidnet.linear.newton: Newton's method on det Delta converges to Lambert-W roots of a
scalar DDE, keeps real candidates real, and reports how far unconverged candidates were."""

import numpy as np
from scipy.special import lambertw

from fluidnet.linear.newton import newton_roots

A, B, TAU = 0.2, -1.5, 1.0  # x' = a x + b x(t - tau)


def _logderiv(lam):
    e = np.exp(-lam * TAU)
    return (1.0 + B * TAU * e) / (lam - A - B * e)


ROOTS = np.array([A + lambertw(B * TAU * np.exp(-A * TAU), k) / TAU for k in range(-3, 4)])


def test_converges_to_lambert_w_roots():
    lam, last = newton_roots(_logderiv, ROOTS * (1 + 0.02) + 0.01j, real=True)
    np.testing.assert_allclose(lam, ROOTS, rtol=1e-12)
    assert np.all(last <= 1e-8 * (1 + np.abs(lam)))


def test_real_candidates_stay_real():
    """s - 0.2 + 0.3 e^{-s}: b e^{-a} = -0.246 > -1/e, so two real roots (W_0 and W_-1)."""
    a, b = 0.2, -0.3

    def logderiv(lam):
        e = np.exp(-lam)
        return (1.0 + b * e) / (lam - a - b * e)

    real_roots = [a + lambertw(b * np.exp(-a), k).real for k in (0, -1)]
    lam, _ = newton_roots(logderiv, np.array([0.5 + 0.0j, -3.0 + 0.0j]), real=True)
    assert np.all(lam.imag == 0.0)
    np.testing.assert_allclose(lam.real, real_roots, rtol=1e-12)


def test_maxiter_leaves_the_last_step_large():
    lam, last = newton_roots(_logderiv, np.array([30.0 + 40.0j]), real=False, maxiter=2)
    assert last[0] > 1e-3
