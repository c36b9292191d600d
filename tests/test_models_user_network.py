"""The UserNetwork container of Kunniyur & Srikant's models (Sec II): validation and loads."""

from __future__ import annotations

import pytest

import fluidnet as fn
from fluidnet.models import UserNetwork, log_utility


def test_user_network_validation():
    with pytest.raises(fn.ModelError, match="source 2"):
        UserNetwork([[1, 0], [1, 0]], log_utility(), C=1.0)
    with pytest.raises(fn.ModelError, match="only 0 and 1"):
        UserNetwork([[2]], log_utility(), C=1.0)
    with pytest.raises(fn.ModelError, match="one per route"):
        UserNetwork([[1, 1]], [log_utility()], C=1.0)
    with pytest.raises(fn.ParameterError, match=r"alpha\[0\]"):
        UserNetwork([[1]], log_utility(), C=1.0, alpha=1.5)
    with pytest.raises(fn.ParameterError, match=r"C\[1\]"):
        UserNetwork([[1], [1]], log_utility(), C=[1.0, 0.0])
    with pytest.raises(fn.ParameterError, match="one per link"):
        UserNetwork([[1], [1]], log_utility(), C=[1.0, 2.0, 3.0])
    with pytest.raises(fn.ModelError, match="distinct"):
        UserNetwork([[1, 1]], log_utility(), C=1.0, names=["a", "a"])
    net = UserNetwork([[1, 1]], log_utility(), C=3.0, N=[2, 1])
    assert net.loads([1.0, 1.0]) == pytest.approx([3.0])
