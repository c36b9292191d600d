import numpy as np
import pytest
import sympy

import fluidnet as fn


def test_states_are_real_functions_of_time():
    R, q = fn.states("R q")
    assert R(fn.t).func.__name__ == "R"
    assert R(fn.t - 1).args[0] == fn.t - 1
    assert R(fn.t).is_real


def test_single_names_return_single_objects():
    x = fn.states("x")
    k = fn.params("k")
    assert isinstance(k, sympy.Symbol) and k.is_real
    assert x(fn.t).func.__name__ == "x"


def test_comma_separated_names():
    a, b = fn.params("a, b")
    assert (a.name, b.name) == ("a", "b")


@pytest.mark.parametrize("bad", ["", "1x", "a-b"])
def test_invalid_names_are_rejected(bad):
    with pytest.raises(ValueError):
        fn.params(bad)


# ---------------------------------------------------------------- look-alike names (issue 23)
# Python's parser reads identifiers in NFKC normal form: "\ufb01" (the ligature fi) is "fi",
# "ℌ" is "H", the micro sign "µ" (U+00B5) is the Greek "μ" (U+03BC). Text expressions are read
# by that parser, so declared names are normalized the same way and look-alikes are refused.


def test_look_alike_states_are_refused_not_merged():
    # was: A0 = [[-1, 0], [-2, 0]] (both right-hand sides read the state "fi")
    with pytest.raises(fn.ModelError, match=r"'fi' and state 'ﬁ' \(U\+FB01\).*same identifier"):
        fn.Model(rhs={"fi": "-fi(t)", "\ufb01": "-2*\ufb01(t)"})
    # with distinct names the same model is diag(-1, -2)
    m = fn.Model(rhs={"fi": "-fi(t)", "f_i": "-2*f_i(t)"})
    assert m.linearize().A0.tolist() == [[-1.0, 0.0], [0.0, -2.0]]


def test_look_alike_parameters_are_refused_not_merged():
    # was: "-ℌ*x(t)" used H's value 1 instead of ℌ's 3
    with pytest.raises(fn.ModelError, match=r"'ℌ' \(U\+210C\) and parameter 'H'"):
        fn.Model(rhs={"x": "-ℌ*x(t)"}, params={"ℌ": 3, "H": 1})
    with pytest.raises(fn.ModelError, match="same identifier 'H'"):
        fn.params("ℌ H")
    with pytest.raises(fn.ModelError, match="same identifier 't'"):
        fn.Model(rhs={"𝑡": "-𝑡(t)"})  # mathematical italic t is the time symbol


def test_a_consistently_used_micro_sign_works():
    # was: "'μ' is not a declared name (known: t, µ, ...)"
    micro = "\u00b5"
    m = fn.Model(rhs={"x": f"-{micro}*x(t)"}, params={micro: 3.0})
    assert m.param_names == ("\u03bc",)
    assert m.linearize().A0.tolist() == [[-3.0]]
    assert m.linearize(params={micro: 2.0}).A0.tolist() == [[-2.0]]  # either spelling
    assert m.linearize(params={"\u03bc": 0.5}).A0.tolist() == [[-0.5]]
    # a sympy symbol spelled with the micro sign is the same parameter
    x = fn.states("x")
    mu = sympy.Symbol(micro)
    m2 = fn.Model(rhs={x: -mu * x(fn.t) + 6}, params={mu: 3.0})
    assert m2.equilibrium() == {"x": 2.0}
    # and a state spelled with the ligature is found by either spelling
    m3 = fn.Model(rhs={"\ufb01": "1 - \ufb01(t)"})
    assert m3.state_names == ("fi",)
    assert m3.equilibrium(guess={"\ufb01": 0.5}) == {"fi": 1.0}
    sol = fn.simulate(m3, 1.0, history={"\ufb01": 0.0}, t_eval=[1.0])
    assert sol["fi"][0] == pytest.approx(1.0 - np.exp(-1.0), rel=1e-6)


def test_two_spellings_of_one_name_in_a_call_are_refused():
    m = fn.Model(rhs={"x": "-\u03bc*x(t)"}, params={"\u03bc": 3.0})
    with pytest.raises(fn.ModelError, match="same identifier"):
        m.linearize(params={"\u00b5": 2.0, "\u03bc": 1.0})
    x = fn.states("x")
    mu1, mu2 = sympy.Symbol("\u00b5"), sympy.Symbol("\u03bc")
    with pytest.raises(fn.ModelError, match="same identifier"):
        fn.Model(rhs={x: -mu1 * x(fn.t) - mu2}, params={"\u03bc": 1.0})


def test_every_entry_point_reads_either_spelling_of_a_name():
    """fi' = mu (1 - fi(t - T)), declared with the ligature U+FB01 and the micro sign: every
    place that takes a name finds the state and the parameter by either spelling. Closed forms:
    the equilibrium fi = 1, A0 = 0 and A_T = -mu, the loop gain cut at fi is mu e^{-sT} / s."""
    lig, micro = "\ufb01", "\u00b5"
    m = fn.Model(
        rhs={lig: f"{micro}*(1 - {lig}(t - T))"},
        params={micro: 2.0, "T": 0.5},
        nonnegative=[lig],
    )
    assert m.state_names == ("fi",) and m.nonnegative == ("fi",)
    assert m.state(lig) == m.state("fi")
    lin = m.linearize(equilibrium={lig: 1.0}, params={micro: 3.0})
    assert lin.equilibrium == {"fi": 1.0}
    assert lin.A0.tolist() == [[0.0]] and lin.delays == (0.5,) and lin.A[0].tolist() == [[-3.0]]
    s = 0.3 + 2.0j
    for cut in (lig, "fi"):
        gain = m.loop_gain(cut, **{micro: 3.0})
        assert gain(s) == pytest.approx(3.0 * np.exp(-0.5 * s) / s, rel=1e-14)
    with pytest.raises(fn.ModelError, match=r"'ﬁ' \(U\+FB01\) and state 'fi'"):
        m.linearize(equilibrium={lig: 1.0, "fi": 1.0})


def test_a_signal_spelled_like_a_state_is_refused():
    # "𝑥" (U+1D465, mathematical italic x) is the identifier x: the signal would be the state
    with pytest.raises(fn.ModelError, match=r"state 'x' and signal '𝑥' \(U\+1D465\)"):
        fn.Model(rhs={"x": "-x(t) + 𝑥(t)"}, signals={"𝑥": "2*x(t)"})
    with pytest.raises(fn.ModelError, match=r"state 'x' and parameter '𝑥' \(U\+1D465\)"):
        fn.Model(rhs={"x": "-𝑥*x(t)"}, params={"𝑥": 1.0})
