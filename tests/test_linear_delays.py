"""fluidnet.linear.delays: when two delays are one, and merging the terms of equal delays."""

import numpy as np

from fluidnet.linear.delays import DELAY_RTOL, merge_delays, same_delay


def test_same_delay_is_relative_with_an_absolute_floor():
    assert same_delay(1.0, 1.0 + 0.5e-12)
    assert not same_delay(1.0, 1.0 + 2e-12)
    assert same_delay(1e6, 1e6 * (1 + 0.5e-12))  # relative for large delays
    assert not same_delay(1e6, 1e6 + 1e-5)
    assert same_delay(0.0, 0.5e-12) and not same_delay(0.0, 2e-12)  # floor at zero
    assert DELAY_RTOL == 1e-12


def test_merge_sorts_and_adds_equal_delays():
    A, B, C = np.eye(2), 2 * np.eye(2), np.ones((2, 2))
    merged = merge_delays([(0.3, A), (0.1, B), (0.3 * (1 + 1e-13), C), (0.2, A)], np.add)
    assert [t for t, _ in merged] == [0.1, 0.2, 0.3]
    np.testing.assert_array_equal(merged[2][1], A + C)
    np.testing.assert_array_equal(merged[0][1], B)
    assert merge_delays([], np.add) == []
