"""TCP Reno with RED (or gentle RED) queues: the comparison model of Zimmermann (2005), Chapter 6.

Zimmermann's dissertation (2005) compares SBRM against TCP Reno + RED using the model of Low,
Paganini, Wang, Adlakha and Doyle (2002), which it cites but does not restate. The
equations below are our reconstruction of that model; their steady state is Table 5.5.1 and
their linearization is (6.5.22) (with the loop delay of M2):

* window: ``W' = x(t - RTT(t)) [(1 - p(t))/W(t) - p(t) W(t)/2]`` (ACKs arrive at the delayed rate;
  an unmarked ACK adds ``1/W``, a marked one halves the window),
* rate ``x = W / RTT`` with ``RTT(t) = d + b(t)/c``, queue ``b' = N x(t - tau^f) - c``
  projected at 0,
* RED average ``r' = alpha c (b - r)`` (EWMA with per-packet weight ``alpha``, pole ``alpha c``),
* marking ``m(r)``: 0 below ``th_min``, ``rho (r - th_min)`` up to ``p_max`` at ``th_max``
  (``rho = p_max / (th_max - th_min)``); above ``th_max`` gentle RED rises linearly to 1 at
  ``2 th_max``, plain RED marks everything,
* the source sees ``p(t) = m(t - tau^b)``.

Conventions (M3-M6; labels M1, M2, ... are the misprints and conventions listed in
``papers/sbrm/README.md``): ``tau^f = tau^b = RTT(t)/2``; ``alpha = 1e-4`` (missing from
Table 6.6.1; it is the value that reproduces Table 6.6.2); c in pkts/s. The steady state is
``p* = 2/(2 + W*^2)``, ``W* = c RTT*/N``, ``b* = th_min + p*/rho`` with ``RTT* = d + b*/c``: a fixed
point (Table 5.5.1, whose undefined ``beta`` is ``rho``, M13).
"""

from __future__ import annotations

import math
from typing import Any

import sympy

from ..errors import AnalysisError, ParameterError
from ..linear.delaytf import DelayTF
from ..linear.quasipoly import QuasiPolynomial
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t

__all__ = [
    "reno_red",
    "reno_red_steady_state",
    "reno_red_printed_loop_gain",
    "red_marking",
    "PAPER_DEFAULTS",
]

#: Table 6.6.1 (Reno+RED rows), alpha = 1e-4 (M3), N = 30, c = 10 pkts/ms, d = 62 ms.
PAPER_DEFAULTS: dict[str, float] = {
    "N": 30.0,
    "c": 10_000.0,
    "d": 0.062,
    "th_min": 50.0,
    "th_max": 550.0,
    "p_max": 0.1,
    "alpha": 1e-4,
    "split": 0.5,
}

_META = {
    "N": ("1", "number of Reno flows", (0, None)),
    "c": ("pkts/s", "link capacity (Table 6.6.2 prints pkts/ms)", (0, None)),
    "d": ("s", "round-trip propagation delay (RTT* = d + b*/c)", (0, None)),
    "th_min": ("pkts", "RED lower threshold", (0, None)),
    "th_max": ("pkts", "RED upper threshold", (0, None)),
    "p_max": ("1", "RED marking probability at th_max", (0, 1)),
    "alpha": ("1/pkt", "RED EWMA weight per packet (filter pole alpha c)", (0, 1)),
    "split": ("1", "forward share of the RTT, tau^f/RTT", (0, 1)),
}


def red_marking(r, th_min, th_max, p_max, gentle: bool = True):
    """RED marking probability of the average queue ``r`` (sympy or numbers).

    Linear from 0 at ``th_min`` to ``p_max`` at ``th_max``; above it gentle RED rises linearly to
    1 at ``2 th_max`` and plain RED jumps to 1.
    """
    rho = p_max / (th_max - th_min)
    ramp = sympy.Min(sympy.Max(rho * (r - th_min), 0), p_max)
    if gentle:
        return ramp + sympy.Min(sympy.Max((1 - p_max) * (r - th_max) / th_max, 0), 1 - p_max)
    return sympy.Piecewise((ramp, r <= th_max), (1, True))


def reno_red(gentle: bool = True, **values: float) -> Model:
    """TCP Reno flows on one RED link (Zimmermann (2005) Chapter 6, after Low et al. (2002)).

    States ``W`` (window, pkts), ``b`` (queue, pkts, projected at 0) and ``r`` (RED average
    queue, pkts). Signals ``rtt``, ``x``, ``m`` and ``p = m(t - tau^b)``; ``loop_gain("p")`` is
    (6.5.22) with the full-RTT loop delay (misprint M2).

    Parameters
    ----------
    gentle : bool
        Gentle RED (Table 6.6.1: true). It changes nothing in the linearization while
        ``th_min < b* < th_max`` (M27), only large nonlinear oscillations.
    **values
        Overrides of :data:`PAPER_DEFAULTS`: ``N``, ``c`` [pkts/s], ``d`` [s], ``th_min``,
        ``th_max`` [pkts], ``p_max``, ``alpha``, ``split``.

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        For ``th_max <= th_min`` or an invalid value.

    Examples
    --------
    >>> import fluidnet as fn
    >>> eq = fn.models.reno_red(N=30, c=10_000, d=0.062).equilibrium()
    >>> round(eq["b"], 1), round(eq["W"], 2)
    (68.9, 22.96)
    """
    W, b, r = states("W b r")
    rtt, x, m, p = signals("rtt x m p")
    N, c, d, th_min, th_max, p_max, alpha, split = params("N c d th_min th_max p_max alpha split")
    pdefs: dict[Any, Param] = {
        sym: Param(
            PAPER_DEFAULTS[sym.name],
            unit=_META[sym.name][0],
            doc=_META[sym.name][1],
            bounds=_META[sym.name][2],
        )
        for sym in (N, c, d, th_min, th_max, p_max, alpha, split)
    }
    model = Model(
        rhs={
            W: x(t - rtt(t)) * ((1 - p(t)) / W(t) - p(t) * W(t) / 2),
            b: N * x(t - split * rtt(t)) - c,
            r: alpha * c * (b(t) - r(t)),
        },
        params=pdefs,
        signals={
            rtt: d + b(t) / c,
            x: W(t) / rtt(t),
            m: red_marking(r(t), th_min, th_max, p_max, gentle),
            p: m(t - (1 - split) * rtt(t)),
        },
        nonnegative=[b],
        name="reno_red" + ("" if gentle else "_plain"),
    )
    vals = {**model.values, **values}
    if vals["th_max"] <= vals["th_min"]:
        raise ParameterError(f"th_max = {vals['th_max']:g} must exceed th_min = {vals['th_min']:g}")
    return model.with_params(**values) if values else model


def reno_red_steady_state(
    N: float,
    c: float,
    d: float,
    *,
    th_min: float = 50.0,
    th_max: float = 550.0,
    p_max: float = 0.1,
) -> dict[str, float]:
    """Table 5.5.1 (Reno+RED column) for N identical flows: the fixed point in ``p*``.

    ``p = 2/(2 + W^2)`` with ``W = c RTT/N``, ``RTT = d + b/c`` and ``b = th_min + p/rho``
    (RED between its thresholds), solved for ``p`` by bracketing.

    Returns
    -------
    dict
        ``p``, ``b`` [pkts], ``rtt`` [s], ``x`` [pkts/s], ``W`` [pkts].

    Raises
    ------
    ParameterError
        For non-positive N, c, p_max, negative d or th_min, or ``th_max <= th_min``.
    AnalysisError
        When the fixed point lies above ``th_max`` (RED is not between its thresholds, the
        footnote of Table 5.5.1).
    """
    from ..brent import brentq  # scipy imported there when called: keeps `import fluidnet` light

    for k, v in dict(N=N, c=c, p_max=p_max).items():
        if not math.isfinite(v) or v <= 0:
            raise ParameterError(f"{k} = {v!r} must be finite and > 0")
    for k, v in dict(d=d, th_min=th_min).items():
        if not math.isfinite(v) or v < 0:
            raise ParameterError(f"{k} = {v!r} must be finite and >= 0")
    if th_max <= th_min:
        raise ParameterError(f"th_max = {th_max:g} must exceed th_min = {th_min:g}")
    rho = p_max / (th_max - th_min)

    def gap(p: float) -> float:
        rtt = d + (th_min + p / rho) / c
        return p - 2.0 / (2.0 + (c * rtt / N) ** 2)

    if gap(p_max) < 0:
        raise AnalysisError(
            f"the Reno+RED fixed point for N={N:g}, c={c:g}, d={d:g} needs p* > p_max = "
            f"{p_max:g}: the average queue would exceed th_max = {th_max:g}"
        )
    p = brentq(gap, 0.0, p_max, xtol=1e-16, rtol=1e-15)
    b = th_min + p / rho
    rtt = d + b / c
    return {"p": p, "b": b, "rtt": rtt, "x": c / N, "W": c * rtt / N}


def reno_red_printed_loop_gain(
    N: float,
    c: float,
    d: float,
    *,
    th_min: float = 50.0,
    th_max: float = 550.0,
    p_max: float = 0.1,
    alpha: float = 1e-4,
    delay: str = "rtt",
    split: float = 0.5,
) -> DelayTF:
    """The Reno+RED loop gain (6.5.22) as a :class:`~fluidnet.DelayTF`.

    ``L(s) = N / (RTT* p* (RTT* s + p* W*)) * alpha c rho / (s + alpha c)
    / (s + (N/c)(W*/RTT*^2) e^{-tau^f s}) * e^{-T s}`` at :func:`reno_red_steady_state`.

    Parameters
    ----------
    delay : {"rtt", "printed"}
        The loop delay ``T``: ``"rtt"`` uses ``RTT*`` (misprint M2; the only choice that reproduces
        Table 6.6.2 and the one the model's linearization gives), ``"printed"`` uses the printed
        ``tau^f``.

    Raises
    ------
    ParameterError
        For an unknown ``delay`` or invalid parameters.
    """
    if delay not in ("rtt", "printed"):
        raise ParameterError(f"delay must be 'rtt' or 'printed', got {delay!r}")
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha = {alpha!r} must lie in (0, 1)")
    ss = reno_red_steady_state(N, c, d, th_min=th_min, th_max=th_max, p_max=p_max)
    R, p, Wst = ss["rtt"], ss["p"], ss["W"]
    rho = p_max / (th_max - th_min)
    tf = split * R
    loop_delay = R if delay == "rtt" else tf
    num = QuasiPolynomial([(loop_delay, [N * alpha * c * rho])])
    source = QuasiPolynomial([R * p * R, R * p * p * Wst])  # RTT* p* (RTT* s + p* W*)
    red = QuasiPolynomial([1.0, alpha * c])
    buffer = QuasiPolynomial({0.0: [1.0, 0.0], tf: [N / c * Wst / R**2]})
    return DelayTF(num, source * red * buffer)
