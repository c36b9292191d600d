"""Monte Carlo of window chains: agreement with the exact series, seeding, intervals, errors."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet import ModelError, OptionError, ParameterError

w = sympy.Symbol("w", positive=True)
SMALL = {"n_chains": 200, "n_steps": 40_000, "burn_in": 10_000}


def test_constant_marking_inside_the_interval():
    # with a small p the chain is close to its small-increment limit, the exact series
    p = 0.001
    chain = fn.WindowChain(1 / w, w / 2, p, window=w, ack_rate=w)
    d = chain.monte_carlo(seed=3, level=0.999, **SMALL)
    s = fn.constant_mark_distribution(alpha=-1, c1=1, c2=0.5, p=p, ack_exponent=1)
    for stat in ("mean", "cov"):
        lo, hi = d.interval(stat)
        assert lo <= getattr(s, stat) <= hi, stat
        assert (hi - lo) / getattr(s, stat) < 0.08  # informative at this sample size
    lo, hi = d.time_average.interval("mean")
    assert lo <= s.time_average.mean <= hi
    assert d.time_average.mean < d.mean  # per ACK, large windows are over-represented
    lo, hi = d.interval("mark_probability")
    assert d.mark_probability == pytest.approx(p, rel=1e-12)  # constant marking: no spread
    assert hi - lo < 1e-12
    assert d.info["outside"] < 1e-3  # windows beyond the histogram range are counted


def test_state_dependent_chain_agrees_with_pdmp_baseline():
    chain = fn.models.generalized_tcp_chain()
    d = chain.monte_carlo(seed=11, level=0.999, **SMALL)
    pdmp = chain.stationary()
    # p is ~0.002 here: the chain and its limit differ by much less than the interval
    assert d.interval("mean")[0] <= pdmp.mean <= d.interval("mean")[1]
    assert d.cov == pytest.approx(pdmp.cov, rel=0.02)
    assert d.quantile(0.5) == pytest.approx(pdmp.quantile(0.5), rel=0.01)
    assert d.w[0] > 0 and d.pdf.max() > 0


def test_seeding_is_reproducible():
    chain = fn.models.generalized_tcp_chain(c2=0.2)
    a = chain.monte_carlo(seed=5, n_chains=50, n_steps=2000, burn_in=100)
    b = chain.monte_carlo(seed=5, n_chains=50, n_steps=2000, burn_in=100)
    c = chain.monte_carlo(seed=6, n_chains=50, n_steps=2000, burn_in=100)
    assert a.mean == b.mean and a.var == b.var and np.array_equal(a.pdf, b.pdf)
    assert a.mean != c.mean


def test_generic_decrease_law():
    # beta = 1/2: the PDMP limit does not apply, the Monte Carlo does
    # (valid for w > 1/4, where the decrease is smaller than the window)
    chain = fn.WindowChain(1 / w, 0.5 * sympy.sqrt(w), 0.01, window=w)
    zd = chain.zero_drift(lo=1.0)
    d = chain.monte_carlo(seed=1, n_chains=100, n_steps=20_000, burn_in=5_000, start=zd)
    assert 0.5 * d.mean < zd < 2 * d.mean
    with pytest.raises(ModelError, match="multiplicative"):
        chain.stationary()


def test_errors():
    chain = fn.models.generalized_tcp_chain()
    with pytest.raises(OptionError, match="n_chains"):
        chain.monte_carlo(n_chains=1)
    with pytest.raises(OptionError, match="level"):
        chain.monte_carlo(level=1.0)
    with pytest.raises(OptionError, match="window_range"):
        chain.monte_carlo(window_range=(5.0, 1.0), n_chains=4, n_steps=10)
    with pytest.raises(OptionError, match="start"):
        chain.monte_carlo(start=-1.0)
    # a decrease that overshoots zero once the window is below 2
    bad = fn.WindowChain(1 / w, w / 2 + 1, 0.05, window=w)
    with pytest.raises(ParameterError, match=r"decrease law .* at w = .* chain \d+, ACK \d+"):
        bad.monte_carlo(n_chains=4, n_steps=100_000, burn_in=0, seed=0, start=3.0)
    # a marking probability above 1 reached by the chain
    over = fn.WindowChain(sympy.Integer(1), w / 2, w / 50, window=w)
    with pytest.raises(ParameterError, match="mark law"):
        over.monte_carlo(n_chains=4, n_steps=1000, burn_in=0, seed=0, start=60.0)
    with pytest.raises(ModelError, match="could not be compiled"):
        fn.WindowChain(1 / w, w / 2, sympy.besselj(0, w) ** 2 / 10, window=w).monte_carlo(
            n_chains=2, n_steps=10, burn_in=0, start=10.0
        )


@pytest.mark.parametrize("solver", ["monte_carlo", "stationary_distribution"])
@pytest.mark.parametrize("bad", [3.0, "w/2", None])
def test_solvers_refuse_what_is_not_a_window_chain(solver, bad):
    with pytest.raises(ModelError, match=f"expected a WindowChain, got {type(bad).__name__}"):
        getattr(fn, solver)(bad)


@pytest.mark.parametrize("seed", ["abc", -1, 1.5, True, object()])
def test_a_bad_seed_is_a_named_error(seed):
    """Issue 33: numpy's own TypeError/ValueError (naming neither the seed nor the call)."""
    chain = fn.WindowChain(1 / w, w / 2, 0.01, window=w, ack_rate=w)
    with pytest.raises(OptionError, match=r"monte_carlo: seed = .*(whole number|>= 0)"):
        fn.monte_carlo(chain, n_chains=4, n_steps=10, seed=seed)
