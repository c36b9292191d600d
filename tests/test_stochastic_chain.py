"""WindowChain: construction, evaluation and the errors that name what is wrong."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet import ModelError, OptionError, ParameterError


def test_symbols_matched_by_name_and_parameters():
    w, p = sympy.symbols("w p")  # no assumptions: matched by name
    chain = fn.WindowChain(1 / w, w / 2, p, params={"p": 0.02})
    assert chain.params == {"p": 0.02}
    np.testing.assert_allclose(chain.evaluate("increase", [1.0, 4.0]), [1.0, 0.25])
    np.testing.assert_allclose(chain.evaluate("mark", [1.0, 4.0]), [0.02, 0.02])
    assert chain.with_params(p=0.5).evaluate("mark", 3.0) == 0.5
    # zero drift: (1 - p)/w = p w / 2
    assert chain.zero_drift() == pytest.approx(math.sqrt(2 * 0.98 / 0.02), rel=1e-12)
    assert chain.decrease_factor() == 0.5
    assert chain.marking_onset() == 0.0
    assert "WindowChain" in repr(chain)


def test_marking_onset_of_ored_chain():
    chain = fn.models.generalized_tcp_chain(bdp=10.0)
    assert chain.marking_onset() == pytest.approx(25.0, rel=1e-11)  # min_th + bdp


def test_errors_name_the_culprit():
    w, p, q = sympy.symbols("w p q")
    with pytest.raises(ModelError, match="mark law q has the free symbol 'q'"):
        fn.WindowChain(1 / w, w / 2, q, params={p: 0.1})
    with pytest.raises(ParameterError, match="'p' must be finite"):
        fn.WindowChain(1 / w, w / 2, p, params={p: math.inf})
    with pytest.raises(ModelError, match="name of the window"):
        fn.WindowChain(1 / w, w / 2, p, params={w: 1.0, p: 0.1})
    chain = fn.WindowChain(1 / w, w / 2, p, params={p: 0.1})
    with pytest.raises(ParameterError, match="unknown parameter 'c'"):
        chain.with_params(c=1.0)
    with pytest.raises(OptionError, match="law must be"):
        chain.evaluate("jump", 1.0)
    bad = fn.WindowChain(1 / w, w / 2, p - 0.2, params={p: 0.1})
    with pytest.raises(ParameterError, match=r"mark law .* at w = 2 it is -0.1"):
        bad.evaluate("mark", [2.0])
    with pytest.raises(ParameterError, match="decrease law .* c = 1.5"):
        fn.WindowChain(1 / w, 1.5 * w, p, params={p: 0.1}).decrease_factor()
    with pytest.raises(fn.NotNormalizableError, match="grows without bound"):
        fn.WindowChain(1 / w, w / 2, 0, window=w).zero_drift()


def test_model_chain_validates_paper_parameters():
    with pytest.raises(ParameterError, match="c2 = 1"):
        fn.models.generalized_tcp_chain(c2=1.0)
    with pytest.raises(ParameterError, match="c1 = 0"):
        fn.models.generalized_tcp_chain(c1=0.0)
    with pytest.raises(ParameterError, match="alpha = 1 must be < beta"):
        fn.models.generalized_tcp_chain(alpha=1.0)
    with pytest.raises(ParameterError, match="p_max"):
        fn.models.generalized_tcp_chain(p_max=1.5)
    with pytest.raises(ParameterError, match="gamma"):
        fn.models.generalized_tcp_chain(gamma=0.0)
