"""Inputs that were read silently or failed with a raw Python error, found by documenting every
public method (issue 24): each is now a clear FluidnetError naming what is wrong.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import fluidnet as fn
from fluidnet.models import UserNetwork, log_utility, tcp_law
from fluidnet.packet.comparison import Comparison

s = sympy.Symbol("s")


def test_parameter_text_is_refused_by_saved_models_and_flow_laws(tmp_path):
    x = fn.states("x")
    a = fn.params("a")
    saved = fn.load_compiled(
        fn.save_compiled(fn.Model({x: -a * x(fn.t)}, {a: 1.0}), tmp_path / "m")
    )
    assert saved.resolve_params({"a": 0.3}) == {"a": 0.3}
    with pytest.raises(fn.ParameterError, match=r"parameter 'a'.*not a real number"):
        saved.resolve_params({"a": "0.3"})  # was read as 0.3
    law = tcp_law(1.0)
    with pytest.raises(fn.ParameterError, match=r"parameter 'mu'.*not a real number"):
        law.values(mu="0.3")  # was read as 0.3


def test_pole_options_are_checked_whatever_the_denominator():
    rational = fn.as_delay_tf(1 / (s - 1))
    assert rational.rhp_pole_count(max_nodes=50) == 1  # was a TypeError
    with pytest.raises(fn.OptionError, match="unknown root_options 'foo'"):
        rational.poles(foo=1)  # was ignored
    delayed = fn.as_delay_tf(1 / (s + sympy.exp(-s)))
    assert delayed.rhp_pole_count(max_nodes=50) == 0  # s + e^{-s}: stable (Hayes)
    with pytest.raises(fn.OptionError, match="unknown root_options 'foo'"):
        delayed.rhp_pole_count(foo=2)


def test_indices_are_in_range_and_not_counted_from_the_end():
    sc = fn.packet.Dumbbell(link=fn.packet.Link(1e7), flows=[fn.packet.Flows()])
    assert sc.capacity(0) == pytest.approx(1e7 / (8 * (sc.packet_size + 2)))
    for bad in (-1, 1, 1.5, True):
        with pytest.raises(fn.OptionError, match="link"):
            sc.capacity(bad)  # -1 was the last link, 1 an IndexError
    net = UserNetwork([[1, 1]], [log_utility(), log_utility()], C=300, N=50)
    assert net.routes_of(0) == [0, 1] and net.links_of(1) == [0]
    with pytest.raises(fn.OptionError, match="link = -1 must be at least 0"):
        net.routes_of(-1)
    with pytest.raises(fn.OptionError, match="route = 2 is out of range: there are 2"):
        net.links_of(2)


def test_a_field_given_twice_and_unknown_names_are_errors():
    sc = fn.packet.Dumbbell(link=fn.packet.Link(1e7), flows=[fn.packet.Flows()])
    with pytest.raises(fn.OptionError, match="given both"):
        sc.with_values({"packet_size": 1000}, packet_size=1500)  # 1500 was taken silently
    assert sc.with_values(packet_size=1500).packet_size == 1500
    reno = fn.packet.Transport("newreno")
    with pytest.raises(fn.OptionError, match="transport .newreno. has no option .nope."):
        reno.option("nope")  # was a KeyError
    comp = Comparison(
        fluid={"mean_queue": 10.0},
        packets={"mean_queue": np.array([9.0, 11.0])},
        confidence=0.95,
        solution=None,
        runs=[],
    )
    assert comp.relative_difference("mean_queue") == pytest.approx(0.0)
    with pytest.raises(fn.OptionError, match="unknown metric 'mean_q'"):
        comp.interval("mean_q")  # was a KeyError


def test_orbit_samples_count_output_samples():
    X, Y = fn.states("X Y")
    mu = fn.params("mu")
    t = fn.t
    r2 = X(t) ** 2 + Y(t) ** 2
    m = fn.Model({X: mu * X(t) - Y(t) - X(t) * r2, Y: X(t) + mu * Y(t) - Y(t) * r2}, {mu: 0.1})
    orb = fn.periodic_orbit(fn.hopf_point(m, "mu", -0.5, 0.5), 0.09, intervals=20, degree=4)
    ts, vals = orb.sample(50)
    assert ts.shape == (50,) and vals.shape == (50, 2)  # was 51
    assert ts[0] == 0 and ts[-1] == pytest.approx(orb.period)
    np.testing.assert_allclose(np.hypot(vals[:, 0], vals[:, 1]), 0.3, rtol=1e-6)
    with pytest.raises(fn.OptionError, match="n_points"):
        orb.sample(1)
