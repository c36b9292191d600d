"""Charts and critical values on laws written from scratch (tests/user_laws.py, issue 34): the
batch path against the pointwise path, points the batch cannot settle computed pointwise and
reported, critical values against closed forms and the per-point root finder."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from user_laws import (
    LAWS,
    kelly_three_routes,
    pi_over_tcp,
    sigmoid_rate,
    tandem_two_class,
    tcp_red_rtt,
)

import fluidnet as fn
from fluidnet.linear import batch as linear_batch
from fluidnet.stability import system as stability_system

SMALL = ("tcp_red_rtt", "primal_dual", "kelly_three_routes", "pi_over_tcp", "sigmoid_rate")


def _chart_pair(m, grid):
    batch = fn.stability_chart(m, grid, method="batch", on_error="nan", progress=False)
    point = fn.stability_chart(m, grid, method="pointwise", on_error="nan", progress=False)
    return batch, point


def _assert_same(batch, point):
    assert (batch["error"].values == "").all() and (point["error"].values == "").all()
    np.testing.assert_array_equal(batch["stable"].values, point["stable"].values)
    a, b = batch["abscissa"].values, point["abscissa"].values
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9 * np.max(np.abs(b)))
    np.testing.assert_allclose(batch["omega"].values, point["omega"].values, rtol=1e-7, atol=1e-9)
    assert np.all(batch["certificate"].values < batch["abscissa"].values)


@pytest.mark.parametrize("name", SMALL)
def test_batch_chart_verdicts_equal_the_pointwise_ones(name):
    law = LAWS[name]
    m = law.build()
    n = 4 if name == "kelly_three_routes" else 6  # (its pointwise equilibria cost the most)
    grid = {k: np.linspace(lo, hi, n) for k, (lo, hi) in law.plane.items()}
    batch, point = _chart_pair(m, grid)
    _assert_same(batch, point)
    assert 0 < batch["stable"].values.mean() < 1  # the plane holds both verdicts
    assert (point["fallback"].values == "").all()


def test_tandem_chart_verdicts_equal_the_pointwise_ones():
    """The 4-state law whose equilibrium() never returned in issue 34."""
    law = LAWS["tandem_two_class"]
    grid = {k: np.linspace(lo, hi, 5) for k, (lo, hi) in law.plane.items()}
    _assert_same(*_chart_pair(law.build(), grid))


def test_kelly_exponential_marking_chart_at_b_12():
    """Issue 34: on the three-route Kelly law with B = 12 the batch path died with numpy's
    LinAlgError where the pointwise path worked (the cause, a Newton candidate run to Re s =
    -1784, is checked in test_linear_batch.py). Batch and pointwise agree over the plane."""
    grid = {"kappa": np.geomspace(0.1, 30.0, 5), "B": np.array([8.0, 12.0, 16.0])}
    batch, point = _chart_pair(kelly_three_routes(), grid)
    _assert_same(batch, point)
    assert batch["stable"].values.any() and not batch["stable"].values.all()


def test_points_the_batch_cannot_settle_are_computed_pointwise_and_reported(monkeypatch):
    m = tcp_red_rtt()
    grid = {"d": np.linspace(0.05, 0.4, 4), "K": np.linspace(2e-5, 3e-4, 4)}
    reference = fn.stability_chart(m, grid, method="pointwise", progress=False)
    real_batch = stability_system.linearize_batch

    def partly(model, values, **kw):
        lb = real_batch(model, values, **kw)
        lb.ok[[3, 7]] = False  # the equilibrium search would decide these
        for k in (3, 7):
            lb.reasons[k] = "planted by the test"
        return lb

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(stability_system, "linearize_batch", partly)
    monkeypatch.setattr(linear_batch, "_continue", broken)
    ds = fn.stability_chart(m, grid, method="batch", progress=False)
    np.testing.assert_array_equal(ds["stable"].values, reference["stable"].values)
    np.testing.assert_allclose(ds["abscissa"].values, reference["abscissa"].values, rtol=1e-7)
    why = ds["fallback"].values.ravel()
    assert "planted by the test" in why[3] and "planted by the test" in why[7]
    continued = [k for k in range(16) if k not in (0, 3, 7)]  # 0: the start, solved in full
    assert all("LinAlgError" in why[k] for k in continued), why
    assert why[0] == ""


def _sigmoid_rates() -> tuple[float, float]:
    """|f'| at the smallest and the largest root of f(x) = U'(x) - g x (tests/user_laws
    sigmoid_rate), by Brent's method and f' written out."""
    a, b, g = 2.0, 5.0, 0.05

    def s(x):
        return 1.0 / (1.0 + math.exp(-a * (x - b)))

    def f(x):
        return a * s(x) * (1 - s(x)) - g * x

    def slope(x):
        return abs(a * a * s(x) * (1 - s(x)) * (1 - 2 * s(x)) - g)

    return slope(brentq(f, 1e-9, 1.0, xtol=1e-15)), slope(brentq(f, 5.0, 8.0, xtol=1e-15))


def test_critical_gain_is_the_closed_form_even_from_another_branch(monkeypatch):
    """s = -kappa c e^{-s T}: the first crossing at kappa c T = pi/2. Continued from the upper
    equilibrium (planted as the only start), the sweep would cross at pi/(2 c_upper T) = 3.7;
    the answer is checked against the full search and the sweep redone: pi/(2 c_lower T)."""
    c_low, c_up = _sigmoid_rates()
    m = sigmoid_rate()
    cv = fn.critical_value(m, "kappa", 1.0, 50.0, T=1.0)
    assert cv.value == pytest.approx(math.pi / (2 * c_low), rel=1e-9)
    assert cv.omega == pytest.approx(math.pi / 2, rel=1e-9)
    upper = np.array([5.775263595503103])
    monkeypatch.setattr(stability_system.ContinuedSystems, "_nearest", lambda self, v: upper)
    cv = fn.critical_value(m, "kappa", 1.0, 50.0, T=1.0)
    assert math.pi / (2 * c_up) < 4.0  # what following the upper branch would give
    assert cv.value == pytest.approx(math.pi / (2 * c_low), rel=1e-9)


def _spectral_crossing(m, name: str, a: float, b: float, **fixed: float) -> float:
    """Second method: where the spectral discretization's rightmost root (characteristic_roots)
    crosses the axis in (a, b), bisected on the sign of its real part (unstable at b)."""

    def abscissa(v: float) -> float:
        roots = fn.linear.characteristic_roots(m.linearize(**{name: v}, **fixed), 4)
        assert roots.certified
        return roots[0].real

    assert abscissa(a) < 0 < abscissa(b)
    return brentq(abscissa, a, b, xtol=1e-13, rtol=1e-13)


def _assert_first_switch(m, name: str, lo: float, hi: float, ref: float, **fixed: float):
    """critical_value over (lo, hi) is ``ref``, 0 -> 2 roots, and the pointwise chart below it
    is stable throughout."""
    cv = fn.critical_value(m, name, lo, hi, **fixed)
    assert cv.value == pytest.approx(ref, rel=1e-9)
    assert (cv.count_before, cv.count_after) == (0, 2)
    below = {name: np.linspace(lo, 0.999 * ref, 16)}
    chart = fn.stability_chart(m, below, method="pointwise", progress=False, **fixed)
    assert chart["stable"].values.all()
    return cv


def test_three_routes_critical_gain_is_the_first_sign_change_of_the_abscissa():
    # at B = 25.8091 a long step of the root path took a followed root (-4.64 + 0.96j) by
    # Newton's method to the mirror image of another one (-3.38 - 4.15j): that pair was then
    # followed twice, its crossing at 2.486 counted twice (0 -> 2 -> 4), which made up for
    # the pair no longer followed, which crosses first; the critical gain came out 2.486.
    m = kelly_three_routes()
    B = 25.809100160706183
    ref = _spectral_crossing(m, "kappa", 2.0, 2.3, B=B)
    cv = _assert_first_switch(m, "kappa", 0.1, 20.0, ref, B=B)
    top = fn.linear.characteristic_roots(m.linearize(kappa=ref, B=B), 4)[0]
    assert cv.omega == pytest.approx(abs(top.imag), rel=1e-7)
    # both crossings up to 3, each counted once: 4 roots in the right half-plane there
    sw = fn.stability_switches(m, "kappa", 0.1, 3.0, B=B)
    assert [(c.count_before, c.count_after) for c in sw.crossings] == [(0, 2), (2, 4)]
    assert sw.crossings[0].value == pytest.approx(ref, rel=1e-9)
    at_3 = fn.linear.characteristic_roots(m.linearize(kappa=3.0, B=B), 8)
    assert sum(1 for r in at_3 if r.real > 0) == 4


def test_pi_critical_delay_where_a_pair_parts_on_the_real_axis():
    # at N = 149.6 a pair of the PI loop's roots meets on the real axis at Tp = 0.37 and parts
    # as two real roots; the path's representative of the pair followed one, the other was
    # followed by nobody, met a third and crossed as a new pair at 0.743. The count at the end
    # disagreed, and every restart from the last checkpoint lost the root the same way: "could
    # not be certified ... even following 96 roots".
    m = pi_over_tcp()
    N = 149.62078461540386
    _assert_first_switch(m, "Tp", 0.05, 1.0, _spectral_crossing(m, "Tp", 0.72, 0.77, N=N), N=N)


def test_pi_switches_where_a_pair_forms_near_a_real_root():
    # at N = 50.8 a pair of the PI loop's roots forms near a real root at Tp = 0.2134 and
    # moves left, Newton's method taking it onto that root's position from a long step; the
    # pair was taken for a root leaving for -infinity and no longer followed, and it is the
    # one that crosses at 0.483: the switches of [0.05, 1] were not certified.
    m = pi_over_tcp()
    N = 50.75669731210668
    ref = _spectral_crossing(m, "Tp", 0.4, 0.6, N=N)
    sw = fn.stability_switches(m, "Tp", 0.05, 1.0, N=N)
    assert [(c.count_before, c.count_after) for c in sw.crossings] == [(0, 2)]
    assert sw.crossings[0].value == pytest.approx(ref, rel=1e-9)
    at_end = fn.linear.characteristic_roots(m.linearize(Tp=1.0, N=N), 8)
    assert at_end.certified and sum(1 for r in at_end if r.real > 0) == 2


def test_tandem_boundary_pocket_on_the_box_edge_is_found_by_the_edge_check():
    # an unstable pocket of the tandem law touches the box's top edge between two stable
    # points of the 16 x 16 seed chart: without the edge check that boundary misses it and
    # its repr says that such pieces are not found; with it (the default) the pocket's curve
    # is traced from the switches along the top edge, its ends on the edge where the
    # spectral method's rightmost root crosses the axis (bisected), and so it is with
    # n_seed=40, whose chart brackets the pocket itself
    m = tandem_two_class()
    xr = (0.01686189956744719, 2.567111944986683)
    yr = (0.00033968043797303677, 0.0005095206569595552)
    top = yr[1]

    def abscissa(d1: float) -> float:
        return fn.linear.characteristic_roots(m.linearize(d1=d1, K2=top), 4)[0].real

    assert abscissa(0.2) < 0 < abscissa(0.3) and abscissa(0.4) < 0
    enter = brentq(abscissa, 0.2, 0.3, xtol=1e-12)
    leave = brentq(abscissa, 0.3, 0.4, xtol=1e-12)
    kw = {"x_range": xr, "y_range": yr, "progress": False}
    unchecked = fn.stability_boundary(m, "d1", "K2", check_edges=False, **kw)
    assert unchecked.n_seed == 16 and unchecked.edges_checked is None
    assert "pieces crossing no cell edge of the 16 x 16 seed chart are not found" in repr(unchecked)
    assert all(c.x.min() > 0.5 for c in unchecked.curves)  # the pocket is not there
    checked = fn.stability_boundary(m, "d1", "K2", **kw)
    assert checked.edges_checked is True
    assert "pieces inside the box crossing no cell edge" in repr(checked)
    assert checked.to_xarray().attrs["edges_checked"] == 1
    fine = fn.stability_boundary(m, "d1", "K2", n_seed=40, check_edges=False, **kw)
    for b in (checked, fine):
        (pocket,) = [c for c in b.curves if c.x.max() < 0.5]
        assert pocket.on_boundary.all()
        on_top = np.abs(pocket.y - top) <= 1e-12 * top
        assert sorted(pocket.x[on_top]) == [
            pytest.approx(enter, rel=1e-7),
            pytest.approx(leave, rel=1e-7),
        ]
    # the curves the seed chart found are the same with and without the check
    assert len(checked.curves) == len(unchecked.curves) + 1


def test_boundary_check_edges_must_be_a_bool():
    with pytest.raises(fn.OptionError, match="check_edges = 'yes' must be True, False or None"):
        fn.stability_boundary(
            tandem_two_class(),
            "d1",
            "K2",
            x_range=(0.1, 1),
            y_range=(3e-4, 5e-4),
            check_edges="yes",
        )


def test_critical_delay_of_the_window_queue_law_is_a_crossing_of_the_per_point_system():
    m = tcp_red_rtt()
    cv = fn.critical_value(m, "d", 0.01, 1.0)
    lin = m.linearize(d=cv.value)
    top = lin.roots(k=2)[0]
    assert abs(top.real) <= 1e-7 * abs(top.value)
    assert abs(top.imag) == pytest.approx(cv.omega, rel=1e-7)
    before = m.linearize(d=cv.value * (1 - 1e-4)).roots(k=2)[0].real
    after = m.linearize(d=cv.value * (1 + 1e-4)).roots(k=2)[0].real
    assert (before < 0) != (after < 0)


def test_twenty_flows_a_point_whose_first_discretization_misses_a_root_is_refined():
    # the ring's symmetric routes make roots multiple; at this point the discretization the
    # root finder settles on (13 nodes) fails its certificate, and the chart raised "compute
    # them on a finer one"; it now refines as certified_roots does. Second method: the
    # roots on a fixed, much finer discretization, certified by the argument principle.
    from user_laws import kelly_twenty

    m = kelly_twenty()
    grid = {"kappa": np.array([1.05]), "T": np.array([0.02])}
    point = fn.stability_chart(m, grid, method="pointwise", progress=False)
    ref = m.linearize(kappa=1.05, T=0.02).roots(k=2, n_nodes=60)
    assert ref.certified
    assert point["abscissa"].values[0, 0] == pytest.approx(ref[0].real, rel=1e-9)
    assert bool(point["stable"].values[0, 0]) == (ref[0].real < 0)


def test_twenty_flows_slow_cluster_is_certified_by_the_batch():
    # at small gains the 20 flows' slow roots cluster within the certificate line's offset of
    # the rightmost one; a continued point carries only a few of them, so the first line
    # counted more roots than were known and 45 of these 64 points fell back to the full
    # per-point method. The second line (between the rightmost roots and the next ones,
    # clusters resolved by winding numbers on small circles) certifies them in the batch.
    # Second method: the pointwise root finder at every point.
    from user_laws import kelly_twenty

    m = kelly_twenty()
    grid = {"kappa": np.linspace(0.1, 0.5, 8), "T": np.linspace(0.02, 0.3, 8)}
    batch, point = _chart_pair(m, grid)
    _assert_same(batch, point)
    assert (batch["fallback"].values == "").all()


def _large_roots_and_chart(m, pars: dict, k: int):
    """The linearization at ``pars``, its ``k`` rightmost roots by the rectangles of
    fluidnet.linear.large (certified), and the pointwise chart's abscissa there, whose
    chart equals the batch's."""
    from fluidnet.linear.large import large_roots
    from fluidnet.linear.roots import balanced

    lin = m.linearize(**pars)
    boxes = large_roots(balanced(lin), k, None)
    assert boxes.certified
    batch, point = _chart_pair(m, {name: np.array([v]) for name, v in pars.items()})
    _assert_same(batch, point)
    return lin, boxes, point["abscissa"].values[0, 0]


def test_hundred_states_rightmost_root_is_its_factors_not_a_cluster_mean():
    # at a small gain the 100-state network's 30 classes of three alike flows give some 30
    # double roots within 4 % of each other (-0.0465 to -0.049): the boxes of
    # fluidnet.linear.large resolved them only as one cluster, reported at -0.0469501, which
    # the pointwise chart gave as its abscissa (the batch: -0.0465362, 0.9 % apart). The
    # factors' roots, with their multiplicities, are the whole system's. Second methods: the
    # dense discretization of the whole system (100 states x 7 nodes) and the batch.
    from user_laws import kelly_hundred

    from fluidnet.linear.roots import generator_matrix

    m = kelly_hundred()
    pars = {"kappa": 0.039580664627270314, "T": 0.31025835396234686}
    lin = m.linearize(**pars)
    roots = lin.roots(k=3)
    assert roots.certified
    ev = np.linalg.eigvals(generator_matrix(lin, 6))
    ev = ev[np.argsort(-ev.real)]
    assert ev[0].real == pytest.approx(ev[1].real, rel=1e-8)  # a double root
    assert roots[0].multiplicity == 2
    assert roots[0].value == pytest.approx(ev[0], rel=1e-10)
    assert roots[1].value == pytest.approx(ev[2], rel=1e-10)
    assert roots[0].residual < 1e-10  # of the whole system at the root
    batch, point = _chart_pair(m, {name: np.array([v]) for name, v in pars.items()})
    _assert_same(batch, point)
    assert point["abscissa"].values[0, 0] == pytest.approx(ev[0].real, rel=1e-10)


def _reduced_part(lin):
    """The reduced system of the factored determinant of ``lin`` (fluidnet.linear.aggregate)."""
    from fluidnet.linear.aggregate import aggregation
    from fluidnet.linear.stacked import Stack

    st = aggregation(Stack.from_systems([lin])).reduced
    live = [j for j in range(st.m) if np.any(st.A[0, j] != 0)]
    return fn.LinearDDE(st.A0[0], [(float(st.tau[0, j]), st.A[0, j]) for j in live])


def test_hundred_states_part_box_cut_through_a_cluster_is_counted():
    # drawn by a random check of stability_switches on the 100-state network (T = 0.0814,
    # kappa in [0.234, 17.68]): at kappa = 4.81 the reduced 40-state part of its factored
    # determinant has 32 unstable roots. Asked for its 24 rightmost, the rectangles of
    # fluidnet.linear.large cut a box through four roots: its lower half, with one of them
    # 0.013 inside the cut, was counted with the box's mean, 0.039 outside, as a pole of
    # order 4, whose field cancelled the roots' at the samples. The half was counted 0, the
    # halves disagreed, and the sweep failed after 28 s. A box's mean is now a pole only
    # farther from the boundary than twice the reach of its box. Second method: the dense
    # discretization (40 states x 25 nodes).
    from user_laws import kelly_hundred

    from fluidnet.linear.large import large_roots
    from fluidnet.linear.roots import balanced, generator_matrix

    lin = _reduced_part(kelly_hundred().linearize(kappa=4.81197477835, T=0.0814121259637468))
    assert lin.n == 40
    boxes = large_roots(balanced(lin), 24, None)
    assert boxes.certified
    ev = np.linalg.eigvals(generator_matrix(lin, 24))
    ev = ev[np.argsort(-ev.real)][:24]
    assert sum(1 for v in ev if v.real > 0) == 24
    np.testing.assert_allclose(np.sort_complex(boxes.values), np.sort_complex(ev), rtol=1e-8)


def test_twenty_flows_two_close_real_roots_are_located_apart():
    # two real roots, -0.0313584 and -0.0318009, 4.4e-4 apart: the boxes of
    # fluidnet.linear.large never located them from the power sums on a box's boundary (one
    # root 2.8e-6 inside an edge of the box holding both) and reported them as one cluster,
    # at -0.0318032, which the pointwise chart gave as its abscissa (1.4 % off). The power
    # sums on a circle around the box locate them. Second method: the dense discretization
    # (20 states x 31 nodes) and the batch.
    from user_laws import kelly_twenty

    pars = {"kappa": 0.05898457188453884, "T": 0.3278471503750548}
    lin, boxes, abscissa = _large_roots_and_chart(kelly_twenty(), pars, 2)
    dense = lin.roots(k=2, n_nodes=30)
    assert dense.n_nodes == 30 and [r.multiplicity for r in dense] == [1, 1]
    np.testing.assert_allclose(boxes.values, dense.values, rtol=1e-10)
    assert abscissa == pytest.approx(dense[0].real, rel=1e-10)


@pytest.mark.parametrize(
    ("kappa", "T"),
    [(0.03626466263433439, 0.11169278429870616), (0.03998270092698312, 0.04620664911952332)],
)
def test_thirty_delays_eight_close_roots_are_located_one_by_one(kappa, T):
    # the 30-flow ring with five delays has 8 real roots within 6e-5 of each other, in pairs
    # about 1e-9 apart. The boxes of fluidnet.linear.large reported them as one cluster at
    # their mean, -0.0282079 (error 8.3e-4), which the pointwise chart gave as its abscissa
    # (the batch: -0.02817852, 1e-3 relative). The power sums on a circle around the cluster
    # and Newton's method on det Delta divided by the roots found locate all 8 (a pair may
    # stay one entry of multiplicity 2 whose disc holds both). Second
    # method: the argument principle on lines between them (the stacked evaluation). At
    # the second point a box's edge cut the 8 roots 2 and 6, each half's circle held the
    # other half's roots too, and both halves were reported as clusters (-0.0307245 for
    # -0.0310105): a circle may now hold more roots than its box.
    from user_laws import kelly_thirty_delays

    from fluidnet.linear.certificate import count_right_of
    from fluidnet.linear.stacked import Stack

    lin, boxes, abscissa = _large_roots_and_chart(
        kelly_thirty_delays(), {"kappa": kappa, "T": T}, 8
    )
    assert sum(r.multiplicity for r in boxes) == 8
    # each root alone, or a pair within its disc (an error of a few 1e-9)
    assert all(r.imag == 0 and r.error <= 1e-8 for r in boxes)
    v = np.array([r.real for r in boxes])
    assert np.all(np.diff(v) < 0) and v[0] - v[-1] < 6e-5
    right = np.array([r.real + r.error for r in boxes])
    left = np.array([r.real - r.error for r in boxes])
    lines = np.concatenate([[right[0] + 1e-9], 0.5 * (left[:-1] + right[1:]), [left[-1] - 1e-9]])
    st = Stack.from_systems([lin])
    counts = [int(count_right_of(st, np.array([s]))[0][0]) for s in lines]
    assert counts == [0, *np.cumsum([r.multiplicity for r in boxes]).tolist()]
    assert abscissa == pytest.approx(v[0], rel=1e-10)


@pytest.mark.parametrize(
    ("kappa", "T"),
    [(0.07554154806849804, 0.11675014262192969), (0.03449042945481805, 0.25544180135143935)],
)
def test_thirty_unequal_flows_a_fourfold_root_is_reported_at_its_value(kappa, T):
    # the unequal 30-flow ring has 4-fold roots (four alike flows). At these points the
    # pointwise method's discretization would exceed DENSE_LIMIT, so the rectangles of
    # fluidnet.linear.large locate the roots, and they report a 4-fold root as one cluster.
    # Its mean came from the power sums on the cluster's own box, 1.6e-4 off at the first
    # point (-0.0758492 for -0.076012, within the stated error 8.4e-4), and the chart's
    # abscissa carried it: batch and pointwise differed by 0.2 %. At the second, a circle
    # of twice the box's diameter also held the next 4-fold root, 1.1e-3 away (-0.034939
    # for -0.034705). Second method: the dense discretization's roots.
    from user_laws import kelly_thirty_unequal

    pars = {"kappa": kappa, "T": T}
    lin, boxes, abscissa = _large_roots_and_chart(kelly_thirty_unequal(), pars, 2)
    dense = lin.roots(k=2, n_nodes=30)
    assert dense.n_nodes == 30  # the dense discretization
    assert dense[0].multiplicity == 4 and dense[0].imag == 0
    assert boxes[0].multiplicity == 4
    assert boxes[0].value == pytest.approx(dense[0].value, rel=1e-10)
    assert abscissa == pytest.approx(dense[0].real, rel=1e-10)


def test_thirty_unequal_flows_switches_with_fourfold_roots_are_certified():
    # the unequal 30-flow ring's alike flows give 4-fold roots, and crossings that add 8
    # right-half-plane roots at once. Followed as one system, its roots could not be told
    # apart: the switches of kappa in [0.1, 2] at T = 0.3 were "not certified ... even
    # following 96 roots". The parts of the factored determinant are now followed one by one.
    # Second method: the spectral count of every root right of the axis, between crossings.
    from user_laws import kelly_thirty_unequal

    m = kelly_thirty_unequal()
    sw = fn.stability_switches(m, "kappa", 0.1, 2.0, T=0.3)
    values = [c.value for c in sw.crossings]
    ends = [0.1, *values, 2.0]
    spectral = []
    for a, b in zip(ends[:-1], ends[1:], strict=True):
        roots = m.linearize(kappa=0.5 * (a + b), T=0.3).roots(region=0.0)
        assert roots.certified
        spectral.append(sum(r.multiplicity for r in roots if r.real > 0))
    assert [sw.count_lo, *[c.count_after for c in sw.crossings]] == spectral
    # four alike flows: a 4-fold pair crosses, 8 roots at once
    assert max(c.change for c in sw.crossings) == 8
    cv = fn.critical_value(m, "kappa", 0.1, 2.0, T=0.3)
    assert values[0] == pytest.approx(cv.value, rel=1e-9)


@pytest.mark.parametrize(
    ("law", "lo", "hi", "T", "points"),
    [
        ("kelly_thirty_unequal", 1.75043359145411, 8.754930859467736, 0.08101642857652064, 9),
        ("kelly_hundred", 1.4272597027923013, 3.596678137412407, 0.21835196726911427, 5),
        # so many unstable roots at lo that their count there gives up (after 8 s): the
        # few rightmost, certified, are followed instead
        ("kelly_thirty_delays", 7.36057634422, 16.6829, 0.2269, 5),
    ],
)
def test_networks_unstable_throughout_have_no_switch(law, lo, hi, T, points):
    # drawn by a random check of critical_value against the pointwise chart: both networks
    # are unstable for every gain in [lo, hi]. Following the rightmost roots and counting them
    # all at every checkpoint, more and more of them unstable, failed: the 30-flow ring after
    # 7 s ("could not be certified ... even following 48 roots"), the 100-state network after
    # 42 s ("the number of right-half-plane roots at kappa=2.12 is not certified"), the ring
    # with five delays after 13 s (the same at kappa=7.36, lo). Roots unstable at lo are now
    # followed to hi, where one of them stays unstable. Second method:
    # the pointwise roots of the whole system along the interval, unstable at every point.
    m = LAWS[law].build()
    with pytest.raises(fn.AnalysisError, match="unstable on the whole interval") as err:
        fn.critical_value(m, "kappa", lo, hi, T=T)
    assert f"followed from {lo:g} to {hi:g}" in str(err.value)
    chart = fn.stability_chart(
        m, {"kappa": np.geomspace(lo, hi, points)}, params={"T": T}, method="pointwise"
    )
    assert not chart["stable"].values.any()
    assert (chart["abscissa"].values > 0).all()


def test_switches_restart_from_later_checkpoints_without_limit(monkeypatch):
    # drawn by a random check of stability_switches on the networks: over [0.234, 17.68] at
    # T = 0.0814 the 100-state network's 30-state part needed more followed roots four times,
    # from ever later checkpoints (kappa = 1.72 twice, 5.75, 15.44; 12, 24, 48 and 96 roots),
    # as tens of roots cross one after another; three restarts were allowed in all, and the
    # sweep failed after 28 s. Only restarts from the same checkpoint are limited now. Here
    # the 20-flow ring restarts from two checkpoints (kappa = 0.205 and 0.786) with one
    # restart allowed. Second method: the pointwise count between the crossings.
    from user_laws import kelly_twenty

    from fluidnet.stability import rootpaths

    monkeypatch.setattr(rootpaths, "MAX_RESTARTS", 1)
    follow = rootpaths._follow
    restarts_from = []

    def recorded(*args, **kwargs):
        got = follow(*args, **kwargs)
        if got[0] == "failed":
            restarts_from.append(got[3].value)  # the last good checkpoint
        return got

    monkeypatch.setattr(rootpaths, "_follow", recorded)
    m = kelly_twenty()
    lo, hi, T = 0.20475660741411417, 6.114338984420262, 0.09926589475246499
    sw = fn.stability_switches(m, "kappa", lo, hi, T=T)
    assert len(set(restarts_from)) >= 2  # what the case is for
    counts = [sw.count_lo] + [c.count_after for c in sw.crossings]
    assert counts == [0, 2, 4, 6]
    ends = [lo, *(c.value for c in sw.crossings), hi]
    for a, b, count in zip(ends[:-1], ends[1:], counts, strict=True):
        roots = m.linearize(kappa=0.5 * (a + b), T=T).roots(region=0.0)
        assert roots.certified
        assert sum(r.multiplicity for r in roots if r.real > 0) == count


def test_counts_with_many_unstable_roots_ask_for_them_at_once(monkeypatch):
    # the 20-flow ring over [4.73, 10.64] at T = 0.168 (a range of the random check of
    # stability_switches): 12 to 30 roots unstable. A full count at a checkpoint asked for the
    # 6 rightmost roots, then 12, then 24 (three computations, each anew), until the leftmost
    # was stable; it now asks for the number it would reach (24 where 14 are expected) at
    # once. Second method: the pointwise count between the crossings.
    from user_laws import kelly_twenty

    from fluidnet.stability import crossing

    computed = crossing.certified_roots
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return computed(*args, **kwargs)

    monkeypatch.setattr(crossing, "certified_roots", counted)
    count = crossing.Sweep.count
    full = []  # (k asked for, expected unstable or None, computations)

    def recorded(self, p, k=None, rhp_only=False):
        before = len(calls)
        got = count(self, p, k, rhp_only)
        full.append((k, got.count, len(calls) - before))
        return got

    monkeypatch.setattr(crossing.Sweep, "count", recorded)
    m = kelly_twenty()
    lo, hi, T = 4.72636446561418, 10.642100051425972, 0.1681793473124034
    sw = fn.stability_switches(m, "kappa", lo, hi, T=T)
    counts = [sw.count_lo] + [c.count_after for c in sw.crossings]
    assert counts == [14, 16, 18, 20, 22, 24, 26, 28, 30]
    ends = [lo, *(c.value for c in sw.crossings), hi]
    for a, b, n in zip(ends[:-1], ends[1:], counts, strict=True):
        roots = m.linearize(kappa=0.5 * (a + b), T=T).roots(region=0.0)
        assert roots.certified
        assert sum(r.multiplicity for r in roots if r.real > 0) == n
    # the counts after the start with 6 or more unstable: one computation each (none for a
    # factor part's closed form)
    later = [f for f in full[1:] if f[0] is not None and f[1] >= 6]
    assert sum(n_computed for *_, n_computed in later) >= 3
    assert all(k >= n + 6 and n_computed <= 1 for k, n, n_computed in later)


def test_a_restart_follows_enough_roots_for_those_found_unstable(monkeypatch):
    # the ring with five delays, its critical gain over [0.05, 20] (the benchmark's sweep):
    # the 6 roots followed from kappa = 0.463 missed the pair that crosses first, and the count
    # at 4.54 found 8 roots unstable where 2 were expected. The restart followed 12 roots and
    # failed again at 3.57 (4 unstable, 2 expected); only 24 roots passed. A restart now
    # follows enough roots for those found unstable where the count failed, 24 at once.
    # Second method: the pointwise roots 1e-5 (relative) either side of the value.
    from fluidnet.stability import rootpaths

    follow = rootpaths._follow
    followed = []

    def recorded(sweep, lo, hi, start, k, *args, **kwargs):
        followed.append(k)
        return follow(sweep, lo, hi, start, k, *args, **kwargs)

    monkeypatch.setattr(rootpaths, "_follow", recorded)
    m = LAWS["kelly_thirty_delays"].build()
    cv = fn.critical_value(m, "kappa", 0.05, 20.0)
    assert followed == [None, 24]
    below = m.linearize(kappa=cv.value * (1 - 1e-5)).roots(k=2)
    above = m.linearize(kappa=cv.value * (1 + 1e-5)).roots(k=2)
    assert below.certified and above.certified
    assert below.abscissa < 0 < above.abscissa
    assert (cv.direction, cv.count_before, cv.count_after) == ("destabilizing", 0, 2)
    assert cv.omega == pytest.approx(abs(above[0].imag), rel=1e-3)


def test_restarts_after_real_roots_meet_do_not_creep():
    # drawn by a random check of critical_value on the ring with five delays (T = 0.0465):
    # its slow real roots, one per flow, meet in pairs as the gain grows. Newton's method loses
    # one of a meeting pair and the path starts afresh from a full count a step ahead; each
    # restart went on with the halved step, so the restarts crept up to the next meeting:
    # 276 full counts and 42 s for this range (at T = 0.0236 over [0.07, 20], 36 counts, then
    # "it collides with another root" after 40 s). The restarted path now keeps the step first
    # tried. Second method: the pointwise roots 1e-5 (relative) either side of the value.
    m = LAWS["kelly_thirty_delays"].build()
    T = 0.0465341987785899
    cv = fn.critical_value(m, "kappa", 0.6316708277542392, 7.1236374506501745, T=T)
    assert len(cv.checks) < 20
    below = m.linearize(kappa=cv.value * (1 - 1e-5), T=T).roots(k=2)
    above = m.linearize(kappa=cv.value * (1 + 1e-5), T=T).roots(k=2)
    assert below.certified and above.certified
    assert below.abscissa < 0 < above.abscissa
    assert cv.direction == "destabilizing"
    assert cv.omega == pytest.approx(abs(above[0].imag), rel=1e-3)


def test_hundred_states_the_factored_batch_equals_the_pointwise_roots():
    # 90 flows on 30 routes (3 alike flows each) and 10 link filters: the batch factors the
    # 100-state determinant into a 40-state system and 30 scalar factors with double roots
    # (fluidnet.linear.aggregate); the pointwise method solves the 100 states as they are.
    # The grid holds stable and unstable points, real and complex rightmost roots.
    from user_laws import kelly_hundred

    m = kelly_hundred()
    grid = {"kappa": np.array([0.3, 1.2, 2.0]), "T": np.array([0.05, 0.2])}
    batch, point = _chart_pair(m, grid)
    _assert_same(batch, point)
    assert batch["stable"].values.any() and not batch["stable"].values.all()
    assert (batch["omega"].values > 0).any() and (batch["omega"].values == 0).any()


def _assert_gain_destabilizes_there(m, step: float) -> None:
    """The network's critical gain in [0.05, 20]: the pointwise roots ``step`` (relative)
    below it are stable, above it unstable, at its crossing frequency."""
    cv = fn.critical_value(m, "kappa", 0.05, 20.0)
    assert cv.direction == "destabilizing"
    below = m.linearize(kappa=cv.value * (1 - step)).roots(k=2)
    above = m.linearize(kappa=cv.value * (1 + step)).roots(k=2)
    assert below.certified and above.certified
    assert below[0].real < 0 < above[0].real
    assert abs(above[0].imag) == pytest.approx(cv.omega, rel=1e-3)


def test_hundred_states_critical_gain_is_where_the_abscissa_changes_sign():
    # the count of right-half-plane roots at the range's start asked the rectangle search of
    # large systems for 2 n = 200 rightmost roots, which exhausted its budget: the sweep
    # failed with advice about a discretization that this search does not use. Second
    # method: the pointwise roots of the 100 states either side of the critical gain.
    from user_laws import kelly_hundred

    _assert_gain_destabilizes_there(kelly_hundred(), 1e-4)


def test_thirty_delays_critical_gain_past_a_double_real_root():
    # the ring's routes make two followed real roots meet at a double root (-0.0404 at
    # kappa = 0.052); Newton's method lands both on it, and one is dropped (the next count
    # certifies the rest). Taking every lost root near its prediction for a meeting made the
    # path stop there ("it collides with another root"). Second method: the pointwise roots
    # of the 30 states either side of the critical gain.
    from user_laws import kelly_thirty_delays

    _assert_gain_destabilizes_there(kelly_thirty_delays(), 1e-5)


def test_twenty_flows_boundary_in_batches_equals_the_point_by_point_curve(monkeypatch):
    # Newton's method from the ends of some coarse-chart edges went to another root's
    # crossing, outside the edge (the ring's crossing frequency changes fast), and the whole
    # boundary fell back to tracing one point at a time. The edge is now halved where the
    # stability changes and Newton's method started there. Second method: that point-by-point
    # tracing (the batched method switched off); each curve lies on the other.
    from user_laws import kelly_twenty

    from fluidnet.stability import boundary as bd

    m = kelly_twenty()
    kw = {"x_range": (0.1, 2.0), "y_range": (0.02, 0.3), "progress": False}
    settled = []
    batched = bd.boundary_curves

    def recorded(*args, **kwargs):
        out = batched(*args, **kwargs)
        settled.append(out is not None)
        return out

    monkeypatch.setattr(bd, "boundary_curves", recorded)
    fast = fn.stability_boundary(m, "kappa", "T", **kw)
    assert settled == [True]
    monkeypatch.setattr(bd, "boundary_curves", lambda *a, **k: None)
    slow = fn.stability_boundary(m, "kappa", "T", **kw)
    scale = np.array([1.9, 0.28])

    def points(b):
        return np.concatenate([np.c_[c.x, c.y] for c in b.curves]) / scale

    def off(P, Q):  # distance of the points P from the polyline Q
        d = np.full(len(P), np.inf)
        for q0, q1 in zip(Q[:-1], Q[1:], strict=True):
            v = q1 - q0
            u = np.clip((P - q0) @ v / max(v @ v, 1e-300), 0.0, 1.0)
            d = np.minimum(d, np.linalg.norm(P - (q0 + u[:, None] * v), axis=1))
        return d

    a, b = points(fast), points(slow)
    assert len(fast.curves) == len(slow.curves) == 1
    assert off(a, b).max() < 1e-5 and off(b, a).max() < 1e-5
