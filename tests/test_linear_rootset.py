"""fluidnet.linear.rootset: the result objects of characteristic_roots, built by hand and
from a scalar DDE whose roots are Lambert-W values."""

import math
import pickle

import numpy as np
import pytest
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.errors import AnalysisError
from fluidnet.linear.rootset import CharacteristicRoot, Roots


def test_root_attributes():
    r = CharacteristicRoot(value=-0.5 + 2.0j, residual=1e-15, multiplicity=2, error=1e-9)
    assert (r.real, r.imag, complex(r)) == (-0.5, 2.0, -0.5 + 2.0j)
    assert "multiplicity=2" in repr(r) and "error=1.0e-09" in repr(r)
    assert "error" not in repr(CharacteristicRoot(value=1.0, residual=0.0))


def test_roots_values_abscissa_and_certificate():
    roots = Roots(
        [
            CharacteristicRoot(value=0.1 + 1j, residual=0.0),
            CharacteristicRoot(value=-2.0, residual=0.0),
        ],
        24,
        True,
        -0.5,
    )
    np.testing.assert_array_equal(roots.values, [0.1 + 1j, -2.0])
    assert roots.abscissa == 0.1 and roots.n_nodes == 24
    assert roots.require_certified() is roots
    assert Roots([]).abscissa == -math.inf
    again = pickle.loads(pickle.dumps(roots))
    np.testing.assert_array_equal(again.values, roots.values)
    assert again.certified is True and again.certificate == -0.5 and again.n_nodes == 24


def test_certificate_is_computed_once_on_first_use():
    calls = []

    def check():
        calls.append(1)
        return False, 0.25

    roots = Roots([CharacteristicRoot(value=0.0, residual=0.0)], check=check)
    assert calls == []
    assert roots.certified is False and roots.certificate == 0.25 and calls == [1]
    with pytest.raises(AnalysisError, match=r"the growth rate is not certified: .*Re s = 0\.25"):
        roots.require_certified("the growth rate")
    told = Roots([], certified=False, reason="a rectangle was not resolved")
    with pytest.raises(AnalysisError, match="a rectangle was not resolved"):
        told.require_certified()


def test_characteristic_roots_of_a_scalar_dde_are_the_lambert_w_values():
    a, b, tau = -1.0, -3.0, 1.0
    roots = fn.LinearDDE([[a]], [(tau, [[b]])]).roots()
    assert isinstance(roots, Roots) and roots.certified
    rightmost = a + lambertw(b * tau * np.exp(-a * tau), 0) / tau
    assert roots.abscissa == pytest.approx(rightmost.real, rel=1e-10)
    assert np.all(np.diff([r.real for r in roots]) <= 0)  # sorted by real part, descending
    assert all(r.residual < 1e-10 for r in roots)
