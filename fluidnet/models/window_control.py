"""Window flow control of Kunniyur & Srikant (2003) as fluid ODEs in the window sizes.

Source: S. Kunniyur and R. Srikant, "End-to-End Congestion Control Schemes: Utility Functions,
Random Losses and ECN Marks", IEEE/ACM Trans. Networking 11(5), 2003, Sec III. With
``x_r = W_r/d_r`` (Lakshman & Madhow), acks at rate ``x_r`` and nacks (or marks) at rate
``x_r - z_r = x_r f_r``, the per-event window updates become, as ``delta -> 0``:

* RTT-compensated, (12)/(13) (each ack adds ``kappa c w d^2/(beta_r W)``, each nack removes
  ``kappa beta d`` for ``log`` and ``kappa beta W^nu / d^(nu-1)`` for ``-1/x^nu``):
  ``W' = kappa (c w d^2 x/(beta_r W) - beta d x f)`` and
  ``W' = kappa (nu w d^2 x/(beta_j W) - beta W^nu x f / d^(nu-1))``. In rates these are exactly
  (9)/(10): the equilibrium does not depend on ``d``;
* RTT-ignoring, (20)/(21) -> (22)/(23): ``W' = kappa (w x/(beta_r W) - beta x f)`` and
  ``W' = kappa (nu w x/(beta_j W) - beta W^nu x f)``, which in rates are (24)/(25) and
  converge to (26): the weights become ``w/d`` (``log``) and ``w/d^(nu+1)`` (``-1/x^nu``).

(20) prints the decrease term with the user's ``beta_r``; consistency with (12) and (22)
requires the network ``beta`` (used here). For a utility outside the two families the
compensated law is the window form of (38), ``W' = d kappa (w/beta_r - beta f/U'(W/d))``; the
RTT-ignoring law is defined for the families only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sympy

from ..errors import ModelError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import t
from .primal_rate import _funcs, _syms, route_parts
from .user_network import UserNetwork, bounded_per_element

__all__ = ["utility_window"]


def utility_window(
    net: UserNetwork,
    *,
    beta: float = 0.5,
    kappa: float | Sequence[float] = 1.0,
    rtt_compensated: bool = True,
    feedback: str = "loss",
    levels: float | Sequence[float] | None = None,
    disturbance: Any = None,
) -> Model:
    """The window laws (12)/(13) (``rtt_compensated``) or (22)/(23) on a network.

    States ``W_<r>`` (window of a user of route ``r``, packets); signals ``x_<r> = W_<r>/d_<r>``
    and those of :func:`fluidnet.models.utility_primal`. Parameters as there, plus the
    round-trip delays ``d_<r>`` (from ``net.d``) [time unit].

    Parameters
    ----------
    net : UserNetwork
    beta, kappa, feedback, levels, disturbance
        As for :func:`fluidnet.models.utility_primal`.
    rtt_compensated : bool
        True: the laws (12)/(13) with ``d`` in the increments (the rate equilibrium is that of
        (9)/(10)); False: the laws (20)/(21) that ignore ``d`` (TCP-like; equilibrium (26)).

    Returns
    -------
    Model

    Raises
    ------
    ModelError
        With ``rtt_compensated=False`` for a utility outside the ``log`` / ``-1/x^nu``
        families.

    Examples
    --------
    >>> from fluidnet.models import UserNetwork, log_utility, utility_window
    >>> net = UserNetwork([[1]], log_utility(), C=100.0, N=10, d=2.0)
    >>> m = utility_window(net, beta=0.5)
    >>> round(m.equilibrium()["W_1"], 9)       # x = (C + N/beta)/N = 12, W = x d
    24.0
    """
    parts = route_parts(
        net, beta=beta, kappa=kappa, feedback=feedback, levels=levels, disturbance=disturbance
    )
    assert net.names is not None  # set by UserNetwork.__post_init__
    labels = list(net.names)
    W = _funcs("W", labels)
    ds = _syms("d", labels)
    dv = bounded_per_element("d", net.d, net.n_routes, "route", low=0.0, low_open=True)
    params = dict(parts.params)
    for r in range(net.n_routes):
        params[ds[r]] = Param(
            dv[r], unit=net.time_unit, doc="round-trip delay d in the window law", bounds=(0, None)
        )
    signals = {parts.x[r]: W[r](t) / ds[r] for r in range(net.n_routes)}
    signals.update(parts.signals)
    rhs = {}
    for r, u in enumerate(net.utilities):
        k, inc, dec = parts.kappa[r], parts.increase[r], parts.decrease[r]
        xr, Wr, d = parts.x[r](t), W[r](t), ds[r]
        if rtt_compensated:
            # (12)/(13): per-ack increase c w d^2/(beta_r W) at rate x; decrease d * (beta c f/U')
            rhs[W[r]] = k * (inc * d**2 * xr / Wr - d * dec)
        else:
            if u.nu is None:
                raise ModelError(
                    f"route {net.names[r]}: the RTT-ignoring window law (20)/(21) is defined for "
                    f"log and -1/x^nu utilities, not {u.name}"
                )
            # (22)/(23): W' = kappa (c w x/(beta_r W) - beta W^nu x f); W^nu x = d^nu x^(nu+1)
            rhs[W[r]] = k * (inc * xr / Wr - d ** sympy.nsimplify(u.nu) * dec)
    name = "utility_window" + ("" if rtt_compensated else "_rtt_ignoring")
    return Model(rhs=rhs, params=params, signals=signals, name=name)
