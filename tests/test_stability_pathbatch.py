"""Critical values of many parameter sets as one batched continuation (stability.pathbatch)."""

import math

import numpy as np
import pytest
from delay_oscillator import oscillator, oscillator_crossings
from scipy.optimize import brentq

import fluidnet as fn
from fluidnet.linear.stacked import Stack
from fluidnet.stability.critical import _point_factory, _vectorized
from fluidnet.stability.crossing import Sweep
from fluidnet.stability.pathbatch import first_switches
from fluidnet.stability.system import SystemFactory


def gain_with_delay(k0, tau):
    """``x' = -k0 (1 + tau) x(t - tau)``: the gain grows with the delay (continuation only).

    Stable iff ``k tau < pi/2`` (Hayes 1950), so the first switch solves
    ``k0 (1 + tau) tau = pi/2``: ``tau* = (sqrt(1 + 2 pi / k0) - 1) / 2``, ``omega = k``.
    """
    return fn.LinearDDE(np.zeros((1, 1)), [(tau, [[-k0 * (1.0 + tau)]])])


def tau_star(k0):
    return 0.5 * (math.sqrt(1.0 + 2.0 * math.pi / k0) - 1.0)


def test_batched_equals_closed_form_and_per_set():
    k0 = np.array([0.8, 2.0, 6.0])
    ds = fn.critical_value(gain_with_delay, "tau", 0.05, 1.5, grid={"k0": k0})
    assert list(ds["method"].values) == ["continuation"] * k0.size
    for i, k in enumerate(k0):
        t = tau_star(k)
        assert ds["value"].values[i] == pytest.approx(t, rel=1e-12)
        assert ds["omega"].values[i] == pytest.approx(k * (1 + t), rel=1e-9)
        assert ds["count_before"].values[i] == 0 and ds["count_after"].values[i] == 2
        assert ds["bracket_lo"].values[i] < t < ds["bracket_hi"].values[i]
        one = fn.critical_value(gain_with_delay, "tau", 0.05, 1.5, k0=float(k))
        assert ds["value"].values[i] == pytest.approx(one.value, rel=1e-12, abs=0)
        assert ds["omega"].values[i] == pytest.approx(one.omega, rel=1e-12, abs=0)


def test_every_set_is_done_by_the_batch_and_certified():
    k0 = [0.8, 2.0, 6.0]
    factory = SystemFactory(gain_with_delay)
    sweeps = [Sweep(_point_factory(factory, {"k0": k}), "tau", {}) for k in k0]
    found, reasons = first_switches(sweeps, 0.05, 3.0)
    assert reasons == ["", "", ""]
    for k, f in zip(k0, found, strict=True):
        assert f.crossing.value == pytest.approx(tau_star(k), rel=1e-12)
        # the counts at the start and at the end of the step of the crossing
        assert f.checks[0] == (0.05, 0) and f.checks[-1][1] == 2
        assert f.checks[-1][0] > f.crossing.value


def fopdt_loop(K0, a, d):
    """``L(s) = K0 (1 + d) e^{-s d} / (s + a)``: a first-order loop whose gain grows with d."""
    return fn.DelayTF(fn.QuasiPolynomial([(d, [K0 * (1.0 + d)])]), fn.QuasiPolynomial([1.0, a]))


def fopdt_critical(K0, a):
    """The crossing from the frequency response: ``|L(j w)| = 1`` gives
    ``w = sqrt(K^2 - a^2)``, and the phase ``-w d - atan(w / a) = -pi``."""

    def phase_gap(d):
        K = K0 * (1.0 + d)
        w = math.sqrt(K * K - a * a)
        return w * d + math.atan2(w, a) - math.pi

    return brentq(phase_gap, 1e-6, 20.0, xtol=1e-15, rtol=1e-15)


def test_delay_tf_loop_with_per_set_intervals():
    K0 = np.array([2.0, 4.0])
    a = np.array([0.5, 1.0])
    expect = np.array([[fopdt_critical(k, x) for x in a] for k in K0])
    lo = np.maximum(expect - 0.05, 0.01)
    hi = expect + 0.05
    ds = fn.critical_value(fopdt_loop, "d", lo, hi, grid={"K0": K0, "a": a})
    np.testing.assert_allclose(ds["value"].values, expect, rtol=1e-11)
    np.testing.assert_array_equal(ds["lo"].values, lo)
    assert set(ds["method"].values.ravel()) == {"continuation"}
    for i, k in enumerate(K0):
        for j, x in enumerate(a):
            one = fn.critical_value(fopdt_loop, "d", lo[i, j], hi[i, j], K0=float(k), a=float(x))
            assert ds["value"].values[i, j] == pytest.approx(one.value, rel=1e-12, abs=0)


def two_blocks(k0, eps, p):
    """Two decoupled loops ``x' = -k x(t - p)`` and ``y' = -2 k (1 + eps) y(t - p/2)``,
    ``k = k0 (1 + p)``: the second crosses where ``k (1 + eps) p = pi/2``, the first where
    ``k p = pi/2``, just after (a relative distance ``eps``)."""
    k = k0 * (1.0 + p)
    A_full = np.array([[-k, 0.0], [0.0, 0.0]])
    A_half = np.array([[0.0, 0.0], [0.0, -2.0 * k * (1.0 + eps)]])
    return fn.LinearDDE(np.zeros((2, 2)), [(p, A_full), (0.5 * p, A_half)])


def root_of(k0, eps):
    # k0 (1 + eps) (1 + p) p = pi/2
    c = math.pi / (2.0 * k0 * (1.0 + eps))
    return 0.5 * (math.sqrt(1.0 + 4.0 * c) - 1.0)


def test_two_pairs_crossing_close_together_or_at_once():
    eps = np.array([1e-6, 0.0, 0.3])
    ds = fn.critical_value(two_blocks, "p", 0.05, 3.0, params={"k0": 1.0}, grid={"eps": eps})
    # eps = 1e-6: the first crossing (y) 2e-6 before the second (x) -- the first is returned,
    # with its own count change (0 -> 2), however close the next
    assert ds["value"].values[0] == pytest.approx(root_of(1.0, 1e-6), rel=1e-12)
    assert ds["omega"].values[0] == pytest.approx(2 * (1 + root_of(1.0, 1e-6)) * (1 + 1e-6))
    assert ds["count_after"].values[0] == 2
    # eps = 0: both pairs cross at once (0 -> 4), as the per-set path finds too
    assert ds["value"].values[1] == pytest.approx(root_of(1.0, 0.0), rel=1e-12)
    one = fn.critical_value(two_blocks, "p", 0.05, 3.0, k0=1.0, eps=0.0)
    assert ds["value"].values[1] == pytest.approx(one.value, rel=1e-12, abs=0)
    assert ds["value"].values[2] == pytest.approx(root_of(1.0, 0.3), rel=1e-12)
    factory = SystemFactory(two_blocks, {"k0": 1.0})
    sweeps = [Sweep(_point_factory(factory, {"eps": float(e)}), "p", {}) for e in eps]
    found, reasons = first_switches(sweeps, 0.05, 3.0)
    assert reasons == ["", "", ""]
    # the count after the step of the crossings is 4 (both pairs): the certificate
    assert found[0].checks[-1][1] == 4 and found[0].crossing.count_after == 2


def test_a_set_the_batch_cannot_certify_falls_back():
    """A system whose size changes along the interval cannot be stacked with itself: the set
    leaves the batch and is computed alone (same answer), the others stay in the batch."""

    def resized(k0, p):
        lin = gain_with_delay(k0, p)
        if p <= 0.2 or k0 < 2:
            return lin
        # the same dynamics with a decoupled fast stable state added
        A0 = np.diag([0.0, -50.0])
        return fn.LinearDDE(A0, [(p, np.diag([lin.A[0][0, 0], 0.0]))])

    k0 = [1.0, 3.0]
    factory = SystemFactory(resized)
    sweeps = [Sweep(_point_factory(factory, {"k0": k}), "p", {}) for k in k0]
    found, reasons = first_switches(sweeps, 0.05, 1.5)
    assert found[0] is not None and found[1] is None and "size" in reasons[1]
    ds = fn.critical_value(resized, "p", 0.05, 1.5, grid={"k0": k0})
    np.testing.assert_allclose(ds["value"].values, [tau_star(k) for k in k0], rtol=1e-12)


def test_a_set_without_switch_reports_it():
    ds = fn.critical_value(
        gain_with_delay, "tau", 0.05, 0.2, grid={"k0": [0.5, 20.0]}, on_error="nan"
    )
    assert math.isnan(ds["value"].values[0]) and "no stability switch" in ds["error"].values[0]
    assert ds["value"].values[1] == pytest.approx(tau_star(20.0), rel=1e-12)
    with pytest.raises(fn.AnalysisError, match="k0=0.5"):
        fn.critical_value(gain_with_delay, "tau", 0.05, 0.2, grid={"k0": [0.5, 20.0]})


def test_bad_intervals():
    with pytest.raises(fn.OptionError, match="broadcast"):
        fn.critical_value(gain_with_delay, "tau", [0.1, 0.2, 0.3], 1.0, grid={"k0": [1, 2]})
    with pytest.raises(fn.OptionError, match="lo < hi"):
        fn.critical_value(gain_with_delay, "tau", [0.1, 2.0], 1.0, grid={"k0": [1, 2]})
    with pytest.raises(fn.OptionError, match="with a grid of parameter sets"):
        fn.critical_value(gain_with_delay, "tau", [0.1, 0.2], 1.0, k0=1.0)


class _Vectorized:
    """``gain_with_delay`` with a ``stacked`` method (a vectorized factory)."""

    __name__ = "vectorized"

    def __init__(self, wrong=False):
        self.wrong = wrong
        self.stacked_calls = 0

    def __call__(self, k0, tau):
        return gain_with_delay(k0, tau)

    def stacked(self, k0, tau):
        self.stacked_calls += 1
        wrong = self.wrong is True or (self.wrong == "late" and np.any(tau > 0.3))
        gain = -k0 * (1.0 + tau) * (1.1 if wrong else 1.0)
        return Stack(np.zeros((tau.size, 1, 1)), gain[:, None, None, None], tau[:, None])


@pytest.mark.parametrize("wrong", [False, True])
def test_vectorized_factory_is_used_only_where_it_agrees(wrong):
    k0 = np.array([1.0, 3.0])
    f = _Vectorized(wrong)
    ds = fn.critical_value(f, "tau", 0.05, 3.0, grid={"k0": k0})
    np.testing.assert_allclose(ds["value"].values, [tau_star(k) for k in k0], rtol=1e-12)
    # a wrong vectorized factory is caught at the start and not used again
    assert f.stacked_calls == 1 if wrong else f.stacked_calls > 5


def test_vectorized_factory_wrong_later_is_caught_at_a_checkpoint():
    k0 = [1.0, 3.0]
    f = _Vectorized("late")
    sweeps = [Sweep(_point_factory(SystemFactory(f), {"k0": k}), "tau", {}) for k in k0]
    stacked = _vectorized(SystemFactory(f), "tau", [{"k0": k} for k in k0])
    found, reasons = first_switches(sweeps, 0.05, 1.5, stacked)
    # one set sees the difference at a checkpoint, the other as a jump its steps cannot pass
    assert found == [None, None] and all(reasons)
    assert any("vectorized factory differs" in r for r in reasons)
    ds = fn.critical_value(f, "tau", 0.05, 1.5, grid={"k0": k0})
    np.testing.assert_allclose(ds["value"].values, [tau_star(k) for k in k0], rtol=1e-12)


def test_an_unstable_window_a_fraction_of_a_percent_wide_is_not_skipped():
    # just above K = 2 zeta sqrt(1 - zeta^2) the two frequencies meet: the first unstable
    # interval (tau+, tau-) is 1.2e-2 wide at K = 0.199 and 2.5e-3 at K = 0.1989976
    K = np.array([0.1989976, 0.199, 0.25])
    ds = fn.critical_value(oscillator, "tau", 0.5, 3.0, grid={"K": K}, method="continuation")
    for i, k in enumerate(K):
        (t_up, w_up), (t_down, _) = oscillator_crossings(k)
        assert t_up < t_down
        assert ds["value"].values[i] == pytest.approx(t_up, rel=1e-12)
        assert ds["omega"].values[i] == pytest.approx(w_up, rel=1e-9)
        assert ds["destabilizing"].values[i] and ds["count_after"].values[i] == 2
        # the count was computed in full inside the unstable window
        assert ds["bracket_hi"].values[i] < t_down
    # by the batch itself (no set left to the per-set path)
    sweeps = [Sweep(_point_factory(SystemFactory(oscillator), {"K": k}), "tau", {}) for k in K]
    found, reasons = first_switches(sweeps, 0.5, 3.0)
    assert reasons == ["", "", ""]


@pytest.mark.parametrize("scale", [1e-4, 1e-7])
def test_slow_systems_are_followed_at_their_own_rate_scale(scale):
    """``x' = -a x - k x(t - T)`` with every rate times ``scale`` and every delay divided by it:
    the batch's size floors (collisions, roots on the axis) must follow the system's own rate
    scale, not 1. The first switch in ``k`` solves ``sqrt(k^2 - a^2) T = arccos(-a/k)``."""
    x = fn.states("x")
    k, T, a = fn.params("k T a")
    law = {"k": scale, "T": 1.0 / scale, "a": 0.5 * scale}
    m = fn.Model(rhs={x: -a * x(fn.t) - k * x(fn.t - T)}, params=law)
    delays = np.array([1.0, 2.0, 3.0]) / scale
    ds = fn.critical_value(m, "k", 0.1 * scale, 20 * scale, grid={"T": delays})
    assert list(ds["method"].values) == ["continuation"] * delays.size
    for i, tau in enumerate(delays):
        exact = brentq(
            lambda kk, tau=tau: (
                math.sqrt(kk**2 - (0.5 * scale) ** 2) * tau - math.acos(-0.5 * scale / kk)
            ),
            0.5 * scale * (1 + 1e-12),
            50 * scale,
            xtol=1e-300,
            rtol=1e-15,
        )
        assert ds["value"].values[i] == pytest.approx(exact, rel=1e-12)
