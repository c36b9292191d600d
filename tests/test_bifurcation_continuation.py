"""continue_orbits: branches from Hopf points, folds of cycles, non-smooth ends."""

import math

import numpy as np
import pytest

import fluidnet as fn


def wright():
    x = fn.states("x")
    a = fn.params("a")
    return fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0}, name="wright")


def test_wright_branch_follows_the_normal_form_then_the_simulation():
    hp = fn.hopf_point(wright(), "a", 1.0, 2.0)
    br = fn.continue_orbits(hp, n_orbits=14, max_step=0.1)
    assert len(br) == 14 and br.folds == [] and br.stability_changes == []
    assert bool(br.stable.all()) and np.all(np.diff(br.x) > 0)
    assert "14 orbits" in br.stop_reason
    # near onset: the normal form's amplitude 2 sqrt(40 (a - pi/2) / (3 pi - 2))
    da = br.x[0] - math.pi / 2
    assert br.amplitude["x"][0] == pytest.approx(
        2 * math.sqrt(40 * da / (3 * math.pi - 2)), rel=0.01
    )
    # at the far end: a long simulation at the same a, started 2 % off the orbit, settles on it
    a = float(br.x[-1])
    orb = br.orbits[-1]
    hist_t = np.linspace(-1.5, 0.0, 300)
    sol = fn.simulate(
        wright(),
        150.0,
        params={"a": a},
        history={"x": (hist_t, 1.02 * orb(hist_t, "x"))},
        rtol=1e-10,
        atol=1e-12,
    )
    osc = fn.oscillation(sol, "x", after=100.0)
    assert br.periods[-1] == pytest.approx(osc.period, rel=1e-4)
    assert br.amplitude["x"][-1] == pytest.approx(osc.amplitude, rel=1e-4)
    ax = br.plot()
    assert ax.get_xlabel() == "a"


def test_fold_of_cycles_in_the_delayed_kelly_law():
    """x' = kappa (1 - x(t-1)^5): the stable branch turns back at a fold of cycles.

    Independent check: the simulation settles on a cycle just below the fold and has no
    bounded attractor just above it (the run blows up).
    """
    m = fn.models.kelly_primal([[1]], T=1.0, B=4.0)
    hp = fn.hopf_point(m, "kappa_1", 0.05, 5.0)
    assert hp.criticality == "supercritical"
    br = fn.continue_orbits(hp, n_orbits=26)
    assert len(br.folds) == 1
    i, k_fold = br.folds[0]
    assert 0.59 < k_fold < 0.61
    assert br.stable[i - 1] and not br.stable[i + 1]
    assert [kind for _, kind in br.stability_changes] == ["+1"]
    below = fn.simulate(m, 200.0, params={"kappa_1": 0.59}, history={"x_1": 0.9}, rtol=1e-8)
    assert fn.oscillation(below, "x_1", after=120.0).sustained
    with pytest.raises(fn.IntegrationError):
        fn.simulate(m, 200.0, params={"kappa_1": 0.61}, history={"x_1": 0.9}, rtol=1e-8)


def test_branch_stops_where_the_projected_queue_empties():
    """Reno/RED past its critical delay: the smooth branch ends when the queue reaches 0."""
    m = fn.models.reno_red()
    hp = fn.hopf_point(m, "d", 0.03, 0.3)
    br = fn.continue_orbits(hp, n_orbits=40, floquet=False)
    assert br.stop_reason.startswith("non-smooth") and "projected state b" in br.stop_reason
    last = br.orbits[-1]
    assert 0 < last.minimum["b"] < 0.05 * hp.equilibrium["b"]
    # the whole smooth branch lies within 0.2 ms of the critical delay
    assert br.x.max() - hp.value < 2e-4


def test_bad_options():
    hp = fn.hopf_point(wright(), "a", 1.0, 2.0)
    with pytest.raises(fn.OptionError, match="n_orbits"):
        fn.continue_orbits(hp, n_orbits=1)
    with pytest.raises(fn.OptionError, match="min_step"):
        fn.continue_orbits(hp, step=1.0, max_step=0.1)
    with pytest.raises(fn.OptionError, match="continued in 'a'"):
        fn.continue_orbits(hp, "tau")
    with pytest.raises(fn.OptionError, match="a HopfPoint, a PeriodicOrbit"):
        fn.continue_orbits(wright(), "a")


def test_a_branch_failing_next_to_a_kink_says_where():
    """Misra, Baras & Ott's pipe-full law (ORED marking, kinks at min_th and max_th): the
    subcritical cycles born at bdp* = 114.205 grow towards the min_th kink, and Newton fails
    (a jump) before any orbit touches it. The stop reason names the surface and the distance
    of the last orbit to it, measured independently here from its extreme window."""
    from fluidnet.models.generalized_tcp import generalized_tcp_pipe

    m = generalized_tcp_pipe()
    hp = fn.hopf_point(m, "bdp", 5.0, 400.0)
    br = fn.continue_orbits(hp, n_orbits=30)
    assert len(br.orbits) < 30
    assert "Newton failed at the smallest step" in br.stop_reason
    assert "switching surface" in br.stop_reason and "min_th" in br.stop_reason
    last = br.orbits[-1]
    vals = m.values | last.params
    w_min = float(np.min(last.nodes[:, m.state_names.index("W")]))
    # the delayed window's range is the window's: its lowest point sits just above the kink
    gap = w_min - vals["bdp"] - vals["min_th"]
    assert 0 < gap < 1e-2 * (w_min + vals["bdp"] + vals["min_th"])


def test_an_orbit_start_goes_the_direction_asked():
    """direction=-1 from an orbit of Wright's branch goes back towards the Hopf point at
    a = pi/2 (main ignored it: the tangent was flipped twice)."""
    br = fn.continue_orbits(fn.hopf_point(wright(), "a", 1.0, 2.0), n_orbits=4, max_step=0.1)
    start = br.orbits[-1]
    down = fn.continue_orbits(start, "a", direction=-1, n_orbits=3, max_step=0.05)
    up = fn.continue_orbits(start, "a", direction=1, n_orbits=3, max_step=0.05)
    assert np.all(np.diff(down.x) < 0) and np.all(np.diff(up.x) > 0)
    assert down.x[-1] > math.pi / 2


def test_a_branch_to_a_homoclinic_orbit_stops_with_its_orbits_and_a_remedy():
    """Issue 33: DDE-BIFTOOL's neuron demo, whose branch from the Hopf point at a21 = 0.8 ends
    in a homoclinic orbit near a21 = 2.346 (the period grows without bound, the multipliers
    like exp(lambda T)). main raised numpy's LinAlgError from the Floquet solve and lost the
    branch. Now the branch stops with its orbits and says how to go on; both remedies work."""
    from bifurcation_models import neuron

    from fluidnet.bifurcation.continuation import MAX_DEFECT
    from fluidnet.bifurcation.floquet import MonodromyError

    hp = fn.hopf_point(neuron(), "a21", 0.3, 1.2, equilibrium={"x1": 0.0, "x2": 0.0})
    br = fn.continue_orbits(hp, n_orbits=100, intervals=40, degree=4, max_step=1.0, hi=2.5)
    assert len(br) >= 30 and br.periods.max() > 100.0
    assert "Floquet multipliers" in br.stop_reason and "cannot be computed" in br.stop_reason
    assert "continue_orbits(branch, floquet=False)" in br.stop_reason
    assert all(o.defect <= MAX_DEFECT for o in br.orbits)
    # the orbit repr claims no stability its multipliers do not certify
    assert br.orbits[0].certified and repr(br.orbits[0]).endswith(", stable)")
    last = br.orbits[-1]
    assert not last.certified and "stability not certified" in repr(last)
    assert "stable)" not in repr(last)
    # remedy 1: without multipliers, the branch goes on to longer periods until the mesh of 40
    # intervals no longer resolves the orbits (a stop reason again, with its own remedy)
    br2 = fn.continue_orbits(br, floquet=False, n_orbits=100, max_step=1.0, hi=2.5)
    assert br2.periods[-1] > br.periods.max()
    assert "no longer resolves" in br2.stop_reason
    assert "continue_orbits(branch, intervals=160)" in br2.stop_reason
    # remedy 2: a finer mesh goes further, each orbit resolved
    br3 = fn.continue_orbits(br2, floquet=False, intervals=160, n_orbits=4, max_step=1.0, hi=2.5)
    assert br3.periods[-1] > br2.periods[-1] and max(o.defect for o in br3.orbits) < 1e-3
    # one such orbit alone: a named error whose remedy works
    with pytest.raises(MonodromyError, match="floquet=False"):
        fn.periodic_orbit(br2.orbits[-1])
    assert fn.periodic_orbit(br2.orbits[-1], floquet=False).multipliers is None
