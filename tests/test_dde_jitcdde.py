"""Agreement with jitcdde (an independent DDE integrator, the ``bench`` extra) on smooth problems.

jitcdde runs with Python lambdas here (no C compilation), which is slower but exact in the
same way; both integrators use rtol = 1e-10, and the comparison allows 1e-7 (a few hundred
times the tolerance, the usual global-error growth over the horizon).
"""

from __future__ import annotations

import warnings

import numpy as np
import symengine  # installed with jitcdde (the test environment has the bench extra)
import sympy

import fluidnet as fn

t = fn.t
RTOL, ATOL = 1e-10, 1e-12


def _jitcdde_run(f, past, times, max_delay=None, constant=True):
    from jitcdde import jitcdde as JitCDDE

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dde = JitCDDE(f, verbose=False)
        if max_delay is not None:
            _ = dde.delays  # (jitcdde resets max_delay when it computes the delays)
            dde.max_delay = max_delay
        if constant:
            dde.constant_past(past)
        else:
            dde.past_from_function(past, times_of_interest=np.linspace(-max_delay, 0, 401))
        dde.set_integration_parameters(rtol=RTOL, atol=ATOL)
        dde.generate_lambdas()
        if constant:
            dde.step_on_discontinuities()
        return np.array([dde.integrate(T) for T in times])


def test_delayed_logistic_agrees_with_jitcdde():
    from jitcdde import t as jt
    from jitcdde import y

    times = np.linspace(3.0, 30.0, 55)
    ref = _jitcdde_run([1.2 * y(0) * (1 - y(0, jt - 1))], [0.5], times)
    x = fn.states("x")
    m = fn.Model(rhs={x: 1.2 * x(t) * (1 - x(t - 1))}, params={})
    sol = fn.simulate(m, 30.0, history={"x": 0.5}, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(sol(times)[0], ref[:, 0], rtol=0, atol=1e-7)


def test_two_delays_two_states_agree_with_jitcdde():
    from jitcdde import t as jt
    from jitcdde import y

    # (after step_on_discontinuities jitcdde is already past the first delays)
    times = np.linspace(3.0, 25.0, 45)
    f = [-y(0) + 2 * symengine.tanh(y(1, jt - 1)), -y(1) - 1.5 * symengine.tanh(y(0, jt - 0.5))]
    ref = _jitcdde_run(f, [1.2, 0.8], times)
    x1, x2 = fn.states("x1 x2")
    m = fn.Model(
        rhs={x1: -x1(t) + 2 * sympy.tanh(x2(t - 1)), x2: -x2(t) - 1.5 * sympy.tanh(x1(t - 0.5))},
        params={},
    )
    sol = fn.simulate(m, 25.0, history={"x1": 1.2, "x2": 0.8}, rtol=RTOL, atol=ATOL)
    assert np.ptp(ref[-20:, 0]) > 0.5  # a sustained oscillation, not a trivial decay
    np.testing.assert_allclose(sol(times).T, ref, rtol=0, atol=1e-7)


def test_state_dependent_delay_agrees_with_jitcdde_and_the_exact_solution():
    """x' = -x(t - 1 - x^2/10) + F(t) with F making x = 2 + sin t exact (smooth at t0).

    jitcdde's error on this problem stays near 2.4e-7 for rtol from 1e-8 to 1e-12 (measured
    against the exact solution), so the two agree to 1e-6; ours is within 1e-8 of exact.
    """
    from jitcdde import t as jt
    from jitcdde import y

    times = np.linspace(0.5, 20.0, 40)
    forcing_j = symengine.cos(jt) + 2 + symengine.sin(jt - 1 - (2 + symengine.sin(jt)) ** 2 / 10)
    ref = _jitcdde_run(
        [-y(0, jt - 1 - y(0) ** 2 / 10) + forcing_j],
        [2 + symengine.sin(jt)],
        times,
        max_delay=2.0,
        constant=False,
    )
    x = fn.states("x")
    forcing = sympy.cos(t) + 2 + sympy.sin(t - 1 - (2 + sympy.sin(t)) ** 2 / 10)
    m = fn.Model(rhs={x: -x(t - 1 - x(t) ** 2 / 10) + forcing}, params={})
    sol = fn.simulate(m, 20.0, history={"x": lambda s: 2 + np.sin(s)}, rtol=RTOL, atol=ATOL)
    ours = sol(times)[0]
    np.testing.assert_allclose(ours, ref[:, 0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(ours, 2 + np.sin(times), rtol=0, atol=1e-8)
