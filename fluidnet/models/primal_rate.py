"""Primal rate laws of Kunniyur & Srikant (2003) on a network of users with utilities.

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003.

Reacting to losses (Prop 2), with ``x_r - z_r = x_r f_r`` the lost rate of user ``r``,
``f_r = (1 - alpha_r) + alpha_r sum_{l in r} p(C_l, y_l)`` (random losses, then the link
independence assumption (2) for congestion losses):

* (9)  ``x_r' = kappa_r (w_r/beta_r - beta x_r f_r)`` for ``U_r = log x``;
* (10) ``x_j' = kappa_j (nu_j w_j/beta_j - beta x_j^(nu_j + 1) f_j)`` for ``U_j = -1/x^nu_j``;
* (38) ``x_i' = kappa_i (w_i/beta_i - beta f_i / U_i'(x_i))`` for any other utility (printed
  with ``(U_i'(x_i))^(-1)``, the reciprocal, consistent with (31) for ``log``).

Reacting only to ECN marks at levels ``C~_l`` (Sec V-C, (40)/(41)): ``f_r`` is replaced by
``alpha_r sum_{l in r} p(C~_l, y_l)``, the fraction of marked packets that arrive (marked
packets suffer random losses too). The printed ``beta alpha_r (x_r - z_r)`` with ``z_r`` "the
unmarked received rate" is this received-mark rate; it gives the weights ``w_r/(beta_r alpha_r)``
of (42), which is how Prop 6 reads it.

With a disturbance ``xi_l`` (short or unresponsive flows, Sec V-B) the link sees
``y_l + xi_l``: (31) for ``log`` users, (38) in the stochastic-approximation reading with the
mean ``xi_l``.

Delays are not in the paper (its "round-trip delay" ``d_r`` is a constant in the window laws);
the delayed forms are the usual extension of the Kelly primal law (Johari & Tan 2001,
Vinnicombe 2002), with ``T_r`` the round-trip time of route ``r``:

* ``delay="full"``: ``x_r' = kappa_r (c w_r/beta_r - beta c x(t - T_r)/U'(x(t - T_r))
  f_r(t - T_r))``: the feedback about the rate sent one round trip ago arrives now. On a single
  link the linearization is ``delta' = -kappa beta delta(t - T)`` (because ``p + y p' = 1``), so
  the law is stable iff ``kappa beta T < pi/2``;
* ``delay="price"``: only the path price is delayed, ``... beta c x(t)/U'(x(t)) f_r(t - T_r)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from ..errors import ModelError, OptionError, ParameterError
from ..parsing import as_expression
from ..symbolic.model import Model, Param
from ..symbolic.symbols import t
from .penalty import fluid_penalty
from .user_network import UserNetwork, bounded_per_element
from .utility import Utility

__all__ = ["RouteParts", "route_parts", "utility_primal"]

_DELAYS = (None, "full", "price")
_FEEDBACK = ("loss", "ecn")


def _funcs(prefix: str, labels: Sequence[str]) -> list:
    return [sympy.Function(f"{prefix}_{n}", real=True) for n in labels]


def _syms(prefix: str, labels: Sequence[str]) -> list[sympy.Symbol]:
    return [sympy.Symbol(f"{prefix}_{n}", real=True) for n in labels]


def _link_labels(net: UserNetwork) -> list[str]:
    return [str(i + 1) for i in range(net.n_links)]


def _fmt(v: float) -> str:
    return f"{v:g}"


def weight_unit(u: Utility, rate_unit: str) -> str:
    """The unit of ``w/(beta beta_r)``: that of ``1/U'(x)``."""
    if u.nu == 0:
        return rate_unit
    if u.nu is not None:
        return f"({rate_unit})^{_fmt(u.nu + 1)}"
    return f"unit of 1/U'(x) for U = {u.name}, x in {rate_unit}"


def gain_unit(u: Utility, rate_unit: str, time_unit: str) -> str:
    """The unit of ``kappa`` in (9)/(10)/(38): ``rate / time / unit(1/U')``."""
    if u.nu == 0:
        return f"1/{time_unit}"
    if u.nu is not None:
        return f"({rate_unit})^-{_fmt(u.nu)}/{time_unit}"
    return f"({rate_unit})/{time_unit} per unit of 1/U'(x)"


@dataclass
class RouteParts:
    """The pieces of a network model shared by the rate, window and adaptive-marking laws.

    Attributes
    ----------
    x : list
        The rate functions ``x_<r>`` (states of the rate law, signals of the window law).
    links : list of str
        Link labels.
    params : dict
        Parameter definitions.
    signals : dict
        ``y_<l>``, ``p_<l>``, ``q_<r>``.
    increase, decrease : list
        Per route, ``x_r' = kappa_r (increase_r - decrease_r)`` (delays applied).
    kappa : list
        The gain symbols.
    capacities : list
        The capacity symbols ``C_<l>``.
    loads : list
        The load functions ``y_<l>``.
    """

    x: list
    links: list
    params: dict
    signals: dict
    increase: list = field(default_factory=list)
    decrease: list = field(default_factory=list)
    kappa: list = field(default_factory=list)
    capacities: list = field(default_factory=list)
    loads: list = field(default_factory=list)


def _route_params(net: UserNetwork, beta: Any, kappa: Any) -> tuple[dict, dict]:
    """Parameters ``beta`` and the per-route ``w, betar, alpha, kappa, N``; their symbols."""
    labels, ru, tu = net.names, net.rate_unit, net.time_unit
    assert labels is not None  # set by UserNetwork.__post_init__
    sy: dict[str, Any] = {n: _syms(n, labels) for n in ("w", "betar", "alpha", "kappa", "N")}
    sy["beta"] = sympy.Symbol("beta", real=True)
    kv = bounded_per_element("kappa", kappa, net.n_routes, "route", low=0.0, low_open=True)
    (bv,) = bounded_per_element("beta", beta, 1, "network", low=0.0, low_open=True)
    pdefs: dict[Any, Param] = {
        sy["beta"]: Param(
            bv, unit="1", doc="network penalty (price per loss or mark)", bounds=(0, None)
        )
    }
    for r, u in enumerate(net.utilities):
        pdefs[sy["w"][r]] = Param(
            net.w[r], unit=weight_unit(u, ru), doc=f"utility weight w ({u.name})", bounds=(0, None)
        )
        pdefs[sy["betar"][r]] = Param(
            net.beta_r[r], unit="1", doc="user's penalty weight beta_r", bounds=(0, None)
        )
        pdefs[sy["alpha"][r]] = Param(
            net.alpha[r], unit="1", doc="fraction surviving random losses", bounds=(0, 1)
        )
        pdefs[sy["kappa"][r]] = Param(
            kv[r], unit=gain_unit(u, ru, tu), doc="controller gain kappa", bounds=(0, None)
        )
        pdefs[sy["N"][r]] = Param(
            net.N[r], unit="1", doc="number of users on the route", bounds=(0, None)
        )
    return pdefs, sy


def _disturbance_terms(net: UserNetwork, disturbance: Any, pdefs: dict) -> list:
    """The rate ``xi_l`` added to each link's load: parameters, or expressions of ``t``."""
    L = net.n_links
    if disturbance is None:
        return [0] * L
    symbolic = isinstance(disturbance, sympy.Basic) or (
        isinstance(disturbance, Sequence) and any(isinstance(d, sympy.Basic) for d in disturbance)
    )
    if not symbolic:
        xv = bounded_per_element("disturbance", disturbance, L, "link", low=0.0, low_open=False)
        xis = _syms("xi", _link_labels(net))
        for ll in range(L):
            pdefs[xis[ll]] = Param(
                xv[ll],
                unit=net.rate_unit,
                doc="rate of unresponsive (short) flows",
                bounds=(0, None),
            )
        return list(xis)
    dl = list(disturbance) if isinstance(disturbance, Sequence) else [disturbance] * L
    if len(dl) != L:
        raise ParameterError(f"disturbance: need one per link ({L}), got {len(dl)}")
    out = []
    for ll, e in enumerate(dl):
        e = as_expression(e, symbols={"t": t}, where=f"disturbance of link {ll + 1}")
        if e.free_symbols - {t}:
            raise ModelError(
                f"disturbance of link {ll + 1} may depend on t only, has {e.free_symbols}"
            )
        out.append(e)
    return out


def _thresholds(net: UserNetwork, feedback: str, levels: Any, pdefs: dict, Cs: list) -> list:
    """Where each link's penalty starts: ``C_l`` (losses), ``Ct_l`` (marks) or given terms."""
    L = net.n_links
    if feedback not in _FEEDBACK:
        raise OptionError(f"feedback = {feedback!r} must be one of {_FEEDBACK}")
    if feedback == "loss":
        if levels is not None:
            raise OptionError("levels (marking levels) are used with feedback='ecn' only")
        return list(Cs)
    if isinstance(levels, list) and levels and isinstance(levels[0], sympy.Basic):
        return levels  # marking levels that are states (the adaptive law)
    lv = bounded_per_element(
        "levels", net.C if levels is None else levels, L, "link", low=0.0, low_open=False
    )
    Ct = _syms("Ct", _link_labels(net))
    for ll in range(L):
        if lv[ll] > net.C[ll]:
            raise ParameterError(
                f"levels[{ll}] = {lv[ll]:g} (link {ll + 1}) exceeds the capacity {net.C[ll]:g}"
            )
        pdefs[Ct[ll]] = Param(
            lv[ll],
            unit=net.rate_unit,
            doc="ECN marking level C~ (virtual capacity)",
            bounds=(0, None),
        )
    return list(Ct)


def route_parts(
    net: UserNetwork,
    *,
    beta: Any,
    kappa: Any,
    feedback: str,
    levels: Any = None,
    disturbance: Any = None,
    delay: str | None = None,
    T: Any = None,
) -> RouteParts:
    """The rate functions, signals and increase/decrease terms of the laws on ``net``.

    ``x_r' = kappa_r (c w_r/beta_r - beta c/U'(x_r) f_r)`` with ``c`` the utility's
    ``law_scale``, ``f_r`` the lost (or marked and received) fraction; delays as in
    :func:`utility_primal`. ``levels`` may be a list of sympy terms (marking levels that are
    states of the model).
    """
    if delay not in _DELAYS:
        raise OptionError(f"delay = {delay!r} must be one of {_DELAYS}")
    if delay is None and T is not None:
        raise OptionError("T is given but delay is None: choose delay='full' or 'price'")
    S, L = net.n_routes, net.n_links
    assert net.names is not None  # set by UserNetwork.__post_init__
    labels, links = list(net.names), _link_labels(net)
    x, y, p, q = _funcs("x", labels), _funcs("y", links), _funcs("p", links), _funcs("q", labels)
    pdefs, sy = _route_params(net, beta, kappa)
    Cs = _syms("C", links)
    for ll in range(L):
        pdefs[Cs[ll]] = Param(net.C[ll], unit=net.rate_unit, doc="link capacity", bounds=(0, None))
    thresholds = _thresholds(net, feedback, levels, pdefs, Cs)
    xi_terms = _disturbance_terms(net, disturbance, pdefs)
    Ts: list = [0] * S
    if delay is not None:
        Tv = bounded_per_element("T", 1.0 if T is None else T, S, "route", low=0.0, low_open=False)
        Ts = _syms("T", labels)
        for r in range(S):
            pdefs[Ts[r]] = Param(
                Tv[r], unit=net.time_unit, doc="feedback delay (round-trip time)", bounds=(0, None)
            )
    sig: dict[Any, Any] = {}
    for ll in range(L):
        users = np.flatnonzero(net.A[ll])
        sig[y[ll]] = sum(sy["N"][r] * x[r](t) for r in users) + xi_terms[ll]
        sig[p[ll]] = fluid_penalty(y[ll](t), thresholds[ll])
    for r in range(S):
        sig[q[r]] = sum(p[ll](t) for ll in np.flatnonzero(net.A[:, r]))
    parts = RouteParts(x, links, pdefs, sig, kappa=sy["kappa"], capacities=Cs, loads=y)
    al, bs = sy["alpha"], sy["beta"]
    for r, u in enumerate(net.utilities):
        c = sympy.nsimplify(u.law_scale)
        lag = t - Ts[r]
        xr = x[r](lag) if delay == "full" else x[r](t)
        f = (1 - al[r]) + al[r] * q[r](lag) if feedback == "loss" else al[r] * q[r](lag)
        parts.increase.append(c * sy["w"][r] / sy["betar"][r])
        parts.decrease.append(bs * u.decrease(xr) * f)
    return parts


def utility_primal(
    net: UserNetwork,
    *,
    beta: float = 0.5,
    kappa: float | Sequence[float] = 1.0,
    feedback: str = "loss",
    levels: float | Sequence[float] | None = None,
    disturbance: Any = None,
    delay: str | None = None,
    T: float | Sequence[float] | None = None,
) -> Model:
    """The primal rate laws (9)/(10)/(38), or (40)/(41) with ECN marks, on a network.

    States ``x_<r>`` (per-user rate of route ``r``); signals ``y_<l>`` (link load, with the
    disturbance), ``p_<l>`` (lost or marked fraction ``(y - C)^+/y``) and ``q_<r>`` (path sum).
    Parameters ``beta``; per route ``w_<r>``, ``betar_<r>``, ``alpha_<r>``, ``kappa_<r>``,
    ``N_<r>`` (and ``T_<r>`` when delayed); per link ``C_<l>`` (and ``Ct_<l>`` marking levels
    with ECN, ``xi_<l>`` constant disturbances). Links are labelled 1, 2, ...

    Parameters
    ----------
    net : UserNetwork
        Routing, utilities, capacities and the users' constants.
    beta : float
        Network penalty ``beta`` (TCP: 0.5, or ``ln 2`` by (16)).
    kappa : float or sequence
        Gains ``kappa_r``.
    feedback : {"loss", "ecn"}
        React to losses (random and congestion, Prop 2) or only to marks ((40)/(41)).
    levels : float or sequence, optional
        Marking levels ``C~_l`` with ``feedback="ecn"`` (default the capacities).
    disturbance : float, sequence, sympy expression or sequence of them, optional
        Rate ``xi_l`` of unresponsive flows added to each link's load: numbers become
        parameters ``xi_<l>``; expressions of :data:`fluidnet.t` give a time-varying load.
    delay : {None, "full", "price"}
        No delay, every feedback delayed by ``T_r``, or only the price delayed.
    T : float or sequence, optional
        Feedback delays ``T_r`` [time unit] (default 1 when ``delay`` is set).

    Returns
    -------
    Model

    Raises
    ------
    ModelError
        For an unknown ``feedback`` or ``delay``, ``T`` without ``delay``, ``levels`` without
        ECN, or a disturbance expression with symbols other than ``t``.
    ParameterError
        For a value of the wrong length, not finite or out of range (named).

    Examples
    --------
    >>> import fluidnet as fn
    >>> from fluidnet.models import UserNetwork, log_utility, power_utility, utility_primal
    >>> net = UserNetwork([[1, 1, 0], [1, 0, 1]],
    ...                   [power_utility(0.5), log_utility(), power_utility(1)],
    ...                   C=[156.25, 78.125], names=["0", "1", "2"])   # Experiment 1
    >>> m = utility_primal(net, beta=0.5)
    >>> {k: round(v, 3) for k, v in m.equilibrium().items()}
    {'x_0': 16.712, 'x_1': 141.773, 'x_2': 61.454}
    """
    parts = route_parts(
        net,
        beta=beta,
        kappa=kappa,
        feedback=feedback,
        levels=levels,
        disturbance=disturbance,
        delay=delay,
        T=T,
    )
    rhs = {
        xr: k * (inc - dec)
        for xr, k, inc, dec in zip(
            parts.x, parts.kappa, parts.increase, parts.decrease, strict=True
        )
    }
    name = (
        "utility_primal"
        + ("_ecn" if feedback == "ecn" else "")
        + (f"_{delay}_delay" if delay else "")
    )
    return Model(rhs=rhs, params=parts.params, signals=parts.signals, name=name)
