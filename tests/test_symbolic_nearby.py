"""linearize_near: equilibria continued from a nearby point, against closed forms and the full
search; lags of one delay expression in one matrix."""

import numpy as np
import pytest
from user_laws import primal_dual, sigmoid_rate, tandem_two_class, tcp_red_rtt

import fluidnet as fn
from fluidnet.symbolic.linearize import linearize_batch
from fluidnet.symbolic.nearby import NearbyPoint, linearize_near


def _cubic_queue(N, C, d, K):
    """The queue of tests/user_laws.tcp_red_rtt at equilibrium, from its cubic: W = R C / N
    and W^2 p = 2 with p = K q, R = d + q / C give (d + q/C)^2 C^2 K q = 2 N^2; the one
    positive real root (the cubic is increasing for q > 0)."""
    coeffs = np.polynomial.polynomial.polymul([d, 1 / C], [d, 1 / C])  # (d + q/C)^2
    coeffs = np.polynomial.polynomial.polymul(coeffs, [0.0, C**2 * K])
    coeffs[0] -= 2 * N**2
    roots = np.polynomial.polynomial.polyroots(coeffs)
    real = roots[np.abs(roots.imag) < 1e-9 * np.abs(roots)].real
    return float(real[real > 0][0])


def test_continued_equilibria_equal_the_cubic_and_the_full_linearization():
    m = tcp_red_rtt()
    eq = m.equilibrium()
    x0 = np.array([eq["W"], eq["q"]])
    d = np.linspace(0.15, 0.25, 7)  # around the default d = 0.2
    lb = linearize_near(m, {"d": d}, x0)
    assert lb.ok.all()
    for k, dk in enumerate(d):
        q = _cubic_queue(50.0, 3750.0, dk, 1e-4)
        R = dk + q / 3750.0
        assert lb.equilibrium[k, 1] == pytest.approx(q, rel=1e-10)
        assert lb.equilibrium[k, 0] == pytest.approx(R * 3750.0 / 50.0, rel=1e-10)
        full = m.linearize(d=dk)
        s = np.array([0.3, 1.0 + 2.0j, 5.0j])
        ours = fn.LinearDDE(
            lb.stack.A0[k], list(zip(lb.stack.tau[k], lb.stack.A[k], strict=True))
        ).characteristic(s)
        np.testing.assert_allclose(ours, full.characteristic(s), rtol=1e-9)


def test_lags_of_one_delay_expression_share_one_matrix():
    # W(t - R), W(t - R) p(t - R) and q(t - R): one delay expression R = d + q/C
    lb = linearize_batch(tcp_red_rtt(), {"K": np.array([1e-4, 2e-4])})
    assert lb.stack.m == 1 and lb.ok.all()
    lb = linearize_batch(primal_dual(), {"Tf": np.array([0.05, 0.05])})
    assert lb.stack.m == 2  # Tf and Tb: two expressions, even where equal


def test_a_start_on_another_branch_is_continued_not_switched():
    """The sigmoidal law has three equilibria (roots of U'(x) = g x, independent of kappa and
    T); continuation stays on the branch it starts from, which the full search does not rank
    first: that is the caller's to check (ContinuedSystems / Sweep.same_branch)."""
    m = sigmoid_rate()
    upper = 5.775263595503103  # the largest root of 2 s (1 - s) = 0.05 x, s = 1/(1+e^{-2(x-5)})
    lb = linearize_near(m, {"T": np.array([1.0, 1.1])}, np.array([upper]))
    assert lb.ok.all()
    np.testing.assert_allclose(lb.equilibrium[:, 0], upper, rtol=1e-12)
    assert m.equilibrium(T=1.1)["x"] == pytest.approx(0.0018224623540224404, rel=1e-9)


def test_points_it_cannot_settle_are_flagged_with_a_reason():
    m = tcp_red_rtt()
    start = np.array([16.47, 73.69])
    # C = 0: R = d + q/C is not finite, no steady state to converge to
    lb = linearize_near(m, {"C": np.array([3750.0, 0.0])}, start)
    assert lb.ok.tolist() == [True, False]
    assert "Newton" in lb.reasons[1] and "full search" in lb.reasons[1]
    lb = linearize_near(m, {"d": np.array([-1.0, 0.2])}, np.array([start, [np.nan, 1.0]]))
    assert not lb.ok.any()
    assert "'d'" in lb.reasons[0]  # out of its bounds
    assert "not finite" in lb.reasons[1]


# ---------------------------------------------------------------- NearbyPoint (one point)
def _system_at(lb, k):
    st = lb.stack
    return fn.LinearDDE(st.A0[k], list(zip(st.tau[k], st.A[k], strict=True)))


def test_one_point_continuation_equals_the_cubic_and_the_full_linearization():
    m = tcp_red_rtt()
    eq = m.equilibrium()
    start = np.array([eq["W"], eq["q"]])
    point = NearbyPoint(m, {})
    s = np.array([0.3, 1.0 + 2.0j, 5.0j])
    for dk in (0.15, 0.19, 0.2, 0.23, 0.3):
        lin, x, why = point({"d": dk}, start)
        assert why == "" and lin is not None and x is not None
        q = _cubic_queue(50.0, 3750.0, dk, 1e-4)
        assert x[1] == pytest.approx(q, rel=1e-10)
        assert x[0] == pytest.approx((dk + q / 3750.0) * 3750.0 / 50.0, rel=1e-10)
        full = m.linearize(d=dk)
        np.testing.assert_allclose(lin.characteristic(s), full.characteristic(s), rtol=1e-9)


def _tandem_empty_first_queue(d1, N1=40.0, N2=20.0, C2=3750.0, d2=0.1, K2=1e-4):
    """q2 of tests/user_laws.tandem_two_class with the first queue empty (q1 = 0, p1 = 0):
    W1 = W2 = sqrt(2 / (K2 q2)) (each window's equation with p = K2 q2) and the second link
    full, N1 W/R1 + N2 W/R2 = C2 with R1 = d1 + q2/C2, R2 = d2 + q2/C2: a scalar root by
    bisection (scipy's brentq), the rate decreasing in q2."""
    from scipy.optimize import brentq

    def excess(q2):
        w = np.sqrt(2.0 / (K2 * q2))
        return N1 * w / (d1 + q2 / C2) + N2 * w / (d2 + q2 / C2) - C2

    return brentq(excess, 1e-6, 1e6, xtol=1e-14, rtol=1e-15)


@pytest.mark.filterwarnings("ignore:.*equilibria held at the boundary")
def test_one_point_holds_an_empty_queue_at_zero():
    m = tandem_two_class()
    eq = m.equilibrium(d1=0.6)
    start = np.array([eq[s] for s in m.state_names])
    assert start[2] == 0.0  # the first queue is empty there
    point = NearbyPoint(m, {})
    for d1 in (0.5, 0.6, 0.8):
        lin, x, why = point({"d1": d1}, start)
        assert why == "" and lin is not None and x is not None
        q2 = _tandem_empty_first_queue(d1)
        w = np.sqrt(2.0 / (1e-4 * q2))
        assert x[2] == 0.0
        np.testing.assert_allclose(x[[0, 1, 3]], [w, w, q2], rtol=1e-10)


@pytest.mark.filterwarnings("ignore:.*equilibria held at the boundary")
def test_one_point_decides_as_the_batch_of_one():
    """NearbyPoint against linearize_near (K = 1) on points each path settles or leaves to
    the full search for a different reason: the same decisions, equilibria and systems."""
    tandem = tandem_two_class()
    filled = np.array([tandem.equilibrium(d1=0.19)[s] for s in tandem.state_names])
    empty = np.array([tandem.equilibrium(d1=0.25)[s] for s in tandem.state_names])
    tcp = tcp_red_rtt()
    tcp_start = np.array([16.47, 73.69])
    sig = sigmoid_rate()
    cases = [
        (tandem, {"d1": 0.21}, filled),  # the first queue empties on the way
        (tandem, {"d1": 0.19}, empty),  # it fills
        (tandem, {"d1": 0.195}, filled),
        (tandem, {"d1": 0.3}, empty),
        (tcp, {"C": 0.0}, tcp_start),  # R not finite
        (tcp, {"d": -1.0}, tcp_start),  # out of bounds
        (tcp, {"d": 0.2}, np.array([np.nan, 1.0])),  # no start
        (tcp, {"d": 0.21}, tcp_start),
        (sig, {"T": 1.0}, np.array([5.775263595503103])),  # the upper branch
        (sig, {"T": 1.0}, np.array([2.0])),  # far from every root
    ]
    s = np.array([0.3, 1.0 + 2.0j, 5.0j])
    for m, values, start in cases:
        lb = linearize_near(m, {k: np.array([v]) for k, v in values.items()}, start)
        lin, x, why = NearbyPoint(m, {})(values, start)
        assert (lin is not None) == bool(lb.ok[0]), (m.name, values)
        if lin is None:
            assert why and lb.reasons[0]
            continue
        np.testing.assert_allclose(x, lb.equilibrium[0], rtol=1e-12)
        want = _system_at(lb, 0)
        assert lin.delays == pytest.approx(want.delays, rel=1e-12)
        np.testing.assert_allclose(lin.characteristic(s), want.characteristic(s), rtol=1e-10)


# ------------------------------------------------- a queue that empties or fills on the way
def _tandem(d1: float) -> np.ndarray:
    """The tandem law's equilibrium at its defaults (N1 = 40, N2 = 20, d2 = 0.1) and ``d1``,
    from tests/equilibrium_laws.tandem_reference (Brent roots of its scalar equations, link 1
    a bottleneck or its queue empty), states in the model's order (W1, W2, q1, q2)."""
    from equilibrium_laws import tandem_reference

    ref = tandem_reference(2000.0, N1=40.0, N2=20.0, d1=d1, d2=0.1)
    return np.array([ref["W1"], ref["W2"], ref["q1"], ref["q2"]])


@pytest.mark.filterwarnings("ignore:.*equilibria held at the boundary")
def test_a_queue_that_empties_on_the_way_is_held_without_the_full_search(monkeypatch):
    """From both links congested (d1 = 0.2, q1 = 2.07 pkts) to d1 = 0.21, 0.24, 0.3, where link
    1 is no longer a bottleneck: every state free drives q1 below 0, so q1 is held at 0; the
    point is settled there, equal to the reference, and the full search is not run (on the
    continuation of a critical value it was, 20 ms a time)."""
    import fluidnet.stability.system as system

    m = tandem_two_class()
    start = _tandem(0.2)
    assert start[2] > 2.0  # the first queue is not empty at the start
    point = NearbyPoint(m, {})
    s = np.array([0.3, 1.0 + 2.0j, 5.0j])
    fulls = {}
    for d1 in (0.21, 0.24, 0.3):
        lin, x, why = point({"d1": d1}, start)
        assert why == "" and lin is not None and x is not None
        want = _tandem(d1)
        assert want[2] == 0.0 and x[2] == 0.0
        np.testing.assert_allclose(x, want, rtol=1e-10)
        fulls[d1] = m.linearize(d1=d1)  # at the equilibrium the full search returns
        np.testing.assert_allclose(lin.characteristic(s), fulls[d1].characteristic(s), rtol=1e-9)
    # a continuation (a root followed in d1) runs the full search at its first point only
    searched = []
    first_equilibrium = system.first_equilibrium

    def spy(model, **params):
        searched.append(params)
        return first_equilibrium(model, **params)

    monkeypatch.setattr(system, "first_equilibrium", spy)
    systems = system.ContinuedSystems(system.SystemFactory(m))
    systems(d1=0.2)
    lin = systems(d1=0.24)
    assert [p["d1"] for p in searched] == [0.2]
    assert systems.stats == {"continued": 1, "full": 1}
    np.testing.assert_allclose(lin.characteristic(s), fulls[0.24].characteristic(s), rtol=1e-9)


@pytest.mark.filterwarnings("ignore:.*equilibria held at the boundary")
def test_queues_that_empty_and_fill_settle_in_a_batch():
    """linearize_near from both ends of the change: from both links congested (d1 = 0.2) the
    points past the emptying of the first queue, from the empty queue (d1 = 0.24) the points
    where it fills again; all equal to the reference."""
    m = tandem_two_class()
    d1 = np.array([0.15, 0.19, 0.205, 0.21, 0.24, 0.3])
    for start in (_tandem(0.2), _tandem(0.24)):
        lb = linearize_near(m, {"d1": d1}, start)
        assert lb.ok.all(), lb.reasons
        for k, dk in enumerate(d1):
            np.testing.assert_allclose(lb.equilibrium[k], _tandem(dk), rtol=1e-10)
            assert (lb.equilibrium[k, 2] == 0.0) == (_tandem(dk)[2] == 0.0)
