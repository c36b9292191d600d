"""ECN marking levels of Kunniyur & Srikant (2003): designed (Props 3-5) and adaptive (Sec V-D).

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003, Sec V. Each link marks the
fraction ``(y - C~_l)^+/y`` of its packets, with a marking level ``C~_l <= C_l``.

* Prop 3, (27): if every link picks ``C~_l`` with
  ``sum_{log users} w_r/(beta beta_r) C_l/(C_l - C~_l)
  + sum_{-1/x^nu users} [nu_r w_r/(beta beta_r) C_l/(C_l - C~_l)]^(1/(nu_r+1)) <= C_l``,
  the Nash equilibrium has every load ``<= C_l``: no loss anywhere. Both sums are
  ``sum_r (U_r')^(-1)[beta beta_r/w_r * p(C~_l, C_l)]`` with ``(U')^(-1)`` the inverse function
  of ``U'``, the form of (39). A link decides alone (decentralised).
* Prop 5, (39): with a mean disturbance ``xi_l`` added to the load that is marked (38),
  ``sum_r (U_r')^(-1)[beta beta_r/w_r * p(C~_l, C_l)] <= C_l - xi_l``. (39) prints ``p`` at
  ``sum_j x_j``; in (38) the second argument of ``p`` is the controlled load plus ``xi``, which
  is ``C_l`` at the bound ``sum_j x_j = C_l - xi_l`` of the proof (by Prop 3's argument). It is
  tight on a link with identical users.
* Prop 4, (35): a bounded disturbance ``xi_l(t) <= xi^_l`` and ``log`` users. As printed,
  ``sum w_i/beta_i / p(C~_l, C_l) <= C_l - xi^_l`` lacks the ``1/beta`` of (27) and evaluates
  ``p`` at ``C_l``; its proof applies Prop 3 to the disturbance-free system with capacity
  ``C_l - xi^_l``, which requires ``C~_l + sum w_i/(beta beta_i) <= C_l - xi^_l``. The
  printed condition with ``1/beta`` restored is the Prop 5 condition, right for a constant
  ``xi = xi^`` but not for a time-varying one (the load then exceeds ``C_l``; paper package
  ``ks``, item ``prop4``).
  :func:`marking_level` with ``kind="bound"`` gives the reconstructed level.

A level is the largest ``C~_l`` below the capacity meeting the condition (its left side
increases with ``C~_l``). When even ``C~_l = 0`` fails, no marking level gives loss-free
operation for this ``beta`` (the paper: raise ``beta`` or the capacity); the constants ``beta``
and ``w`` are not unit-free, so the same numbers in another rate unit can make that happen.

The adaptive level (Sec V-D) ``C~_l' = eta_l (gamma_l C_l - y_l)`` on ``0 < C~_l < gamma_l C_l``,
``max(0, .)`` at 0 and ``min(0, .)`` at ``gamma_l C_l`` (the paper's step size ``alpha`` is
``eta`` here, because ``alpha_r`` is the random-loss fraction) is a projected ODE:
:func:`adaptive_marking`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy

from ..errors import OptionError, ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import t
from .penalty import fluid_penalty
from .primal_rate import _funcs, _syms, route_parts
from .user_network import UserNetwork, bounded_per_element

__all__ = ["adaptive_marking", "marking_condition", "marking_level"]


_KINDS = ("mean", "bound")


def marking_condition(
    net: UserNetwork,
    beta: float,
    link: int,
    level: float,
    disturbance: float = 0.0,
    kind: str = "mean",
) -> float:
    """Left side of (27) / (39) / reconstructed (35) for ``link`` (0-based) at ``level``.

    ``sum_{r through link} N_r (U_r')^(-1)[beta beta_r/w_r * p(level, c)]`` with ``c = C`` for
    ``kind="mean"`` (the disturbance is in the marked load, Prop 5) and ``c = C - disturbance``
    for ``kind="bound"`` (Prop 4's comparison system without disturbance). The level is
    loss-free when this is ``<= C - disturbance``.

    Parameters
    ----------
    net : UserNetwork
    beta : float
        Network penalty (price) ``beta``.
    link : int
        The link, 0-based.
    level : float
        The marking level ``C~`` tried.
    disturbance : float
        The link's unresponsive load.
    kind : {"mean", "bound"}
        See above.

    Returns
    -------
    float
    """
    if kind not in _KINDS:
        raise OptionError(f"kind = {kind!r} must be one of {_KINDS}")
    at = net.C[link] if kind == "mean" else net.C[link] - disturbance
    p = float(fluid_penalty(at, level))
    if p <= 0:
        return float("inf")
    total = 0.0
    for r in net.routes_of(link):
        u = net.utilities[r]
        total += net.N[r] * u.marginal_inverse(beta * net.beta_r[r] / net.w[r] * p)
    return total


def marking_level(
    net: UserNetwork,
    beta: float,
    *,
    disturbance: float | Sequence[float] = 0.0,
    kind: str = "mean",
) -> np.ndarray:
    """The largest marking levels meeting Prop 3's (27), Prop 5's (39) or Prop 4's (35).

    Parameters
    ----------
    net : UserNetwork
    beta : float
        Network penalty ``beta``.
    disturbance : float or sequence, default 0
        Rate of unresponsive flows per link: with ``kind="mean"`` their mean ``xi_l``, added to
        the load the marks are computed on ((38), Prop 5); with ``kind="bound"`` a bound
        ``xi^_l`` on a time-varying rate (Prop 4 as reconstructed; ``log`` users only).
    kind : {"mean", "bound"}
        Which condition (both are (27) without disturbance): ``"mean"``:
        ``sum (U')^(-1)[beta beta_r/w_r p(C~, C)] <= C - xi`` (tight on one link with identical
        users); ``"bound"``: ``C~ + sum w_i/(beta beta_i) <= C - xi^``.

    Returns
    -------
    numpy.ndarray
        ``C~_l`` per link.

    Raises
    ------
    ParameterError
        When a link has no feasible level (the condition fails at ``C~ = 0``): the message
        names the link, ``beta`` and the unit of rates, since ``beta`` and ``w`` are not
        unit-free; for a disturbance not below the capacity; for ``kind="bound"`` with a
        utility other than ``log`` (Prop 4 is proved for ``log`` users only).
    OptionError
        For an unknown ``kind``.

    Examples
    --------
    >>> from fluidnet.models import UserNetwork, log_utility, marking_level
    >>> net = UserNetwork([[1]], log_utility(), C=100.0, N=10)
    >>> marking_level(net, 0.5).round(9)          # C - N/beta
    array([80.])
    """
    from ..brent import brentq

    if kind not in _KINDS:
        raise OptionError(f"kind = {kind!r} must be one of {_KINDS}")
    (b,) = bounded_per_element("beta", beta, 1, "network", low=0.0, low_open=True)
    hr = bounded_per_element(
        "disturbance", disturbance, net.n_links, "link", low=0.0, low_open=False
    )
    if kind == "bound":
        for r, u in enumerate(net.utilities):
            if u.nu != 0 and net.A[:, r].any():
                assert net.names is not None  # set by UserNetwork.__post_init__
                raise ParameterError(
                    f"kind='bound' (Prop 4) holds for log users only; route {net.names[r]} has "
                    f"{u.name}"
                )
    out = np.empty(net.n_links)
    for ll in range(net.n_links):
        cap = net.C[ll] - hr[ll]
        if not cap > 0:
            raise ParameterError(
                f"disturbance[{ll}] = {hr[ll]:g} is not below the capacity {net.C[ll]:g} of "
                f"link {ll + 1}"
            )

        def excess(level, ll=ll, cap=cap):
            return marking_condition(net, b, ll, level, hr[ll], kind) - cap

        at0 = excess(0.0)
        if at0 > 0:
            raise ParameterError(
                f"no feasible marking level on link {ll + 1}: with beta = {b:g} the users "
                f"through it need {at0 + cap:.6g} {net.rate_unit} even when every packet is "
                f"marked (C~ = 0), more than {cap:.6g} {net.rate_unit}; raise beta or the "
                f"capacity (beta and w are not unit-free: rates in {net.rate_unit!r})"
            )
        top = (net.C[ll] if kind == "mean" else cap) * (1 - 1e-15)
        out[ll] = brentq(excess, 0.0, top, xtol=1e-12 * cap, rtol=1e-15) if excess(top) > 0 else top
    return out


def adaptive_marking(
    net: UserNetwork,
    *,
    beta: float = 0.5,
    kappa: float | Sequence[float] = 1.0,
    eta: float | Sequence[float] = 0.05,
    gamma: float | Sequence[float] = 1.0,
    disturbance: float | Sequence[float] | None = None,
    check_feasible: bool = True,
) -> Model:
    """Users reacting to ECN marks (40)/(41) with the adaptive marking level of Sec V-D.

    States ``x_<r>`` (rates) and ``Ct_<l>`` (marking levels, kept in ``[0, gamma_l C_l]``);
    the signals of :func:`fluidnet.models.utility_primal` with ``feedback="ecn"``.

    The projection at ``Ct_l = 0`` is the engine's projected (non-negative) state. The one at
    ``gamma_l C_l`` is written as a switching term: above the surface the field is the constant
    ``-eta_l gamma_l C_l < 0``, so where ``f > 0`` the solution slides on
    ``Ct_l = gamma_l C_l`` (the Filippov field there has ``Ct_l' = 0 = min(0, f)``) and where
    ``f < 0`` it leaves downwards with ``f``: the projected dynamics. (A field ``-|f|`` above
    would equal ``f`` below wherever ``f < 0``, which leaves the exit from sliding undefined.)

    Parameters
    ----------
    net : UserNetwork
    beta, kappa, disturbance
        As for :func:`fluidnet.models.utility_primal`.
    eta : float or sequence
        Step size per link (the paper's ``alpha`` of Sec V-D) [1/time].
    gamma : float or sequence
        Target utilisation per link, in ``(0, 1]``.
    check_feasible : bool
        Raise when no marking level reaches the target ``gamma C`` (the paper's assumption
        that "a positive C~_l given by Proposition 3 exists").

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        From :func:`marking_level` (with capacities ``gamma C``) when ``check_feasible`` and
        a link has no feasible level; for ``gamma`` outside ``(0, 1]``.
    """
    L = net.n_links
    links = [str(i + 1) for i in range(L)]
    g = bounded_per_element("gamma", gamma, L, "link", low=0.0, low_open=True, high=1.0)
    ev = bounded_per_element("eta", eta, L, "link", low=0.0, low_open=True)
    if check_feasible:
        marking_level(net.replace(C=g * net.C), beta)
    Ct = _funcs("Ct", links)
    parts = route_parts(
        net,
        beta=beta,
        kappa=kappa,
        feedback="ecn",
        levels=[Ct[ll](t) for ll in range(L)],
        disturbance=disturbance,
    )
    params = dict(parts.params)
    es, gs = _syms("eta", links), _syms("gamma", links)
    for ll in range(L):
        params[es[ll]] = Param(
            ev[ll], unit=f"1/{net.time_unit}", doc="marking-level step size", bounds=(0, None)
        )
        params[gs[ll]] = Param(g[ll], unit="1", doc="target utilisation", bounds=(0, 1))
    rhs = {
        xr: k * (inc - dec)
        for xr, k, inc, dec in zip(
            parts.x, parts.kappa, parts.increase, parts.decrease, strict=True
        )
    }
    for ll in range(L):
        target = gs[ll] * parts.capacities[ll]
        f = es[ll] * (target - parts.loads[ll](t))
        above = sympy.Heaviside(Ct[ll](t) - target)
        # f below gamma C; above it (never reached) a field -eta gamma C < 0 that makes the
        # surface attracting where f > 0 (sliding: C~' = 0 there) and crossed where f < 0
        rhs[Ct[ll]] = f - above * (f + es[ll] * target)
    return Model(
        rhs=rhs, params=params, signals=parts.signals, nonnegative=Ct, name="adaptive_marking"
    )
