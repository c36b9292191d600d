"""critical_value on systems whose alike flows factor the determinant (issue 34):
:mod:`fluidnet.stability.factoredpaths` and :func:`fluidnet.linear.aggregate.aggregation_by`.

Independent sources: the closed form of the scalar factor ``s + k exp(-s tau)`` (a pair on the
axis at ``k tau = pi / 2``, ``omega = k``; its roots are ``W_j(-k tau) / tau``, Lambert W), the
determinant identity evaluated directly, and the pointwise spectral abscissa either side.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear.aggregate import aggregation, aggregation_by
from fluidnet.linear.stacked import Stack

sys.path.insert(0, str(Path(__file__).parent))
import user_laws  # noqa: E402

C, TAU = 8, 0.2


def star(k: float = 1.0, g: float = 0.5, h: float = 0.05) -> fn.LinearDDE:
    """``C`` alike flows ``x_i' = -k x_i(t - TAU) + g u`` on one link ``u' = -u + h sum x_i``:
    ``det Delta = (s + k e^{-s TAU})^(C - 1) det Delta_red``."""
    n = C + 1
    A0 = np.zeros((n, n))
    A1 = np.zeros((n, n))
    for i in range(C):
        A1[i, i] = -k
        A0[i, C] = g
        A0[C, i] = h
    A0[C, C] = -1.0
    return fn.LinearDDE(A0, [(TAU, A1)])


def _det(lin: fn.LinearDDE, s: complex) -> complex:
    delayed = zip(lin.delays, lin.A, strict=True)
    D = s * np.eye(lin.n) - lin.A0 - sum(a * np.exp(-s * t) for t, a in delayed)
    return complex(np.linalg.det(D))


def test_aggregation_by_factors_the_determinant_and_refuses_a_broken_class():
    lin = star(k=3.0)
    agg = aggregation(Stack.from_systems([lin]))
    assert agg is not None
    other = star(k=5.0, g=0.3)
    by = aggregation_by(Stack.from_systems([other]), agg.classes, agg.transposed)
    assert by is not None
    for s in (0.3 + 2.0j, -0.7 + 9.0j):
        red = by.reduced
        d_red = _det(fn.LinearDDE(red.A0[0], [(red.tau[0, 0], red.A[0, 0])]), s)
        f = s + 5.0 * np.exp(-s * TAU)  # the closed-form factor of the alike flows
        assert abs(_det(other, s) - f ** (C - 1) * d_red) <= 1e-10 * abs(_det(other, s))
    broken = star(k=5.0)
    broken.A[0][2, 2] = -5.5  # flow 2 no longer alike
    assert aggregation_by(Stack.from_systems([broken]), agg.classes, agg.transposed) is None


def test_a_factor_that_crosses_first_gives_the_closed_form_with_its_multiplicity():
    # the alike flows' factor s + k e^{-s tau} crosses at k = pi / (2 tau) with omega = k, a
    # pair of multiplicity C - 1 (before the reduced system): the count jumps by 2 (C - 1).
    # (The unfactored path does not finish on this 7-fold pair in 5 minutes.)
    cv = fn.critical_value(star, "k", 1.0, 20.0)
    k_c = math.pi / (2 * TAU)
    assert cv.value == pytest.approx(k_c, rel=1e-11)
    assert cv.omega == pytest.approx(k_c, rel=1e-11)
    assert (cv.count_before, cv.count_after) == (0, 2 * (C - 1))
    # the crossing root is the principal Lambert W root of the factor there
    assert cv.root == pytest.approx(complex(lambertw(-cv.value * TAU, 0)) / TAU, abs=1e-8)


def test_a_reduced_crossing_first_is_confirmed_pointwise():
    # stronger coupling: the reduced system crosses first, below pi / (2 tau)
    def factory(k: float = 1.0) -> fn.LinearDDE:
        return star(k, g=0.5, h=-0.2)

    cv = fn.critical_value(factory, "k", 0.5, 20.0)
    assert cv.value < math.pi / (2 * TAU)
    assert (cv.count_before, cv.count_after) == (0, 2)
    assert factory(cv.value * (1 - 1e-6)).spectral_abscissa() < 0
    assert factory(cv.value * (1 + 1e-6)).spectral_abscissa() > 0


def test_kelly_twenty_critical_gain_by_the_pointwise_abscissa():
    law = user_laws.LAWS["kelly_twenty"]
    m = law.build()
    name, (lo, hi) = law.sweep
    cv = fn.critical_value(m, name, lo, hi)
    assert (cv.count_before, cv.count_after) == (0, 2)
    below = m.linearize(params={name: cv.value * (1 - 1e-6)}).spectral_abscissa()
    above = m.linearize(params={name: cv.value * (1 + 1e-6)}).spectral_abscissa()
    assert below < 0 < above
    assert abs(above) < 1e-4 and abs(below) < 1e-4


@pytest.mark.parametrize("k", [2.0, 7.0, 8.0, 40.0])
def test_a_factor_part_is_counted_by_the_lambert_closed_form(k):
    # the factor part (s + k e^{-s TAU}, one state) of the star is counted in closed form
    # (no discretization): equal to the general count of the same system by discretization,
    # and to the pairs that entered at k TAU = pi/2 + 2 j pi
    from fluidnet.stability.crossing import Sweep
    from fluidnet.stability.factoredpaths import PartSweep, _Parts

    sweep = Sweep(star, "k", {})
    part = PartSweep(sweep, _Parts.of(sweep, 1.0), 1)
    closed = part.count(k)
    assert closed.roots.n_nodes == 0 and closed.roots.certified  # not a discretization
    general = Sweep(lambda k: part.lin(k), "k", {}).count(k)
    assert general.roots.n_nodes > 0
    pairs = sum(1 for j in range(10) if math.pi / 2 + 2 * j * math.pi < k * TAU)
    assert closed.count == general.count == 2 * pairs
    for r in closed.roots:  # each root one of the factor, W_j(-k TAU) / TAU
        w = r.value * TAU
        assert abs(w * np.exp(w) + k * TAU) <= 1e-12 * (1 + k * TAU)


def test_a_quiet_factor_part_is_not_followed_and_a_crossing_one_is(monkeypatch):
    # the star's factor s + k e^{-s TAU} crosses at k = pi / (2 TAU) = 7.85. With g = 2,
    # h = -1 the reduced system crosses first, near 6.1, and its checkpoint after that is
    # below 7.85: the factor part has no crossing up to there, its Hayes margins along the
    # reduced path show it, and it is not followed. With the factor crossing first it is
    # followed (the closed form replaces a path only where its theorem covers the case).
    from fluidnet.stability import factoredpaths

    followed = []
    real = factoredpaths.follow_roots

    def spy(sweep, lo, hi, **kw):
        followed.append(sweep.index)
        return real(sweep, lo, hi, **kw)

    def factory(k: float = 1.0) -> fn.LinearDDE:
        return star(k, g=2.0, h=-1.0)

    monkeypatch.setattr(factoredpaths, "follow_roots", spy)
    cv = fn.critical_value(factory, "k", 0.5, 20.0)
    assert followed == [0] and cv.bracket[1] < math.pi / (2 * TAU)
    assert (cv.count_before, cv.count_after) == (0, 2)
    assert factory(cv.value * (1 - 1e-6)).spectral_abscissa() < 0
    assert factory(cv.value * (1 + 1e-6)).spectral_abscissa() > 0
    followed.clear()
    cv = fn.critical_value(star, "k", 1.0, 20.0)
    assert followed == [0, 1]
    assert cv.value == pytest.approx(math.pi / (2 * TAU), rel=1e-11)
