"""Generalized TCP congestion avoidance under Assured-Service "ORED" marking.

Source: A. Misra, J. Baras and T. Ott, "Generalized TCP Congestion Avoidance and its Effect on
Bandwidth Sharing and Variability", IEEE Globecom 2000.

The generalized window law (their eqs (1)-(2)): on each ACK the window ``W`` (in segments)
grows by ``c1 W^alpha`` if the ACK is not marked and shrinks by ``c2 W^beta`` if it is.
``(alpha, beta, c1, c2) = (-1, 1, 1, 1/2)`` is standard TCP ("SAIMD" in the paper); ``alpha = 0,
beta = 1`` is what they call AIMD. ORED marks only *out*-of-profile packets, with the RED
profile ``f_mark(Q)`` of Sec II; a flow whose rate ``x`` exceeds its assured rate ``R`` has the
fraction ``gamma = (x - R)/x`` of its packets tagged *out* (their eq (7)), so it sees the
marking probability ``p = gamma f_mark(Q)``.

Library models here:

:func:`ored_marking`
    ``f_mark(Q)``, the RED profile of Sec II (sympy)
:func:`assured_service_fixed_point`
    the mean-value fixed point of Sec III, eqs (4)-(9), solved as the paper does (inner root per
    flow, outer search on Q)
:func:`assured_service`
    the multi-flow mean-field DDE whose equilibrium is that fixed point (not in the paper; its
    zero-drift conditions are (4) and (9))
:func:`generalized_tcp_pipe`
    one flow that keeps its pipe full (Sec IV-A, eqs (14)-(16)) as a delay equation
:func:`generalized_tcp_chain`
    the per-ACK Markov chain (17) of Sec IV-A, as a :class:`fluidnet.WindowChain`

Misprints of the paper fixed here (each is also in the paper's README):

* eq (7): printed ``gamma_i = (rho_i - R_i)/R_i``; the fraction of packets above the profile is
  ``(rho_i - R_i)/rho_i``, which is what the paper's own right-hand side of (7) and eq (14) say.
* eqs (8), (12): printed ``(1 - R(RTT + Q/C)/(W M) * f_mark)^{-1}``; the marking probability is
  ``gamma f_mark``, so the bracket is ``[(1 - R(RTT + Q/C)/(W M)) f_mark]^{-1}`` (the text
  before (8) substitutes exactly this ``p_i`` into (4)).
* eq (13): printed ``W + g/g'``; Newton's step is ``W - g/g'`` (the root lies to the right of the
  starting point, where ``g > 0`` and ``g' < 0``). We use a bracketing method instead (Brent),
  since for standard TCP ``beta - alpha = 2`` and Newton may overshoot, as the paper notes.
* eq (16): the middle case lacks its lower bound ``W >= min_th + C RTT``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ..errors import AnalysisError, ParameterError
from ..parsing import as_expression
from ..symbolic import Model, Param, params, states, t

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..stochastic import WindowChain

__all__ = [
    "ored_marking",
    "assured_service_fixed_point",
    "AssuredServiceFixedPoint",
    "assured_service",
    "generalized_tcp_pipe",
    "generalized_tcp_chain",
]


def ored_marking(q: Any, min_th: Any, max_th: Any, p_max: Any) -> sympy.Expr:
    """The RED marking profile ``f_mark(Q)`` of ORED (Misra, Baras & Ott 2000, Sec II).

    ``0`` below ``min_th``, ``p_max (Q - min_th)/(max_th - min_th)`` on the ramp, ``p_max`` from
    ``max_th`` on (a sympy ``Piecewise``; arguments may be numbers or expressions).

    Parameters
    ----------
    q : number or sympy.Expr
        The (averaged) queue ``Q``.
    min_th, max_th : number or sympy.Expr
        The ramp's thresholds.
    p_max : number or sympy.Expr
        The marking probability at ``max_th``.

    Returns
    -------
    sympy.Expr
    """
    q, lo, hi, pm = (_expression(a, "ored_marking") for a in (q, min_th, max_th, p_max))
    return sympy.Piecewise((0, q < lo), (pm * (q - lo) / (hi - lo), q < hi), (pm, True))


def _expression(value: Any, where: str) -> sympy.Expr:
    e = as_expression(value, where=where)
    if not isinstance(e, sympy.Expr):
        raise ParameterError(f"{where}: {value!r} is not a number or an expression")
    return e


def _law_params(alpha, beta, c1, c2) -> tuple[float, float, float, float]:
    vals = [float(v) for v in (alpha, beta, c1, c2)]
    if not all(math.isfinite(v) for v in vals):
        raise ParameterError(f"alpha, beta, c1, c2 must be finite, got {vals}")
    alpha, beta, c1, c2 = vals
    if not alpha < beta:
        raise ParameterError(
            f"alpha = {alpha:g} must be < beta = {beta:g}: otherwise increase/decrease does "
            "not vanish as W grows and the window is not held (Sec II)"
        )
    if not c1 > 0:
        raise ParameterError(f"c1 = {c1:g} must be positive")
    if not c2 > 0:
        raise ParameterError(f"c2 = {c2:g} must be positive")
    if beta == 1 and not c2 < 1:
        raise ParameterError(f"c2 = {c2:g} must be < 1 with beta = 1 (W -> (1 - c2) W)")
    return alpha, beta, c1, c2


def _ored_params(min_th, max_th, p_max) -> tuple[float, float, float]:
    min_th, max_th, p_max = float(min_th), float(max_th), float(p_max)
    if not (0 <= min_th < max_th < math.inf):
        raise ParameterError(f"need 0 <= min_th < max_th, got min_th={min_th:g}, max_th={max_th:g}")
    if not 0 < p_max <= 1:
        raise ParameterError(f"p_max = {p_max:g} must lie in (0, 1]")
    return min_th, max_th, p_max


# ------------------------------------------------------------------------- Sec III fixed point
@dataclass(frozen=True)
class AssuredServiceFixedPoint:
    """The mean-value fixed point of Misra, Baras & Ott (2000), Sec III.

    Attributes
    ----------
    queue : float
        ``Q*`` (bytes).
    windows : ndarray
        ``W_i* = h_i(Q*)`` (segments).
    throughputs : ndarray
        ``rho_i = W_i M_i / (RTT_i + Q*/C)`` (bytes/s), eq (6).
    out_fractions : ndarray
        ``gamma_i``, eq (7) (corrected).
    marking : ndarray
        ``p_i = gamma_i f_mark(Q*)``.
    f_mark : float
        ``f_mark(Q*)``.
    """

    queue: float
    windows: np.ndarray
    throughputs: np.ndarray
    out_fractions: np.ndarray
    marking: np.ndarray
    f_mark: float


def assured_service_fixed_point(
    *,
    C: float,
    R: ArrayLike,
    RTT: ArrayLike,
    M: ArrayLike,
    alpha: float,
    beta: float,
    c1: float,
    c2: float,
    min_th: float,
    max_th: float,
    p_max: float,
) -> AssuredServiceFixedPoint:
    """Mean windows, queue and throughputs of N generalized TCPs at an ORED queue (Sec III).

    Solves, as the paper does (Sec III-B), the zero-drift condition of every flow (eq (8),
    corrected) for ``W_i = h_i(Q)`` at a given queue, and the full-link condition (9)
    ``sum_i h_i(Q) M_i / (Q + RTT_i C) = 1`` for ``Q``. The inner root is bracketed between the
    pole ``W = R_i (RTT_i + Q/C)/M_i`` and a doubling upper bound and found by Brent's method;
    the outer by Brent's method on ``(min_th, Q_hi)``, ``Q_hi`` doubled until (9) changes sign.

    Parameters
    ----------
    C : float
        Link capacity (bytes/s), with ``C > sum R`` (eq (3)).
    R, RTT, M : sequences of float
        Assured rates (bytes/s), round-trip propagation times (s), segment sizes (bytes).
    alpha, beta, c1, c2 : float
        The window law, ``alpha < beta``, ``c1, c2 > 0``.
    min_th, max_th : float
        ORED thresholds (bytes).
    p_max : float
        Maximum marking probability, in (0, 1].

    Returns
    -------
    AssuredServiceFixedPoint

    Raises
    ------
    ParameterError
        For a bad parameter, flows given with different lengths, or ``C <= sum R`` (then
        marking starts before the flows reach their profiles, a case the paper leaves to its
        ref [14]).
    """
    from ..brent import brentq

    alpha, beta, c1, c2 = _law_params(alpha, beta, c1, c2)
    min_th, max_th, p_max = _ored_params(min_th, max_th, p_max)
    R, RTT, M = (np.asarray(x, dtype=float).ravel() for x in (R, RTT, M))
    if not (R.size == RTT.size == M.size >= 1):
        raise ParameterError(
            f"R, RTT, M need one entry per flow, got {R.size}, {RTT.size}, {M.size}"
        )
    for name, arr in (("R", R), ("RTT", RTT), ("M", M)):
        if not np.all(np.isfinite(arr) & (arr > 0)):
            raise ParameterError(f"{name} = {arr.tolist()} must be positive and finite")
    C = float(C)
    if not (math.isfinite(C) and C > R.sum()):
        raise ParameterError(
            f"C = {C:g} bytes/s must exceed the sum of assured rates {R.sum():g} (eq (3))"
        )

    def fm(Q: float) -> float:  # ored_marking, evaluated directly (called ~1e4 times)
        if Q < min_th:
            return 0.0
        return p_max * (Q - min_th) / (max_th - min_th) if Q < max_th else p_max

    ratio = c2 / c1

    def h(Q: float, i: int) -> float:
        f = float(fm(Q))
        pole = R[i] * (RTT[i] + Q / C) / M[i]

        def g(W: float) -> float:  # eq (12), corrected
            return 1.0 / ((1.0 - pole / W) * f) - 1.0 - ratio * W ** (beta - alpha)

        lo = pole * (1 + 1e-12)
        hi = 2 * pole + 10
        while g(hi) > 0:
            hi *= 2
        return brentq(g, lo, hi, xtol=1e-300, rtol=1e-15)

    def excess(Q: float) -> float:  # eq (9) minus 1
        return sum(h(Q, i) * M[i] / (Q + RTT[i] * C) for i in range(R.size)) - 1.0

    q_lo = min_th * (1 + 1e-12) + 1e-12
    q_hi = max(2.0 * max_th, 1.0)
    while excess(q_hi) > 0:
        q_hi *= 2
        if q_hi > 1e15:
            raise AnalysisError("no queue satisfies the full-link condition (9) up to 1e15 bytes")
    Q = brentq(excess, q_lo, q_hi, xtol=1e-300, rtol=1e-15)
    W = np.array([h(Q, i) for i in range(R.size)])
    T = RTT + Q / C
    rho = W * M / T
    gamma = 1 - R * T / (W * M)
    f = float(fm(Q))
    return AssuredServiceFixedPoint(Q, W, rho, gamma, gamma * f, f)


# ------------------------------------------------------------------------- multi-flow DDE
def assured_service(n_flows: int = 2, **values: float) -> Model:
    """N generalized TCPs sharing an ORED queue: the mean-field delay model.

    Not written in the paper, whose Sec III uses only its zero-drift conditions; this is the
    fluid model whose equilibrium is exactly that fixed point (eq (4) per flow, eq (9) for the
    queue). States ``W1 … WN`` (segments) and ``Q`` (bytes, projected at 0). With
    ``T_i(t) = RTT_i + Q(t)/C`` and the values seen one round trip back (subscript ``d``,
    ``t - T_i(t)``):

    * ``dW_i/dt = W_i,d / T_i,d [c1 W_i^alpha (1 - p_i,d) - c2 W_i^beta p_i,d]`` — ACKs arrive at
      the rate the window had one round trip ago, each changes the window by eqs (1)-(2);
    * ``p_i = gamma_i f_mark(Q)``, ``gamma_i = max(0, 1 - R_i T_i/(W_i M_i))`` (eq (7) corrected);
    * ``dQ/dt = sum_i W_i M_i / T_i - C`` (bytes/s; an infinite buffer, as the analysis
      assumes).

    With ``(alpha, beta, c1, c2) = (-1, 1, 1, 1/2)`` and the delayed window in the increase term
    replaced by the current one this is the TCP model of Misra, Gong & Towsley (2000).

    Defaults: the paper's Experiment B with parameter set 1 — ``R = 1.5 Mb/s`` each,
    ``RTT = 20, 100 ms``, ``M = 512`` bytes, ``C = 6 Mb/s``, thresholds 20/100 packets
    (10240/51200 bytes), ``p_max = 0.01``.

    Parameters
    ----------
    n_flows : int, default 2
    **values
        Overrides: ``alpha, beta, c1, c2, C, min_th, max_th, p_max`` and per flow ``R1, RTT1,
        M1, R2, ...``.
    """
    if isinstance(n_flows, bool) or not isinstance(n_flows, int) or n_flows < 1:
        raise ParameterError(f"n_flows = {n_flows!r} must be a positive integer")
    W = states(" ".join(f"W{i + 1}" for i in range(n_flows)))
    W = W if isinstance(W, tuple) else (W,)
    Q = states("Q")
    alpha, beta, c1, c2, C, min_th, max_th, p_max = params("alpha beta c1 c2 C min_th max_th p_max")
    rhs = {}
    pars: dict[Any, Any] = {
        alpha: Param(-1.0, unit="1", doc="increase exponent: +c1 W^alpha per unmarked ACK"),
        beta: Param(1.0, unit="1", doc="decrease exponent: -c2 W^beta per marked ACK"),
        c1: Param(1.0, unit="segments", doc="increase coefficient", bounds=(0, None)),
        c2: Param(0.5, unit="segments", doc="decrease coefficient", bounds=(0, None)),
        C: Param(6e6 / 8, unit="bytes/s", doc="link capacity (6 Mb/s)", bounds=(0, None)),
        min_th: Param(
            20 * 512.0, unit="bytes", doc="ORED min threshold (20 packets)", bounds=(0, None)
        ),
        max_th: Param(
            100 * 512.0, unit="bytes", doc="ORED max threshold (100 packets)", bounds=(0, None)
        ),
        p_max: Param(0.01, unit="1", doc="ORED maximum marking probability", bounds=(0, 1)),
    }
    defaults_rtt = [0.02, 0.1]
    rates = []
    for i, Wi in enumerate(W):
        R, RTT, M = params(f"R{i + 1} RTT{i + 1} M{i + 1}")
        pars[R] = Param(
            1.5e6 / 8, unit="bytes/s", doc=f"assured rate of flow {i + 1}", bounds=(0, None)
        )
        pars[RTT] = Param(
            defaults_rtt[i] if i < 2 else 0.02,
            unit="s",
            doc=f"round-trip propagation time of flow {i + 1}",
            bounds=(0, None),
        )
        pars[M] = Param(512.0, unit="bytes", doc=f"segment size of flow {i + 1}", bounds=(0, None))
        T = RTT + Q(t) / C
        Td = RTT + Q(t - T) / C
        Wd = Wi(t - T)
        gamma_d = sympy.Max(0, 1 - R * Td / (Wd * M))
        p_d = gamma_d * ored_marking(Q(t - T), min_th, max_th, p_max)
        rhs[Wi] = Wd / Td * (c1 * Wi(t) ** alpha * (1 - p_d) - c2 * Wi(t) ** beta * p_d)
        rates.append(Wi(t) * M / T)
    rhs[Q] = sum(rates) - C
    m = Model(rhs, pars, nonnegative=[Q], name=f"assured_service_{n_flows}")
    return m.with_params(**values) if values else m


# ------------------------------------------------------------------------- single flow, Sec IV
def generalized_tcp_pipe(**values: float) -> Model:
    """One generalized TCP that keeps its pipe full, as a delay equation (Sec IV-A regime).

    Under eq (15) (``W = Q + C RTT``) ACKs return at the link rate ``C`` and the marking
    probability is the window's, eq (16): ``p(W) = gamma f_mark(W - bdp)``, ``bdp = C RTT``.
    The mean drift of eqs (1)-(2) per ACK, times ``C``, with the mark decided one round trip
    ``tau = W/C`` earlier, gives

        ``dW/dt = C [c1 W^alpha (1 - p(W(t - tau))) - c2 W^beta p(W(t - tau))]``.

    Not in the paper (whose Sec IV is stochastic); its equilibrium is the zero-drift window
    (eq (4) with eq (16)). Defaults: the paper's Sec IV set — ``alpha, beta, c1, c2 = -1, 1, 1,
    0.5``, thresholds 15/95 segments, ``p_max = 0.02``, ``gamma = (C - R)/C = 0.75``, ``bdp = 5``
    segments as printed, ``C = 3 Mb/s`` in 512-byte segments (732.4 segments/s; only the time
    scale depends on ``C``). Valid while ``W >= bdp``.

    Parameters
    ----------
    **values
        Overrides of the defaults of ``alpha``, ``beta``, ``c1``, ``c2``, ``C``, ``bdp``,
        ``min_th``, ``max_th``, ``p_max``, ``gamma``.

    Returns
    -------
    Model
    """
    (W,) = (states("W"),)
    alpha, beta, c1, c2, C, bdp, min_th, max_th, p_max, gamma = params(
        "alpha beta c1 c2 C bdp min_th max_th p_max gamma"
    )
    tau = W(t) / C
    p_d = gamma * ored_marking(W(t - tau) - bdp, min_th, max_th, p_max)
    m = Model(
        {W: C * (c1 * W(t) ** alpha * (1 - p_d) - c2 * W(t) ** beta * p_d)},
        {
            alpha: Param(-1.0, unit="1", doc="increase exponent"),
            beta: Param(1.0, unit="1", doc="decrease exponent"),
            c1: Param(1.0, unit="segments", doc="increase coefficient", bounds=(0, None)),
            c2: Param(0.5, unit="segments", doc="decrease coefficient", bounds=(0, None)),
            C: Param(3e6 / (8 * 512), unit="segments/s", doc="link rate", bounds=(0, None)),
            bdp: Param(5.0, unit="segments", doc="bandwidth-delay product C RTT", bounds=(0, None)),
            min_th: Param(15.0, unit="segments", doc="ORED min threshold", bounds=(0, None)),
            max_th: Param(95.0, unit="segments", doc="ORED max threshold", bounds=(0, None)),
            p_max: Param(0.02, unit="1", doc="ORED maximum marking probability", bounds=(0, 1)),
            gamma: Param(0.75, unit="1", doc="out fraction (C - R)/C, eq (14)", bounds=(0, 1)),
        },
        name="generalized_tcp_pipe",
    )
    return m.with_params(**values) if values else m


def generalized_tcp_chain(
    alpha: float = -1.0,
    c1: float = 1.0,
    c2: float = 0.5,
    *,
    beta: float = 1.0,
    bdp: float = 5.0,
    min_th: float = 15.0,
    max_th: float = 95.0,
    p_max: float = 0.02,
    gamma: float = 0.75,
) -> WindowChain:
    """The per-ACK window chain of one generalized TCP at an ORED queue, eq (17).

    ``W -> W + c1 W^alpha`` with probability ``1 - p(W)`` and ``W -> W - c2 W^beta`` with
    probability ``p(W) = gamma f_mark(W - bdp)`` (eq (16), the pipe-full relation (15)),
    nothing marked below ``W* = min_th + bdp``. Defaults: the paper's Sec IV-C baseline (standard
    TCP, thresholds 15/95 segments, ``p_max = 0.02``, ``gamma = 0.75``, ``bdp = 5`` as printed).

    Parameters
    ----------
    alpha, c1 : float
        Increase ``c1 W^alpha`` per unmarked ACK.
    c2 : float
        Decrease ``c2 W^beta`` per marked ACK.
    beta : float
        The decrease exponent (1: the PDMP solver's form).
    bdp : float
        Bandwidth-delay product ``C RTT`` (segments).
    min_th, max_th, p_max : float
        ORED's thresholds (segments) and largest marking probability
        (:func:`ored_marking`).
    gamma : float
        The marked share of the profile, ``(C - R)/C``.

    Returns
    -------
    fluidnet.WindowChain
        With parameters ``alpha, c1, c2, bdp, min_th, max_th, p_max, gamma`` (``beta`` is fixed
        in the decrease law, ``c2 W`` for ``beta = 1``, so that the PDMP solver applies).

    Raises
    ------
    ParameterError
        For ``alpha >= beta``, ``c1 <= 0``, ``c2`` outside ``(0, 1)`` (``beta = 1``), thresholds
        not ordered, ``p_max`` outside ``(0, 1]``, ``gamma`` outside ``(0, 1]`` or ``bdp < 0``.
    """

    from ..stochastic import WindowChain

    alpha, beta, c1, c2 = _law_params(alpha, beta, c1, c2)
    min_th, max_th, p_max = _ored_params(min_th, max_th, p_max)
    gamma, bdp = float(gamma), float(bdp)
    if not 0 < gamma <= 1:
        raise ParameterError(f"gamma = {gamma:g} must lie in (0, 1] (eq (14): (C - R)/C)")
    if not (math.isfinite(bdp) and bdp >= 0):
        raise ParameterError(f"bdp = {bdp:g} must be finite and >= 0")
    w = sympy.Symbol("w", positive=True)
    a, k1, k2, B, lo, hi, pm, g = sympy.symbols("alpha c1 c2 bdp min_th max_th p_max gamma")
    decrease = k2 * w if beta == 1 else k2 * w ** sympy.Float(beta)
    return WindowChain(
        increase=k1 * w**a,
        decrease=decrease,
        mark=g * ored_marking(w - B, lo, hi, pm),
        window=w,
        params={a: alpha, k1: c1, k2: c2, B: bdp, lo: min_th, hi: max_th, pm: p_max, g: gamma},
        name="generalized TCP, eq (17)",
    )
