"""FAST TCP: the window law on one link, with two link models.

Sources
-------
* C. Jin, D. X. Wei and S. H. Low, "FAST TCP: motivation, architecture, algorithms,
  performance", IEEE INFOCOM 2004: the window update, once per round trip,
  ``w <- (1 - gamma) w + gamma (baseRTT/RTT w + alpha)``, i.e. a change
  ``gamma (alpha - w q/RTT)`` per round trip with ``q = RTT - baseRTT`` the queueing delay.
  Its equilibrium holds ``alpha`` packets in the queue per flow: ``x q = alpha``.
* J. Wang, D. X. Wei, J.-Y. Choi and S. H. Low, "Modelling and stability of FAST TCP",
  IMA Volumes in Mathematics and its Applications 143, 2007 (after Wang, Wei & Low, INFOCOM
  2005): with the *static* (ACK-clocked) link model, in which the queue follows the windows
  through ``sum_i w_i(t - tau_f)/(d_i + q(t)) = c``, FAST TCP is locally stable for every
  delay, whereas the commonly used *integrator* link model ``dq/dt = (sum_i x_i - c)/c``
  predicts instability as the delay grows.
* K. Jacobsson, L. L. H. Andrew, A. Tang, S. H. Low and H. Hjalmarsson, "An improved link model
  for window flow control and its application to FAST TCP", IEEE Trans. Automatic Control 54(3),
  2009: the ACK-clocking ("joint") link model. On one bottleneck with identical flows its
  linearization reduces to the static model's pure delay from windows to queue (the link's
  departure rate is ``c`` while it is congested).

The fluid law here is the per-round-trip update read as a rate of change,

``dw/dt = (gamma/R(t)) (alpha - w(t) qb(t)/R(t))``, ``R(t) = d + qb(t)``, ``qb(t) = q(t - tau_b)``,

for ``N`` identical flows (``w`` per flow), with the link either ``"integrator"``
(``dq/dt = (N w(t - tau_f)/R(t - tau_f) - c)/c``, ``q`` projected at 0) or ``"static"``
(``q(t) = max(N w(t - tau_f)/c - d, 0)``). ``q`` is the queueing delay in seconds;
``tau_f = split d``, ``tau_b = (1 - split) d``. The equilibrium is ``x = c/N``,
``q = alpha N/c``, ``w = c d/N + alpha``.

Linearized, with ``R = d + q*`` and ``rho = d/R`` (``lambda = s R``):

* static: ``lambda + gamma (1 - rho) + gamma rho e^{-lambda rho} = 0``: stable for every delay
  when ``gamma < pi/2`` (the critical gain ``arccos((rho - 1)/rho)/(rho sqrt(2 rho - 1))``
  decreases to ``pi/2`` as the queueing delay vanishes);
* integrator:
  ``(lambda + gamma (1 - rho))(lambda + e^{-lambda rho}) + gamma rho e^{-lambda rho} = 0``.

These two characteristic equations are derived here (not printed in the papers); the package
``fluidnet.papers.classics`` checks them against the models' linearizations.
"""

from __future__ import annotations

import math

import sympy

from ..errors import ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t

__all__ = ["fast_tcp", "fast_static_critical_gamma", "fast_equilibrium"]

_META = {
    "N": (10.0, "1", "number of flows", (0, None)),
    "c": (12500.0, "pkts/s", "link capacity (100 Mb/s, 1000-byte packets)", (0, None)),
    "d": (0.1, "s", "round-trip propagation delay (baseRTT)", (0, None)),
    "alpha": (20.0, "pkts", "packets each flow keeps queued at equilibrium", (0, None)),
    "gamma": (0.5, "1", "window update gain", (0, None)),
    "split": (0.5, "1", "forward share of the propagation delay, tau_f/d", (0, 1)),
}


def fast_tcp(link: str = "static", **values: float) -> Model:
    """FAST TCP flows on one link, with the ``"static"`` or ``"integrator"`` link model.

    States ``w`` (window per flow, pkts) and, for the integrator link, ``q`` (queueing delay,
    s, projected at 0); for the static link ``q`` is a signal. Signal ``qb`` is the queueing
    delay the sources see, ``q(t - tau_b)``.

    Defaults: ``N = 10`` flows, ``c = 12500`` pkts/s, ``d = 0.1`` s, ``alpha = 20`` pkts,
    ``gamma = 0.5``, ``split = 0.5``: a queueing delay of 16 ms against 100 ms of propagation,
    where the two link models disagree (critical ``gamma`` 2.36 static, 0.86 integrator).

    Parameters
    ----------
    link : {"static", "integrator"}
    **values
        Overrides of ``N``, ``c``, ``d``, ``alpha``, ``gamma``, ``split``.

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        For an unknown link model or an invalid value.

    Notes
    -----
    The static link's queue ``max(N w/c - d, 0)`` is flat below ``w = c d/N``, where the numeric
    equilibrium search can stall; pass ``guess=fast_equilibrium(...)`` (the closed form) then.

    Examples
    --------
    >>> import fluidnet as fn
    >>> eq = fn.models.fast_tcp().equilibrium()
    >>> round(eq["w"], 9)          # c d / N + alpha
    145.0
    """
    if link not in ("static", "integrator"):
        raise ParameterError(f"link must be 'static' or 'integrator', got {link!r}")
    N, c, d, alpha, gamma, split = syms = params("N c d alpha gamma split")
    pdefs = {
        s: Param(
            _META[s.name][0], unit=_META[s.name][1], doc=_META[s.name][2], bounds=_META[s.name][3]
        )
        for s in syms
    }
    w = states("w")
    tau_f, tau_b = split * d, (1 - split) * d
    if link == "static":
        q, qb = signals("q qb")
        sig = {q: sympy.Max(N * w(t - tau_f) / c - d, 0), qb: q(t - tau_b)}
        extra: dict = {}
        nonneg: list = []
    else:
        q = states("q")
        qb = signals("qb")
        sig = {qb: q(t - tau_b)}
        late = t - tau_f
        extra = {q: (N * w(late) / (d + qb(late)) - c) / c}
        nonneg = [q]
    R = d + qb(t)
    rhs = {w: gamma / R * (alpha - w(t) * qb(t) / R), **extra}
    model = Model(rhs=rhs, params=pdefs, signals=sig, nonnegative=nonneg, name=f"fast_{link}")
    return model.with_params(**values) if values else model


def fast_equilibrium(N: float, c: float, d: float, alpha: float) -> dict[str, float]:
    """The FAST TCP equilibrium: ``x = c/N``, ``q = alpha N/c`` (s), ``w = c d/N + alpha``.

    Parameters
    ----------
    N : float
        Number of flows.
    c : float
        Link capacity (pkts/s).
    d : float
        Round-trip propagation delay (s).
    alpha : float
        Packets each flow keeps queued at equilibrium.

    Returns
    -------
    dict
        ``x`` (pkts/s per flow), ``q`` (s) and ``w`` (pkts).

    Raises
    ------
    ParameterError
        For a parameter that is not a finite positive number.
    """
    for k, v in dict(N=N, c=c, d=d, alpha=alpha).items():
        if not (math.isfinite(v) and v > 0):
            raise ParameterError(f"{k} = {v!r} must be a finite number > 0")
    return {"x": c / N, "q": alpha * N / c, "w": c * d / N + alpha}


def fast_static_critical_gamma(rho: float) -> float:
    """Critical ``gamma`` of the static-link model at ``rho = d/(d + q*)`` (closed form).

    ``inf`` for ``rho <= 1/2`` (the queueing delay is at least the propagation delay: stable
    for every ``gamma``), else ``arccos((rho - 1)/rho)/(rho sqrt(2 rho - 1))``.

    Parameters
    ----------
    rho : float
        ``d/(d + q*)``: the propagation delay's share of the round-trip time.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For ``rho`` outside ``(0, 1]``.
    """
    if not (math.isfinite(rho) and 0 < rho <= 1):
        raise ParameterError(f"rho = {rho!r} must lie in (0, 1]")
    if rho <= 0.5:
        return math.inf
    return math.acos((rho - 1) / rho) / (rho * math.sqrt(2 * rho - 1))
