"""Rate Control Protocol (RCP) fluid model.

Source: N. Dukkipati and N. McKeown, "Processor Sharing Flows in the Internet", Stanford HPNG
technical report (seed 004), Section IV-A, equations (4)-(7):

* (4) ``dR/dt = R(t - T) [alpha (C - y(t)) - beta q(t)/d(t)] / (C d(t))``
* (5) ``y(t) = N R(t - d0)``
* (6) ``d(t) = d0 + q(t)/C``
* (7) ``dq/dt = y(t) - C`` for ``q > 0``, ``max(y(t) - C, 0)`` for ``q = 0`` (a projected queue).

Appendix II of the paper restates (4) as ``f = R_T (1 + [...]/(C d))``; the ``1 +`` is a typo (it
belongs to the discrete update law (2), not to the derivative: with it ``df/dR_T`` would be 1, not
the stated 0). The model below uses (4) as printed in Section IV-A.
"""

from __future__ import annotations

from ..model import Model, Param
from ..symbols import params, states, t

__all__ = ["rcp", "rcp_dimensionless", "PACKET_BITS"]

#: The paper's packet size: 1000 bytes.
PACKET_BITS = 8000.0


def rcp(**values: float) -> Model:
    """The RCP fluid model, seed 004 eqs (4)-(7).

    States ``R`` (rate per flow, pkts/s) and ``q`` (queue, pkts, projected at 0). Defaults are
    the paper's phase-plane setup (Sec IV-E): C = 0.15 Gb/s with 1000-byte packets
    (18 750 pkts/s), d0 = 0.2 s, T = 0.01 s, N = 10, and (alpha, beta) = (0.4, 0.2).

    Parameters
    ----------
    **values
        Overrides of the defaults of ``alpha``, ``beta``, ``C``, ``N``, ``d0``, ``T``.

    Returns
    -------
    Model

    Examples
    --------
    >>> import fluidnet as fn
    >>> m = fn.models.rcp()
    >>> m.equilibrium()
    {'R': 1875.0, 'q': 0.0}
    """
    R, q = states("R q")
    alpha, beta, C, N, d0, T = params("alpha beta C N d0 T")
    d = d0 + q(t) / C  # (6) RTT including queueing delay
    y = N * R(t - d0)  # (5) aggregate arrival rate; feedback delay is the fixed d0
    m = Model(
        rhs={
            R: R(t - T) * (alpha * (C - y) - beta * q(t) / d) / (C * d),  # (4)
            q: y - C,  # (7), projected at q = 0 via `nonnegative`
        },
        params={
            alpha: Param(0.4, unit="1", doc="gain on spare capacity C - y", bounds=(0, None)),
            beta: Param(0.2, unit="1", doc="gain on the queue-drain term q/d", bounds=(0, None)),
            C: Param(
                0.15e9 / PACKET_BITS,
                unit="pkts/s",
                doc="link capacity (0.15 Gb/s, 1000-byte packets)",
                bounds=(0, None),
            ),
            N: Param(10.0, unit="1", doc="number of flows", bounds=(0, None)),
            d0: Param(
                0.2, unit="s", doc="round-trip propagation delay (feedback delay)", bounds=(0, None)
            ),
            T: Param(0.01, unit="s", doc="rate-update interval", bounds=(0, None)),
        },
        nonnegative=[q],
        name="rcp",
    )
    return m.with_params(**values) if values else m


def rcp_dimensionless(**values: float) -> Model:
    """RCP in dimensionless form (seed 004, eqs (4)-(7) rescaled; note 004 §2.4).

    With time ``tau = t/d0``, aggregate normalized rate ``g = N R / C`` and normalized queue
    ``x = q/(C d0)``:

    ``dg/dtau = g(tau - T/d0) [alpha (1 - g(tau - 1)) - beta x/(1 + x)] / (1 + x)``,
    ``dx/dtau = g(tau - 1) - 1`` with ``x >= 0``.

    Only ``alpha``, ``beta`` and ``T_ratio = T/d0`` remain, which is why the paper finds its
    stability regions independent of C, N and d0. Equilibrium ``(g, x) = (1, 0)``.
    """
    g, x = states("g x")
    alpha, beta, Tr = params("alpha beta T_ratio")
    m = Model(
        rhs={
            g: g(t - Tr) * (alpha * (1 - g(t - 1)) - beta * x(t) / (1 + x(t))) / (1 + x(t)),
            x: g(t - 1) - 1,
        },
        params={
            alpha: Param(0.4, unit="1", doc="gain on spare capacity", bounds=(0, None)),
            beta: Param(0.2, unit="1", doc="gain on the queue-drain term", bounds=(0, None)),
            Tr: Param(
                0.05, unit="1", doc="update interval over propagation RTT, T/d0", bounds=(0, None)
            ),
        },
        nonnegative=[x],
        name="rcp_dimensionless",
    )
    return m.with_params(**values) if values else m
