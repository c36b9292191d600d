"""fluidnet.errors: the exception classes, their bases and where users meet them."""

import pytest

import fluidnet as fn
from fluidnet import errors
from fluidnet.errors import (
    AnalysisError,
    CacheError,
    FluidnetError,
    IntegrationError,
    ModelError,
    OptionError,
    ParameterError,
    StoreError,
)

BUILTIN = {
    ModelError: ValueError,
    ParameterError: ValueError,
    OptionError: ValueError,
    AnalysisError: ValueError,
    StoreError: ValueError,
    IntegrationError: RuntimeError,
    CacheError: RuntimeError,
}


@pytest.mark.parametrize(("cls", "builtin"), BUILTIN.items())
def test_each_error_is_a_fluidnet_error_and_the_builtin_a_caller_expects(cls, builtin):
    assert issubclass(cls, FluidnetError) and issubclass(cls, builtin)
    with pytest.raises(builtin, match="the message"):
        raise cls("the message")
    # re-exported from the package under the same name
    assert getattr(fn, cls.__name__) is cls


def test_every_class_is_listed_and_documented():
    assert set(errors.__all__) == {c.__name__ for c in BUILTIN} | {"FluidnetError"}
    for name in errors.__all__:
        if name != "FluidnetError":
            assert f"``{name}``" in errors.__doc__, name


def test_users_meet_them_with_the_value_at_fault():
    """A bad parameter, a bad option and an unknown name each raise their own class."""
    with pytest.raises(ParameterError, match="'0.3'"):
        fn.sweep.grid_points({"a": ["0.3"]})
    with pytest.raises(OptionError, match="'threads'"):
        fn.sweep.resolve_executor("threads")
    with pytest.raises(ModelError):
        fn.LinearDDE([[1.0, 2.0]], [])
