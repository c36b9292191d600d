"""DCQCN: the fluid model of Zhu et al. (2015) in the form of Zhu, Ghobadi, Misra & Padhye (2016).

Sources
-------
* Y. Zhu, H. Eran, D. Firestone, C. Guo, M. Lipshteyn, Y. Liron, J. Padhye, S. Raindel,
  M. H. Yahia and M. Zhang, "Congestion control for large-scale RDMA deployments", ACM SIGCOMM
  2015: DCQCN and its fluid model.
* Y. Zhu, M. Ghobadi, V. Misra and J. Padhye, "ECN or delay: lessons learnt from analysis of
  DCQCN and TIMELY", ACM CoNEXT 2016: the model of their Fig. 2 with Table 1's parameters, the
  fixed point (Theorem 1 and its approximation of ``p*``) and the phase margins of Fig. 3.
  Equations are labelled (1)-(5) here in the order of Fig. 2 (the published numbering could not
  be checked). For ``N`` flows with the same state:

  * (1) ``p(t)``: RED-like marking, 0 up to ``K_min``, ``p_max (q - K_min)/(K_max - K_min)`` up to
    ``K_max``, 1 above;
  * (2) ``dq/dt = N R_C(t) - C``;
  * (3) ``dalpha/dt = (g/tau') [(1 - (1 - p(t - tau*))^{tau' R_C(t - tau*)}) - alpha(t)]``;
  * (4) ``dR_T/dt = -(R_T - R_C)/tau a(t - tau*) + R_AI R_C(t - tau*) [c + e]`` (byte counter and
    timer increase events);
  * (5) ``dR_C/dt = -R_C alpha/(2 tau) a(t - tau*) + (R_T - R_C)/2 R_C(t - tau*) [b + d]``,

  with ``a = 1 - (1 - p)^{tau R_C}``, ``b = p/((1 - p)^{-B} - 1)``,
  ``d = p/((1 - p)^{-T R_C} - 1)``,
  ``c = (1 - p)^{F B} b``, ``e = (1 - p)^{F T R_C} d`` (the names of Theorem 1's proof), all at
  ``t - tau*``.

Units: time in **microseconds**, rates in **packets per microsecond**, queue and thresholds in
packets of 1000 bytes (the unit of the authors' own analysis; 1 KB = 1 packet). A 40 Gb/s link is
``C = 5`` pkts/us, ``R_AI = 40`` Mb/s is ``0.005`` pkts/us, the 10 MB byte counter ``B = 10^4``
pkts. Microseconds keep every state and rate of order one (the fixed point ``R_C = C/N`` is
``5e5`` pkts/s in seconds) and frequencies come out in rad/us.

At ``p = 0`` (queue below ``K_min``) ``b`` and ``d`` are ``0/0``; the model uses their limits
``1/B`` and ``1/(T R_C)``: without marks the rate still increases once per byte counter and
once per timer period. ``marking="ramp"`` replaces (1) by the ramp extended beyond ``K_max``
(no jump to 1): the fixed point's queue ``K_min + p*/p_max (K_max - K_min)`` and the phase
margins of the paper's Fig. 3 need
``p* > p_max`` for ``N`` beyond about 25 flows, which (1) cannot give.
"""

from __future__ import annotations

import math

import numpy as np
import sympy

from ..errors import AnalysisError, ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t

__all__ = ["dcqcn", "dcqcn_fixed_point", "dcqcn_p_approx", "DCQCN_DEFAULTS"]

#: ``p`` is mapped into ``[P_FLOOR, 1 - P_FLOOR]`` inside ``p/((1 - p)^{-n} - 1)``: the integrator
#: evaluates both sides of the ``q <= K_min`` switch, and 0/0 at ``p = 0`` (or a negative base at
#: ``p = 1``) would poison the blend. A relative change of about 1e-14/p* (1e-11 at the defaults).
P_FLOOR = 1e-14
#: Added to those denominators, which round to 0 for tiny ``p`` and rates: a huge but finite
#: value on the inactive side of the switch is multiplied by 0, an infinite one would give NaN.
TINY = 1e-300

#: The defaults of Zhu et al. (2016) (Table 1 and their analysis) in pkts, pkts/us and us;
#: is their small feedback delay (Fig. 4).
DCQCN_DEFAULTS: dict[str, float] = {
    "N": 10.0,
    "C": 5.0,
    "K_min": 5.0,
    "K_max": 200.0,
    "p_max": 0.01,
    "g": 1 / 256,
    "tau": 50.0,
    "tau_p": 55.0,
    "T": 55.0,
    "B": 1e4,
    "F": 5.0,
    "R_AI": 0.005,
    "tau_star": 4.0,
}

_META = {
    "N": ("1", "number of flows", (0, None)),
    "C": ("pkts/us", "bottleneck capacity (40 Gb/s = 5 pkts/us)", (0, None)),
    "K_min": ("pkts", "marking threshold K_min (5 KB)", (0, None)),
    "K_max": ("pkts", "marking threshold K_max (200 KB)", (0, None)),
    "p_max": ("1", "marking probability at K_max", (0, 1)),
    "g": ("1", "alpha gain", (0, 1)),
    "tau": ("us", "CNP generation timer", (0, None)),
    "tau_p": ("us", "alpha update interval tau'", (0, None)),
    "T": ("us", "rate increase timer", (0, None)),
    "B": ("pkts", "byte counter for rate increase (10 MB)", (0, None)),
    "F": ("1", "fast recovery steps", (0, None)),
    "R_AI": ("pkts/us", "additive increase step (40 Mb/s)", (0, None)),
    "tau_star": ("us", "control loop (feedback) delay tau*", (0, None)),
}


def dcqcn(marking: str = "red", **values: float) -> Model:
    """The DCQCN fluid model (Zhu et al. 2016, Fig. 2, (1)-(5)) for ``N`` identical flows.

    States ``alpha``, ``R_T`` (target rate), ``R_C`` (current rate), ``q`` (queue); all
    non-negative (projected). Signals ``p`` (marking probability), ``a``, ``a_p``, ``b``, ``d``
    (the event rates of the module notes, undelayed). ``loop_gain("p")`` cuts the loop at the
    marking probability.

    Parameters
    ----------
    marking : {"red", "ramp"}
        ``"red"``: eq (1). ``"ramp"``: the ramp continued above ``K_max`` (module notes).
    **values
        Overrides of :data:`DCQCN_DEFAULTS` (units in the module notes).

    Returns
    -------
    Model

    Raises
    ------
    ParameterError
        For an unknown marking, ``K_max <= K_min`` or an invalid value.

    Examples
    --------
    >>> import fluidnet as fn
    >>> eq = fn.models.dcqcn().equilibrium()
    >>> round(eq["R_C"], 12), round(eq["q"], 2)
    (0.5, 122.62)
    """
    if marking not in ("red", "ramp"):
        raise ParameterError(f"marking must be 'red' or 'ramp', got {marking!r}")
    alpha, R_T, R_C, q = states("alpha R_T R_C q")
    p, a, a_p, b, d = signals("p a a_p b d")
    syms = params("N C K_min K_max p_max g tau tau_p T B F R_AI tau_star")
    N, C, K_min, K_max, p_max, g, tau, tau_p, T, B, F, R_AI, ts = syms
    ramp = p_max * (q(t) - K_min) / (K_max - K_min)
    pieces = [(0, q(t) <= K_min)]
    pieces += [(ramp, q(t) <= K_max), (1, True)] if marking == "red" else [(ramp, True)]
    keep = 1 - p(t)
    # the integrator evaluates both sides of a switch: keep the p > 0 side finite at p = 0
    pe = P_FLOOR + (1 - 2 * P_FLOOR) * p(t)
    sig = {
        p: sympy.Piecewise(*pieces),
        a: 1 - keep ** (tau * R_C(t)),
        a_p: 1 - keep ** (tau_p * R_C(t)),
        # byte-counter and timer event rates; their p -> 0 limits below K_min
        b: sympy.Piecewise((1 / B, q(t) <= K_min), (pe / ((1 - pe) ** (-B) - 1 + TINY), True)),
        d: sympy.Piecewise(
            (1 / (T * R_C(t) + P_FLOOR), q(t) <= K_min),
            (pe / ((1 - pe) ** (-T * R_C(t)) - 1 + TINY), True),
        ),
    }
    late = t - ts
    keep_late = 1 - p(late)
    rate_late = R_C(late)
    increase_T = keep_late ** (F * B) * b(late) + keep_late ** (F * T * rate_late) * d(late)
    rhs = {
        alpha: g / tau_p * (a_p(late) - alpha(t)),  # (3)
        R_T: -(R_T(t) - R_C(t)) / tau * a(late) + R_AI * rate_late * increase_T,  # (4)
        R_C: -R_C(t) * alpha(t) / (2 * tau) * a(late)
        + (R_T(t) - R_C(t)) / 2 * rate_late * (b(late) + d(late)),  # (5)
        q: N * R_C(t) - C,  # (2)
    }
    pdefs = {
        sym: Param(
            DCQCN_DEFAULTS[sym.name],
            unit=_META[sym.name][0],
            doc=_META[sym.name][1],
            bounds=_META[sym.name][2],
        )
        for sym in syms
    }
    model = Model(
        rhs=rhs,
        params=pdefs,
        signals=sig,
        nonnegative=[alpha, R_T, R_C, q],
        name="dcqcn" + ("" if marking == "red" else "_ramp"),
    )
    vals = {**model.values, **values}
    if vals["K_max"] <= vals["K_min"]:
        raise ParameterError(f"K_max = {vals['K_max']:g} must exceed K_min = {vals['K_min']:g}")
    return model.with_params(**values) if values else model


def _per_events(p: float, n: float) -> float:
    """``p / ((1 - p)^{-n} - 1)``: the rate factor of an event every ``n`` unmarked packets."""
    x = -n * math.log1p(-p)
    return 0.0 if x > 700.0 else p / math.expm1(x)


def _event_terms(p: float, r: float, v: dict) -> tuple[float, ...]:
    """``a, alpha, b, c, d, e`` of Theorem 1's proof at marking ``p`` and rate ``r``."""
    lk = math.log1p(-p)
    a = -math.expm1(v["tau"] * r * lk)
    alpha = -math.expm1(v["tau_p"] * r * lk)
    b = _per_events(p, v["B"])
    d = _per_events(p, v["T"] * r)
    c = math.exp(v["F"] * v["B"] * lk) * b
    e = math.exp(v["F"] * v["T"] * r * lk) * d
    return a, alpha, b, c, d, e


def _fixed_point_lhs(p: float, r: float, v: dict) -> float:
    """LHS - RHS of the fixed-point equation of Zhu et al. (2016), Theorem 1, at ``p``, ``r``."""
    a, alpha, b, c, d, e = _event_terms(p, r, v)
    if (b + d) * (c + e) == 0.0:
        return math.inf
    return a * a * alpha / ((b + d) * (c + e)) - v["tau"] ** 2 * v["R_AI"] * r


def dcqcn_fixed_point(**values: float) -> dict[str, float]:
    """The fixed point of Zhu et al. (2016), Theorem 1: ``R_C = C/N`` and ``p*``.

    ``p*`` solves ``a^2 alpha / ((b + d)(c + e)) = tau^2 R_AI R_C`` (bracketed and refined by
    Brent's method on ``(0, 1)``); then ``alpha* = 1 - (1 - p*)^{tau' R_C}``,
    ``R_T* = R_C (1 + (c + e) tau R_AI / a)`` and ``q*`` from the marking ramp (which may exceed
    ``K_max``, see :func:`dcqcn`). Independent of :func:`dcqcn`'s model (plain floats).

    Parameters
    ----------
    **values
        Overrides of :data:`DCQCN_DEFAULTS` (units in the module notes).

    Returns
    -------
    dict
        ``p``, ``q`` (pkts), ``R_C``, ``R_T`` (pkts/us), ``alpha``.

    Raises
    ------
    ParameterError
        For an unknown or invalid parameter.
    AnalysisError
        When the fixed-point equation has no root in ``(0, 1)``.
    """
    from ..brent import brentq

    unknown = set(values) - set(DCQCN_DEFAULTS)
    if unknown:
        raise ParameterError(f"unknown DCQCN parameters {sorted(unknown)}")
    v = {**DCQCN_DEFAULTS, **values}
    for k, x in v.items():
        lo, hi = _META[k][2]
        if not math.isfinite(x) or x <= 0 or (hi is not None and x > hi):
            raise ParameterError(f"{k} = {x!r} must be finite, > 0 and within {_META[k][2]}")
    r = v["C"] / v["N"]

    def f(x: float) -> float:
        with np.errstate(all="ignore"):
            return float(np.float64(_fixed_point_lhs(x, r, v)))

    grid = np.logspace(-12, math.log10(0.999), 400)
    vals = [f(x) for x in grid]
    k = next((i for i in range(len(grid) - 1) if vals[i] < 0 < vals[i + 1] < math.inf), None)
    if k is None:
        raise AnalysisError(f"the fixed-point equation has no root for p in [1e-12, 0.999] at {v}")
    p = brentq(f, grid[k], grid[k + 1], xtol=1e-300, rtol=1e-15)
    a, alpha, b, c, d, e = _event_terms(p, r, v)
    return {
        "p": p,
        "q": p / v["p_max"] * (v["K_max"] - v["K_min"]) + v["K_min"],
        "R_C": r,
        "R_T": r * (1 + (c + e) * v["tau"] * v["R_AI"] / a),
        "alpha": alpha,
    }


def dcqcn_p_approx(**values: float) -> float:
    """The printed approximation of ``p*`` (Zhu et al. 2016, after Theorem 1): the cube root of
    ``R_AI N^2/(tau' C^2) (1/B + N/(T C))^2`` (Taylor expansion of the fixed-point equation).

    Parameters
    ----------
    **values
        Overrides of :data:`DCQCN_DEFAULTS` (units in the module notes).

    Returns
    -------
    float
    """
    v = {**DCQCN_DEFAULTS, **values}
    N, C = v["N"], v["C"]
    return (v["R_AI"] * N * N / (v["tau_p"] * C * C) * (1 / v["B"] + N / (v["T"] * C)) ** 2) ** (
        1 / 3
    )
