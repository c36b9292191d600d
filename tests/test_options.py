"""Options are checked where they enter (fluidnet.options): an OptionError naming the option,
the value and what is allowed, never a raw TypeError or ValueError from deep inside."""

import math

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.options import ROOT_OPTIONS, count_option, number_option, option_dict


def decay():
    x = fn.states("x")
    k, T = fn.params("k T")
    return fn.Model({x: 1.0 - k * x(fn.t - T)}, {k: 1.0, T: 0.5}, name="decay")


def wright():
    x = fn.states("x")
    a, b = fn.params("a b")
    return fn.Model({x: -a * x(fn.t - 1) * (1 + b * x(fn.t))}, {a: 1.0, b: 1.0})


def test_root_options_are_the_discretization_options_of_characteristic_roots():
    import inspect

    from fluidnet.linear.roots import characteristic_roots

    kw = inspect.signature(characteristic_roots).parameters
    for name, minimum in ROOT_OPTIONS.items():
        assert kw[name].kind is inspect.Parameter.KEYWORD_ONLY and minimum == 2


def _root_option_calls(opts):
    m = decay()
    return {
        "critical_value": lambda: fn.critical_value(m, "T", 0.1, 2.0, root_options=opts),
        "stability_switches": lambda: fn.stability_switches(m, "T", 0.1, 2.0, root_options=opts),
        "stability_chart": lambda: fn.stability_chart(m, {"T": [0.5, 1.0]}, root_options=opts),
        "hopf_point": lambda: fn.hopf_point(
            wright(), "a", 1.0, 2.0, critical_options={"root_options": opts}
        ),
    }


def test_an_unknown_root_option_lists_the_valid_ones():
    # issue 23: root_options={'bogus': 1} was a raw TypeError from characteristic_roots
    for call in _root_option_calls({"bogus": 1}).values():
        with pytest.raises(
            fn.OptionError, match=r"unknown root_options 'bogus'; valid: 'max_nodes', 'n_nodes'"
        ):
            call()
    # multiplicity was ignored since the roots are verified by the argument principle, and is
    # removed in 0.2.0: an unknown option everywhere
    with pytest.raises(fn.OptionError, match="unknown root_options 'multiplicity'"):
        fn.critical_value(decay(), "T", 0.1, 2.0, root_options={"multiplicity": False})
    with pytest.raises(fn.OptionError, match="unknown options 'multiplicity'"):
        fn.LinearDDE(0.0, [(1.0, -1.0)]).roots(multiplicity=True)
    with pytest.raises(fn.OptionError, match="unknown options 'multiplicity'"):
        fn.LinearDDE(0.0, [(1.0, -1.0)]).spectral_abscissa(multiplicity=False)
    with pytest.raises(fn.OptionError, match="root_options must be a dict"):
        fn.critical_value(decay(), "T", 0.1, 2.0, root_options=[("max_nodes", 50)])


@pytest.mark.parametrize("size", [-5, 0, 1, 2.5, "400", True])
def test_discretization_sizes_are_checked_at_the_entry(size):
    # issue 23: max_nodes=-5 was a raw "ValueError: negative dimensions are not allowed"
    lin = decay().linearize()
    with pytest.raises(fn.OptionError, match=r"max_nodes = .* (must be at least 2|whole)"):
        lin.roots(max_nodes=size)
    with pytest.raises(fn.OptionError, match=r"max_nodes = .* (must be at least 2|whole)"):
        lin.spectral_abscissa(max_nodes=size)
    with pytest.raises(fn.OptionError, match=r"n_nodes = .* (must be at least 2|whole)"):
        lin.roots(n_nodes=size)
    for call in _root_option_calls({"max_nodes": size}).values():
        with pytest.raises(fn.OptionError, match=r"root_options\['max_nodes'\]"):
            call()


def test_unknown_options_of_the_root_functions():
    lin = decay().linearize()
    for call in (lambda: lin.roots(bogus=1), lambda: lin.spectral_abscissa(bogus=1)):
        with pytest.raises(fn.OptionError, match="unknown options 'bogus'; valid: 'max_nodes'"):
            call()


def test_critical_options_name_options_not_parameters():
    # before: "unknown parameter 'bogus' for model" -- it is not a parameter but an option
    with pytest.raises(
        fn.OptionError, match=r"unknown critical_options 'bogus'; valid: 'method', 'root_options'"
    ):
        fn.hopf_point(wright(), "a", 1.0, 2.0, critical_options={"bogus": 1})
    hp = fn.hopf_point(wright(), "a", 1.0, 2.0, critical_options={"method": "continuation"})
    assert hp.value == pytest.approx(math.pi / 2, rel=1e-10)  # Wright: a* = pi / 2


@pytest.mark.parametrize(
    "call, match",
    [
        # stability_boundary: a raw ValueError ("Number of samples, -5, must be non-negative"),
        # a raw TypeError, and a frequency bound given as text read as a number
        (
            lambda: fn.stability_boundary(
                fn.models.rcp(),
                "alpha",
                "beta",
                x_range=(0.1, 1),
                y_range=(0.1, 0.5),
                n_seed=-5,
                method="continuation",
            ),
            "n_seed = -5 must be at least 2",
        ),
        (
            lambda: fn.stability_boundary(
                fn.models.rcp(),
                "alpha",
                "beta",
                x_range=(0.1, 1),
                y_range=(0.1, 0.5),
                resolution="0.1",
            ),
            "resolution = '0.1' must be a real number",
        ),
        (
            lambda: fn.stability_boundary(
                fn.models.rcp(),
                "alpha",
                "beta",
                x_range=(0.1, 1),
                y_range=(0.1, 0.5),
                omega_max="3",
            ),
            "omega_max = '3' must be a real number",
        ),
        # the integrator's options: text was read as numbers
        (lambda: fn.simulate(decay(), "1.0"), "t_end = '1.0' must be a real number"),
        (lambda: fn.simulate(decay(), 1.0, rtol="1e-6"), "rtol = '1e-6' must be a real number"),
        (lambda: fn.simulate(decay(), 1.0, max_step="0.1"), "max_step = '0.1'"),
        (
            lambda: fn.simulate_ensemble(decay(), 1.0, params={"k": [1, 2]}, n_points="5"),
            "n_points = '5' must be a whole number",
        ),
        (
            lambda: fn.simulate_ensemble(decay(), 1.0, params={"k": [1, 2]}, workers="2"),
            "workers = '2' must be a whole number",
        ),
        # bifurcation options: raw TypeErrors, and a negative tolerance accepted
        (
            lambda: fn.continue_orbits(fn.hopf_point(wright(), "a", 1.0, 2.0), step="0.1"),
            "step = '0.1' must be a real number",
        ),
        (
            lambda: fn.continue_hopf(fn.hopf_point(wright(), "a", 1.0, 2.0), "b", tol="x"),
            "tol = 'x' must be a real number",
        ),
        (
            lambda: fn.periodic_orbit(fn.hopf_point(wright(), "a", 1.0, 2.0), 1.6, tol=-1.0),
            "tol = -1.0 must be positive",
        ),
        # frequency responses: a raw ValueError from iterating over text
        (lambda: fn.margins(decay().loop_gain("x"), w_range="x"), "w_range = 'x' must be a pair"),
        (lambda: fn.bode(decay().loop_gain("x"), w=["1", "2"]), "w: '1' is not a real number"),
    ],
)
def test_options_are_checked_at_the_entry(call, match):
    with pytest.raises(fn.OptionError, match=match):
        call()


def test_the_helpers():
    assert count_option("n", np.int64(3)) == 3 and count_option("n", 4.0) == 4
    assert number_option("t", np.float32(0.5)) == 0.5
    assert number_option("m", math.inf, allow_inf=True) == math.inf
    assert option_dict("o", None, ("a",)) == {}
    with pytest.raises(fn.OptionError, match="n = True must be a whole number"):
        count_option("n", True)
    with pytest.raises(fn.OptionError, match="t = nan must be finite"):
        number_option("t", math.nan)
