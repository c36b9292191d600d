"""Rate Control Protocol (RCP) fluid model.

Source: N. Dukkipati and N. McKeown, "Processor Sharing Flows in the Internet", Stanford HPNG
technical report (2004), Section IV-A, equations (4)-(7):

* (4) ``dR/dt = R(t - T) [alpha (C - y(t)) - beta q(t)/d(t)] / (C d(t))``
* (5) ``y(t) = N R(t - d0)``
* (6) ``d(t) = d0 + q(t)/C``
* (7) ``dq/dt = y(t) - C`` for ``q > 0``, ``max(y(t) - C, 0)`` for ``q = 0`` (a projected queue).

Appendix II of the paper restates (4) as ``f = R_T (1 + [...]/(C d))``; the ``1 +`` is a typo (it
belongs to the discrete update law (2), not to the derivative: with it ``df/dR_T`` would be 1, not
the stated 0). The model below uses (4) as printed in Section IV-A.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import sympy

from ..errors import ParameterError
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, states, t

__all__ = [
    "rcp",
    "rcp_dimensionless",
    "rcp_heterogeneous",
    "rcp_flow_schedule",
    "rcp_linearized",
    "flow_schedule",
    "PACKET_BITS",
]

#: The paper's packet size: 1000 bytes.
PACKET_BITS = 8000.0


def rcp(**values: float) -> Model:
    """The RCP fluid model, Dukkipati & McKeown (2004) eqs (4)-(7).

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
    """RCP in dimensionless form (Dukkipati & McKeown (2004) eqs (4)-(7), rescaled).

    With time ``tau = t/d0``, aggregate normalized rate ``g = N R / C`` and normalized queue
    ``x = q/(C d0)``:

    ``dg/dtau = g(tau - T/d0) [alpha (1 - g(tau - 1)) - beta x/(1 + x)] / (1 + x)``,
    ``dx/dtau = g(tau - 1) - 1`` with ``x >= 0``.

    Only ``alpha``, ``beta`` and ``T_ratio = T/d0`` remain, which is why the paper finds its
    stability regions independent of C, N and d0. Equilibrium ``(g, x) = (1, 0)``.

    Parameters
    ----------
    **values
        Overrides of the defaults of ``alpha``, ``beta``, ``T_ratio``.

    Returns
    -------
    Model
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


def flow_schedule(counts: Sequence[float], times: Sequence[float]) -> sympy.Expr:
    """A piecewise-constant number of flows ``N(t)`` as a sympy expression in :data:`fluidnet.t`.

    ``N(t) = counts[0]`` before ``times[0]``, ``counts[k]`` on ``[times[k-1], times[k])`` and
    ``counts[-1]`` after the last time (written with ``Heaviside`` steps, right-continuous).

    Parameters
    ----------
    counts : sequence of float
        Flow counts, ``len(times) + 1`` of them, each ``>= 0``.
    times : sequence of float
        Increasing switching times (s).

    Raises
    ------
    ParameterError
        For a count that is negative or not finite, times that are not increasing, or lengths that
        do not match.

    Examples
    --------
    >>> import fluidnet as fn
    >>> from fluidnet.models.rate_control import flow_schedule
    >>> N = flow_schedule([5, 10, 5], [40, 100])   # Figs 37-39 of the RCP paper
    >>> [float(N.subs(fn.t, x)) for x in (0, 50, 120)]
    [5.0, 10.0, 5.0]
    """
    counts = [float(c) for c in counts]
    times = [float(x) for x in times]
    if len(counts) != len(times) + 1:
        raise ParameterError(
            f"flow_schedule needs len(times) + 1 counts, got {len(counts)} counts for "
            f"{len(times)} times"
        )
    for c in counts:
        if not math.isfinite(c) or c < 0:
            raise ParameterError(f"flow count {c!r} must be finite and >= 0")
    for a, b in zip(times, times[1:], strict=False):
        if not b > a:
            raise ParameterError(f"switching times must increase, got {times}")
    if not all(math.isfinite(x) for x in times):
        raise ParameterError(f"switching times must be finite, got {times}")
    expr = sympy.Float(counts[0])
    for k, tk in enumerate(times):
        jump = counts[k + 1] - counts[k]
        if jump != 0:
            # sympy has no stubs: pyright takes H0's type (Half) from its default S.Half
            expr += jump * sympy.Heaviside(t - tk, 1)  # pyright: ignore[reportArgumentType]
    return expr


def rcp_flow_schedule(
    counts: Sequence[float] = (5, 10, 5), times: Sequence[float] = (40.0, 100.0), **values: float
) -> Model:
    """RCP (eqs (4)-(7)) with a number of long-lived flows that changes at given times.

    The Sec IV-E experiment of the RCP paper (Figs 37-39): 5 flows from t = 0, 5 more from t = 40 s,
    the first 5 leave at t = 100 s. The aggregate arrival rate is ``y(t) = N(t) R(t - d0)``:
    ``N(t)`` counts the flows whose traffic reaches the router at ``t``, each sending at the rate
    it was told one feedback delay earlier (the paper does not state the convention; the
    equilibria ``R = C/N(t)`` do not depend on it).

    The paper does not give C, d0 or T for these runs; the defaults are those of the phase-plane
    study (C = 0.15 Gb/s, d0 = 0.2 s, T = 0.01 s). Parameters: ``alpha, beta, C, d0, T``.

    Parameters
    ----------
    counts, times
        See :func:`flow_schedule`.
    **values
        Parameter overrides.
    """
    R, q = states("R q")
    alpha, beta, C, d0, T = params("alpha beta C d0 T")
    N = flow_schedule(counts, times)
    base = rcp()
    d = d0 + q(t) / C
    y = N * R(t - d0)
    m = Model(
        rhs={
            R: R(t - T) * (alpha * (C - y) - beta * q(t) / d) / (C * d),
            q: y - C,
        },
        params={k: base.params[k] for k in ("alpha", "beta", "C", "d0", "T")},
        nonnegative=[q],
        name="rcp_flow_schedule",
    )
    return m.with_params(**values) if values else m


def rcp_heterogeneous(
    rtts: Sequence[float] = tuple(0.02 * k for k in range(1, 11)),
    flows: Sequence[float] | float = 2.0,
    *,
    times: Sequence[float] | None = None,
    **values: float,
) -> Model:
    """RCP with groups of flows of different round-trip times (Fig 19 of Dukkipati & McKeown).

    Eqs (4)-(7) with the aggregate arrival rate ``y(t) = sum_i N_i R(t - d_i)``: group ``i`` has
    ``N_i`` flows of propagation RTT ``d_i`` and sends at the rate it was told ``d_i`` ago. The
    router cannot see the individual RTTs; its law uses its running average ``d0`` (Sec II-C.4,
    a per-packet average, so weighted by the groups' traffic), here the parameter ``d0`` with
    default ``sum N_i d_i / sum N_i``, and ``d(t) = d0 + q/C`` as in (6). With one group this is
    :func:`rcp`.

    The equilibrium is ``R = C / sum N_i``, ``q = 0``, and the loop gain cut at ``R`` is
    ``(alpha s d0 + beta)/(s d0)^2 * sum_i (N_i/N) exp(-s d_i)``.

    Parameters
    ----------
    rtts : sequence of float
        Propagation RTT of each group (s), ``> 0``. Default: 0.02, 0.04, ..., 0.2 s (ten groups
        spanning the 20-200 ms of Fig 19).
    flows : float or sequence
        Flows per group: one number for all groups, one number per group, or, with ``times``,
        a sequence of per-interval entries (each a number or one number per group) giving the
        counts before ``times[0]``, between the times, and after the last.
    times : sequence of float, optional
        Switching times (s) of a time-varying flow population (Fig 19: 20 flows, 40 from
        t = 40 s, 20 again from t = 100 s).
    **values
        Overrides of ``alpha, beta, C, T, d0`` and of the RTTs ``d_1 ... d_n``; with constant
        counts also ``N_1 ... N_n``.

    Raises
    ------
    ParameterError
        For an empty group list, a non-positive RTT, a negative count, or counts whose shape does
        not match ``rtts`` and ``times``.
    """
    rtts = [float(x) for x in rtts]
    if not rtts:
        raise ParameterError("rcp_heterogeneous needs at least one RTT group")
    for i, x in enumerate(rtts, start=1):
        if not math.isfinite(x) or x <= 0:
            raise ParameterError(f"RTT d_{i} must be finite and > 0, got {x!r}")
    n = len(rtts)

    def per_group(entry, what: str) -> list[float]:
        if isinstance(entry, (int, float)):
            vals = [float(entry)] * n
        else:
            vals = [float(v) for v in entry]
            if len(vals) != n:
                raise ParameterError(f"{what}: {len(vals)} flow counts for {n} RTT groups")
        for v in vals:
            if not math.isfinite(v) or v < 0:
                raise ParameterError(f"{what}: flow count {v!r} must be finite and >= 0")
        return vals

    base = rcp()
    R, q = states("R q")
    alpha, beta, C, d0, T = params("alpha beta C d0 T")
    dsyms = params([f"d_{i}" for i in range(1, n + 1)])
    dsyms = dsyms if isinstance(dsyms, tuple) else (dsyms,)
    par: dict = {k: base.params[k] for k in ("alpha", "beta", "C", "T")}
    for i, (sym, x) in enumerate(zip(dsyms, rtts, strict=True), start=1):
        par[sym] = Param(x, unit="s", doc=f"propagation RTT of group {i}", bounds=(0, None))

    if times is None:
        counts = per_group(flows, "flows")
        nsyms = params([f"N_{i}" for i in range(1, n + 1)])
        nsyms = nsyms if isinstance(nsyms, tuple) else (nsyms,)
        for i, (sym, c) in enumerate(zip(nsyms, counts, strict=True), start=1):
            par[sym] = Param(c, unit="1", doc=f"number of flows of group {i}", bounds=(0, None))
        Ns = list(nsyms)
        weights0 = counts
    else:
        if isinstance(flows, (int, float)):
            raise ParameterError("with `times`, give `flows` as one entry per interval")
        intervals = [per_group(e, f"flows[{k}]") for k, e in enumerate(flows)]
        if len(intervals) != len(times) + 1:
            raise ParameterError(
                f"with {len(times)} switching times, `flows` needs {len(times) + 1} entries, "
                f"got {len(intervals)}"
            )
        Ns = [flow_schedule([iv[i] for iv in intervals], times) for i in range(n)]
        weights0 = intervals[0]
    total0 = sum(weights0)
    if total0 <= 0:
        raise ParameterError("rcp_heterogeneous needs at least one flow at t = 0")
    d_mean = sum(w * x for w, x in zip(weights0, rtts, strict=True)) / total0
    par[d0] = Param(
        d_mean,
        unit="s",
        doc="the router's average RTT (default: flow-weighted mean of the group RTTs)",
        bounds=(0, None),
    )
    y = sum(Ni * R(t - di) for Ni, di in zip(Ns, dsyms, strict=True))
    d = d0 + q(t) / C
    m = Model(
        rhs={
            R: R(t - T) * (alpha * (C - y) - beta * q(t) / d) / (C * d),
            q: y - C,
        },
        params=par,
        nonnegative=[q],
        name="rcp_heterogeneous",
    )
    return m.with_params(**values) if values else m


def rcp_linearized(**values: float) -> Model:
    """The linearized RCP loop, Dukkipati & McKeown eq (8), as a model in the deviations ``dR, dq``.

    ``d/dt dR = -(alpha/d0) dR(t - d0) - beta/(N d0^2) dq(t)``, ``d/dt dq = N dR(t - d0)``.

    This is the system the paper's Bode and Nyquist analyses describe: the queue deviation may
    become negative (no projection), which is why its stable region is smaller than that of
    :func:`rcp` (Sec IV-E). Same parameters and defaults as :func:`rcp` (``T`` drops out).

    Parameters
    ----------
    **values
        Overrides of the defaults of ``alpha``, ``beta``, ``N``, ``d0``.

    Returns
    -------
    Model
    """
    dR, dq = states("dR dq")
    alpha, beta, N, d0 = params("alpha beta N d0")
    base = rcp()
    m = Model(
        rhs={
            dR: -(alpha / d0) * dR(t - d0) - beta / (N * d0**2) * dq(t),
            dq: N * dR(t - d0),
        },
        params={k: base.params[k] for k in ("alpha", "beta", "N", "d0")},
        name="rcp_linearized",
    )
    return m.with_params(**values) if values else m
