"""Semisimple multiple roots along a root path: Newton's method of
:func:`fluidnet.stability.crossing.newton_roots` converges to them, and ``critical_value`` of a
network whose alike flows differ in their weights (so that their differences are not factored
out, :mod:`fluidnet.linear.aggregate`) follows its four-fold roots instead of crawling.

Independent sources: Lambert's W for the roots of ``s + a e^{-s tau}``, and the spectral
abscissa of the whole system either side of the critical value.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.stability.crossing import newton_roots

sys.path.insert(0, str(Path(__file__).parent))
import user_laws  # noqa: E402

A, TAU = 0.3, 1.0
#: roots of s + A e^{-s TAU}: W_j(-A TAU) / TAU (j = 0: the real pair, j = 1: a complex one)
ROOTS = np.array([lambertw(-A * TAU, j) / TAU for j in (0, -1, 1, 2)])


def _starts() -> np.ndarray:
    return ROOTS * (1 + 0.01) + 0.004j * np.abs(ROOTS)


def test_newton_converges_at_a_four_fold_root():
    """Four uncoupled copies of ``x' = -A x(t - TAU)``: every root four-fold (the plain
    Newton step shrinks by 3/4 an iteration and does not converge within 40)."""
    lin = fn.LinearDDE(np.zeros((4, 4)), [(TAU, -A * np.eye(4))])
    lam, ok = newton_roots(lin, _starts())
    assert ok.all()
    np.testing.assert_allclose(lam, ROOTS, rtol=1e-10)


def test_newton_converges_at_a_triple_root_of_a_row_dependent_coupling():
    """Four flows on one link, each fed back in proportion to its own rate ``c_k``:
    ``A = -A I - c 1^T`` (rows differ), ``det Delta = (s + A e^{-s TAU})^3 (s + (A + sum c)
    e^{-s TAU})``: the roots of the first factor are triple."""
    c = np.array([0.05, 0.11, 0.02, 0.07])
    A1 = -A * np.eye(4) - np.outer(c, np.ones(4))
    lin = fn.LinearDDE(np.zeros((4, 4)), [(TAU, A1)])
    lam, ok = newton_roots(lin, _starts())
    assert ok.all()
    np.testing.assert_allclose(lam, ROOTS, rtol=1e-10)
    # a simple root next to them is still found by the plain steps
    simple = lambertw(-(A + c.sum()) * TAU, 1) / TAU
    lam, ok = newton_roots(lin, np.array([simple * 1.01]))
    assert ok.all()
    np.testing.assert_allclose(lam, [simple], rtol=1e-12)


def test_critical_gain_of_a_ring_with_four_fold_roots():
    """30 flows on a ring of 6 links (1 to 3 hops), unequal weights: the five flows of each
    route differ in rate, so no class of alike states factors the determinant, and each
    route's differences are a four-fold root of ``s + kappa P e^{-s T}`` (it took minutes
    before Newton's method recognized them). The critical gain is checked by the whole
    system's spectral abscissa either side."""
    m = user_laws.kelly_thirty_unequal()
    cv = fn.critical_value(m, "kappa", 0.05, 20.0)
    assert (cv.count_before, cv.count_after) == (0, 2)
    below = m.linearize(params={"kappa": cv.value * (1 - 1e-6)}).spectral_abscissa()
    above = m.linearize(params={"kappa": cv.value * (1 + 1e-6)}).spectral_abscissa()
    assert below < 0 < above
    assert abs(above) < 1e-4 and abs(below) < 1e-4


def test_a_longer_step_at_a_simple_root_is_given_up(monkeypatch):
    """A start whose steps were taken for a double root's (forced here) at a simple root of
    ``s + A e^{-s TAU}`` (distinct roots: one copy) jumps across it; the steps go back to
    Newton's and converge."""
    import fluidnet.stability.crossing as crossing

    monkeypatch.setattr(crossing, "_multiplicity_of_ratio", lambda r: np.full(r.shape, 2))
    lin = fn.LinearDDE(0.0, [(TAU, -A)])
    lam, ok = newton_roots(lin, _starts())
    assert ok.all()
    np.testing.assert_allclose(lam, ROOTS, rtol=1e-10)
