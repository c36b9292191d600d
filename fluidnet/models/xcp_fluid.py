"""XCP: the efficiency controller's fluid model of Katabi, Handley & Rohrs (2002).

Source: D. Katabi, M. Handley and C. Rohrs, "Congestion control for high bandwidth-delay product
networks", ACM SIGCOMM 2002. The router's aggregate feedback per control interval ``d`` is
``phi = alpha d S - beta Q`` (eq (1), ``S`` the spare bandwidth, ``Q`` the persistent queue),
with ``alpha = 0.4`` and ``beta = 0.226`` (Sec. 3.5.1). Appendix B models one link of capacity
``c`` shared by flows with a common round trip ``d``:

* (15) ``dq/dt = y(t) - c``,
* (16) ``dy/dt = -(alpha/d) (y(t - d) - c) - (beta/d^2) q(t - d)``,
* (17) ``dr_i/dt = ([y'(t - d)]^+ + h(t - d))/N - r_i(t - d)/y(t - d) ([-y'(t - d)]^+ + h(t - d))``,
  the fairness controller's AIMD split with the shuffled traffic ``h = 0.1 y`` (eq (2) at
  ``phi = 0``).

Theorem 1: the linear system (15)-(16) is stable for every ``d``, ``c`` and ``N`` when
``0 < alpha < pi/(4 sqrt 2)`` and ``beta = alpha^2 sqrt 2``; the open loop is
``G(s) = (K1 s + K2) e^{-ds}/s^2`` with ``K1 = alpha/d`` and ``K2 = beta/d^2``.

The paper neglects the boundaries (Sec. 4); :func:`xcp` projects ``q`` and ``y`` at 0 (a queue
or a rate cannot be negative). The linearization drops the projections, as the analysis does;
but the equilibrium ``y = c`` sits on the boundary ``q = 0``, where the projected model feels
no queue feedback while the queue is empty, so it can settle beyond Theorem 1's bound (see the
``classics`` reproduction). In (17) the shuffled traffic
is taken as ``h = gamma y/d``: the paper shuffles ``gamma y`` per control interval ``d`` (eq (2),
``max(0, gamma y - |phi|)``, is ``gamma y`` at the equilibrium, ``phi = 0``), a rate of change
``gamma y/d``; App. B's ``h = 0.1 y`` in (17) omits the ``1/d`` that makes the units agree.
"""

from __future__ import annotations

import math

import sympy

from ..errors import ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t

__all__ = ["xcp", "xcp_alpha_bound", "xcp_beta"]


def xcp_beta(alpha: float) -> float:
    """``beta = sqrt(2) alpha^2``, the choice of Theorem 1 (zero break = crossover frequency).

    Parameters
    ----------
    alpha : float
        XCP's gain on the spare bandwidth.

    Returns
    -------
    float
    """
    return math.sqrt(2.0) * alpha * alpha


def xcp_alpha_bound() -> float:
    """``pi/(4 sqrt 2)``: Theorem 1's bound on ``alpha`` (with ``beta = sqrt(2) alpha^2``)."""
    return math.pi / (4.0 * math.sqrt(2.0))


def xcp(flows: int = 0, **values: float) -> Model:
    """The XCP fluid model, Katabi et al. (2002) App. B eqs (15)-(16), optionally (17).

    States ``y`` (aggregate rate, pkts/s), ``q`` (queue, pkts), both projected at 0, and, with
    ``flows = n > 0``, the per-flow rates ``r1 ... rn`` of (17) (then ``N = n``). Signal ``ydot``
    is the right-hand side of (16). ``loop_gain("y")`` is Theorem 1's ``G(s)``.

    Defaults: ``alpha = 0.4``, ``beta = 0.226`` (Sec. 3.5.1), ``c = 12500`` pkts/s (100 Mb/s with
    1000-byte packets), ``d = 0.08`` s, ``gamma = 0.1``.

    Parameters
    ----------
    flows : int, default 0
        Number of per-flow rate states (17); 0 for the aggregate model only.
    **values
        Overrides of ``alpha``, ``beta``, ``c``, ``d`` (and ``gamma`` with flows).

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        For ``flows`` not a non-negative integer, or an invalid value.

    Examples
    --------
    >>> import fluidnet as fn
    >>> m = fn.models.xcp()
    >>> m.equilibrium()
    {'y': 12500.0, 'q': 0.0}
    >>> round(fn.margins(m.loop_gain("y")).phase_margin, 4)
    12.6249

    The closed form: with ``w = omega d``, ``|G| = 1`` at ``w^4 = alpha^2 w^2 + beta^2`` and the
    phase margin is ``atan(alpha w / beta) - w`` (45 deg - sqrt(2) alpha rad only when ``beta``
    is exactly ``sqrt(2) alpha^2``; the printed 0.226 is rounded):

    >>> import math
    >>> a, b = 0.4, 0.226
    >>> w = math.sqrt((a * a + math.sqrt(a**4 + 4 * b * b)) / 2)
    >>> round(math.degrees(math.atan(a * w / b) - w), 4)
    12.6249
    """
    if isinstance(flows, bool) or not isinstance(flows, int) or flows < 0:
        raise ParameterError(f"flows = {flows!r} must be a non-negative integer")
    y, q = states("y q")
    ydot = signals("ydot")
    alpha, beta, c, d, gamma = params("alpha beta c d gamma")
    rhs = {y: ydot(t), q: y(t) - c}
    pdefs = {
        alpha: Param(0.4, unit="1", doc="gain on the spare bandwidth", bounds=(0, None)),
        beta: Param(0.226, unit="1", doc="gain on the persistent queue", bounds=(0, None)),
        c: Param(12500.0, unit="pkts/s", doc="link capacity", bounds=(0, None)),
        d: Param(0.08, unit="s", doc="common round-trip time (control interval)", bounds=(0, None)),
    }
    if flows:
        pdefs[gamma] = Param(0.1, unit="1", doc="shuffled fraction of the traffic", bounds=(0, 1))
        late = t - d
        up = sympy.Max(ydot(late), 0) + gamma * y(late) / d
        down = sympy.Max(-ydot(late), 0) + gamma * y(late) / d
        for i in range(1, flows + 1):
            r = states(f"r{i}")
            rhs[r] = up / flows - r(late) / y(late) * down
    model = Model(
        rhs=rhs,
        params=pdefs,
        signals={ydot: -alpha / d * (y(t - d) - c) - beta / d**2 * q(t - d)},
        nonnegative=[y, q],
        name="xcp" + (f"_{flows}flows" if flows else ""),
    )
    return model.with_params(**values) if values else model
