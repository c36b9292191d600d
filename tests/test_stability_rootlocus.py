"""Root loci with exact delays (issue 36): fluidnet.root_locus against Lambert's W function.

The roots of ``1 + k e^{-s tau}/s = 0``, i.e. ``s + k e^{-s tau} = 0``, are
``s = W_j(-k tau) / tau`` over the branches ``j`` of Lambert's W: an exact, independent source.
Two real roots meet at ``k = 1/(e tau)`` (at ``s = -1/tau``) and the rightmost pair crosses the
imaginary axis at ``k = pi/(2 tau)`` with frequency ``pi/(2 tau)``.
"""

import math

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn

TAU = 0.5


def lambert_roots(k: float, re_min: float) -> np.ndarray:
    vals = np.array([lambertw(-k * TAU, j) / TAU for j in range(-40, 41)])
    return np.sort_complex(vals[np.real(vals) >= re_min])


@pytest.fixture(scope="module")
def locus():
    L = fn.DelayTF.from_expr(f"exp(-{TAU}*s)/s")
    return fn.root_locus(L, 0.0, 6.0, n_points=60, re_min=-6.0)


def test_crossing_gain_and_frequency_are_exact(locus):
    assert locus.crossing_gains == pytest.approx([math.pi / (2 * TAU)], rel=1e-10)
    assert locus.crossing_frequencies == pytest.approx([math.pi / (2 * TAU)], rel=1e-10)
    (stable,) = locus.stable_intervals
    assert stable[0] == 0.0 and stable[1] == pytest.approx(math.pi / (2 * TAU), rel=1e-10)


def test_roots_at_every_gain_are_lamberts(locus):
    k_meet = 1 / (math.e * TAU)
    for j in range(1, locus.gains.size):
        k = locus.gains[j]
        row = locus.roots[j][np.isfinite(locus.roots[j])]
        residual = np.abs(row + k * np.exp(-row * TAU))
        assert np.all(residual <= 1e-9 * (np.abs(row) + k * np.abs(np.exp(-row * TAU)))), k
        if abs(k - k_meet) < 0.02 * k_meet:
            continue  # scipy's lambertw loses half its digits next to the branch point
        got = np.sort_complex(row)
        want = lambert_roots(k, -6.0)
        # roots within a hair of the window's edge may be on either side of it
        want = want[np.real(want) > -6.0 + 1e-6]
        got = got[np.real(got) > -6.0 + 1e-6]
        assert got.size == want.size, k
        gap = np.array([np.min(np.abs(got - w)) for w in want])
        assert np.all(gap <= 1e-8 * (1 + np.abs(want))), (k, gap)
        if np.min(np.abs(np.real(want))) > 1e-9:  # not at the crossing itself
            assert locus.rhp_roots[j] == int(np.sum(np.real(want) > 0))


def test_branches_are_continuous_in_the_gain(locus):
    # the rightmost branch: from s = 0 at k = 0 through the real double root to the crossing
    j0 = int(np.nanargmax(np.real(locus.roots[0])))
    branch = locus.roots[:, j0]
    assert branch[0] == 0
    steps = np.abs(np.diff(branch[np.isfinite(branch)]))
    assert np.max(steps) < 0.6  # no jump to another branch (the gain step moves roots < 0.6)
    # the pair leaves the real axis at the double root s = -1/tau, k = 1/(e tau)
    k_meet = 1 / (math.e * TAU)
    below = np.flatnonzero(locus.gains < k_meet * 0.99)[-1]
    above = np.flatnonzero(locus.gains > k_meet * 1.01)[0]
    assert abs(branch[below].imag) == 0.0 and abs(branch[above].imag) > 0


def test_rcp_crossing_gain_is_the_gain_margin():
    L = fn.models.rcp().loop_gain("R")  # Dukkipati & McKeown eq (9)
    rl = fn.root_locus(L, 0.0, 4.0, n_points=30)
    gm = fn.margins(L).gain_margin
    assert rl.crossing_gains == pytest.approx([gm], rel=1e-9)
    # at k = 1 (the loop as given) the roots are the closed loop's, i.e. the linearization's
    j = int(np.argmin(np.abs(rl.gains - 1.0)))
    assert rl.gains[j] == pytest.approx(1.0, abs=1e-12)
    lin_roots = fn.models.rcp().linearize().roots(k=2).values
    row = rl.roots[j][np.isfinite(rl.roots[j])]
    for r in lin_roots:
        assert np.min(np.abs(row - r)) < 1e-8 * abs(r)


def test_neutral_loops_and_bad_ranges_are_refused():
    with pytest.raises(fn.NeutralSystemError, match="not retarded"):
        fn.root_locus("exp(-s)*(s + 1)/(s + 2)", 0.0, 2.0)
    L = fn.DelayTF.from_expr("exp(-s)/(s + 1)")
    with pytest.raises(fn.OptionError, match="lo < hi"):
        fn.root_locus(L, 2.0, 1.0)
    with pytest.raises(fn.OptionError, match=">= 0"):
        fn.root_locus(L, -1.0, 1.0)
    with pytest.raises(fn.OptionError, match="not both"):
        fn.root_locus(L, 0.0, 1.0, gains=[0.1, 0.2])


def test_exports_and_plot(locus):
    ds = locus.to_xarray()
    assert ds["roots"].shape == locus.roots.shape
    assert ds["crossing_gain"].values == pytest.approx(locus.crossing_gains)
    ax = locus.plot()
    assert "root locus" in ax.get_title()
    assert any("k = 3.142" in t.get_text() for t in ax.texts)
    assert "stable for k in (0, 3.14159)" in repr(locus)


def test_a_rational_loop_crosses_where_routh_says():
    # 1 + k / (s (s + 1) (s + 2)) = s^3 + 3 s^2 + 2 s + k: Routh, k = 6 at w = sqrt(2)
    rl = fn.root_locus("1/(s*(s + 1)*(s + 2))", 0.0, 10.0, n_points=40)
    assert rl.crossing_gains == pytest.approx([6.0], rel=1e-10)
    assert rl.crossing_frequencies == pytest.approx([math.sqrt(2.0)], rel=1e-10)
    np.testing.assert_allclose(np.sort(rl.poles.real), [-2.0, -1.0, 0.0], atol=1e-12)
    j = int(np.argmin(np.abs(rl.gains - 8.0)))
    want = np.roots([1.0, 3.0, 2.0, rl.gains[j]])
    got = rl.roots[j][np.isfinite(rl.roots[j])]
    assert max(np.min(np.abs(got - w)) for w in want) < 1e-9
