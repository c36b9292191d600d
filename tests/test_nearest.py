"""fluidnet.nearest: nearest neighbours against SciPy's k-d tree (a second method) and against
sorting every pair (grid points), ties, the switch to the tree for many pairs, bad input (a
chart without SciPy: tests/test_imports.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import KDTree

from fluidnet import nearest as nearest_module
from fluidnet.nearest import DIRECT_PAIRS, nearest


@pytest.mark.parametrize("p", [2.0, np.inf])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_same_neighbours_as_a_kd_tree(p, k):
    """Random points (no ties): the same indices as SciPy's KDTree, distances to rounding."""
    rng = np.random.default_rng(7)
    src = rng.normal(size=(300, 3))
    tgt = rng.normal(size=(500, 3))
    assert src.shape[0] * tgt.shape[0] <= DIRECT_PAIRS  # compared directly
    dist, idx = nearest(src, tgt, k=k, p=p)
    ref_d, ref_i = KDTree(src).query(tgt, k=k, p=p)
    assert dist.shape == idx.shape == (500, k)
    np.testing.assert_array_equal(idx, np.reshape(ref_i, (500, k)))
    np.testing.assert_allclose(dist, np.reshape(ref_d, (500, k)), rtol=1e-14, atol=0)


def test_ties_go_to_the_lowest_index():
    """A grid point between neighbours at equal distance (index steps) takes the first."""
    src = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 1.0], [1.0, -1.0]])
    tgt = np.array([[1.0, 0.0]])  # at distance 1 from all four
    for p in (2.0, np.inf):
        dist, idx = nearest(src, tgt, k=3, p=p)
        np.testing.assert_array_equal(idx, [[0, 1, 2]])
        np.testing.assert_array_equal(dist, [[1.0, 1.0, 1.0]])


def test_many_pairs_go_to_the_tree(monkeypatch):
    """Beyond DIRECT_PAIRS the k-d tree answers: the same neighbours (no ties here)."""
    rng = np.random.default_rng(11)
    src, tgt = rng.uniform(size=(50, 2)), rng.uniform(size=(40, 2))
    direct = nearest(src, tgt, k=2, p=np.inf)
    monkeypatch.setattr(nearest_module, "DIRECT_PAIRS", 10)
    tree = nearest(src, tgt, k=2, p=np.inf)
    np.testing.assert_array_equal(tree[1], direct[1])
    np.testing.assert_allclose(tree[0], direct[0], rtol=1e-15, atol=0)


def _brute_force(src, tgt, k):
    """Each target's k nearest by sorting (squared distance, index): ties to the lowest."""
    dist = np.empty((len(tgt), k))
    idx = np.empty((len(tgt), k), dtype=np.intp)
    for i, t in enumerate(tgt):
        sq = [(float(np.sum((s - t) ** 2)), j) for j, s in enumerate(src)]
        best = sorted(sq)[:k]
        dist[i] = [np.sqrt(d) for d, _ in best]
        idx[i] = [j for _, j in best]
    return dist, idx


@pytest.mark.parametrize("k", [1, 2, 3])
def test_grid_points_have_exact_distances_and_ties_to_the_lowest_index(k, monkeypatch):
    """Integer points (index steps on a grid, many ties) by matrix products: the neighbours and
    distances of sorting every pair, bit for bit, in chunks or not."""
    rng = np.random.default_rng(5)
    src = rng.integers(-4, 5, size=(60, 3)).astype(float)
    tgt = rng.integers(-5, 6, size=(45, 3)).astype(float)
    ref = _brute_force(src, tgt, k)
    got = nearest(src, tgt, k=k)
    np.testing.assert_array_equal(got[1], ref[1])
    np.testing.assert_array_equal(got[0], ref[0])
    monkeypatch.setattr(nearest_module, "GRID_CHUNK_PAIRS", 130)  # two targets a chunk
    chunked = nearest(src, tgt, k=k)
    np.testing.assert_array_equal(chunked[1], ref[1])
    np.testing.assert_array_equal(chunked[0], ref[0])


def test_many_grid_pairs_need_no_tree(monkeypatch):
    """Integer points beyond DIRECT_PAIRS (up to GRID_PAIRS) are compared without SciPy: the
    k-d tree's distances (large coordinates, so no ties), and scipy.spatial made unimportable."""
    import sys

    rng = np.random.default_rng(9)
    src = rng.integers(0, 1 << 19, size=(3000, 3)).astype(float)
    tgt = rng.integers(0, 1 << 19, size=(400, 3)).astype(float)
    assert DIRECT_PAIRS < src.shape[0] * tgt.shape[0] <= nearest_module.GRID_PAIRS
    ref_d, ref_i = KDTree(src).query(tgt, k=2)
    monkeypatch.setitem(sys.modules, "scipy.spatial", None)
    dist, idx = nearest(src, tgt, k=2)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-15, atol=0)
    # a coordinate at the bound of exact products, or not an integer: not by products
    for bad in (float(nearest_module.EXACT_COORDINATE), 0.5):
        assert not nearest_module._integers(np.array([[bad, 0.0]]))


def test_chunks_cover_every_target(monkeypatch):
    """Targets taken a few at a time give the same answer as all at once."""
    rng = np.random.default_rng(3)
    src, tgt = rng.normal(size=(20, 2)), rng.normal(size=(101, 2))
    whole = nearest(src, tgt)
    monkeypatch.setattr(nearest_module, "CHUNK_PAIRS", 60)  # 3 targets a chunk
    parts = nearest(src, tgt)
    np.testing.assert_array_equal(parts[1], whole[1])
    np.testing.assert_array_equal(parts[0], whole[0])


@pytest.mark.parametrize(
    ("src", "tgt", "k", "p", "match"),
    [
        (np.zeros((3, 2)), np.zeros((4, 3)), 1, 2.0, "must be"),
        (np.zeros(3), np.zeros((4, 1)), 1, 2.0, "must be"),
        (np.zeros((3, 2)), np.zeros((4, 2)), 4, 2.0, "k = 4"),
        (np.zeros((3, 2)), np.zeros((4, 2)), 0, 2.0, "k = 0"),
        (np.zeros((3, 2)), np.zeros((4, 2)), 1, 1.0, "p = 1"),
    ],
)
def test_bad_input_is_refused(src, tgt, k, p, match):
    with pytest.raises(ValueError, match=match):
        nearest(src, tgt, k=k, p=p)
