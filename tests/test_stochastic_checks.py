"""fluidnet.stochastic.checks: a solver's input is a window chain, or a ModelError naming it."""

import pytest

from fluidnet.errors import ModelError
from fluidnet.stochastic.checks import CHAIN_METHODS, require_chain


class _Duck:
    pass


for _name in CHAIN_METHODS:
    setattr(_Duck, _name, lambda self: None)


def test_anything_with_the_chain_methods_is_accepted():
    require_chain(_Duck())


@pytest.mark.parametrize("missing", CHAIN_METHODS)
def test_a_missing_method_is_refused_naming_the_type(missing):
    class Partial(_Duck):
        pass

    setattr(Partial, missing, None)  # present but not callable
    with pytest.raises(ModelError, match="expected a WindowChain, got Partial"):
        require_chain(Partial())
    with pytest.raises(ModelError, match="got dict"):
        require_chain({})
