"""TCP/AQM fluid models: Misra, Gong & Towsley's window/queue model with RED or a PI controller.

Sources
-------
* V. Misra, W.-B. Gong and D. Towsley, "Fluid-based analysis of a network of AQM routers
  supporting TCP flows with an application to RED", ACM SIGCOMM 2000 (MGT): the mean window
  ``W`` of ``N`` TCP flows in congestion avoidance through one queue ``q``,

  * ``dW/dt = 1/R(t) - W(t) W(t - R(t)) / (2 R(t - R(t))) p(t - R(t))``  (additive increase,
    halving on each mark seen one round trip later),
  * ``dq/dt = N W(t)/R(t) - C``, the queue projected at 0,
  * ``R(t) = Tp + q(t)/C``,

  and RED's exponentially weighted average queue as the low-pass filter
  ``dx/dt = (ln(1 - w)/delta) (x(t) - q(t))`` (weight ``w`` per sample, one sample every
  ``delta`` seconds), marked with the RED profile ``p(x)``.
* C. V. Hollot, V. Misra, D. Towsley and W.-B. Gong, "On designing improved controllers for AQM
  routers supporting TCP flows", IEEE INFOCOM 2001, and "Analysis and design of controllers for
  AQM routers supporting TCP flows", IEEE Trans. Automatic Control 47(6), 2002 (eq. (1) restates
  the model above): the linearization at ``W0 = R0 C/N``, ``p0 = 2/W0^2``,
  ``R0 = Tp + q0/C``, its approximate plant

  ``P(s) = (C^2/(2N)) e^{-s R0} / ((s + 2N/(R0^2 C)) (s + 1/R0))``

  (the ``dW(t - R0)`` and ``dq - dq(t - R0)`` terms of the exact linearization dropped, which they
  justify for ``N`` large), and the PI controller ``C(s) = K_PI (s/z + 1)/s`` on the queue error,
  with the design example ``N = 60``, ``C = 3750`` pkts/s, ``Tp = 0.2`` s, ``q0 = 175`` pkts:
  ``z = 0.53`` rad/s, ``K_PI = 9.64e-6``.

Conventions: time in seconds, queue and window in packets, ``C`` in packets per second.
``fn.models.hollot_pi`` writes the PI law in velocity form, ``dp/dt = K_PI (q'/z + q - q_ref)``
with ``p`` projected at 0: this is the incremental law ``p(k) = p(k-1) + a dq(k) - b dq(k-1)``
of the authors' implementation in continuous time (it cannot wind up below 0). ``q'`` in it is
``N W/R - C`` (unprojected); while the queue is held empty this only drives ``p`` to 0 faster.
"""

from __future__ import annotations

import math

import sympy

from ..errors import ParameterError
from ..linear.delaytf import DelayTF
from ..linear.quasipoly import QuasiPolynomial
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t
from .reno import red_marking

__all__ = [
    "mgt_red",
    "hollot_pi",
    "hollot_plant",
    "hollot_pi_design",
    "red_stability_bound",
    "HOLLOT_EXAMPLE",
]

#: The design example of Hollot et al. (2001, 2002): 60 flows, 15 Mb/s with 500-byte packets
#: (3750 pkts/s), 0.2 s propagation delay, reference queue 175 pkts.
HOLLOT_EXAMPLE: dict[str, float] = {"N": 60.0, "C": 3750.0, "Tp": 0.2, "q_ref": 175.0}

_NETWORK = {
    "N": Param(60.0, unit="1", doc="number of TCP flows", bounds=(0, None)),
    "C": Param(3750.0, unit="pkts/s", doc="link capacity", bounds=(0, None)),
    "Tp": Param(0.2, unit="s", doc="round-trip propagation delay", bounds=(0, None)),
}


def _window_queue(W, q, mark):
    """The MGT window and queue equations with marking signal ``mark`` (a sympy function)."""
    N, C, Tp = params("N C Tp")
    R = Tp + q(t) / C
    R_back = Tp + q(t - R) / C  # R(t - R(t))
    return {
        W: 1 / R - W(t) * W(t - R) / (2 * R_back) * mark(t - R),
        q: N * W(t) / R - C,
    }


def _network_params(N, C, Tp) -> dict:
    return {N: _NETWORK["N"], C: _NETWORK["C"], Tp: _NETWORK["Tp"]}


def mgt_red(gentle: bool = False, **values: float) -> Model:
    """TCP flows on a RED queue: the fluid model of Misra, Gong & Towsley (2000).

    States ``W`` (window, pkts), ``q`` (queue, pkts, projected at 0) and ``x`` (RED's average
    queue, pkts); signal ``p`` (the RED marking probability of ``x``). ``loop_gain("p")`` is
    the AQM loop of Hollot et al. (2002): ``L_red K/(s + K)`` times the TCP/queue plant, with the
    averaging pole ``K = -ln(1 - weight)/delta``.

    Defaults: the network of Hollot et al.'s design example (``N = 60``, ``C = 3750`` pkts/s,
    ``Tp = 0.2`` s) and a RED that meets their sufficient stability condition
    (:func:`red_stability_bound`): ``p_max = 0.1``, ``min_th = 50``, ``max_th = 600`` pkts
    (slope ``L_red = 1.82e-4``), ``weight = 1.33e-6`` sampled at ``delta = 1/C`` (``K = 0.005``
    rad/s). These RED values are this library's choice, not a paper's.

    Parameters
    ----------
    gentle : bool, default False
        Gentle RED above ``max_th`` (linear to 1 at ``2 max_th``) instead of marking all.
    **values
        Overrides of ``N``, ``C``, ``Tp``, ``p_max``, ``min_th``, ``max_th``, ``weight``,
        ``delta``.

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        For ``max_th <= min_th``, a weight outside (0, 1) or another invalid value.

    Examples
    --------
    >>> import fluidnet as fn
    >>> eq = fn.models.mgt_red().equilibrium()
    >>> round(eq["q"], 3) == round(eq["x"], 3)
    True
    """
    W, q, x = states("W q x")
    p = signals("p")
    N, C, Tp, p_max, min_th, max_th, weight, delta = params(
        "N C Tp p_max min_th max_th weight delta"
    )
    rhs = _window_queue(W, q, p)
    rhs[x] = sympy.log(1 - weight) / delta * (x(t) - q(t))
    model = Model(
        rhs=rhs,
        params={
            **_network_params(N, C, Tp),
            p_max: Param(0.1, unit="1", doc="RED marking probability at max_th", bounds=(0, 1)),
            min_th: Param(50.0, unit="pkts", doc="RED lower threshold", bounds=(0, None)),
            max_th: Param(600.0, unit="pkts", doc="RED upper threshold", bounds=(0, None)),
            weight: Param(1.33e-6, unit="1", doc="RED averaging weight per sample", bounds=(0, 1)),
            delta: Param(
                1 / 3750.0,
                unit="s",
                doc="RED sampling interval (one packet time 1/C)",
                bounds=(0, None),
            ),
        },
        signals={p: red_marking(x(t), min_th, max_th, p_max, gentle=gentle)},
        nonnegative=[q],
        name="mgt_red" + ("_gentle" if gentle else ""),
    )
    vals = {**model.values, **values}
    if vals["max_th"] <= vals["min_th"]:
        raise ParameterError(f"max_th = {vals['max_th']:g} must exceed min_th = {vals['min_th']:g}")
    if not 0 < vals["weight"] < 1:
        raise ParameterError(f"weight = {vals['weight']!r} must lie in (0, 1)")
    return model.with_params(**values) if values else model


def hollot_pi(**values: float) -> Model:
    """TCP flows on a queue regulated by the PI controller of Hollot et al. (2001, 2002).

    States ``W`` (window, pkts), ``q`` (queue, pkts, projected at 0) and ``p`` (marking
    probability, projected at 0). The controller ``C(s) = K_pi (s/z + 1)/s`` acts on the queue
    error ``q - q_ref``, written in velocity form ``dp/dt = K_pi (dq/dt / z + q - q_ref)`` (see the
    module notes). The equilibrium is ``q = q_ref`` for every load: the integral action removes
    the steady-state error that RED's proportional marking leaves.

    Defaults: the design example (``N = 60``, ``C = 3750`` pkts/s, ``Tp = 0.2`` s,
    ``q_ref = 175`` pkts) with its printed gains ``K_pi = 9.64e-6``, ``z = 0.53`` rad/s.

    Parameters
    ----------
    **values
        Overrides of ``N``, ``C``, ``Tp``, ``K_pi``, ``z``, ``q_ref``.

    Returns
    -------
    Model

    Examples
    --------
    >>> import fluidnet as fn
    >>> eq = fn.models.hollot_pi().equilibrium()
    >>> round(eq["q"], 6), round(eq["W"], 4), round(eq["p"], 6)
    (175.0, 15.4167, 0.008415)
    """
    W, q, p = states("W q p")
    N, C, Tp, K_pi, z, q_ref = params("N C Tp K_pi z q_ref")
    rhs = _window_queue(W, q, p)
    rhs[p] = K_pi * (rhs[q] / z + q(t) - q_ref)
    model = Model(
        rhs=rhs,
        params={
            **_network_params(N, C, Tp),
            K_pi: Param(9.64e-6, unit="1/(pkt s)", doc="PI integral gain", bounds=(0, None)),
            z: Param(0.53, unit="rad/s", doc="PI zero", bounds=(0, None)),
            q_ref: Param(175.0, unit="pkts", doc="reference queue", bounds=(0, None)),
        },
        nonnegative=[q, p],
        name="hollot_pi",
    )
    return model.with_params(**values) if values else model


def _positive(**kw: float) -> None:
    for k, v in kw.items():
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ParameterError(f"{k} = {v!r} must be a finite number > 0")


def hollot_plant(N: float, C: float, R0: float) -> DelayTF:
    """Hollot et al.'s approximate TCP/queue plant from ``dp`` to ``dq``.

    ``P(s) = (C^2/(2N)) e^{-s R0} / ((s + 2N/(R0^2 C)) (s + 1/R0))``: the linearization of the
    MGT model at ``(W0, q0, p0)`` with the terms in ``dW(t - R0)`` and ``dq - dq(t - R0)``
    dropped (Hollot et al. 2002, their linearized model).

    Parameters
    ----------
    N, C, R0 : float
        Flows, capacity (pkts/s), equilibrium round-trip time (s).

    Raises
    ------
    ParameterError
        For a parameter that is not a finite positive number.
    """
    _positive(N=N, C=C, R0=R0)
    num = QuasiPolynomial([(R0, [C * C / (2 * N)])])
    den = QuasiPolynomial([1.0, 2 * N / (R0 * R0 * C)]) * QuasiPolynomial([1.0, 1.0 / R0])
    return DelayTF(num, den)


def hollot_pi_design(N: float, C: float, R0: float, omega_g: float | None = None) -> dict:
    """PI gains by the rule of Hollot et al.: zero on the TCP pole, unit gain at ``omega_g``.

    ``z = 2N/(R0^2 C)`` cancels the TCP window pole of :func:`hollot_plant`, which leaves
    ``L(s) = K_pi (R0 C)^3/(2N)^2 e^{-s R0}/(s (R0 s + 1))``; ``K_pi`` makes ``|L(j omega_g)| = 1``:
    ``K_pi = omega_g |1 + j omega_g R0| (2N)^2/(R0 C)^3``. ``omega_g`` defaults to ``z``.

    Parameters
    ----------
    N : float
        Number of TCP flows.
    C : float
        Link capacity (pkts/s).
    R0 : float
        Round-trip time at the operating point (s).
    omega_g : float, optional
        The unit-gain crossover frequency (rad/s); default ``z``.

    Returns
    -------
    dict
        ``z`` (rad/s), ``omega_g`` (rad/s), ``K_pi`` and ``K_pi_low`` (the same without the
        queue-pole factor ``|1 + j omega_g R0|``, the low-frequency approximation).

    Raises
    ------
    ParameterError
        For a parameter that is not a finite positive number.
    """
    _positive(N=N, C=C, R0=R0)
    z = 2 * N / (R0 * R0 * C)
    wg = z if omega_g is None else omega_g
    _positive(omega_g=wg)
    low = wg * (2 * N) ** 2 / (R0 * C) ** 3
    return {"z": z, "omega_g": wg, "K_pi": low * abs(1 + 1j * wg * R0), "K_pi_low": low}


def red_stability_bound(N: float, C: float, R0: float, K: float) -> float:
    """Largest RED slope ``L_red`` allowed by Hollot et al.'s sufficient condition for RED.

    ``L_red (R0 C)^3/(2N)^2 <= sqrt(omega_g^2/K^2 + 1)`` with
    ``omega_g = 0.1 min(2N/(R0^2 C), 1/R0)``, for the averaging pole ``K`` (rad/s) (Hollot et al.
    2002, their RED analysis; ``N`` the smallest and ``R0`` the largest value designed for).

    Parameters
    ----------
    N : float
        Number of TCP flows (the smallest designed for).
    C : float
        Link capacity (pkts/s).
    R0 : float
        Round-trip time (s; the largest designed for).
    K : float
        The averaging pole of RED's low-pass filter (rad/s).

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For a parameter that is not a finite positive number.
    """
    _positive(N=N, C=C, R0=R0, K=K)
    wg = 0.1 * min(2 * N / (R0 * R0 * C), 1 / R0)
    return math.sqrt((wg / K) ** 2 + 1) * (2 * N) ** 2 / (R0 * C) ** 3
