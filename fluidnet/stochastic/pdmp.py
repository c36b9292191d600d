"""Stationary distribution of the piecewise-deterministic limit of a window chain.

Misra, Baras & Ott (2000), Sec IV-B, after Misra & Ott (1999): when each ACK changes the window
by a small amount, the chain of :class:`~fluidnet.stochastic.WindowChain` (multiplicative
decrease ``w -> (1 - c) w``) becomes a piecewise-deterministic Markov process: between marks the
window grows at ``dw/dn = v(w)`` per ACK (``v = increase``), marks arrive at rate ``mark(w)``
per ACK, and a mark multiplies the window by ``1 - c``.

Level crossing (up-crossings of ``x`` by the drift balance down-crossings by jumps from
``(x, x/(1 - c))``) gives, for the distribution function ``F`` of the process in the *subjective
time* ``t = sum mark(W_n)`` (their eq (19)),

    ``F'(w) = k(w) [F(w/(1 - c)) - F(w)]``,  ``k(w) = mark(w) / v(w)``,      (1)

an advanced (pantograph-type) functional equation; this is the equation of their Sec IV-B
written in the window itself rather than in the rescaled ``X`` of their eq (18) (the scaling
cancels). With ``G = 1 - F``, ``Lambda(w) = int k`` and ``H = G e^{Lambda}`` (the paper prints
``e^{-int q}``; the integrating factor that makes ``H`` bounded and non-decreasing is
``e^{+int q}``),

    ``H'(w) = k(w) e^{Lambda(w) - Lambda(w/(1 - c))} H(w/(1 - c))``.              (2)

On the geometric grid ``w_j = w_0 rho^j``, ``rho = (1 - c)^{-1/m}``, the advanced argument is the
grid point ``w_{j+m}``, so (2) is marched *backward* from ``H = 1`` at the top of the grid with
the trapezoid rule, explicitly and ``m`` points at a time (second order in ``1/m``). The law of
the window per ACK follows by level crossing in ACK time:

    ``pi(w) = [F(w/(1 - c)) - F(w)] / v(w)`` (normalized),

which also covers windows below the marking onset, where ``k = 0``.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError, OptionError, ParameterError
from .checks import require_chain
from .distribution import WindowDistribution, _trapezoid
from .errors import GridConvergenceError, NotNormalizableError

if TYPE_CHECKING:
    from .chain import WindowChain

__all__ = ["stationary_distribution"]

#: The march stops once the hazard integral has grown by this much above the marking onset:
#: the neglected tail of ``1 - F`` is below ``H(inf)/H(w0) e^{-TAIL}`` (about 1e-21).
TAIL = 50.0


def _hazard(chain: WindowChain, w: np.ndarray, drift: str):
    """``(v, p, k)`` on ``w``: the drift per ACK, the marking probability and ``k = p/v``."""
    p = chain.evaluate("mark", w)
    v = chain.evaluate("increase", w)
    if drift == "mean":
        if np.any(p >= 1):
            i = int(np.flatnonzero(p >= 1)[0])
            raise ParameterError(
                f"drift='mean' needs mark < 1; mark = {p[i]:g} at w = {w[i]:.6g} ({chain.name!r})"
            )
        v = v * (1 - p)
    return v, p, p / v


def _lower_end(chain: WindowChain, c: float, drift: str) -> tuple[float, str]:
    """Where the grid starts: ``(1 - c) W*`` when nothing is marked below ``W*``; otherwise a
    window the process reaches only by a run of jumps whose probability is below 1e-20."""
    wz = chain.zero_drift()
    onset = chain.marking_onset(wz)
    if onset > 0:
        return (1 - c) * onset, "marking onset"
    # Without a marking-free region: from the zero-drift window, a run of jumps each of which
    # comes before the drift climbs back (probability 1 - exp(-(Lambda(y/(1-c)) - Lambda(y))).
    y = np.geomspace(wz * 1e-12, wz / (1 - c), 20001)
    v, _, k = _hazard(chain, y, drift)
    lam = np.concatenate(([0.0], np.cumsum(0.5 * (k[1:] + k[:-1]) * np.diff(y))))
    x, prob = wz, 1.0
    while prob > 1e-20:
        if x * (1 - c) < y[0]:
            raise GridConvergenceError(
                f"{chain.name!r}: the window reaches below w = {y[0]:.3g} with probability "
                f"{prob:.2g} > 1e-20; give window_range=(lower, upper)"
            )
        dl = np.interp(x, y, lam) - np.interp(x * (1 - c), y, lam)
        prob *= -math.expm1(-dl)
        x *= 1 - c
    return x, "run of jumps < 1e-20"


def _grid(chain: WindowChain, lo: float, c: float, m: int, drift: str, upper, max_nodes: int):
    """Geometric grid from ``lo`` until the hazard integral exceeds its value at the marking
    onset by :data:`TAIL` (or up to ``upper``), plus ``m`` points for the advanced argument."""
    rho = (1 - c) ** (-1.0 / m)
    chunk = max(4 * m, 4096)
    ws, vs, ps, ks = [], [], [], []
    lam_end, start, n, base = 0.0, 0, 0, None
    lam_parts = []
    cap = upper if upper is not None else lo * 1e9
    n_cap = int(math.ceil(math.log(cap / lo) / math.log(rho))) + 1  # points up to the cap
    while True:
        idx = np.arange(start, min(start + chunk, n_cap + 1))
        w = lo * rho**idx
        v, p, k = _hazard(chain, w, drift)
        if ws:  # trapezoid between the previous chunk's last point and this chunk
            prev_w, prev_k = ws[-1][-1], ks[-1][-1]
            seg = np.concatenate(([prev_w], w)), np.concatenate(([prev_k], k))
            lam = lam_end + np.cumsum(0.5 * (seg[1][1:] + seg[1][:-1]) * np.diff(seg[0]))
        else:
            lam = np.concatenate(([0.0], np.cumsum(0.5 * (k[1:] + k[:-1]) * np.diff(w))))
        ws.append(w)
        vs.append(v)
        ps.append(p)
        ks.append(k)
        lam_parts.append(lam)
        lam_end = float(lam[-1])
        n += idx.size
        start += idx.size
        if base is None and np.any(k > 0):
            base = float(lam[np.flatnonzero(k > 0)[0]])
        if upper is not None:
            if w[-1] >= upper:
                break
        elif base is not None and lam_end - base > TAIL:
            break
        if w[-1] >= cap or n > max_nodes:
            if upper is None and w[-1] >= cap:
                raise NotNormalizableError(
                    f"{chain.name!r}: the hazard integral int mark/increase dw grows only to "
                    f"{lam_end - (base or 0.0):.4g} between the marking onset and w = "
                    f"{w[-1]:.4g}: the window distribution has no normalizable tail "
                    "(the marking is too weak for the increase law)"
                )
            raise GridConvergenceError(
                f"{chain.name!r}: more than {max_nodes} grid points (m = {m}) before the tail "
                f"is negligible (w = {w[-1]:.4g}); lower m or raise max_nodes"
            )
    w = np.concatenate(ws)
    lam = np.concatenate(lam_parts)
    v, p, k = np.concatenate(vs), np.concatenate(ps), np.concatenate(ks)
    if upper is not None:
        n_main = int(np.searchsorted(w, upper, side="right"))
    else:
        n_main = int(np.searchsorted(lam, (base or 0.0) + TAIL)) + 1
    n_total = n_main + m
    if n_total > w.size:  # one more chunk for the advanced argument
        idx = np.arange(w.size, n_total)
        w2 = lo * rho**idx
        v2, p2, k2 = _hazard(chain, w2, drift)
        seg_w, seg_k = np.concatenate(([w[-1]], w2)), np.concatenate(([k[-1]], k2))
        lam2 = lam[-1] + np.cumsum(0.5 * (seg_k[1:] + seg_k[:-1]) * np.diff(seg_w))
        w, v, p, k = (np.concatenate(a) for a in ((w, w2), (v, v2), (p, p2), (k, k2)))
        lam = np.concatenate((lam, lam2))
    return w[:n_total], v[:n_total], p[:n_total], k[:n_total], lam[:n_total], n_main


def _march(w: np.ndarray, k: np.ndarray, lam: np.ndarray, m: int) -> np.ndarray:
    """Backward trapezoid march of (2), ``m`` points at a time; ``H = 1`` on the top block."""
    n = w.size
    H = np.ones(n)
    integrand = np.zeros(n)
    dw = np.diff(w)
    b = n - m
    while b > 0:
        a = max(0, b - m)
        integrand[a:b] = k[a:b] * np.exp(lam[a:b] - lam[a + m : b + m]) * H[a + m : b + m]
        steps = 0.5 * (integrand[a:b] + integrand[a + 1 : b + 1]) * dw[a:b]
        H[a:b] = H[b] - np.cumsum(steps[::-1])[::-1]
        b = a
    return H


def _solve(chain, c, m, drift, lo, upper, max_nodes):
    w, v, p, k, lam, n_main = _grid(chain, lo, c, m, drift, upper, max_nodes)
    H = _march(w, k, lam, m)
    G = H * np.exp(-(lam - lam[0]))
    G /= G[0]
    rise = np.max(np.diff(G[: n_main + 1]), initial=0.0)
    if rise > 1e-9 or np.any(G < -1e-12):
        raise GridConvergenceError(
            f"{chain.name!r}: the computed 1 - F is not monotone (rise {rise:.3g}) at m = {m}; "
            "increase m"
        )
    # 1 - F lies in [0, 1] and is summed over ~1e5 steps: differences down to -1e-9 are rounding
    jump_mass = G[:n_main] - G[m : n_main + m]
    if np.min(jump_mass) < -1e-9:
        i = int(np.argmin(jump_mass))
        raise GridConvergenceError(
            f"{chain.name!r}: negative density at w = {w[i]:.6g} (F(w/(1-c)) - F(w) = "
            f"{jump_mass[i]:.3g}) at m = {m}; increase m"
        )
    pi = np.maximum(jump_mass, 0.0) / v[:n_main]
    pi /= _trapezoid(pi, w[:n_main])
    return w[:n_main], pi, p[:n_main], float(G[n_main - 1])


def stationary_distribution(
    chain: WindowChain,
    *,
    m: int = 4000,
    drift: str = "limit",
    window_range: tuple[float, float] | None = None,
    tol: float = 1e-6,
    check: bool = True,
    max_nodes: int = 2_000_000,
) -> WindowDistribution:
    """The stationary window distribution of a chain's piecewise-deterministic limit.

    Solves the level-crossing equation of Misra, Baras & Ott (2000), Sec IV-B (their
    Proposition 1 and the equation for ``F_s`` after it), for any increase and marking laws and
    a multiplicative decrease ``w -> (1 - c) w`` (``beta = 1``; for other decreases the jump is
    not a fixed fraction of the window and the limit of their Proposition 1 does not exist,
    their footnote 5 — use :func:`~fluidnet.stochastic.monte_carlo`). See the module docstring
    for the method.

    Parameters
    ----------
    chain : WindowChain
    m : int, default 4000
        Grid points per jump (the grid ratio is ``(1 - c)^{-1/m}``); even, at least 8.
    drift : {"limit", "mean"}
        ``"limit"``: between marks the window grows by ``increase(w)`` per ACK, the
        ``p_max -> 0`` limit of the paper. ``"mean"``: by ``increase(w) (1 - mark(w))``, the
        expected growth per ACK (keeps the first-order effect of marking on the growth).
    window_range : (float, float), optional
        The range of the window covered by the grid; by default from ``(1 - c) W*`` (``W*``
        the marking onset; the law has no mass below it) to where the tail of ``1 - F`` is
        below ~1e-21.
    tol : float, default 1e-6
        Relative error allowed on the mean and the variance, estimated by also solving with
        ``m/2`` (Richardson: the error of the second-order scheme is a third of the change).
    check : bool, default True
        Do the ``m/2`` solve and the tolerance test.
    max_nodes : int, default 2000000
        The most grid points allowed (a discretization size): a longer grid is refused with
        :class:`GridConvergenceError`.

    Returns
    -------
    WindowDistribution
        Per-ACK law (``method="pdmp"``) with the per-time companion (weights
        ``1/ack_rate``); ``info`` holds ``m``, ``points``, ``lower``, ``upper``, the
        subjective-time tail left at the top ``tail``, the error estimates ``error_mean`` and
        ``error_var`` (relative), and ``seconds``.

    Raises
    ------
    ModelError
        For a decrease that is not multiplicative.
    ParameterError
        For a law out of its range on the grid (non-positive increase, marking outside
        ``[0, 1]``, ``c`` outside ``(0, 1)``).
    OptionError
        For a bad ``m``, ``drift``, ``window_range``, ``tol`` or ``max_nodes``.
    NotNormalizableError
        When the marking cannot hold the window (no zero-drift window, or a hazard integral
        that stays bounded).
    GridConvergenceError
        When the estimated error exceeds ``tol``, the grid needs more than ``max_nodes``
        points, or the discrete solution is not a distribution.

    Examples
    --------
    Standard TCP against a constant marking probability ``p``: the mean window per ACK is
    ``1.52691 / sqrt(p)`` (Ott, Kemperman & Mathis 1996).

    >>> import fluidnet as fn
    >>> w, p = fn.sympy.symbols("w p")
    >>> d = fn.stationary_distribution(fn.WindowChain(1 / w, w / 2, p, params={p: 0.01}))
    >>> round(d.mean * 0.1, 5)
    1.52691
    """
    t0 = time.perf_counter()
    require_chain(chain)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 8 or m % 2:
        raise OptionError(f"m = {m!r} must be an even integer >= 8")
    if drift not in ("limit", "mean"):
        raise OptionError(f"drift must be 'limit' or 'mean', got {drift!r}")
    if not (isinstance(tol, (int, float)) and tol > 0):
        raise OptionError(f"tol = {tol!r} must be a positive number")
    c = chain.decrease_factor()
    if c is None:
        raise ModelError(
            f"the PDMP limit needs a multiplicative decrease c w (beta = 1); {chain.name!r} "
            f"has decrease {chain.decrease}. Use monte_carlo for other decrease laws"
        )
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, (int, np.integer)) or max_nodes < 1:
        raise OptionError(f"max_nodes = {max_nodes!r} must be a positive integer")
    if window_range is not None:
        try:
            lo, upper = (float(x) for x in window_range)
        except (TypeError, ValueError) as exc:
            raise OptionError(f"window_range = {window_range!r} must be (lower, upper)") from exc
        if not (0 < lo < upper < math.inf):
            raise OptionError(f"window_range = {window_range!r} needs 0 < lower < upper < inf")
        lower_rule = "given"
    else:
        lo, lower_rule = _lower_end(chain, c, drift)
        upper = None
    w, pi, p, tail = _solve(chain, c, int(m), drift, lo, upper, int(max_nodes))
    info: dict[str, Any] = {
        "m": int(m),
        "points": int(w.size),
        "lower": float(w[0]),
        "lower_rule": lower_rule,
        "upper": float(w[-1]),
        "tail": tail,
        "drift": drift,
        "decrease_factor": c,
    }
    mean = _trapezoid(w * pi, w)
    var = _trapezoid((w - mean) ** 2 * pi, w)
    if check:
        wc, pic, _, _ = _solve(chain, c, int(m) // 2, drift, lo, upper, int(max_nodes))
        mean_c = _trapezoid(wc * pic, wc)
        var_c = _trapezoid((wc - mean_c) ** 2 * pic, wc)
        err = {"mean": abs(mean - mean_c) / 3 / mean, "var": abs(var - var_c) / 3 / var}
        info["error_mean"], info["error_var"] = err["mean"], err["var"]
        for stat, e in err.items():
            if not e <= tol:
                raise GridConvergenceError(
                    f"{chain.name!r}: the {stat} changes by {3 * e:.3g} (relative) between "
                    f"m = {m // 2} and m = {m}, an estimated error {e:.3g} > tol = {tol:g}; "
                    "increase m"
                )
    exact = {"mark_probability": _trapezoid(p * pi, w)}
    ack = chain.evaluate("ack_rate", w)
    per_time = WindowDistribution(
        w, pi / ack, method="pdmp", average="time", info=info, name=chain.name
    )
    info["seconds"] = time.perf_counter() - t0
    return WindowDistribution(
        w,
        pi,
        method="pdmp",
        average="ack",
        exact=exact,
        info=info,
        time_average=per_time,
        name=chain.name,
    )
