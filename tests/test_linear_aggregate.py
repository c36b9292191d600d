"""Alike flows factored out of the characteristic determinant: the factorization against the
determinant itself, the factors' roots against Lambert's W, and the batch of a factored system
against the per-point method (which does not factor)."""

import numpy as np
import pytest
import user_laws
from scipy.special import lambertw

import fluidnet as fn
from fluidnet.linear.aggregate import aggregation, grouped
from fluidnet.linear.batch import rightmost_roots
from fluidnet.linear.stacked import Stack


def _alike_system(rng, transposed=False):
    """12 states: classes {0, 1, 2} and {3, 4, 5, 6} of alike states (equal diagonals, equal
    columns outside the class, one common coupling inside), and five other states, with
    generic random entries elsewhere; two delays."""
    n, m = 12, 2
    A = rng.normal(size=(m + 1, n, n))
    for cls in ([0, 1, 2], [3, 4, 5, 6]):
        others = [i for i in range(n) if i not in cls]
        for k in range(m + 1):
            A[k][np.ix_(others, cls)] = rng.normal(size=(len(others), 1))  # equal columns
            A[k][np.ix_(cls, cls)] = rng.normal()  # one common coupling inside the class
            A[k][cls, cls] = rng.normal()  # equal diagonals
    if transposed:
        A = np.swapaxes(A, -1, -2)
    return Stack(A[None, 0], A[None, 1:], np.array([[0.3, 0.7]]))


def _det(stack, s, k=0):
    """``det Delta(s)`` of system ``k`` of the stack, by NumPy's dense LU."""
    return np.linalg.det(stack.delta(s, np.full(s.size, k)))


def _assert_batch_chart_is_pointwise(m, grid):
    """The batch chart of ``m`` on ``grid`` equals the per-point method's (verdicts, and
    abscissae to 1e-9), and the plane holds both verdicts. (``method="batch"`` named: the
    default takes the batch only from 64 points on, and these grids are smaller.)"""
    batch = fn.stability_chart(m, grid, method="batch", progress=False)
    pointwise = fn.stability_chart(m, grid, method="pointwise", progress=False)
    assert np.array_equal(batch.stable, pointwise.stable)
    assert 0 < int(np.sum(batch.stable)) < batch.stable.size
    np.testing.assert_allclose(batch.abscissa, pointwise.abscissa, rtol=1e-9, atol=1e-12)


def _assert_same_samples(stack, sim, rtol, det_rtol=None):
    """``det Delta`` of the similar systems against the given ones' (NumPy's dense LU both,
    to ``det_rtol``, default ``rtol``), and the compiled samples and log-derivatives through
    the split against the given systems' dense LAPACK samples (to ``rtol``)."""
    s = np.array([0.3 + 2j, -0.5 + 7j, 1.1 - 0.2j, -0.61 + 0j, 2.0 + 0.5j])
    for k in range(stack.K):
        full = _det(stack, s, k)
        assert np.max(np.abs(_det(sim, s, k) - full) / np.abs(full)) < (det_rtol or rtol)
    idx = np.repeat(np.arange(stack.K), s.size)
    ss = np.tile(s, stack.K)
    f0, g0 = stack._det_logderiv_lapack(ss, idx)
    f1, g1 = sim.det_logderiv(ss, idx)
    assert np.max(np.abs(f1 - f0) / np.abs(f0)) < rtol
    assert np.max(np.abs(g1 - g0) / np.abs(g0)) < rtol


def _factored_det(agg, s):
    """``det Delta_red(s) * prod_g factor_g(s)^multiplicity_g``: the factorization's side."""
    out = _det(agg.reduced, s)
    for g in range(agg.G):
        out = out * agg.factors.delta(s, np.full(s.size, g))[:, 0, 0] ** agg.multiplicity[g]
    return out


@pytest.mark.parametrize("transposed", [False, True])
def test_the_factorization_equals_the_determinant(transposed):
    rng = np.random.default_rng(4)
    stack = _alike_system(rng, transposed)
    agg = aggregation(stack)
    assert agg is not None
    assert sorted(map(sorted, (c.tolist() for c in agg.classes))) == [[0, 1, 2], [3, 4, 5, 6]]
    assert agg.reduced.n == 12 - 2 - 3
    s = np.array([0.3 + 2j, -0.5 + 7j, 1.1 - 0.2j, -0.61 + 0j, 2.0 + 0.5j])
    factored = _factored_det(agg, s)
    full = _det(stack, s)
    assert np.max(np.abs(factored - full) / np.abs(full)) < 1e-12


def test_states_alike_only_to_rounding_are_not_factored():
    rng = np.random.default_rng(4)
    stack = _alike_system(rng)
    A = stack.A.copy()
    A[0, 0, 7, 1] *= 1 + 1e-15  # state 1's column differs from state 0's in one entry
    A0 = stack.A0.copy()
    A0[0, 4, 4] *= 1 + 1e-15  # state 4's diagonal differs from state 3's
    agg = aggregation(Stack(A0, A, stack.tau))
    assert agg is not None
    assert sorted(map(sorted, (c.tolist() for c in agg.classes))) == [[0, 2], [3, 5, 6]]


def _flows_on_a_link(a, tau, n_flows=8, c=0.3, beta=2.0):
    """``n_flows`` alike flows ``x_i' = -a x_i(t - tau) - c u(t - tau)`` on one link filtered
    as ``u' = beta (sum_i x_i - u)``. The differences of flows obey ``e' = -a e(t - tau)``:
    roots ``W_k(-a tau) / tau``, each of multiplicity ``n_flows - 1``."""
    n = n_flows + 1
    A0 = np.zeros((n, n))
    A0[-1, :-1] = beta
    A0[-1, -1] = -beta
    A1 = np.zeros((n, n))
    A1[np.arange(n_flows), np.arange(n_flows)] = -a
    A1[:-1, -1] = -c
    return fn.LinearDDE(A0, [(tau, A1)])


def test_alike_flows_have_the_lambert_w_roots_and_the_batch_equals_the_pointwise_roots():
    a = np.linspace(0.5, 30.0, 24)
    tau = 0.1
    systems = [_flows_on_a_link(v, tau) for v in a]
    stack = Stack.from_systems(systems)
    agg = aggregation(stack)
    assert agg is not None and agg.G == 1 and agg.multiplicity.tolist() == [7]
    found = rightmost_roots(stack)
    assert found.certified.all()
    w = lambertw(-a * tau, 0) / tau
    w = np.where(np.imag(w) < 0, np.conj(w), w)
    on_top = 0
    for k, lin in enumerate(systems):
        ref = lin.roots(k=2)  # the per-point method on the 9 states (no factorization)
        assert ref.certified
        top = ref[0].value
        assert found.root[k] == pytest.approx(complex(top.real, abs(top.imag)), abs=1e-9)
        assert found.certificate[k] < found.root[k].real
        if abs(found.root[k] - w[k]) <= 1e-9 * (1 + abs(w[k])):
            on_top += 1
            assert found.root[k] == pytest.approx(w[k], rel=1e-12)
    # the differences' root is the rightmost at some gains, the link's mode at others
    assert 0 < on_top < a.size


@pytest.mark.parametrize("transposed", [False, True])
def test_a_class_broken_in_one_system_of_many_is_dropped(transposed):
    """20 systems alike in their classes but for one entry of system 13 (beyond the first few
    systems the check compares at once): the class it breaks is left out, in the systems' and
    in the transposed form, and aggregation_by refuses it; the intact class is kept."""
    from fluidnet.linear.aggregate import aggregation_by

    rng = np.random.default_rng(9)
    systems = [_alike_system(rng, transposed) for _ in range(20)]
    A0 = np.concatenate([s.A0 for s in systems])
    A = np.concatenate([s.A for s in systems])
    tau = np.repeat(systems[0].tau, 20, axis=0)
    whole = aggregation(Stack(A0, A, tau))
    assert whole is not None and whole.transposed == transposed
    assert sorted(map(sorted, (c.tolist() for c in whole.classes))) == [[0, 1, 2], [3, 4, 5, 6]]
    A = A.copy()
    r, c = (5, 3) if not transposed else (3, 5)
    A[13, 1, r, c] += 0.5  # state 3's column (row, transposed) no longer equals state 4's
    broken = Stack(A0, A, tau)
    agg = aggregation(broken)
    assert agg is not None
    assert sorted(map(sorted, (c.tolist() for c in agg.classes)))[0] == [0, 1, 2]
    assert [3, 4, 5, 6] not in [sorted(c.tolist()) for c in agg.classes]
    assert aggregation_by(broken, [np.array([3, 4, 5, 6])], transposed) is None
    assert aggregation_by(broken, [np.array([0, 1, 2])], transposed) is not None


def _row_coupled_system(rng, transposed=False):
    """12 states: classes {0, 1, 2} and {4, 6, 8, 10} whose coupling differs by row -- in
    every matrix, the class block ``phi I + b 1^T`` with ``b`` a random vector (one entry per
    row) and equal columns outside the class -- and generic random entries elsewhere; two
    delays. No two states have equal diagonals."""
    n, m = 12, 2
    A = rng.normal(size=(m + 1, n, n))
    for cls in ([0, 1, 2], [4, 6, 8, 10]):
        others = [i for i in range(n) if i not in cls]
        for k in range(m + 1):
            A[k][np.ix_(others, cls)] = rng.normal(size=(len(others), 1))  # equal columns
            b = rng.normal(size=(len(cls), 1))
            A[k][np.ix_(cls, cls)] = rng.normal() * np.eye(len(cls)) + b  # phi I + b 1^T
    if transposed:
        A = np.swapaxes(A, -1, -2)
    return Stack(A[None, 0], A[None, 1:], np.array([[0.3, 0.7]]))


@pytest.mark.parametrize("transposed", [False, True])
def test_row_coupled_classes_factor_the_determinant(transposed):
    rng = np.random.default_rng(21)
    stack = _row_coupled_system(rng, transposed)
    assert len(set(np.round(np.diagonal(stack.A0[0]), 12))) == 12  # no equal diagonals
    agg = aggregation(stack)
    assert agg is not None and agg.transposed == transposed
    assert sorted(map(sorted, (c.tolist() for c in agg.classes))) == [[0, 1, 2], [4, 6, 8, 10]]
    assert agg.reduced.n == 12 - 2 - 3
    s = np.array([0.3 + 2j, -0.5 + 7j, 1.1 - 0.2j, -0.61 + 0j, 2.0 + 0.5j])
    factored = _factored_det(agg, s)
    full = _det(stack, s)
    assert np.max(np.abs(factored - full) / np.abs(full)) < 1e-12


def test_a_row_coupled_factor_agrees_to_rounding_or_the_class_is_refused():
    """The common factor ``Delta_kk - b_k`` of a row-coupled class is computed from two entries
    rounded separately: a difference of 2 units of rounding in state 6's diagonal entry keeps
    the class (PHI_ULPS); one of 1e-12 (relative) leaves state 6 out; one unit of rounding in
    the entry (6, 8) of row 6's coupling (compared exactly) leaves state 8 out, whose column
    then differs from the others' on row 6. In each case the factorization found equals the
    determinant."""
    rng = np.random.default_rng(21)
    stack = _row_coupled_system(rng)
    eps = np.finfo(float).eps
    s = np.array([0.3 + 2j, -0.5 + 7j, 1.1 - 0.2j])
    for matrix, (i, j), factor, out in [
        (0, (6, 6), 1 + 2 * eps, None),
        (0, (6, 6), 1 + 1e-12, 6),
        (1, (6, 8), 1 + eps, 8),
    ]:
        A0, A = stack.A0.copy(), stack.A.copy()
        (A0[0] if matrix == 0 else A[0, matrix - 1])[i, j] *= factor
        changed = Stack(A0, A, stack.tau)
        agg = aggregation(changed)
        assert agg is not None
        classes = sorted(map(sorted, (c.tolist() for c in agg.classes)))
        assert [0, 1, 2] in classes
        if out is None:
            assert [4, 6, 8, 10] in classes
        else:
            assert sorted({4, 6, 8, 10} - {out}) in classes
            assert not any(out in c for c in classes)
        factored = _factored_det(agg, s)
        full = _det(changed, s)
        assert np.max(np.abs(factored - full) / np.abs(full)) < 1e-12


def test_a_ring_with_unequal_weights_is_factored_and_charted_as_pointwise():
    """30 flows on a ring of 6 links, five on each route with unequal weights: the flows of a
    route are row-coupled classes (each fed back the route's price in proportion to its own
    rate), so the 30-state system is a 6-state one times six four-fold factors
    ``s + kappa P e^{-s T}`` (determinant identity checked directly); the batch chart's
    verdicts and abscissae equal the per-point method's, which does not factor."""
    m = user_laws.kelly_thirty_unequal()
    stack = Stack.from_systems([m.linearize()])
    agg = aggregation(stack)
    assert agg is not None and agg.reduced.n == 6
    assert sorted(agg.multiplicity.tolist()) == [4] * 6
    s = np.array([0.3 + 2j, -0.5 + 7j, -0.05 + 0.01j])
    factored = _factored_det(agg, s)
    full = _det(stack, s)
    assert np.max(np.abs(factored - full) / np.abs(full)) < 1e-12
    grid = {"kappa": np.array([0.4, 1.2, 1.6, 2.8]), "T": np.array([0.06, 0.1, 0.2])}
    _assert_batch_chart_is_pointwise(m, grid)


def _grouped_system(rng, transposed=False):
    """20 states: groups {0, ..., 5} and {6, 8, ..., 18} whose block is ``diag(phi) + b 1^T``
    with ``phi`` and ``b`` random per row (no common factor) and equal columns outside the
    group, generic random entries elsewhere; two delays, three systems."""
    n, m, K = 20, 2, 3
    A = rng.normal(size=(K, m + 1, n, n))
    for cls in ([0, 1, 2, 3, 4, 5], [6, 8, 10, 12, 14, 16, 18]):
        others = [i for i in range(n) if i not in cls]
        for k in range(K):
            for j in range(m + 1):
                A[k, j][np.ix_(others, cls)] = rng.normal(size=(len(others), 1))
                b = rng.normal(size=(len(cls), 1))
                A[k, j][np.ix_(cls, cls)] = np.diag(rng.normal(size=len(cls))) + b
    if transposed:
        A = np.swapaxes(A, -1, -2)
    return Stack(A[:, 0], A[:, 1:], np.tile([0.3, 0.7], (K, 1)))


@pytest.mark.parametrize("transposed", [False, True])
def test_groups_without_a_common_factor_give_a_similar_stack_with_a_small_schur_complement(
    transposed,
):
    """The similar systems of ``grouped`` have the determinant of the given ones (both by
    NumPy's dense LU), and their compiled samples through the Schur complement on the groups'
    first states and the five others (7 rows) agree with the given systems' dense samples."""
    rng = np.random.default_rng(8)
    stack = _grouped_system(rng, transposed)
    assert aggregation(stack) is None  # no common factor: nothing factors
    sim = grouped(stack)
    assert sim is not None
    S, T = sim.split
    assert S.tolist() == [1, 2, 3, 4, 5, 8, 10, 12, 14, 16, 18]
    assert T.tolist() == [0, 6, 7, 9, 11, 13, 15, 17, 19]
    _assert_same_samples(stack, sim, 1e-11, det_rtol=1e-12)


def test_a_group_broken_by_one_unit_of_rounding_loses_that_state():
    """Entry (15, 3) off by one unit of rounding in one matrix of the first system: state 3's
    column no longer equals its group's outside the group, so 3 is not in S (every entry is
    compared exactly), and the similar systems still have the given determinant. Broken in
    another system instead, the whole group is dropped (groups are found on the first system
    and checked on all), which leaves too many states to the Schur complement: None."""
    rng = np.random.default_rng(8)
    stack = _grouped_system(rng)
    A = stack.A.copy()
    A[0, 1, 15, 3] *= 1 + np.finfo(float).eps
    changed = Stack(stack.A0, A, stack.tau)
    sim = grouped(changed)
    assert sim is not None
    S, _ = sim.split
    assert 3 not in S.tolist() and len(S) == 10
    _assert_same_samples(changed, sim, 1e-11, det_rtol=1e-12)
    A = stack.A.copy()
    A[2, 1, 15, 3] *= 1 + np.finfo(float).eps
    assert grouped(Stack(stack.A0, A, stack.tau)) is None


def test_a_ring_with_unequal_delays_on_a_route_is_charted_as_pointwise():
    """30 flows on a ring of 6 links and five delays, the five flows of a route each with its
    own delay: no alike or row-coupled states, but six groups whose similar systems have a
    6 x 6 Schur complement; the batch chart's verdicts and abscissae equal the per-point
    method's (whole 30-state systems)."""
    m = user_laws.kelly_network(user_laws._ring_routes(30, 6, 3), 6, delay_classes=5)
    stack = Stack.from_systems([m.linearize()])
    assert aggregation(stack) is None
    sim = grouped(stack)
    assert sim is not None and sim.split[1].size == 6
    grid = {"kappa": np.array([0.4, 1.2, 2.0]), "T": np.array([0.06, 0.12, 0.2])}
    _assert_batch_chart_is_pointwise(m, grid)


def test_a_dumbbell_of_flows_with_unequal_delays_is_one_group_and_charted_as_pointwise():
    """16 flows on one link, each with its own delay: one group, whose similar systems have a
    1 x 1 Schur complement (the link's); the batch chart equals the per-point method."""
    m = user_laws.dumbbell(16)
    stack = Stack.from_systems([m.linearize()])
    assert len(set(stack.tau[0][np.any(stack.A[0] != 0, axis=(1, 2))].tolist())) == 16
    sim = grouped(stack)
    assert sim is not None and sim.split[1].tolist() == [0]
    s = np.array([0.3 + 2j, -0.5 + 7j, -0.05 + 0.01j])
    full = _det(stack, s, 0)
    assert np.max(np.abs(_det(sim, s, 0) - full) / np.abs(full)) < 1e-12
    grid = {"kappa": np.array([0.3, 1.0, 2.5]), "T": np.array([0.05, 0.2, 0.4])}
    _assert_batch_chart_is_pointwise(m, grid)


def _summed_system(rng, transposed=False):
    """15 states: five leaders 0-4, each column nonzero in its own row and a third of the
    others, and ten members 5-14 whose columns are, outside their own rows, the sums of two
    leaders' (a route of two links: ``picks``), in every matrix of every system; random
    diagonals of the members. Two delays, three systems."""
    n, L, m, K = 15, 5, 2, 3
    support = rng.random((n, L)) < 0.35
    support[np.arange(L), np.arange(L)] = True
    picks = [rng.choice(L, size=2, replace=False) for _ in range(n)]
    A = np.zeros((K, m + 1, n, n))
    for k in range(K):
        for j in range(m + 1):
            leaders = rng.normal(size=(n, L)) * support
            A[k, j][:, :L] = leaders
            for s in range(L, n):
                A[k, j][:, s] = leaders[:, picks[s]].sum(axis=1)
                A[k, j][s, s] = rng.normal()
    if transposed:
        A = np.swapaxes(A, -1, -2)
    return Stack(A[:, 0], A[:, 1:], np.tile([0.3, 0.7], (K, 1)))


@pytest.mark.parametrize("transposed", [False, True])
def test_columns_that_are_sums_of_leaders_give_a_small_schur_complement(transposed):
    """Fifteen states, too few for the groups of ``grouped``: the ten members' columns are
    sums of the leaders', so the similar systems have a 5 x 5 Schur complement on the
    leaders, and the determinant and log-derivative of the given systems."""
    rng = np.random.default_rng(11)
    stack = _summed_system(rng, transposed)
    assert stack.split[0].size == 0 and aggregation(stack) is None
    sim = grouped(stack)
    assert sim is not None
    S, T = sim.split
    assert S.tolist() == list(range(5, 15)) and T.tolist() == list(range(5))
    _assert_same_samples(stack, sim, 1e-11)


def test_a_sum_off_by_rounding_is_kept_and_one_off_by_more_is_not():
    """A member's entry (row 9, a member's row) off by two units of rounding (what the
    linearization's separate rounding of a sum's terms gives): the member is kept, and the
    similar systems have the determinant of the changed ones. Off by 1e-9 in one system
    (not the first): that member goes to the complement."""
    rng = np.random.default_rng(11)
    stack = _summed_system(rng)
    for k, factor, kept in ((0, 1 + 2 * np.finfo(float).eps, True), (2, 1 + 1e-9, False)):
        A = stack.A.copy()
        assert A[k, 1, 9, 7] != 0
        A[k, 1, 9, 7] *= factor
        changed = Stack(stack.A0, A, stack.tau)
        sim = grouped(changed)
        assert sim is not None
        S, T = sim.split
        assert (7 in S.tolist()) is kept and len(S) == (10 if kept else 9)
        _assert_same_samples(changed, sim, 1e-11)


def test_the_twenty_flow_ring_is_a_five_state_complement_and_charted_as_pointwise():
    """20 flows on a ring of 5 links: once its alike flows are factored, 15 routes of 1 to 3
    links, whose columns are sums of the five one-link routes' (to rounding); the similar
    systems have a 5 x 5 Schur complement, the determinant of the reduced systems, and the
    batch chart equals the per-point method (whole 20-state systems)."""
    m = user_laws.kelly_twenty()
    stack = Stack.from_systems([m.linearize(), m.linearize(kappa=1.7, T=0.25)])
    reduced = aggregation(stack).reduced
    sim = grouped(reduced)
    assert sim is not None
    S, T = sim.split
    routes = user_laws._ring_routes(20, 5, 3)[:15]
    assert T.tolist() == [r for r in range(15) if len(routes[r]) == 1]
    _assert_same_samples(reduced, sim, 1e-12)
    grid = {"kappa": np.array([0.4, 1.2, 2.0]), "T": np.array([0.06, 0.12, 0.2])}
    _assert_batch_chart_is_pointwise(m, grid)


def test_a_system_with_an_entry_not_finite_is_left_alone():
    """A NaN in the first system (a point the caller will skip): no split, and no error of
    the least-squares fit (NumPy's SVD does not converge on it)."""
    rng = np.random.default_rng(11)
    stack = _summed_system(rng)
    A = stack.A.copy()
    A[0, 0, 9, 7] = np.nan
    assert grouped(Stack(stack.A0, A, stack.tau)) is None


def test_routes_of_scattered_links_are_sums_and_charted_as_pointwise():
    """Another topology: five links, a one-link route on each, and eight routes over links
    that are not neighbours on any ring, with two delays and unequal weights; the routes of
    several links are the members of the sums (the one-link routes the leaders), and the
    batch chart equals the per-point method."""
    routes = [(0,), (1,), (2,), (3,), (4,), (0, 2), (1, 3, 4), (0, 4), (2, 3), (1, 4), (0, 2, 3)]
    routes += [(1, 2), (3, 4)]
    m = user_laws.kelly_network(routes, 5, delay_classes=2, heterogeneous=True)
    stack = Stack.from_systems([m.linearize(), m.linearize(kappa=1.4, T=0.2)])
    assert aggregation(stack) is None
    sim = grouped(stack)
    assert sim is not None
    S, T = sim.split
    assert T.tolist() == [0, 1, 2, 3, 4] and S.tolist() == list(range(5, 13))
    _assert_same_samples(stack, sim, 1e-12)
    grid = {"kappa": np.array([0.4, 1.2, 2.4]), "T": np.array([0.06, 0.15, 0.3])}
    _assert_batch_chart_is_pointwise(m, grid)
