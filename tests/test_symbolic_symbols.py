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
