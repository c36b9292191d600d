"""Large systems (fluidnet.linear.large): boxes counted by the argument principle.

The systems are Kelly's primal law (Zimmermann (3.2.16), `fn.models.kelly_primal`) on a
parking lot of ``L`` links: flow 0 crosses every link, flow ``l`` only link ``l``; prices
``(y / c)^B`` with ``c = 2``, ``B = 4``, willingness to pay ``w_0 = L``, ``w_l = 1``, so that
``x = 1`` is the equilibrium (every link carries 2, price 1, ``p_0 = L``, ``p_l = 1``), and
flow ``i`` has delay ``T_i = 0.05 + 0.001 i``. Linearized by hand (``lambda' = B / c = 2``):

    dx_0' = -kappa (3 L dx_0 + 2 sum_l dx_l)(t - T_0),   dx_l' = -kappa (3 dx_l + 2 dx_0)(t - T_l),

an arrow, so with ``d_i(s) = s + kappa a_i e^{-s T_i}`` (``a_0 = 3 L``, ``a_l = 3``),
``det Delta(s) = prod_l d_l(s) * h(s)``, ``h = d_0 - sum_l 4 kappa^2 e^{-s (T_0 + T_l)} / d_l``.
"""

from __future__ import annotations

import numpy as np
import pytest

import fluidnet as fn
from fluidnet.linear import large
from fluidnet.linear import roots as roots_module
from fluidnet.linear.large import large_roots
from fluidnet.linear.roots import balanced


def _tau(L):
    return 0.05 + 0.001 * np.arange(L + 1)


def _parking_lot(L: int, kappa: float = 1.0) -> fn.LinearDDE:
    n = L + 1
    T = _tau(L)
    mats = []
    for i in range(n):
        A = np.zeros((n, n))
        if i == 0:
            A[0, 0], A[0, 1:] = -kappa * 3 * L, -kappa * 2
        else:
            A[i, i], A[i, 0] = -kappa * 3, -kappa * 2
        mats.append((T[i], A))
    return fn.LinearDDE(np.zeros((n, n)), mats)


def _h(L, kappa):
    import mpmath as mp

    T = [mp.mpf(t) for t in _tau(L)]

    def h(s):
        d = [s + kappa * 3 * mp.exp(-s * T[i]) for i in range(1, L + 1)]
        cross = sum(4 * kappa**2 * mp.exp(-s * (T[0] + T[i + 1])) / d[i] for i in range(L))
        return s + kappa * 3 * L * mp.exp(-s * T[0]) - cross

    return h


def test_hand_linearization_is_the_models():
    L = 4
    A = np.zeros((L, L + 1))
    A[:, 0] = 1.0
    A[np.arange(L), np.arange(1, L + 1)] = 1.0
    model = fn.models.kelly_primal(A, w=[float(L)] + [1.0] * L, T=list(_tau(L)), c=2.0, B=4.0)
    lin = model.linearize(equilibrium={s: 1.0 for s in model.state_names})
    ours = _parking_lot(L)
    assert lin.delays == ours.delays
    for a, b in zip(lin.A, ours.A, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_rectangles_agree_with_the_discretization():
    # 20 states: small enough for the dense discretization (an independent method)
    lin = _parking_lot(19)
    dense = lin.roots(k=6)
    assert dense.n_nodes > 0  # the dense path
    boxes = large_roots(balanced(lin), 6, None)
    assert dense.certified and boxes.certified
    np.testing.assert_allclose(boxes.values, dense.values, rtol=1e-10)
    assert [r.multiplicity for r in boxes] == [1] * 6


@pytest.mark.parametrize("L", [99])
def test_network_of_100_flows_answers_with_the_closed_form(L):
    """Issue 23, item 10: a 100-state parking lot (no answer in 55 s on main) goes to the
    boxes; the rightmost root is a zero of h, checked by mpmath at 30 digits."""
    import mpmath as mp

    lin = _parking_lot(L)
    roots = lin.roots(k=2)
    assert roots.n_nodes == 0 and roots.certified is True  # the boxes, certified
    top = roots[0]
    with mp.workdps(30):
        exact = complex(mp.findroot(_h(L, 1.0), mp.mpc(top.value)))
    assert abs(top.value - exact) <= max(top.error, 1e-12 * abs(exact))
    assert top.value.imag != 0 and roots[1].value == top.value.conjugate()
    assert lin.spectral_abscissa() == top.real > 0  # unstable: the long flow's gain 3 L


def test_a_cluster_of_roots_is_one_entry():
    """kappa = 0.01: the 14 short flows' factors s + 0.03 e^{-s T_l} have roots within
    1e-5 of each other near -0.030; the boxes report them as one entry whose multiplicity is
    their number and whose value is their mean (from the trapezoidal rule on a circle
    around the box: to rounding; the power sums on the box's own boundary were 1e-3 of the
    error off), against the discretization's roots."""
    lin = _parking_lot(14, kappa=0.01)
    dense = lin.roots(k=20)
    boxes = large_roots(balanced(lin), 2, None)
    assert boxes.certified and dense.certified
    first, cluster = boxes[0], boxes[1]
    assert abs(first.value - dense[0].value) <= 1e-12
    near = np.array([r.value for r in dense if abs(r.value - cluster.value) <= cluster.error])
    assert cluster.multiplicity == near.size == 13
    assert abs(near.mean() - cluster.value) <= 1e-12


def test_a_budget_exhausted_refuses_with_its_reason(monkeypatch):
    monkeypatch.setattr(large, "MAX_SAMPLES", 40)
    monkeypatch.setattr(roots_module, "DENSE_FALLBACK", 0)  # no dense discretization after
    lin = _parking_lot(99)
    with pytest.raises(fn.AnalysisError, match="not certified: .*evaluations of det Delta"):
        lin.spectral_abscissa()


def test_a_budget_exhausted_falls_back_to_the_dense_discretization(monkeypatch):
    # where the rectangles give up (here a budget of 40 evaluations), the dense
    # discretization is tried, up to DENSE_FALLBACK rows (30 states: up to 65 nodes). Second
    # method: the rectangles with their whole budget.
    lin = _parking_lot(29)
    boxes = large_roots(balanced(lin), 6, None)
    assert boxes.certified and boxes.n_nodes == 0
    monkeypatch.setattr(large, "MAX_SAMPLES", 40)
    assert large_roots(balanced(lin), 6, None).certified is False
    got = lin.roots(k=6)
    assert got.certified and got.n_nodes > 0 and not got.reason
    np.testing.assert_allclose(got.values, boxes.values, rtol=1e-10)


def test_a_real_root_is_never_counted_as_a_conjugate_pair():
    # 20 flows on a ring (tests/user_laws.py) at kappa = 0.1, T = 0.18: two real roots 7.5e-4
    # apart lead. The box holding both located them from its power sums, Newton took both
    # candidates to -0.05387 with an imaginary part of 2e-30, and that root, counted as a
    # conjugate pair, accounted for the box's count of 2: -0.05312 was missed under a passing
    # certificate. Second methods: the argument principle on lines between and around the two
    # roots, and the dense spectral discretization refined by Newton.
    from user_laws import kelly_twenty

    from fluidnet.linear.certificate import count_right_of
    from fluidnet.linear.roots import certified_roots
    from fluidnet.linear.stacked import Stack

    lin = kelly_twenty().linearize(kappa=0.1, T=0.18)
    st = Stack.from_systems([lin])
    counts = [int(count_right_of(st, np.array([s]))[0][0]) for s in (-0.053, -0.0535, -0.054)]
    assert counts == [0, 1, 2]
    fine = lin.roots(k=4, n_nodes=40)
    roots = certified_roots(lin, k=4)
    assert roots.certified
    assert -0.053 > roots[0].real > -0.0535  # where the counts above place it
    assert roots[0].value == pytest.approx(fine[0].value, rel=1e-9)
    assert -0.0535 > roots[1].real > -0.054
    assert roots[1].value == pytest.approx(fine[1].value, rel=1e-9)
    assert all(r.imag == 0 for r in roots[:2])


def test_a_box_far_right_of_every_root_is_not_sampled_to_death():
    # 90 flows and 10 load filters (tests/user_laws.py) at kappa = 0.1, T = 0.18: the first
    # box, right of every root, was 3.3 wide and 7e-6 tall (the imaginary bound shrinks far
    # right), sampled at its height's spacing along its width: 60000 evaluations, "not
    # certified" at 20 of the 64 points of an 8 x 8 chart. Second method: the argument
    # principle on lines either side of the rightmost (double) root, on the dense matrices.
    from user_laws import kelly_hundred

    from fluidnet.linear.certificate import count_right_of
    from fluidnet.linear.roots import certified_roots
    from fluidnet.linear.stacked import Stack

    lin = kelly_hundred().linearize(kappa=0.1, T=0.18)
    st = Stack.from_systems([lin])
    dense = Stack(st.A0, st.A, st.tau, (np.zeros(0, dtype=int), np.arange(st.n)))
    counts = [int(count_right_of(dense, np.array([s]))[0][0]) for s in (-0.1183, -0.1185)]
    assert counts == [0, 2]
    roots = certified_roots(lin, k=2)
    assert roots.certified
    assert -0.1183 > roots[0].real > -0.1185  # between the lines counted above
    assert dense.residual(np.array([roots[0].value]), np.array([0]))[0] < 1e-12
    assert roots[0].multiplicity == 2


def test_the_search_widens_step_by_step_to_the_rightmost_roots():
    # the same network at kappa = 0.914, T = 0.18 (unstable): after three empty boxes the width
    # doubled from [1.7, 15] x 93 to [-11.6, 15] x 919, a box of thousands of roots that ran out
    # of its budget ("not certified"). It now widens by 1 / tau at a time. Second method: the
    # argument principle on the dense matrices on lines either side of the rightmost pair.
    from user_laws import kelly_hundred

    from fluidnet.linear.certificate import count_right_of
    from fluidnet.linear.roots import certified_roots
    from fluidnet.linear.stacked import Stack

    lin = kelly_hundred().linearize(kappa=0.914, T=0.18)
    st = Stack.from_systems([lin])
    dense = Stack(st.A0, st.A, st.tau, (np.zeros(0, dtype=int), np.arange(st.n)))
    counts = [int(count_right_of(dense, np.array([s]))[0][0]) for s in (1.39, 1.41)]
    assert counts == [2, 0]
    roots = certified_roots(lin, k=2)
    assert roots.certified
    assert 1.41 > roots[0].real > 1.39  # between the lines counted above
    assert dense.residual(np.array([roots[0].value]), np.array([0]))[0] < 1e-12


def test_the_abscissa_bound_is_the_root_of_its_equation():
    """r* solves r = mu + ||A_1|| e^{-r tau} (mu the largest eigenvalue of A0's symmetric part,
    ||A_1|| its Frobenius norm): r* = mu + W_0(||A_1|| tau e^{-mu tau}) / tau (SciPy's
    Lambert W), found by fluidnet's Brent method to its tolerance 1e-9 (1 + |hi|)."""
    from scipy.special import lambertw

    from fluidnet.linear.sparse import SparseSystem

    n, tau, c = 14, 0.5, 3.0
    A1 = np.zeros((n, n))
    A1[0, 1] = c
    lin = fn.LinearDDE(-np.diag(np.arange(1.0, n + 1)), [(tau, A1)])
    system = SparseSystem.from_lineardde(lin)
    mu = -1.0
    want = mu + float(np.real(lambertw(c * tau * np.exp(-mu * tau)))) / tau
    got = large.abscissa_bound(system, lin.A0)
    assert abs(got - want) <= 1e-8, (got, want)


def test_whole_matrix_samples_by_the_compiled_kernel_equal_lapacks():
    # a system without a Schur complement (the parking lot's arrow has one; the dense block
    # below does not), of up to KERNEL_MAX_ROWS states, is sampled by the compiled kernel on
    # whole matrices (fluidnet.linear.sparse.SparseSystem.whole): tens of microseconds a
    # sample of 30 states against about a millisecond assembled in Python. Second method:
    # the LAPACK factorization per sample, which it replaces.
    from fluidnet.linear.samples import compiled_samples
    from fluidnet.linear.sparse import SparseSystem

    if compiled_samples() is None:
        pytest.skip("the compiled kernel is not built")
    rng = np.random.default_rng(5)
    n = 30
    A0 = -np.eye(n) + 0.1 * rng.normal(size=(n, n))
    lin = fn.LinearDDE(
        A0, [(0.1 * (k + 1), 0.3 * rng.normal(size=(n, n)) / (k + 1)) for k in range(5)]
    )
    fast = SparseSystem.from_lineardde(lin)
    assert fast.schur is None and fast.whole is not None
    slow = SparseSystem.from_lineardde(lin)
    slow.__dict__["whole"] = None  # the LAPACK path
    s = rng.normal(size=64) + 1j * rng.normal(size=64) * 20
    for method in ("det_logderiv", "det_logderiv_fast"):
        f1, g1 = getattr(fast, method)(s)
        f2, g2 = getattr(slow, method)(s)
        np.testing.assert_allclose(f1, f2, atol=1e-12)
        np.testing.assert_allclose(np.abs(f1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-5 if method.endswith("fast") else 1e-10)
