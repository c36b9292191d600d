"""Binary-feedback (sliding-mode) rate laws: the TCP control law and the MRG law.

Source: L. Ye, Z. Wang, H. Che, H. B. C. Chan, I. Ghosh, C. M. Lagoa, "Utility Function of TCP
and Its Application to the Design of Minimum Rate Guaranteed Control Law" (conference version,
c. 2007), which builds on the law family of B. A. Movsichoff, C. M. Lagoa and H. Che,
"End-to-end optimal algorithms for integrated QoS, traffic engineering, and failure recovery"
(IEEE/ACM ToN, 2007). Equation numbers are those of Ye et al.

The family (3)-(5): every flow ``i`` changes its rate by

    x' = ( z(t, x) [ f(x) - (1 - not cg) ] )^+_{x=0},   f(x) = 1 - exp(-U'(x)),

where ``cg`` is the binary congestion indicator of the flow's path and ``(.)^+_{x=0}`` keeps
``x >= 0``. Since ``1 - not cg = cg``, the law is ``x' = a(x)`` when the path is not congested
and ``x' = -d(x)`` when it is, with the *increase* ``a = z f`` and *decrease* ``d = z (1 - f)``.
Conversely (the reverse engineering of Sec II, :func:`reverse_engineer`),

    z = a + d,   f = a / (a + d),   U'(x) = log(1 + a(x) / d(x)).

A :class:`FlowLaw` is such a pair ``(a, d)``; :func:`tcp_law` is (6), (7), (10), (11) with a
fixed slow-start threshold, :func:`approximate_law` is (10) with (18), :func:`mrg_law` is
(20)-(22). A :class:`BinaryFeedbackNetwork` puts flows on links and builds

* ``marking="binary"``: the paper's law, link ``l`` congested when its load reaches its
  capacity, ``p_l = H(y_l - B_l)``. The right-hand side switches; at the optimum the solution
  slides on the capacity surfaces and :func:`fluidnet.simulate` integrates the Filippov sliding
  motion (no chattering). The Filippov weight of a link's surface is the fraction of time the
  link signals congestion (the duty fraction ``p_l``).
* ``marking="smooth"``: ``p_l`` a logistic function of the load of relative width ``width``;
  a smooth model that can be linearized, converging to the binary one as ``width -> 0``.

A path's indicator combines its links' ``p_l``. With ``correlation="independent"`` (the default)
``cg = 1 - prod_l (1 - p_l)``: links signal congestion independently, so the path price
``-log(1 - P[cg])`` is the sum of the link prices ``-log(1 - p_l)``; this product form is what
the ``n``-th power in (16) assumes. With ``correlation="synchronized"`` (smooth marking and the
discrete-time map only) ``cg = max_l p_l``: links mark together, and a flow crossing ``n``
equally loaded links is treated like a one-link flow.

:meth:`BinaryFeedbackNetwork.discrete` iterates the discrete-time law (one Euler step of ``dt``
per feedback interval), with deterministic threshold marking or seeded random marking: the law is
a :class:`~fluidnet.dde.maps.DiscreteMap` (:meth:`BinaryFeedbackNetwork.discrete_map`) run by
:func:`~fluidnet.dde.maps.iterate_map`.

Conventions (the paper's): rates in Mb/s, ``mu = w / RTT`` with ``w = 8000`` bits (one 1000-byte
packet per RTT), ``alpha = 1``, ``beta = 1/2``; time is counted in each flow's RTTs (per-RTT
speeds). Pass ``rtt`` (seconds) to a network for a common time axis in seconds: each flow's
right-hand side is divided by its RTT, which changes the transients but not the equilibria
(the utility depends on ``a / d`` only).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..dde.maps import DiscreteMap, iterate_map
from ..errors import ModelError, OptionError, ParameterError
from ..overrides import parameter_value
from ..parsing import as_expression
from ..symbolic import Model, Param
from ..symbolic.symbols import t
from .network import per_element, routing_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "RATE",
    "FlowLaw",
    "ReverseEngineered",
    "reverse_engineer",
    "tcp_law",
    "approximate_law",
    "mrg_law",
    "tcp_utility",
    "approximate_utility",
    "continuity_constant",
    "BinaryFeedbackNetwork",
    "DiscreteRun",
    "binary_feedback",
    "single_link_network",
    "topology_one_network",
    "TOPOLOGY_ONE_RTTS",
]

#: The rate symbol ``x`` in which :class:`FlowLaw` expressions are written.
RATE = sympy.Symbol("x", positive=True)

#: Topology I (Fig 2) round-trip propagation delays in seconds, flows 1-3 and flow 4, per case of
#: Table I. The text lists them as "flow 4 and other 3 flows" but in the opposite order; flow 4 is
#: the long one (it crosses three bottlenecks, and only this order gives Table II).
TOPOLOGY_ONE_RTTS = {"I": (0.030, 0.050), "II": (0.018, 0.050), "III": (0.030, 0.038)}

_MARKINGS = ("binary", "smooth")
_HALF = sympy.Rational(1, 2)
_CORRELATIONS = ("independent", "synchronized")
#: The discrete-time maps built by BinaryFeedbackNetwork.discrete_map, by structure and values.
_DISCRETE_MAPS: dict[tuple, Any] = {}


# ------------------------------------------------------------------------------------ laws
@dataclass(frozen=True)
class ReverseEngineered:
    """The gain, the function ``f`` and the marginal utility of a law ``(a, d)``, eqs (3)-(4).

    Attributes
    ----------
    z : sympy.Expr
        ``a + d``.
    f : sympy.Expr
        ``a / (a + d)`` = ``1 - exp(-U')``.
    marginal_utility : sympy.Expr
        ``U' = log(1 + a / d)``.
    """

    z: sympy.Expr
    f: sympy.Expr
    marginal_utility: sympy.Expr


def reverse_engineer(increase: Any, decrease: Any) -> ReverseEngineered:
    """``z``, ``f`` and ``U'`` of the law that increases at ``increase`` without congestion and
    decreases at ``decrease`` with congestion (Ye et al., Sec II, the step from (6)-(7) to
    (8)-(9)).

    Matching ``z f = a`` (cg = 0) and ``z (f - 1) = -d`` (cg = 1) gives ``z = a + d`` and
    ``f = a / (a + d)``; then (4), ``f = 1 - exp(-U')``, gives ``U' = log(1 + a / d)``.

    Parameters
    ----------
    increase, decrease : sympy expression or number
        ``a(x) >= 0`` and ``d(x) > 0``.

    Returns
    -------
    ReverseEngineered

    Examples
    --------
    >>> import sympy
    >>> from fluidnet.models import RATE, reverse_engineer
    >>> al, be = sympy.symbols("alpha beta", positive=True)
    >>> r = reverse_engineer(al * RATE, be * RATE)   # slow start, (6)-(9)
    >>> r.z, sympy.simplify(r.marginal_utility)
    (x*(alpha + beta), log(alpha/beta + 1))
    """
    a = _expr(increase, "increase", {RATE.name: RATE})
    d = _expr(decrease, "decrease", {RATE.name: RATE})
    z = cast(sympy.Expr, sympy.factor(a + d))
    return ReverseEngineered(z=z, f=a / z, marginal_utility=sympy.log(1 + a / d))


@dataclass(frozen=True)
class FlowLaw:
    """A law of the family (3)-(5): increase ``a(x)`` without congestion, decrease ``d(x)``
    with congestion.

    Parameters
    ----------
    increase, decrease : sympy.Expr
        Expressions of :data:`RATE` and of the parameters named in ``params``.
    params : dict of str to Param
        The law's parameters with their default values.
    name : str
        What the law is (for messages and model names).

    Raises
    ------
    ModelError
        For a free symbol that is neither :data:`RATE` nor a parameter.
    """

    increase: sympy.Expr
    decrease: sympy.Expr
    params: Mapping[str, Param] = field(default_factory=dict)
    name: str = "law"

    def __post_init__(self):
        for what in ("increase", "decrease"):
            expr = _expr(getattr(self, what), f"{self.name}: {what}", {RATE.name: RATE})
            object.__setattr__(self, what, expr)
            for sym in expr.free_symbols:
                if sym != RATE and str(sym) not in self.params:
                    raise ModelError(
                        f"{self.name}: the {what} uses {str(sym)!r}, which is neither the rate "
                        f"x nor a parameter (parameters: {', '.join(self.params) or 'none'})"
                    )

    def symbol(self, name: str) -> sympy.Symbol:
        """The symbol of parameter ``name`` in the law's expressions.

        Parameters
        ----------
        name : str
            A parameter name of the law.

        Returns
        -------
        sympy.Symbol
            The symbol as it occurs in ``increase`` or ``decrease`` (with its assumptions); a new
            real symbol of that name when neither expression uses it.
        """
        for sym in self.increase.free_symbols | self.decrease.free_symbols:
            if isinstance(sym, sympy.Symbol) and sym.name == name:
                return sym
        return sympy.Symbol(name, real=True)

    @property
    def reverse_engineered(self) -> ReverseEngineered:
        """``z``, ``f`` and ``U'`` of the law (:func:`reverse_engineer`)."""
        return reverse_engineer(self.increase, self.decrease)

    def values(self, **overrides: float) -> dict[str, float]:
        """Parameter values: the defaults with ``overrides``.

        Parameters
        ----------
        **overrides
            ``name=value`` for parameters of the law whose default is replaced.

        Returns
        -------
        dict
            ``{name: float}`` for every parameter of the law.

        Raises
        ------
        ParameterError
            For a name that is not a parameter of the law.
        """
        unknown = set(overrides) - set(self.params)
        if unknown:
            raise ParameterError(f"{self.name}: unknown parameters {sorted(unknown)}")
        return {
            k: parameter_value(f"{self.name}: parameter {k!r}", overrides.get(k, p.value))
            for k, p in self.params.items()
        }

    def numeric(self, **overrides: float):
        """``(a, d)`` as numpy functions of the rate, at the parameter values.

        Parameters
        ----------
        **overrides
            ``name=value`` for parameters of the law whose default is replaced (see
            :meth:`values`).

        Returns
        -------
        increase, decrease : callable
            Vectorized functions of the rate ``x`` (a number or array) returning float arrays of
            the same shape.

        Raises
        ------
        ParameterError
            For a name that is not a parameter of the law.
        """
        vals = self.values(**overrides)
        rep = {self.symbol(k): v for k, v in vals.items()}
        a = sympy.lambdify(RATE, self.increase.xreplace(rep), np)
        d = sympy.lambdify(RATE, self.decrease.xreplace(rep), np)

        def inc(x):
            return np.broadcast_to(a(np.asarray(x, dtype=float)), np.shape(x)).astype(float)

        def dec(x):
            return np.broadcast_to(d(np.asarray(x, dtype=float)), np.shape(x)).astype(float)

        return inc, dec


def _expr(value: Any, where: str = "expression", symbols: Any = None) -> sympy.Expr:
    """``value`` as a sympy expression with a number value (see
    :func:`fluidnet.parsing.as_expression`), else a :class:`ModelError` naming ``where``."""
    expr = as_expression(value, symbols=symbols, where=where)
    if not isinstance(expr, sympy.Expr):
        raise ModelError(f"{where}: {expr!r} is not an expression with a number value")
    return expr


def _positive(name: str, value: float, *, upper: float | None = None) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0 or (upper is not None and v > upper):
        rng = f"in (0, {upper:g}]" if upper is not None else "positive and finite"
        raise ParameterError(f"{name} must be {rng}, got {value!r}")
    return v


def _ps(name: str) -> sympy.Symbol:
    return sympy.Symbol(name, positive=True)


def tcp_law(
    mu: float, *, beta: float = 0.5, alpha: float = 1.0, x_s: float | None = None
) -> FlowLaw:
    """The TCP control law of Ye et al., with a fixed slow-start threshold ``x_s``.

    * slow start, ``x < x_s`` (MIMD): ``x' = alpha x`` without congestion (6), ``-beta x`` with
      congestion (7); ``z = (alpha + beta) x`` (9), ``U = x log(1 + alpha/beta)`` (8);
    * congestion avoidance, ``x > x_s`` (AIMD): ``x' = mu`` (10), ``-beta x`` (11);
      ``z = mu + beta x`` (13), ``U`` from (12).

    Parameters
    ----------
    mu : float
        Additive increase ``mu > 0`` (rate per RTT; one packet per RTT is ``w / RTT``).
    beta : float
        Multiplicative decrease, ``0 < beta <= 1`` (TCP: 1/2).
    alpha : float
        Slow-start growth, ``alpha > 0`` (TCP: 1, doubling per RTT in the paper's reading).
    x_s : float or None
        Fixed slow-start threshold (parameter ``x_s``). ``None``: congestion avoidance only,
        the paper's model of steady-state TCP with its dynamic threshold, (10)-(12).

    Returns
    -------
    FlowLaw

    Raises
    ------
    ParameterError
        For ``mu``, ``alpha`` not positive, ``beta`` outside (0, 1], ``x_s`` negative.

    Notes
    -----
    The composite utility has a kink at ``x_s`` (slopes ``log(1 + alpha/beta)`` and
    ``log(1 + mu/(beta x_s))``); it is concave only when ``alpha x_s >= mu``, which the paper
    does not state (see :func:`tcp_utility`).
    """
    params = {
        "mu": Param(
            _positive("mu", mu), unit="rate/RTT", doc="additive increase", bounds=(0, None)
        ),
        "beta": Param(
            _positive("beta", beta, upper=1.0),
            unit="1/RTT",
            doc="multiplicative decrease",
            bounds=(0, 1),
        ),
    }
    m, b = _ps("mu"), _ps("beta")
    x = RATE
    if x_s is None:
        return FlowLaw(m, b * x, params, name="tcp_ca")
    xs_v = float(x_s)
    if not math.isfinite(xs_v) or xs_v < 0:
        raise ParameterError(f"x_s must be finite and >= 0, got {x_s!r}")
    params["alpha"] = Param(
        _positive("alpha", alpha), unit="1/RTT", doc="slow-start growth", bounds=(0, None)
    )
    params["x_s"] = Param(xs_v, unit="rate", doc="fixed slow-start threshold", bounds=(0, None))
    a, xs = _ps("alpha"), sympy.Symbol("x_s", nonnegative=True)
    increase = sympy.Piecewise((a * x, x < xs), (m, True))
    return FlowLaw(increase, b * x, params, name="tcp")


def approximate_law(mu: float, x_s: float) -> FlowLaw:
    """The approximate law (10) + (18) of a flow that falls below its fixed threshold ``x_s``
    at each congestion event (Sec IV, ``x_p/2 < x_s < B/2``).

    Without congestion ``x' = mu`` (10); with congestion ``x' = -(x - x_s)`` (18), the drop
    from the peak to the threshold seen as a decrease at rate ``x - x_s``. Its utility is
    :func:`approximate_utility`, (19).

    Misprint: (18) is printed ``x' = z(t, x) f(x) = -x + x_s``; the congested branch of (3) is
    ``z (f - 1)`` (``z f`` is the increase, (10)), so (18) reads ``z (f - 1) = -(x - x_s)``.

    The decrease is negative below ``x_s``: a congested flow below its threshold is pushed back
    up to it. The law (and (19)) describe ``x > x_s``.

    Parameters
    ----------
    mu : float
        Additive increase ``mu > 0`` (as in :func:`tcp_law`).
    x_s : float
        The fixed threshold the flow falls to at each congestion event.

    Returns
    -------
    FlowLaw

    Raises
    ------
    ParameterError
        For ``mu`` not positive or ``x_s`` negative.
    """
    xs_v = float(x_s)
    if not math.isfinite(xs_v) or xs_v < 0:
        raise ParameterError(f"x_s must be finite and >= 0, got {x_s!r}")
    params = {
        "mu": Param(
            _positive("mu", mu), unit="rate/RTT", doc="additive increase", bounds=(0, None)
        ),
        "x_s": Param(xs_v, unit="rate", doc="fixed slow-start threshold", bounds=(0, None)),
    }
    xs = sympy.Symbol("x_s", nonnegative=True)
    return FlowLaw(_ps("mu"), RATE - xs, params, name="approximate")


def mrg_law(
    mu: float,
    theta: float,
    r_max: float,
    *,
    beta: float = 0.5,
    alpha: float = 1.0,
    x_s: float | None = None,
) -> FlowLaw:
    """The minimum-rate-guaranteed law (20)-(21) on the TCP law's utility.

    ``x' = z [f - (1 - not cg * r(x))]`` with ``r = r_max`` below the target ``theta`` and 1
    above: with congestion ``x' = z (f - 1)`` (the TCP decrease), without congestion
    ``x' = z (f - 1 + r)``, i.e. the TCP increase plus ``(r - 1) z``. With the TCP ``z`` and
    ``f`` this is (22): ``(3 r_max - 1) x / 2`` in slow start and ``(r_max - 1) x / 2 + mu r_max``
    in congestion avoidance (``alpha = 1``, ``beta = 1/2``).

    Parameters
    ----------
    mu, beta, alpha, x_s :
        As in :func:`tcp_law` (``x_s=None``: congestion avoidance only).
    theta : float
        Target minimum rate (parameter ``theta``).
    r_max : float
        ``r^m_max >= 1`` (parameter ``r_max``); ``r_max = 1`` is the TCP law.

    Raises
    ------
    ParameterError
        For ``theta`` negative or ``r_max < 1`` (and as :func:`tcp_law`).

    Notes
    -----
    Averaged over the sliding motion (duty fraction ``p``), the law's equilibrium below
    ``theta`` solves ``U'(x) + log r_max = -log(1 - p)``: the flow behaves as if its utility
    had the extra term ``log(r_max) min(x, theta)``. The paper's "same utility as TCP" holds
    above ``theta`` only.
    """
    base = tcp_law(mu, beta=beta, alpha=alpha, x_s=x_s)
    th = float(theta)
    if not math.isfinite(th) or th < 0:
        raise ParameterError(f"theta must be finite and >= 0, got {theta!r}")
    r = float(r_max)
    if not math.isfinite(r) or r < 1:
        raise ParameterError(f"r_max must be >= 1, got {r_max!r}")
    params = dict(base.params)
    params["theta"] = Param(th, unit="rate", doc="target minimum rate", bounds=(0, None))
    params["r_max"] = Param(r, unit="1", doc="increase factor below theta", bounds=(1, None))
    ths, rs = sympy.Symbol("theta", nonnegative=True), _ps("r_max")
    z = base.increase + base.decrease
    extra = sympy.Piecewise(((rs - 1) * z, RATE < ths), (0, True))
    return FlowLaw(base.increase + extra, base.decrease, params, name="mrg")


# ------------------------------------------------------------------------------ utilities
def continuity_constant(
    mu: float | sympy.Expr,
    beta: float | sympy.Expr = _HALF,
    alpha: float | sympy.Expr = 1,
    x_s: float | sympy.Expr = 0,
) -> sympy.Expr:
    """``C`` of (14), which makes the TCP utility continuous at ``x_s``:
    ``C = x_s log[(alpha + beta) x_s / (mu + beta x_s)] - (mu/beta) log(mu + beta x_s) + mu/beta``.

    Parameters
    ----------
    mu, beta, alpha, x_s : float or sympy.Expr
        As in :func:`tcp_law`.

    Returns
    -------
    sympy.Expr
    """
    m, b, a, xs = (_expr(v) for v in (mu, beta, alpha, x_s))
    return xs * sympy.log((a + b) * xs / (m + b * xs)) - m / b * sympy.log(m + b * xs) + m / b


def tcp_utility(
    mu: float | sympy.Expr,
    beta: float | sympy.Expr = _HALF,
    alpha: float | sympy.Expr = 1,
    x_s: float | sympy.Expr | None = None,
) -> sympy.Expr:
    """The TCP utility of Ye et al. as an expression of :data:`RATE`.

    ``x log(1 + alpha/beta)`` (8) below ``x_s``, and above it

        (mu/beta + x) [log(mu + beta x) - 1] - x [log(beta x) - 1] + C        (12)

    with ``C`` from (14) (:func:`continuity_constant`). With ``x_s=None``, (12) alone with
    ``C = 0`` (steady-state TCP, defined up to a constant). Arguments may be numbers or sympy
    symbols.

    Parameters
    ----------
    mu, beta, alpha, x_s : float or sympy.Expr
        As in :func:`tcp_law` (``x_s=None``: congestion avoidance only).

    Returns
    -------
    sympy.Expr
        An expression of :data:`RATE`.

    Notes
    -----
    For ``beta x >> mu``, ``U ~ (mu/beta) log x + C + (mu/beta) log beta``: weighted
    proportional fairness with weight ``mu/beta``.
    """
    m, b, a = (_expr(v) for v in (mu, beta, alpha))
    x = RATE
    ca = (m / b + x) * (sympy.log(m + b * x) - 1) - x * (sympy.log(b * x) - 1)
    if x_s is None:
        return ca
    xs = _expr(x_s)
    return sympy.Piecewise(
        (x * sympy.log(1 + a / b), x < xs), (ca + continuity_constant(m, b, a, xs), True)
    )


def approximate_utility(mu: float | sympy.Expr, x_s: float | sympy.Expr) -> sympy.Expr:
    """(19): ``U2(x) = (mu + x - x_s) log(mu + x - x_s) - (x - x_s) log(x - x_s)``, ``x > x_s``.

    The utility of :func:`approximate_law`; ``U2' = log(1 + mu / (x - x_s))`` (the printed form
    omits an additive constant ``-mu``, which changes no optimum).

    Parameters
    ----------
    mu, x_s : float or sympy.Expr
        As in :func:`approximate_law`.

    Returns
    -------
    sympy.Expr
        An expression of :data:`RATE`.
    """
    m, xs = _expr(mu), _expr(x_s)
    v = RATE - xs
    return (m + v) * sympy.log(m + v) - v * sympy.log(v)


# ------------------------------------------------------------------------------- networks
@dataclass(frozen=True)
class DiscreteRun:
    """A run of the discrete-time law (:meth:`BinaryFeedbackNetwork.discrete`).

    Attributes
    ----------
    t : ndarray
        Recorded times.
    x : ndarray, shape (flows, len(t))
        Rates at ``t``.
    mean_rates : ndarray
        Rates averaged over the last ``average`` fraction of the run.
    marking_fraction : ndarray
        Per link, the fraction of steps it signalled congestion over the same window.
    path_fraction : ndarray
        Per flow, the fraction of steps its path signalled congestion over the window.
    """

    t: np.ndarray
    x: np.ndarray
    mean_rates: np.ndarray
    marking_fraction: np.ndarray
    path_fraction: np.ndarray


@dataclass(frozen=True)
class BinaryFeedbackNetwork:
    """Flows following laws of the family (3)-(5) on links with capacities.

    Parameters
    ----------
    routes : array_like, shape (links, flows)
        ``routes[l, i] = 1`` when flow ``i`` crosses link ``l``.
    capacities : float or sequence
        ``B_l`` per link.
    laws : sequence of FlowLaw
        One law per flow.
    rtt : float, sequence or None
        Time unit of each flow's law in seconds (its RTT): the right-hand sides are divided by
        it (parameters ``T_i``). ``None``: time in per-flow RTTs, the paper's convention.

    Raises
    ------
    ModelError
        For a bad routing matrix or a number of laws different from the number of flows.
    ParameterError
        For capacities or RTTs that are not positive.
    """

    routes: Any
    capacities: Any
    laws: Sequence[FlowLaw]
    rtt: Any = None

    def __post_init__(self):
        A = routing_matrix(self.routes)
        object.__setattr__(self, "routes", A)
        L, F = A.shape
        laws = tuple(self.laws)
        if len(laws) != F or not all(isinstance(law, FlowLaw) for law in laws):
            raise ModelError(f"laws must be {F} FlowLaw objects, one per flow (got {len(laws)})")
        object.__setattr__(self, "laws", laws)
        caps = per_element("capacities", self.capacities, L, "link")
        for l_, c in enumerate(caps):
            _positive(f"capacities[{l_}]", c)
        object.__setattr__(self, "capacities", tuple(caps))
        if self.rtt is not None:
            rtts = per_element("rtt", self.rtt, F, "flow")
            for i, r in enumerate(rtts):
                _positive(f"rtt[{i}]", r)
            object.__setattr__(self, "rtt", tuple(rtts))

    @property
    def n_flows(self) -> int:
        return self.routes.shape[1]

    @property
    def n_links(self) -> int:
        return self.routes.shape[0]

    # ------------------------------------------------------------------ the fluid model
    def model(
        self,
        *,
        marking: str = "binary",
        width: float = 0.01,
        correlation: str = "independent",
        name: str | None = None,
    ) -> Model:
        """The fluid model: states ``x_1 ... x_F`` (rates, projected at 0).

        Signals: ``y_l`` (link loads), ``p_l`` (link congestion indicator, or marking
        probability with smooth marking), ``cg_i`` (path indicator of flow ``i``).

        Parameters
        ----------
        marking : {"binary", "smooth"}
            ``p_l = H(y_l - B_l)`` (the paper's binary indicator; Filippov sliding), or the
            logistic ``p_l = 1 / (1 + exp(-(y_l - B_l) / (width B_l)))``.
        width : float
            Relative width of the smooth marking (parameter ``width``; smooth marking only).
        correlation : {"independent", "synchronized"}
            How a path combines its links: ``1 - prod (1 - p_l)`` or ``max p_l`` (smooth
            marking only: with binary marking the path indicator must be the product form, see
            :mod:`fluidnet.dde`).
        name : str, optional

        Returns
        -------
        Model

        Raises
        ------
        OptionError
            For an unknown ``marking`` or ``correlation``, or synchronized binary marking.
        ParameterError
            For a ``width`` that is not positive.
        """
        if marking not in _MARKINGS:
            raise OptionError(f"marking must be one of {_MARKINGS}, got {marking!r}")
        if correlation not in _CORRELATIONS:
            raise OptionError(f"correlation must be one of {_CORRELATIONS}, got {correlation!r}")
        if marking == "binary" and correlation == "synchronized":
            raise OptionError(
                "correlation='synchronized' needs marking='smooth': with binary marking a path "
                "indicator max_l H(y_l - B_l) has no unique Filippov sliding motion on the "
                "intersection of the link surfaces (use the discrete-time map for synchronized "
                "binary marking)"
            )
        A = self.routes
        L, F = A.shape
        xs = [sympy.Function(f"x_{i + 1}", real=True) for i in range(F)]
        ys = [sympy.Function(f"y_{l + 1}", real=True) for l in range(L)]  # noqa: E741
        ps = [sympy.Function(f"p_{l + 1}", real=True) for l in range(L)]  # noqa: E741
        cgs = [sympy.Function(f"cg_{i + 1}", real=True) for i in range(F)]
        params: dict[Any, Param] = {}
        Bs = []
        for l_ in range(L):
            b = sympy.Symbol(f"B_{l_ + 1}", positive=True)
            params[b] = Param(
                self.capacities[l_], unit="rate", doc=f"capacity of link {l_ + 1}", bounds=(0, None)
            )
            Bs.append(b)
        sig: dict[Any, Any] = {}
        if marking == "smooth":
            wsym = sympy.Symbol("width", positive=True)
            params[wsym] = Param(
                _positive("width", width),
                unit="1",
                doc="relative width of the smooth marking",
                bounds=(0, None),
            )
        for l_ in range(L):
            sig[ys[l_]] = sum(xs[i](t) for i in range(F) if A[l_, i])
            excess = ys[l_](t) - Bs[l_]
            if marking == "binary":
                sig[ps[l_]] = sympy.Heaviside(excess)
            else:
                sig[ps[l_]] = 1 / (1 + sympy.exp(-excess / (wsym * Bs[l_])))
        rhs = {}
        for i, law in enumerate(self.laws):
            links = [l_ for l_ in range(L) if A[l_, i]]
            if correlation == "independent":
                cg = 1 - sympy.Mul(*[(1 - ps[l_](t)) for l_ in links])
            else:
                cg = sympy.Max(*[ps[l_](t) for l_ in links]) if len(links) > 1 else ps[links[0]](t)
            sig[cgs[i]] = cg
            rep = {RATE: xs[i](t)}
            for k, prm in law.params.items():
                s = sympy.Symbol(f"{k}_{i + 1}", real=True)
                rep[law.symbol(k)] = s
                params[s] = prm
            a = law.increase.xreplace(rep)
            d = law.decrease.xreplace(rep)
            f = a * (1 - cgs[i](t)) - d * cgs[i](t)
            if self.rtt is not None:
                T = sympy.Symbol(f"T_{i + 1}", positive=True)
                params[T] = Param(
                    self.rtt[i], unit="s", doc=f"RTT of flow {i + 1}", bounds=(0, None)
                )
                f = f / T
            rhs[xs[i]] = f
        return Model(
            rhs=rhs,
            params=params,
            signals=sig,
            nonnegative=xs,
            name=name or f"binary_feedback_{marking}",
        )

    # ------------------------------------------------------------------ sliding dynamics
    def sliding_model(self, name: str | None = None) -> Model:
        """The sliding motion on a single link's capacity surface, as a smooth model.

        On ``sum_i x_i = B`` the Filippov (equivalent-control) duty fraction is
        ``p = sum_i a_i / sum_i z_i`` (it keeps ``sum_i x_i' = 0``), and each flow moves by
        ``x_i' = a_i - z_i p`` (its rate law (3) averaged, ``z_i (f_i - p)``). States
        ``x_1 ... x_{F-1}``; ``x_F = B - sum`` and ``p`` are signals. Valid while
        ``0 <= p <= 1`` (the link slides). Its equilibrium has ``f_i(x_i) = p`` for every flow
        and its linearization gives the local stability of the sliding equilibrium, which the
        switching model itself cannot be linearized at.

        Parameters
        ----------
        name : str, optional
            Name of the returned model; default ``"sliding_single_link"``.

        Returns
        -------
        Model

        Raises
        ------
        ModelError
            Unless every flow crosses the one link, or with ``rtt`` set (the averaged law is
            then ``(a_i - z_i p) / T_i`` with ``p = sum (a/T) / sum (z/T)``, not built here).
        """
        if self.n_links != 1 or self.n_flows < 2:
            raise ModelError("sliding_model needs one link shared by at least two flows")
        if self.rtt is not None:
            raise ModelError("sliding_model is built in per-RTT time (rtt=None)")
        F = self.n_flows
        xs = [sympy.Function(f"x_{i + 1}", real=True) for i in range(F - 1)]
        xlast, p = sympy.Function(f"x_{F}", real=True), sympy.Function("p", real=True)
        B = sympy.Symbol("B_1", positive=True)
        params: dict[Any, Param] = {
            B: Param(self.capacities[0], unit="rate", doc="capacity of the link", bounds=(0, None))
        }
        a_all, z_all = [], []
        for i, law in enumerate(self.laws):
            xi = xs[i](t) if i < F - 1 else xlast(t)
            rep = {RATE: xi}
            for k, prm in law.params.items():
                s = sympy.Symbol(f"{k}_{i + 1}", real=True)
                rep[law.symbol(k)] = s
                params[s] = prm
            a = cast(sympy.Expr, law.increase.xreplace(rep))
            d = cast(sympy.Expr, law.decrease.xreplace(rep))
            a_all.append(a)
            z_all.append(a + d)
        sig = {xlast: B - sum(x(t) for x in xs), p: sum(a_all) / sum(z_all)}
        rhs = {xs[i]: a_all[i] - z_all[i] * p(t) for i in range(F - 1)}
        return Model(rhs=rhs, params=params, signals=sig, name=name or "sliding_single_link")

    # ------------------------------------------------------------------ discrete time
    def discrete_map(
        self, marking: str = "deterministic", correlation: str = "independent"
    ) -> DiscreteMap:
        """The discrete-time law as a :class:`~fluidnet.dde.maps.DiscreteMap` (one step of
        :meth:`discrete`).

        States ``x_i``; signals, in order, the loads ``y_l = sum_i A_li x_i``, the marks ``m_l``
        (``H(y_l - B_l)`` deterministic, else ``u < 1 / (1 + exp(-(y_l - B_l) / (width B_l)))``
        with ``u`` the link's own uniform draw ``u_l`` or, synchronized, one draw ``u`` per
        step), each flow's increase ``a_i`` and decrease ``d_i`` (its law) and path indicator
        ``cg_i = 1 - prod_{l on i} (1 - m_l)`` (1 when a link on the path marks); update
        ``x_i <- max(x_i + h_i (a_i (1 - cg_i) - d_i cg_i), 0)``. Parameters: the laws'
        (``mu_1``, ...), ``B_l``, ``h_i`` (the step over the flow's time unit, ``dt / T_i``;
        default 1) and ``width`` (random marking; default 0.01).

        Parameters
        ----------
        marking : {"deterministic", "random"}
        correlation : {"independent", "synchronized"}
            As in :meth:`discrete`.

        Returns
        -------
        DiscreteMap

        Raises
        ------
        OptionError
            For an unknown ``marking`` or ``correlation``.
        """
        if marking not in ("deterministic", "random"):
            raise OptionError(f"marking must be 'deterministic' or 'random', got {marking!r}")
        if correlation not in _CORRELATIONS:
            raise OptionError(f"correlation must be one of {_CORRELATIONS}, got {correlation!r}")
        F, L, A = self.n_flows, self.n_links, self.routes
        # one map per structure and values: networks built again (as the paper items do) reuse
        # it, and with it its compiled loop
        laws = tuple((law.increase, law.decrease, tuple(law.values().items())) for law in self.laws)
        key = (marking, correlation if marking == "random" else None, A.shape, A.tobytes())
        key += (tuple(map(float, self.capacities)), laws)
        if key in _DISCRETE_MAPS:
            return _DISCRETE_MAPS[key]

        def sym(name: str) -> sympy.Symbol:
            return sympy.Symbol(name, real=True)

        xs = [sym(f"x_{i + 1}") for i in range(F)]
        params: dict[str, float] = {}
        signals: dict[str, sympy.Expr] = {}
        for j in range(L):
            signals[f"y_{j + 1}"] = sympy.Add(*[xs[i] for i in range(F) if A[j, i]])
        random: list[str] = []
        if marking == "random":
            random = ["u"] if correlation == "synchronized" else [f"u_{j + 1}" for j in range(L)]
            params["width"] = 0.01
        for j in range(L):
            y, B = sym(f"y_{j + 1}"), sym(f"B_{j + 1}")
            params[B.name] = float(self.capacities[j])
            if marking == "deterministic":
                hit = y >= B
            else:
                u = sym(random[0] if correlation == "synchronized" else random[j])
                with sympy.evaluate(False):  # as written (and without sympy's slow evaluation)
                    hit = u < 1 / (1 + sympy.exp(-(y - B) / (sym("width") * B)))
            signals[f"m_{j + 1}"] = sympy.Piecewise((1, hit), (0, True), evaluate=False)
        for i, law in enumerate(self.laws):
            rep = {RATE: xs[i]}
            for k, v in law.values().items():
                rep[law.symbol(k)] = sym(f"{k}_{i + 1}")
                params[f"{k}_{i + 1}"] = v
            signals[f"a_{i + 1}"] = cast(sympy.Expr, law.increase.xreplace(rep))
            signals[f"d_{i + 1}"] = cast(sympy.Expr, law.decrease.xreplace(rep))
        for i in range(F):
            marks = [sym(f"m_{j + 1}") for j in range(L) if A[j, i]]
            # 1 when any mark is 1, as 1 - prod (1 - m_l): exact for marks 0 and 1, and cheap
            # for the code generator's common subexpressions (a Max of many marks is not)
            with sympy.evaluate(False):
                free = sympy.Mul(*[1 - m for m in marks]) if len(marks) > 1 else 1 - marks[0]
                signals[f"cg_{i + 1}"] = 1 - free if len(marks) > 1 else marks[0]
        update = {}
        for i in range(F):
            a, d, cg, h = (sym(f"{v}_{i + 1}") for v in ("a", "d", "cg", "h"))
            params[h.name] = 1.0
            # Max(0, v) is v when v > 0, else 0 (the printers' rule: an argument replaces the
            # running value only when strictly greater)
            with sympy.evaluate(False):
                update[xs[i].name] = sympy.Max(0, xs[i] + h * (a * (1 - cg) - d * cg))
        dmap = DiscreteMap(
            update,
            signals=signals,
            params=params,
            random=random,
            name=f"binary_feedback_discrete_{marking}"
            + (f"_{correlation}" if marking == "random" else ""),
        )
        if len(_DISCRETE_MAPS) >= 64:
            _DISCRETE_MAPS.clear()
        _DISCRETE_MAPS[key] = dmap
        return dmap

    def discrete(
        self,
        t_end: float,
        dt: float,
        x0: Sequence[float],
        *,
        marking: str = "deterministic",
        width: float = 0.01,
        correlation: str = "independent",
        seed: int | None = 0,
        average: float = 0.5,
        record_every: int = 100,
    ) -> DiscreteRun:
        """Iterate the discrete-time law ``x <- max(x + dt (a (1 - cg) - d cg) / T, 0)``.

        Movsichoff et al. show the discrete-time laws with a finite step to be stable and
        near-optimal; the step ``dt`` is the feedback interval (``dt = 1`` is one RTT). The law
        is :meth:`discrete_map` run by :func:`~fluidnet.dde.maps.iterate_map` with
        ``h_i = dt / T_i``.

        Parameters
        ----------
        t_end, dt : float
            Duration and step (in the network's time unit).
        x0 : sequence of float
            Initial rates (positive for slow start, which cannot leave 0).
        marking : {"deterministic", "random"}
            ``"deterministic"``: link ``l`` signals congestion when ``y_l >= B_l``.
            ``"random"``: with probability ``1 / (1 + exp(-(y_l - B_l) / (width B_l)))``,
            drawn from a seeded generator (reproducible).
        width : float
            Relative width of the random marking.
        correlation : {"independent", "synchronized"}
            Random marking: one uniform draw per link and step, or one draw per step shared by
            all links (links then mark together).
        seed : int or None
            Seed of :func:`numpy.random.default_rng`.
        average : float
            Fraction of the run (at its end) over which rates and marking are averaged.
        record_every : int
            Keep every ``record_every``-th step in ``DiscreteRun.t`` and ``.x``.

        Returns
        -------
        DiscreteRun

        Raises
        ------
        ParameterError
            For a non-positive ``t_end``, ``dt``, ``width``, a negative or wrongly sized
            ``x0``, ``average`` outside (0, 1].
        OptionError
            For an unknown ``marking`` or ``correlation``.
        """
        if marking not in ("deterministic", "random"):
            raise OptionError(f"marking must be 'deterministic' or 'random', got {marking!r}")
        if correlation not in _CORRELATIONS:
            raise OptionError(f"correlation must be one of {_CORRELATIONS}, got {correlation!r}")
        t_end, dt = _positive("t_end", t_end), _positive("dt", dt)
        width = _positive("width", width)
        average = _positive("average", average, upper=1.0)
        F, L = self.n_flows, self.n_links
        x = np.array(per_element("x0", x0, F, "flow"), dtype=float)
        if np.any(x < 0):
            raise ParameterError(f"x0 must be >= 0, got {list(x)}")
        steps = int(round(t_end / dt))
        if steps < 1:
            raise ParameterError(f"t_end = {t_end:g} is shorter than one step dt = {dt:g}")
        record_every = max(1, int(record_every))
        dmap = self.discrete_map(marking, correlation)
        scale = np.ones(F) if self.rtt is None else 1.0 / np.array(self.rtt)
        values = {f"h_{i + 1}": dt * scale[i] for i in range(F)}
        if marking == "random":
            values["width"] = width
        run = iterate_map(
            dmap, x, steps, params=values, seed=seed, record_every=record_every, average=average
        )
        sig = dmap.signal_names
        return DiscreteRun(
            t=run.steps * dt,
            x=run.x,
            mean_rates=run.mean_states,
            marking_fraction=np.array(
                [run.mean_signals[sig.index(f"m_{j + 1}")] for j in range(L)]
            ),
            path_fraction=np.array([run.mean_signals[sig.index(f"cg_{i + 1}")] for i in range(F)]),
        )


def binary_feedback(
    routes: ArrayLike,
    capacities: float | Sequence[float],
    laws: Sequence[FlowLaw],
    *,
    rtt: float | Sequence[float] | None = None,
    marking: str = "binary",
    width: float = 0.01,
    correlation: str = "independent",
    name: str | None = None,
) -> Model:
    """The fluid model of flows following ``laws`` on a network (Ye et al. (3)-(5)).

    Shorthand for ``BinaryFeedbackNetwork(routes, capacities, laws, rtt).model(...)``.

    Parameters
    ----------
    routes, capacities, laws, rtt
        The network, as in :class:`BinaryFeedbackNetwork`.
    marking, width, correlation, name
        The congestion signal, as in :meth:`BinaryFeedbackNetwork.model`.

    Returns
    -------
    Model

    Examples
    --------
    >>> import fluidnet as fn
    >>> laws = [fn.models.tcp_law(0.6), fn.models.tcp_law(0.2)]     # two AIMD flows
    >>> m = fn.models.binary_feedback([[1, 1]], 10.0, laws)
    >>> sol = fn.simulate(m, 400.0, history={"x_1": 1.0, "x_2": 1.0})
    >>> [round(float(v), 4) for v in sol(400.0)]     # rates proportional to mu: 3/4 and 1/4
    [7.5, 2.5]
    >>> round(sol.counters.time_sliding["-B_1 + x_1 + x_2"], 3)   # on x_1 + x_2 = B from t = 10
    390.0
    """
    return BinaryFeedbackNetwork(routes, capacities, laws, rtt).model(
        marking=marking, width=width, correlation=correlation, name=name
    )


def single_link_network(
    laws: Sequence[FlowLaw], capacity: float, *, rtt: float | Sequence[float] | None = None
) -> BinaryFeedbackNetwork:
    """Flows following ``laws`` on one link of capacity ``capacity``.

    Parameters
    ----------
    laws : sequence of FlowLaw
        One law per flow.
    capacity : float
        The link's capacity ``B``.
    rtt : float, sequence or None
        As in :class:`BinaryFeedbackNetwork`.

    Returns
    -------
    BinaryFeedbackNetwork
    """
    laws = tuple(laws)
    return BinaryFeedbackNetwork(np.ones((1, len(laws)), dtype=int), capacity, laws, rtt)


def topology_one_network(
    case: str = "I",
    *,
    x_s: float | None = None,
    approximate: Sequence[int] = (),
    capacity: float = 100.0,
    packet_bits: float = 8000.0,
    beta: float = 0.5,
    alpha: float = 1.0,
    rtt_time: bool = False,
) -> BinaryFeedbackNetwork:
    """Topology I of Ye et al. (Fig 2): three bottlenecks in a row, flow 4 crossing all three,
    flows 1-3 one each.

    Parameters
    ----------
    case : {"I", "II", "III"}
        The propagation delays of Table I, giving the RTTs :data:`TOPOLOGY_ONE_RTTS`.
    x_s : float or None
        Fixed slow-start threshold of every flow (Sec IV); ``None``: congestion avoidance only
        (Sec III, steady-state TCP).
    approximate : sequence of int
        Flows (1-4) that follow the approximate law (18) with threshold ``x_s`` instead of the
        TCP law (Table III: flow 4 for ``x_s = 10, 20``, all four for ``x_s = 40``).
    capacity : float
        Bottleneck capacity ``B`` in Mb/s (100).
    packet_bits : float
        ``w``: ``mu_i = w / RTT_i``, in Mb/s per RTT (8000 bits).
    beta, alpha : float
        The TCP law's decrease and slow-start growth.
    rtt_time : bool
        Time in seconds (each flow's law divided by its RTT) instead of per-flow RTTs.

    Raises
    ------
    ParameterError
        For an unknown case, or ``approximate`` without ``x_s``, or a flow index outside 1-4.
    """
    if case not in TOPOLOGY_ONE_RTTS:
        raise ParameterError(f"case must be one of {sorted(TOPOLOGY_ONE_RTTS)}, got {case!r}")
    r13, r4 = TOPOLOGY_ONE_RTTS[case]
    rtts = (r13, r13, r13, r4)
    approx = set(approximate)
    if approx and x_s is None:
        raise ParameterError("approximate flows need a threshold x_s")
    if not approx <= {1, 2, 3, 4}:
        raise ParameterError(f"approximate must list flows among 1-4, got {sorted(approx)}")
    laws = []
    for i, rtt in enumerate(rtts):
        mu = packet_bits * 1e-6 / rtt
        if i + 1 in approx:
            assert x_s is not None  # refused above when approximate flows are asked for
            laws.append(approximate_law(mu, x_s))
        else:
            laws.append(tcp_law(mu, beta=beta, alpha=alpha, x_s=x_s))
    routes = [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]]
    return BinaryFeedbackNetwork(routes, capacity, laws, rtts if rtt_time else None)
