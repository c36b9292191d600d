"""Flow-level formulas: processor sharing, completion-time bounds, Little's law, max-min rates.

These are the closed forms that the RCP paper (Dukkipati & McKeown, 2004, Sec III-A) uses as
benchmarks for its packet simulations:

* eq (3), the mean completion time of a flow of ``L`` packets under processor sharing (the
  M/G/1-PS conditional sojourn time plus the connection set-up):
  ``FCT_PS(L) = 1.5 RTPD + L / (C (1 - rho))``;
* the lower bound ``1.5 RTPD + L/C`` (no queueing, no sharing);
* TCP slow start from an initial window of one packet:
  ``[log2(L + 1) + 1/2] RTPD + L/C``;
* the offered load ``rho = lambda E[L] / C`` and Little's law ``E[N] = lambda E[FCT]``;
* conditional means of Pareto flow sizes, for the size-split averages of Figs 10 and 20-22;
* max-min fair rates by water-filling (the example of Fig 3).

Units are the caller's, as long as they agree: sizes in packets and ``C`` in packets/s give times
in seconds. All functions accept numpy arrays and broadcast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ParameterError

__all__ = [
    "ps_fct",
    "fct_lower_bound",
    "slow_start_fct",
    "offered_load",
    "arrival_rate",
    "little_mean_flows",
    "ps_mean_active_flows",
    "pareto_scale",
    "pareto_cdf",
    "pareto_conditional_mean",
    "ps_size_split_afct",
    "max_min_rates",
    "rcp_flow_estimate",
]


def _positive(name: str, value, *, allow_zero: bool = False) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} must be finite, got {value!r}")
    bad = arr < 0 if allow_zero else arr <= 0
    if np.any(bad):
        what = "non-negative" if allow_zero else "positive"
        raise ParameterError(f"{name} must be {what}, got {value!r}")
    return arr


def _load(rho) -> np.ndarray:
    arr = np.asarray(rho, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr >= 1):
        raise ParameterError(
            f"offered load rho must lie in [0, 1) for processor sharing to be stable, got {rho!r}"
        )
    return arr


def _out(x):
    return float(x) if np.ndim(x) == 0 else x


def ps_fct(L, *, C: float, rtpd: float, rho: float):
    """Mean flow completion time under processor sharing, Dukkipati & McKeown (2004) eq (3).

    ``FCT_PS(L) = 1.5 rtpd + L / (C (1 - rho))``: one round trip for the SYN/SYN-ACK handshake,
    half a round trip for the first packet to arrive, and the M/G/1-PS expected sojourn time of a
    job of size ``L`` (Wolff 1989), which depends on the size distribution only through ``rho``.

    Parameters
    ----------
    L : float or array_like
        Flow size (packets), ``>= 0``.
    C : float
        Link capacity (packets/s), ``> 0``.
    rtpd : float
        Round-trip propagation delay (s), ``>= 0``.
    rho : float
        Offered load, ``0 <= rho < 1``.

    Returns
    -------
    float or ndarray
        Seconds.

    Raises
    ------
    ParameterError
        For a negative size or delay, a non-positive capacity, or ``rho`` outside ``[0, 1)``.

    Examples
    --------
    >>> from fluidnet.models.flow_level import ps_fct
    >>> round(ps_fct(2000, C=300_000, rtpd=0.1, rho=0.9), 4)   # Setup 1 (Fig 7)
    0.2167
    """
    L = _positive("flow size L", L, allow_zero=True)
    cap = _positive("capacity C", C)
    delay = _positive("rtpd", rtpd, allow_zero=True)
    load = _load(rho)
    return _out(1.5 * delay + L / (cap * (1.0 - load)))


def fct_lower_bound(L, *, C: float, rtpd: float):
    """Smallest possible completion time of a flow of ``L`` packets: ``1.5 rtpd + L/C``.

    One round trip for the handshake plus half a round trip and the transmission time of the
    data, with no queueing and the whole link to itself (Dukkipati & McKeown, Sec III-A, Fig 15).
    """
    L = _positive("flow size L", L, allow_zero=True)
    cap = _positive("capacity C", C)
    delay = _positive("rtpd", rtpd, allow_zero=True)
    return _out(1.5 * delay + L / cap)


def slow_start_fct(L, *, C: float, rtpd: float):
    """Completion time of a flow that stays in TCP slow start: ``[log2(L+1) + 1/2] rtpd + L/C``.

    Dukkipati & McKeown, Sec III-B.1 (the "Slow-start" curve of Figs 7, 8 and 31): the handshake
    and the ``log2(L + 1)`` round trips needed to send ``L`` packets with a window that starts at
    one packet and doubles every round trip, excluding queueing. It equals the lower bound at
    ``L = 1``.
    """
    L = _positive("flow size L", L, allow_zero=True)
    cap = _positive("capacity C", C)
    delay = _positive("rtpd", rtpd, allow_zero=True)
    return _out((np.log2(L + 1.0) + 0.5) * delay + L / cap)


def offered_load(arrival_rate, mean_size, C):
    """Offered load ``rho = lambda E[L] / C`` (Dukkipati & McKeown, Sec III-A)."""
    lam = _positive("arrival rate", arrival_rate, allow_zero=True)
    m = _positive("mean flow size", mean_size)
    C = _positive("capacity C", C)
    return _out(lam * m / C)


def arrival_rate(rho, mean_size, C):
    """Flow arrival rate ``lambda = rho C / E[L]`` that produces the offered load ``rho``."""
    rho = _positive("offered load rho", rho, allow_zero=True)
    m = _positive("mean flow size", mean_size)
    C = _positive("capacity C", C)
    return _out(rho * C / m)


def little_mean_flows(arrival_rate, mean_time):
    """Little's law: mean number of flows in the system ``E[N] = lambda E[T]``."""
    lam = _positive("arrival rate", arrival_rate, allow_zero=True)
    t = _positive("mean time in system", mean_time, allow_zero=True)
    return _out(lam * t)


def ps_mean_active_flows(*, C: float, rtpd: float, rho: float, mean_size: float):
    """Mean number of active flows under processor sharing, by Little's law.

    ``E[N] = lambda FCT_PS(E[L]) = 1.5 lambda rtpd + rho / (1 - rho)`` with
    ``lambda = rho C / E[L]``: flows in their handshake or in flight, plus the M/G/1-PS mean
    number in service. This is how the paper draws the PS line of the "number of active flows"
    plots (Figs 1, 12-14, 17, 18).
    """
    lam = arrival_rate(rho, mean_size, C)
    return little_mean_flows(lam, ps_fct(mean_size, C=C, rtpd=rtpd, rho=rho))


def pareto_scale(mean: float, shape: float) -> float:
    """Scale ``x_m`` of a Pareto distribution with the given mean: ``mean (k - 1) / k``.

    Raises
    ------
    ParameterError
        When ``shape <= 1`` (the mean is infinite) or ``mean <= 0``.
    """
    mean = float(_positive("Pareto mean", mean))
    shape = float(_positive("Pareto shape", shape))
    if shape <= 1.0:
        raise ParameterError(f"Pareto shape must exceed 1 for a finite mean, got {shape!r}")
    return mean * (shape - 1.0) / shape


def pareto_cdf(x, *, shape: float, scale: float):
    """``P(L <= x)`` for a Pareto law ``P(L > x) = (scale/x)^shape`` for ``x >= scale``."""
    shape = float(_positive("Pareto shape", shape))
    scale = float(_positive("Pareto scale", scale))
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        out = np.where(x <= scale, 0.0, 1.0 - (scale / np.maximum(x, scale)) ** shape)
    return _out(out)


def pareto_conditional_mean(*, shape: float, scale: float, lo: float = 0.0, hi: float = np.inf):
    """``E[L | lo <= L < hi]`` for a Pareto law with the given shape and scale.

    For ``shape = k > 1`` and ``a = max(lo, scale)``:
    ``E[L | L >= a] = k a / (k - 1)`` (so six times the threshold for ``k = 1.2``), and for a
    finite ``hi`` the truncated mean
    ``k/(k-1) (a^{1-k} - hi^{1-k}) / (a^{-k} - hi^{-k})``.

    Raises
    ------
    ParameterError
        When the interval has zero probability or ``shape <= 1`` with ``hi`` infinite.
    """
    k = float(_positive("Pareto shape", shape))
    xm = float(_positive("Pareto scale", scale))
    lo, hi = float(lo), float(hi)
    if not hi > lo:
        raise ParameterError(f"empty size interval [{lo}, {hi})")
    a = max(lo, xm)
    if hi <= a:
        raise ParameterError(
            f"size interval [{lo}, {hi}) has zero probability under a Pareto law with scale {xm}"
        )
    if np.isinf(hi):
        if k <= 1.0:
            raise ParameterError(f"Pareto shape must exceed 1 for a finite mean, got {k!r}")
        return k * a / (k - 1.0)
    if k == 1.0:
        return np.log(hi / a) / (1.0 / a - 1.0 / hi)
    num = k / (k - 1.0) * (a ** (1.0 - k) - hi ** (1.0 - k))
    den = a ** (-k) - hi ** (-k)
    return num / den


def ps_size_split_afct(
    *, C: float, rtpd: float, rho: float, mean: float, shape: float, lo: float, hi: float = np.inf
):
    """Average PS completion time of the flows with ``lo <= L < hi`` (Pareto sizes).

    Eq (3) is linear in ``L``, so the average over a size class is eq (3) at the class's
    conditional mean size. This is the PS line of the size-split plots (Figs 10, 20-22).
    """
    m = pareto_conditional_mean(shape=shape, scale=pareto_scale(mean, shape), lo=lo, hi=hi)
    return ps_fct(m, C=C, rtpd=rtpd, rho=rho)


def max_min_rates(
    capacities: Mapping[str, float], routes: Mapping[str, Sequence[str]], counts=None
) -> dict[str, float]:
    """Max-min fair per-flow rates by progressive filling (water-filling).

    Parameters
    ----------
    capacities : dict
        ``{link: capacity}``.
    routes : dict
        ``{group: [links used]}``; every flow of a group takes the same path.
    counts : dict, optional
        ``{group: number of flows}`` (default one flow per group).

    Returns
    -------
    dict
        ``{group: rate per flow}``.

    Raises
    ------
    ParameterError
        For an unknown link, a non-positive capacity, a negative count or a group with no link.

    Examples
    --------
    Fig 3 of Dukkipati & McKeown (2004): 8 flows (group A) on link C (400 Mb/s), 4 flows
    (group B) on links B (80 Mb/s) and C.

    >>> from fluidnet.models.flow_level import max_min_rates
    >>> max_min_rates({"B": 80, "C": 400}, {"A": ["C"], "B": ["B", "C"]}, {"A": 8, "B": 4})
    {'A': 40.0, 'B': 20.0}
    """
    caps = {}
    for link, c in capacities.items():
        c = float(c)
        if not np.isfinite(c) or c <= 0:
            raise ParameterError(f"capacity of link {link!r} must be positive, got {c!r}")
        caps[link] = c
    counts = dict(counts or {})
    n = {}
    for g, path in routes.items():
        if not path:
            raise ParameterError(f"group {g!r} uses no link")
        for link in path:
            if link not in caps:
                raise ParameterError(f"group {g!r} uses unknown link {link!r}")
        k = float(counts.get(g, 1.0))
        if not np.isfinite(k) or k < 0:
            raise ParameterError(f"number of flows of group {g!r} must be >= 0, got {k!r}")
        n[g] = k
    unknown = set(counts) - set(routes)
    if unknown:
        raise ParameterError(f"counts given for groups without a route: {sorted(unknown)}")
    rate = {g: 0.0 for g in routes}
    active = {g for g in routes if n[g] > 0}
    left = dict(caps)
    while active:
        # the smallest equal increment that saturates some link used by an active group
        inc = np.inf
        for link, c in left.items():
            users = sum(n[g] for g in active if link in routes[g])
            if users > 0:
                inc = min(inc, c / users)
        saturated = set()
        for link in left:
            users = sum(n[g] for g in active if link in routes[g])
            left[link] -= inc * users
            if users > 0 and left[link] <= 1e-12 * caps[link]:
                saturated.add(link)
        for g in active:
            rate[g] += inc
        active = {g for g in active if not saturated.intersection(routes[g])}
    return rate


def rcp_flow_estimate(C: float, R: float):
    """RCP's estimate of the number of flows, ``C / R`` (Dukkipati & McKeown, Sec II-B).

    With ``N1`` flows bottlenecked at this link and ``N2`` flows limited elsewhere to
    ``R2 < R``, the equilibrium ``R N1 + R2 N2 = C`` gives ``C/R = N1 + theta N2`` with
    ``theta = R2/R`` (Sec II-C.1).
    """
    cap = _positive("capacity C", C)
    rate = _positive("rate R", R)
    return _out(cap / rate)
