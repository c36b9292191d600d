"""Closed-form stationary law for a constant marking probability (the test oracle).

With ``increase(w) = c1 w^alpha`` (``alpha < 1``), a constant marking probability ``p`` and the
decrease ``w -> (1 - c2) w``, equation (1) of :mod:`fluidnet.stochastic.pdmp` has an exact
solution. In ``u = lam w^nu`` (``nu = 1 - alpha``, ``lam = p / (c1 nu)``) it reads
``G'(u) + G(u) = G(r u)`` with ``G = 1 - F`` and ``r = (1 - c2)^{-nu}``, solved by

    ``1 - F(w) = sum_k a_k exp(-r^k lam w^nu)``,  ``a_k = a_{k-1} / (1 - r^k)``,  ``sum a_k = 1``,

so that every moment, of any real order ``q > -nu``, is a series:

    ``E[W^q] = Gamma(1 + q/nu) lam^{-q/nu} sum_k a_k (1 - c2)^{k q}``.

This generalizes Ott, Kemperman & Mathis (1996) (``alpha = -1``, ``c2 = 1/2``: ``E[W] sqrt(p) =
1.52691``); Misra, Baras & Ott (2000) quote its constant-``p`` consequences from Ott's "ECN
protocols and the TCP paradigm". The law is per ACK: with constant ``p`` subjective time is a
fixed multiple of the ACK count. Coefficients alternate in sign and cancel: they are summed in
``mpmath`` with enough digits for the cancellation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import OptionError, ParameterError
from ..overrides import parameter_value
from .distribution import WindowDistribution

__all__ = ["constant_mark_distribution", "constant_mark_moment", "constant_mark_tail"]


def _check(alpha: float, c1: float, c2: float, p: float) -> tuple[float, float, float, float]:
    vals = {}
    for name, v in (("alpha", alpha), ("c1", c1), ("c2", c2), ("p", p)):
        vals[name] = parameter_value(name, v, finite=False)
        if not math.isfinite(vals[name]):
            raise ParameterError(f"{name} = {v!r} must be finite")
    if not vals["alpha"] < 1:
        raise ParameterError(
            f"alpha = {alpha!r} must be < 1: with alpha >= 1 the increase outgrows the "
            "multiplicative decrease and the window has no stationary law"
        )
    if not vals["c1"] > 0:
        raise ParameterError(f"c1 = {c1!r} must be positive")
    if not 0 < vals["c2"] < 1:
        raise ParameterError(f"c2 = {c2!r} must lie in (0, 1)")
    if not 0 < vals["p"] <= 1:
        raise ParameterError(f"p = {p!r} must lie in (0, 1]")
    return vals["alpha"], vals["c1"], vals["c2"], vals["p"]


def _coefficients(alpha: float, c2: float):
    """``(a_k, r, dps)``: normalized coefficients in mpmath, with the working precision."""
    import mpmath

    nu = 1.0 - alpha
    # The largest |a_k| / sum grows like prod 1/|1 - r^k| over the k with r^k < 2: estimate the
    # digits lost in double precision and add them to the working precision.
    r_f = (1.0 - c2) ** (-nu)
    lost, k = 0.0, 1
    while r_f**k < 2.0:
        lost += -math.log10(abs(1.0 - r_f**k))
        k += 1
    dps = int(30 + lost)
    with mpmath.workdps(dps):
        r = (1 - mpmath.mpf(c2)) ** (-mpmath.mpf(nu))
        a = [mpmath.mpf(1)]
        kk = 1
        while True:
            a.append(a[-1] / (1 - r**kk))
            if abs(a[-1]) < mpmath.mpf(10) ** (-dps) * max(abs(x) for x in a):
                break
            kk += 1
        s = mpmath.fsum(a)
        a = [x / s for x in a]
    return a, r, dps


def constant_mark_moment(q: float, *, alpha: float, c1: float, c2: float, p: float) -> float:
    """``E[W^q]`` per ACK for constant marking probability ``p`` (exact series).

    Parameters
    ----------
    q : float
        Order, any real ``q > -(1 - alpha)``.
    alpha, c1, c2, p : float
        Increase ``c1 w^alpha`` (``alpha < 1``, ``c1 > 0``), decrease ``c2 w``
        (``0 < c2 < 1``), marking probability ``0 < p <= 1``.

    Raises
    ------
    ParameterError
        For parameters outside these ranges.
    OptionError
        For an order ``q <= alpha - 1``.

    Examples
    --------
    >>> from fluidnet.stochastic import constant_mark_moment
    >>> round(constant_mark_moment(2, alpha=-1, c1=1, c2=0.5, p=1.0), 12)   # 8/3
    2.666666666667
    """
    import mpmath

    alpha, c1, c2, p = _check(alpha, c1, c2, p)
    nu = 1.0 - alpha
    q = float(q)
    if not q > -nu:
        raise OptionError(f"moment order q = {q:g} must exceed alpha - 1 = {-nu:g}")
    a, _, dps = _coefficients(alpha, c2)
    with mpmath.workdps(dps):
        lam = mpmath.mpf(p) / (mpmath.mpf(c1) * nu)
        s = mpmath.fsum(ak * (1 - mpmath.mpf(c2)) ** (k * mpmath.mpf(q)) for k, ak in enumerate(a))
        val = mpmath.gamma(1 + mpmath.mpf(q) / nu) * lam ** (-mpmath.mpf(q) / nu) * s
    return float(val)


def constant_mark_tail(
    w: ArrayLike, *, alpha: float, c1: float, c2: float, p: float
) -> float | np.ndarray:
    """``P(W > w)`` per ACK for constant marking probability ``p`` (exact series).

    Parameters
    ----------
    w : float or array_like
        The window(s).
    alpha, c1, c2, p : float
        As in :func:`constant_mark_moment`.

    Returns
    -------
    float or numpy.ndarray
        ``P(W > w)``, a float for a scalar ``w``, else an array shaped like ``w``.
    """
    import mpmath

    alpha, c1, c2, p = _check(alpha, c1, c2, p)
    nu = 1.0 - alpha
    a, r, dps = _coefficients(alpha, c2)
    ws = np.atleast_1d(np.asarray(w, dtype=float))
    out = np.empty_like(ws)
    with mpmath.workdps(dps):
        lam = mpmath.mpf(p) / (mpmath.mpf(c1) * nu)
        for i, x in enumerate(ws):
            u = lam * mpmath.mpf(max(float(x), 0.0)) ** nu
            out[i] = float(mpmath.fsum(ak * mpmath.exp(-(r**k) * u) for k, ak in enumerate(a)))
    return out if np.ndim(w) else out[0]


def _density(ws: np.ndarray, alpha, c1, c2, p) -> np.ndarray:
    """The per-ACK density on ``ws``: in double precision when the alternating coefficients
    lose at most 6 digits to cancellation, else in mpmath."""
    import mpmath

    nu = 1.0 - alpha
    a, r, dps = _coefficients(alpha, c2)
    lam_f = p / (c1 * nu)
    a_f = np.array([float(x) for x in a])
    if np.max(np.abs(a_f)) <= 1e6:
        rk = float(r) ** np.arange(a_f.size)
        u = lam_f * ws**nu
        terms = (a_f * rk)[None, :] * np.exp(-np.outer(u, rk))
        return lam_f * nu * ws ** (nu - 1) * terms.sum(axis=1)
    out = np.empty_like(ws)
    with mpmath.workdps(dps):
        lam = mpmath.mpf(p) / (mpmath.mpf(c1) * nu)
        for i, x in enumerate(ws):
            xm = mpmath.mpf(float(x))
            u = lam * xm**nu
            du = lam * nu * xm ** (nu - 1)
            out[i] = float(
                du * mpmath.fsum(ak * r**k * mpmath.exp(-(r**k) * u) for k, ak in enumerate(a))
            )
    return out


def constant_mark_distribution(
    *,
    alpha: float,
    c1: float,
    c2: float,
    p: float,
    ack_exponent: float = 0.0,
    points: int = 801,
) -> WindowDistribution:
    """The exact stationary law for a constant marking probability, as a distribution object.

    Moments (mean, variance, CoV, skew) come from the exact series; the density, quantiles
    and mode from the series evaluated on a grid of ``points`` windows covering all but
    ~1e-12 of the mass.

    Parameters
    ----------
    alpha, c1, c2, p : float
        As in :func:`constant_mark_moment`.
    ack_exponent : float, default 0
        The ACK rate is taken proportional to ``w^ack_exponent`` for the per-time companion:
        0 for a full pipe, 1 for a window-limited flow with a fixed round trip. Needs
        ``ack_exponent < 1 - alpha``.
    points : int, default 801

    Returns
    -------
    WindowDistribution
        ``method="series"``, per ACK, with its per-time companion.

    Examples
    --------
    AIMD (``alpha = 0``) has ``E[W] = c1 / (c2 p)`` and ``CoV = sqrt(c2 / (2 - c2))``:

    >>> from fluidnet.stochastic import constant_mark_distribution
    >>> d = constant_mark_distribution(alpha=0, c1=1, c2=0.5, p=0.01)
    >>> round(d.mean, 9), round(d.cov, 9)
    (200.0, 0.577350269)
    """
    alpha, c1, c2, p = _check(alpha, c1, c2, p)
    nu = 1.0 - alpha
    e = float(ack_exponent)
    if not e < nu:
        raise OptionError(f"ack_exponent = {e:g} must be < 1 - alpha = {nu:g}")
    if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or points < 16:
        raise OptionError(f"points = {points!r} must be an integer >= 16")
    kw = dict(alpha=alpha, c1=c1, c2=c2, p=p)

    def moments(shift: float) -> dict[int, float]:
        base = constant_mark_moment(-shift, **kw) if shift else 1.0
        return {k: constant_mark_moment(k - shift, **kw) / base for k in (1, 2, 3)}

    def exact_stats(mom: dict[int, float]) -> dict[str, Any]:
        m1, m2, m3 = mom[1], mom[2], mom[3]
        var = m2 - m1 * m1
        return {
            "moments": mom,
            "mean": m1,
            "var": var,
            "skew": (m3 - 3 * m1 * m2 + 2 * m1**3) / var**1.5,
        }

    # grid: where the tail is 1e-12 on both sides (bracketed on the u = lam w^nu scale)
    lam = p / (c1 * nu)
    lo_u, hi_u = 1e-4, 40.0
    while constant_mark_tail((lo_u / lam) ** (1 / nu), **kw) < 1 - 1e-12:
        lo_u /= 2
    ws = np.linspace((lo_u / lam) ** (1 / nu), (hi_u / lam) ** (1 / nu), int(points))
    pdf = _density(ws, alpha, c1, c2, p)
    pdf = np.maximum(pdf, 0.0)
    info = {"points": int(points), "ack_exponent": e}
    ack = exact_stats(moments(0.0))
    ack["mark_probability"] = p
    per_time = WindowDistribution(
        ws,
        pdf * ws ** (-e),
        method="series",
        average="time",
        exact=exact_stats(moments(e)) if e else ack,
        info=info,
    )
    return WindowDistribution(
        ws, pdf, method="series", average="ack", exact=ack, info=info, time_average=per_time
    )
