"""fluidnet.models.network: routing matrices and per-element parameters of network models."""

import numpy as np
import pytest

from fluidnet.errors import ModelError, ParameterError
from fluidnet.models.network import per_element, routing_matrix


def test_routing_matrix_is_validated_and_integer():
    A = routing_matrix([[1, 1, 0], [0, 1, 1]])  # two links, three sources (a line network)
    assert A.dtype.kind == "i" and A.shape == (2, 3)
    np.testing.assert_array_equal(A.sum(axis=0), [1, 2, 1])  # links per source's path
    np.testing.assert_array_equal(routing_matrix([1, 1]), [[1, 1]])  # a 1-D row: one link
    np.testing.assert_array_equal(routing_matrix(np.array([[1.0, True]])), [[1, 1]])


@pytest.mark.parametrize(
    ("A", "message"),
    [
        (np.zeros((2, 2, 2)), "must be 2-D"),
        ([], "must be 2-D"),
        ([[1, 2]], "only 0 and 1"),
        ([[1, 0.5]], "only 0 and 1"),
        ([[1, 0], [1, 0]], r"source 2 \(column 1\) of the routing matrix uses no link"),
        ([[1, 1], [0, 0]], r"link 2 \(row 1\) of the routing matrix has no source"),
    ],
)
def test_bad_routing_matrices(A, message):
    with pytest.raises(ModelError, match=message):
        routing_matrix(A)


def test_per_element_broadcasts_a_scalar_or_takes_one_value_each():
    assert per_element("capacity", 10, 3, "link") == [10.0, 10.0, 10.0]
    assert per_element("capacity", [1, 2, 3], 3, "link") == [1.0, 2.0, 3.0]
    assert per_element("capacity", [4], 3, "link") == [4.0, 4.0, 4.0]
    with pytest.raises(
        ParameterError,
        match=r"capacity must be a number or a sequence of 3 values \(one per link\)",
    ):
        per_element("capacity", [1, 2], 3, "link")
    with pytest.raises(ParameterError, match="one per source"):
        per_element("w", [[1, 2, 3]], 3, "source")


@pytest.mark.parametrize("bad", ["abc", True, [1.0, False, 2.0], float("nan"), None])
def test_per_element_refuses_what_is_not_a_real_number(bad):
    """Found by this test: text raised a bare ValueError and True/False were read as 1/0."""
    with pytest.raises(ParameterError, match="capacity"):
        per_element("capacity", bad, 3, "link")
