"""DCTCP: the fluid model of Alizadeh, Javanmard & Prabhakar (2011) and the sawtooth of 2010.

Sources
-------
* M. Alizadeh, A. Javanmard and B. Prabhakar, "Analysis of DCTCP: stability, convergence, and
  fairness", ACM SIGMETRICS 2011: ``N`` synchronized DCTCP flows on one link of capacity ``C``
  with marking threshold ``K``,

  * ``dW/dt = 1/R(t) - W(t) alpha(t)/(2 R(t)) p(t - R*)``,
  * ``dalpha/dt = (g/R(t)) (p(t - R*) - alpha(t))``,
  * ``dq/dt = N W(t)/R(t) - C`` (projected at 0),
  * ``p(t) = 1{q(t) > K}``, ``R(t) = d + q(t)/C``, ``R* = d + K/C``.

  The marking is a step of the queue, so the model has no equilibrium with a linearization: its
  only candidate rest point sits on the switching surface ``q = K`` (``equilibrium()`` raises
  an AnalysisError naming that surface, and fluidnet refuses to linearize there). The paper
  analyses instead the periodic orbit (limit cycle) the model settles on.
* M. Alizadeh, A. Greenberg, D. A. Maltz, J. Padhye, P. Patel, B. Prabhakar, S. Sengupta and
  M. Sridharan, "Data center TCP (DCTCP)", ACM SIGCOMM 2010, Sec. 3.3: the sawtooth of ``N``
  synchronized flows, with ``W* = (C d + K)/N`` the window at which the queue reaches ``K``,
  ``alpha ~ sqrt(2/W*)``, the queue oscillation amplitude ``A = (1/2) sqrt(2 N (C d + K))``
  (pkts), its period ``T_C = (1/2) sqrt(2 (C d + K)/N)`` round trips and maximum
  ``Q_max = N + K``; ``Q_min = Q_max - A > 0`` gives the guideline ``K > (C d)/7``.

Units: time in seconds, ``C`` in packets per second, windows and queue in packets.
"""

from __future__ import annotations

import math

import sympy

from ..errors import ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t

__all__ = ["dctcp", "dctcp_sawtooth"]

_META = {
    "N": (10.0, "1", "number of flows", (0, None)),
    "C": (10e9 / 12000.0, "pkts/s", "link capacity (10 Gb/s, 1500-byte packets)", (0, None)),
    "d": (100e-6, "s", "round-trip propagation delay", (0, None)),
    "K": (40.0, "pkts", "marking threshold", (0, None)),
    "g": (1 / 16, "1", "alpha estimation gain", (0, 1)),
}


def dctcp(**values: float) -> Model:
    """The DCTCP fluid model of Alizadeh, Javanmard & Prabhakar (2011).

    States ``W`` (window, pkts), ``alpha`` (marked fraction estimate) and ``q`` (queue, pkts,
    projected at 0); signal ``p = Heaviside(q - K)`` (marking), used one round trip ``R*`` late.

    Defaults: 10 Gb/s with 1500-byte packets (833 333 pkts/s), ``d = 100`` us, ``K = 40`` pkts,
    ``g = 1/16`` (the DCTCP paper's gain), ``N = 10``.

    Parameters
    ----------
    **values
        Overrides of ``N``, ``C``, ``d``, ``K``, ``g``.

    Returns
    -------
    Model

    Examples
    --------
    >>> import fluidnet as fn
    >>> m = fn.models.dctcp()
    >>> m.state_names
    ('W', 'alpha', 'q')
    """
    W, alpha, q = states("W alpha q")
    p = signals("p")
    N, C, d, K, g = syms = params("N C d K g")
    pdefs = {
        s: Param(
            _META[s.name][0], unit=_META[s.name][1], doc=_META[s.name][2], bounds=_META[s.name][3]
        )
        for s in syms
    }
    R = d + q(t) / C
    late = t - (d + K / C)
    model = Model(
        rhs={
            W: 1 / R - W(t) * alpha(t) / (2 * R) * p(late),
            alpha: g / R * (p(late) - alpha(t)),
            q: N * W(t) / R - C,
        },
        params=pdefs,
        signals={p: sympy.Heaviside(q(t) - K)},
        nonnegative=[q],
        name="dctcp",
    )
    return model.with_params(**values) if values else model


def dctcp_sawtooth(N: float, C: float, d: float, K: float) -> dict[str, float]:
    """The sawtooth approximations of Alizadeh et al. (2010), Sec. 3.3.

    Parameters
    ----------
    N : float
        Number of flows.
    C : float
        Link capacity (pkts/s).
    d : float
        Round-trip propagation delay (s).
    K : float
        Marking threshold (pkts).

    Returns
    -------
    dict
        ``W_star`` (pkts), ``alpha`` (``sqrt(2/W*)``), ``amplitude`` ``A`` (pkts), ``period``
        ``T_C`` (s; the round trip is ``d``), ``q_max`` and ``q_min`` (pkts).

    Raises
    ------
    ParameterError
        For a parameter that is not a finite number > 0 (``K >= 0``).
    """
    for k, v in dict(N=N, C=C, d=d).items():
        if not (math.isfinite(v) and v > 0):
            raise ParameterError(f"{k} = {v!r} must be a finite number > 0")
    if not (math.isfinite(K) and K >= 0):
        raise ParameterError(f"K = {K!r} must be a finite number >= 0")
    bdp = C * d
    w_star = (bdp + K) / N
    amplitude = 0.5 * math.sqrt(2 * N * (bdp + K))
    return {
        "W_star": w_star,
        "alpha": math.sqrt(2 / w_star),
        "amplitude": amplitude,
        "period": 0.5 * math.sqrt(2 * (bdp + K) / N) * d,
        "q_max": N + K,
        "q_min": N + K - amplitude,
    }
