"""fluidnet.brent: scipy's Brent root finder with its real types."""

import math

import pytest

import fluidnet as fn
from fluidnet.brent import brentq


def test_the_root_is_a_float_to_the_asked_tolerance():
    root = brentq(math.cos, 0.0, 2.0, xtol=1e-14)
    assert isinstance(root, float)
    assert root == pytest.approx(math.pi / 2, abs=1e-13)


def test_the_full_output_form_is_refused():
    with pytest.raises(fn.OptionError, match="full_output"):
        brentq(math.cos, 0.0, 2.0, full_output=True)
