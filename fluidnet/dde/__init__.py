"""Nonlinear integration of fluid models: compiled adaptive Runge-Kutta for delay equations.

Public names: :func:`simulate`, :func:`simulate_ensemble`, :class:`Solution`,
:func:`oscillation`, :class:`Oscillation`; and for discrete-time laws
:class:`~fluidnet.dde.maps.DiscreteMap`, :func:`~fluidnet.dde.maps.iterate_map` and
:class:`~fluidnet.dde.maps.MapRun` (:mod:`fluidnet.dde.maps`).

How the integrator works
------------------------
*Methods.* ``"DP5"`` (Dormand-Prince 5(4), continuous extension of order 4), ``"Tsit5"``
(Tsitouras 5(4) with its free interpolant of order 4) and ``"BS3"`` (Bogacki-Shampine 3(2),
cubic Hermite extension); for stiff models ``"ROS2"``, the L-stable linearly implicit
Rosenbrock-W method of order 2 of Verwer et al. (1999), whose stages solve linear systems with
``I - gamma h J``, ``J`` the Jacobian of the field in the current state (generated from the
model's symbolic derivatives on first use). A method is data (:mod:`fluidnet.dde.methods`):
tableau, error weights and a dense-output matrix; one compiled stepper runs them all. The local
error is controlled in an RMS norm with weights ``atol + rtol |y|``. The continuous extension of
every accepted step is stored: it is the history later steps read their delayed values from, and
what ``Solution(t)`` evaluates.

*Delays.* Constant, parameter and state-dependent delays, nested in any depth (a delay may
depend on delayed values). When a delayed value falls inside the step being taken, the step
reads its own continuous extension and the stages are iterated to a fixed point (first guess:
the previous step's polynomial continued); when that iteration would cost more than steps no
longer than the smallest delay, the steps are capped at that delay instead. A history is never
extrapolated without this control.

*Discontinuities.* The derivative of the solution jumps at ``t0`` (history slope against the
field) and at every event. These jumps propagate: for constant and parameter delays to
``xi + tau`` (tracked to the method's order from ``t0``, two generations from events); for
state-dependent delays to the roots of ``t - tau(t) = xi``, located on the dense output. Steps
land on all of them.

*Projected states* (``Model(nonnegative=...)``). A state reaching 0 is an event located on the
dense output; the state is then held at exactly 0 while its unprojected derivative is
``<= 0`` and released when that derivative turns positive (another located event). Held time
is reported in ``Solution.counters.time_on_boundary``. No chattering: the queue is not
integrated with a clipped right-hand side.

*Switching terms* (``Heaviside``, ``sign``, ``Piecewise``, ``Max``, ``Min``, ``Abs``). Each term
is replaced by a *mode weight* ``w`` (1 on the side ``s > 0`` of its switching function ``s``,
0 on the other), frozen during a step, so every step integrates a smooth field. A sign change
of ``s`` is an event located on the dense output. At the surface the two one-sided fields
``f+`` and ``f-`` decide what happens, through ``sigma = ds/dt`` along each:

* both push the same way: the solution crosses (or turns back) to that side; while sliding,
  this ends the sliding motion even when the weight is 0/0 (equal normal components);
* both push toward the surface (``sigma- > 0 > sigma+``): the solution *slides* on it, with the
  Filippov field ``lam f+ + (1 - lam) f-``, ``lam = sigma- / (sigma- - sigma+)`` (the
  equivalent control that keeps ``ds/dt = 0``); sliding ends when ``lam`` leaves [0, 1],
  located as an event;
* both push away (a repelling surface, non-unique solutions): the solution continues to the
  side opposite to the one it came from.

Continuous switches (``Max``, ``Min``, ``Abs``) have ``f+ = f-`` on the surface and are simply
crossed at located events. Surfaces reached at the same time are decided one after the other at
that time, each with the modes already chosen for the others.

The time spent sliding on each surface and the weight ``lam`` averaged over it (the equivalent
control: for a congestion indicator, the fraction of time the link is congested) are reported in
``Solution.counters.time_sliding`` and ``Solution.counters.mean_sliding_weight``.

*Several surfaces at once.* Where the solution slides on ``m`` surfaces together, the
Filippov convex combination is not unique (Ye et al., the multi-link case). fluidnet uses the
*multilinear* combination ``sum over the 2^m corners of prod_j (lam_j or 1 - lam_j) f_corner``,
with the weights ``lam_j`` solved by Newton's method so that every ``ds_j/dt = 0``. Where
the surfaces' normals are dependent (more surfaces meet than the state has dimensions, as at
the fixed-threshold point of Ye et al.'s topology I: six surfaces in four dimensions), the
weights are not unique and Newton's system is singular: the weights in [0, 1] are then found by
a Levenberg-Marquardt least-squares solve kept in the box, every surface through such a point
slides together when weights strictly inside (0, 1) exist, surfaces whose weights are held at a
bound while ``ds/dt != 0`` are left to that side, and a run where no weights exist stops with an
:class:`~fluidnet.errors.IntegrationError` naming the surfaces and the time. This is
the product form of independent link congestion: when a path's congestion bit is written
``1 - prod_l (1 - H(y_l - B_l))``, the sliding weights act as link marking probabilities and
the path is "not congested" with probability ``prod_l (1 - lam_l)``, which is the assumption
behind the ``n``-th power in Ye et al.'s eq. (16). Writing the OR as ``Max(H_1, H_2)`` instead
creates a switch on ``H_1 - H_2`` whose surface does not depend on the state, and the result
is not the product form: write path indicators as products. Other choices (the minimum-norm
combination, random desynchronisation) are not implemented.

*Derivative of a switching function along the field* uses ``ds/dx f + ds/dt`` plus, for
functions of delayed values, the derivative of the stored history at the delayed time (exact
for constant and parameter delays; for state-dependent delays the term ``d tau / dt`` is
neglected).

Failures raise :class:`fluidnet.IntegrationError` naming the time, the state values and the
cause; nothing returns NaN silently. A solution that diverges (a state not finite or beyond
1e100, or one that grew a millionfold where the step size collapsed) is reported as a
divergence naming the state, its value and the time, whatever stopped the integrator; mode
changes piling up at one time (Zeno behaviour, chattering) are reported as such, also when they
exhaust ``max_steps`` (see :func:`fluidnet.dde.simulation.failure_message`).
"""

from __future__ import annotations

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())
