"""SBRM (Single-Bit Resource Marking) fluid model with the Direct Window Update source.

Source: M. Zimmermann, *Congestion Pricing as Scalable, Efficient and Stable Congestion Control
for Future IP Networks* (doctoral dissertation, 2005), Section 6.4, equations (6.4.1)-(6.4.7):

* (6.4.1) ``x_n(t) = cwnd_n(t) / RTT_n(t)``
* (6.4.2) ``cwnd_n' = kappa (w_n RTT_n(t)/cwnd_n(t) - p_n(t)) x_n(t - RTT_n(t))``
* (6.4.3) ``p_n(t) = sum_{l in L(n)} m_l(t - tau^b_ln(t))`` (small-marking approximation of
  ``1 - prod_l (1 - m_l(t - tau^b_ln(t)))``, available with ``marking="product"``)
* (6.4.4) ``y_l(t) = sum_{n in N(l)} x_n(t - tau^f_ln(t))``
* (6.4.5) ``RTT_n(t) = d_n + sum_{l in L(n)} b_l(t)/c_l`` (``d_n`` is the *propagation* delay)
* (6.4.6) ``b_l' = y_l(t) - c_l``, projected at ``b_l = 0`` (the text states it for ``b_l > 0``)
* (6.4.7) ``m_l(t) = 1 - exp(-gamma_l [b_l(t) - b0_l]^+)``

Conventions the text leaves unstated (M4-M6; labels M1, M2, ... are the misprints and
conventions listed in ``papers/sbrm/README.md``), used as defaults:

* the forward and backward delays split the current round trip, ``tau^f = split RTT(t)`` and
  ``tau^b = (1 - split) RTT(t)`` with ``split = 1/2`` (this is what reproduces Table 6.6.2);
* time in seconds, capacities in pkts/s (Table 6.6.2 prints pkts/ms), willingness to pay ``w`` in
  pkts/s, ``gamma`` in 1/pkt.

The source is the Direct Window Update algorithm (4.2.3), not the ns-2 SBRM source (5.1.2)/(5.1.3)
(M11): its equilibrium is ``x_n = w_n / p_n`` (utility ``w_n ln x_n``), Table 5.5.1.

Linearizing the model (``m.linearize()``) freezes the delays at the equilibrium and keeps the
state dependence of ``RTT`` inside the right-hand side, as Section 6.5 does. The queue seen in the
source's RTT is the current one, ``b(t)``, as (6.4.2)/(6.4.5) and (6.5.3) write it; (6.5.1) uses
``b(t - tau^f)`` instead (M10), which is why the paper's loop gain carries
``e^{-2 tau^f s}`` on the small RTT-increase path where the derived one has ``e^{-tau^f s}``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ..errors import ModelError, ParameterError
from ..linear.delaytf import DelayTF
from ..linear.quasipoly import QuasiPolynomial
from ..symbolic.model import Model, Param
from ..symbolic.symbols import params, signals, states, t
from .network import per_element, routing_matrix

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "sbrm",
    "sbrm_network",
    "sbrm_steady_state",
    "sbrm_printed_loop_gain",
    "sbrm_printed_loop_gain_network",
    "sbrm_printed_linear",
    "PAPER_DEFAULTS",
]

#: Table 6.6.1 (SBRM rows) plus the example of Figs 6.6.1/6.6.3 (N = 30, c = 10 pkts/ms).
PAPER_DEFAULTS: dict[str, float] = {
    "N": 30.0,
    "c": 10_000.0,
    "d": 0.086,
    "kappa": 0.2,
    "w": 20.0,
    "gamma": 0.006,
    "b0": 50.0,
    "split": 0.5,
}


def _link_params() -> dict[str, tuple[str, str, tuple]]:
    return {
        "c": ("pkts/s", "link capacity (Table 6.6.2 prints pkts/ms)", (0, None)),
        "gamma": ("1/pkt", "SBRM marking scale, m = 1 - exp(-gamma [b - b0]^+)", (0, None)),
        "b0": ("pkts", "marking threshold (target queue)", (0, None)),
    }


def _source_params() -> dict[str, tuple[str, str, tuple]]:
    return {
        "N": ("1", "number of identical flows", (0, None)),
        "d": ("s", "round-trip propagation delay (RTT* = d + b*/c)", (0, None)),
        "kappa": ("1", "source gain kappa-bar = kappa RTT (0 < kappa-bar < 1)", (0, None)),
        "w": ("pkts/s", "willingness to pay", (0, None)),
    }


def _param(meta: tuple[str, str, tuple], value: float | None) -> Param:
    unit, doc, bounds = meta
    return Param(value, unit=unit, doc=doc, bounds=bounds)


def _marking(b, gamma, b0):
    """(6.4.7) ``1 - exp(-gamma [b - b0]^+)``."""
    return 1 - sympy.exp(-gamma * sympy.Max(b - b0, 0))


def sbrm(**values: float) -> Model:
    """The homogeneous single-link SBRM fluid model, Zimmermann (2005) (6.4.1)-(6.4.7).

    ``N`` identical Direct-Window-Update sources share one SBRM link. States ``W`` (congestion
    window, pkts) and ``b`` (queue, pkts, projected at 0). Signals ``rtt`` (6.4.5), ``x`` (6.4.1),
    ``m`` (6.4.7) and ``p = m(t - tau^b)`` (6.4.3); the loop gain of Section 6.5 is cut at ``p``
    (``m.loop_gain("p")``).

    Parameters
    ----------
    **values
        Overrides of the defaults (:data:`PAPER_DEFAULTS`: Table 6.6.1 with N = 30,
        c = 10 000 pkts/s, d = 86 ms): ``N``, ``c`` [pkts/s], ``d`` [s, propagation RTT],
        ``kappa`` (kappa-bar), ``w`` [pkts/s], ``gamma`` [1/pkt], ``b0`` [pkts], ``split``
        (``tau^f / RTT``).

    Returns
    -------
    Model

    Examples
    --------
    >>> import fluidnet as fn
    >>> eq = fn.models.sbrm(N=30, c=10_000, d=0.086).equilibrium()
    >>> round(eq["b"], 2), round(eq["W"], 2)       # b* = b0 - ln(1 - Nw/c)/gamma, W* = c RTT*/N
    (60.31, 30.68)
    """
    W, b = states("W b")
    rtt, x, m, p = signals("rtt x m p")
    N, c, d, kappa, w, gamma, b0, split = params("N c d kappa w gamma b0 split")
    meta = {**_source_params(), **_link_params()}
    pdefs: dict[Any, Param] = {
        sym: _param(meta[sym.name], PAPER_DEFAULTS[sym.name])
        for sym in (N, c, d, kappa, w, gamma, b0)
    }
    pdefs[split] = Param(0.5, unit="1", doc="forward share of the RTT, tau^f/RTT", bounds=(0, 1))
    model = Model(
        rhs={
            W: kappa * (w * rtt(t) / W(t) - p(t)) * x(t - rtt(t)),  # (6.4.2)
            b: N * x(t - split * rtt(t)) - c,  # (6.4.4), (6.4.6)
        },
        params=pdefs,
        signals={
            rtt: d + b(t) / c,  # (6.4.5)
            x: W(t) / rtt(t),  # (6.4.1)
            m: _marking(b(t), gamma, b0),  # (6.4.7)
            p: m(t - (1 - split) * rtt(t)),  # (6.4.3), one link
        },
        nonnegative=[b],
        name="sbrm",
    )
    return model.with_params(**values) if values else model


def sbrm_network(
    A: ArrayLike,
    *,
    N: float | Sequence[float] = 1.0,
    d: float | Sequence[float] = 0.05,
    w: float | Sequence[float] = 20.0,
    kappa: float | Sequence[float] = 0.2,
    c: float | Sequence[float] = 10_000.0,
    gamma: float | Sequence[float] = 0.006,
    b0: float | Sequence[float] = 50.0,
    forward: ArrayLike = 0.5,
    marking: str = "sum",
) -> Model:
    """The general SBRM fluid model on a network, Zimmermann (2005) (6.4.1)-(6.4.7).

    Source class ``n`` (``N_n`` identical flows, propagation RTT ``d_n``, willingness to pay
    ``w_n``, gain ``kappa_n``) uses the links ``l`` with ``A[l, n] = 1``. States ``W_n`` (window of
    one flow of class n) and ``b_l`` (queue of link l, projected at 0); signals ``rtt_n``, ``x_n``,
    ``m_l``, ``y_l`` and ``p_n``.

    Parameters
    ----------
    A : array_like, shape (links, sources)
        Routing (incidence) matrix of zeros and ones.
    N, d, w, kappa : float or sequence
        Per source class (model parameters ``N_n``, ``d_n``, ``w_n``, ``kappa_n``).
    c, gamma, b0 : float or sequence
        Per link (parameters ``c_l``, ``gamma_l``, ``b0_l``).
    forward : float or array_like, shape (links, sources)
        Forward delay from source n to link l as a share of the current round trip:
        ``tau^f_ln(t) = forward[l, n] RTT_n(t)`` and ``tau^b_ln = RTT_n - tau^f_ln``
        (the text requires only ``tau^f + tau^b = RTT``; 1/2 is its single-link convention).
    marking : {"sum", "product"}
        End-to-end marking: the small-m sum (6.4.3), or the exact
        ``1 - prod_l (1 - m_l(t - tau^b_ln))`` printed just above it.

    Returns
    -------
    Model

    Raises
    ------
    ModelError
        For a routing matrix that is not 0/1, a source without a link or a link without a source,
        or an unknown ``marking``.
    ParameterError
        For per-source / per-link values of the wrong length, or a forward share outside [0, 1].
    """
    A = routing_matrix(A)
    L, S = A.shape
    if marking not in ("sum", "product"):
        raise ModelError(f"marking must be 'sum' or 'product', got {marking!r}")
    fwd = np.asarray(forward, dtype=float)
    try:
        fwd = np.broadcast_to(fwd, (L, S))
    except ValueError as exc:
        raise ParameterError(
            f"forward must be a number or a ({L}, {S}) array, got shape {fwd.shape}"
        ) from exc
    if np.any(~np.isfinite(fwd)) or np.any(fwd < 0) or np.any(fwd > 1):
        raise ParameterError(f"forward shares must lie in [0, 1], got {fwd.tolist()}")
    src_vals = {
        k: per_element(k, v, S, "source") for k, v in dict(N=N, d=d, w=w, kappa=kappa).items()
    }
    link_vals = {k: per_element(k, v, L, "link") for k, v in dict(c=c, gamma=gamma, b0=b0).items()}

    Wf = [sympy.Function(f"W_{n + 1}", real=True) for n in range(S)]
    bf = [sympy.Function(f"b_{ll + 1}", real=True) for ll in range(L)]
    rttf = [sympy.Function(f"rtt_{n + 1}", real=True) for n in range(S)]
    xf = [sympy.Function(f"x_{n + 1}", real=True) for n in range(S)]
    mf = [sympy.Function(f"m_{ll + 1}", real=True) for ll in range(L)]
    yf = [sympy.Function(f"y_{ll + 1}", real=True) for ll in range(L)]
    pf = [sympy.Function(f"p_{n + 1}", real=True) for n in range(S)]
    sp = {k: [sympy.Symbol(f"{k}_{n + 1}", real=True) for n in range(S)] for k in src_vals}
    lp = {k: [sympy.Symbol(f"{k}_{ll + 1}", real=True) for ll in range(L)] for k in link_vals}

    pdefs: dict[Any, Param] = {}
    for k, syms in sp.items():
        for n, sym in enumerate(syms):
            pdefs[sym] = _param(_source_params()[k], src_vals[k][n])
    for k, syms in lp.items():
        for ll, sym in enumerate(syms):
            pdefs[sym] = _param(_link_params()[k], link_vals[k][ll])

    sig: dict[Any, Any] = {}
    for n in range(S):
        links = [ll for ll in range(L) if A[ll, n]]
        sig[rttf[n]] = sp["d"][n] + sum(bf[ll](t) / lp["c"][ll] for ll in links)  # (6.4.5)
        sig[xf[n]] = Wf[n](t) / rttf[n](t)  # (6.4.1)
    for ll in range(L):
        sig[mf[ll]] = _marking(bf[ll](t), lp["gamma"][ll], lp["b0"][ll])  # (6.4.7)
        users = [n for n in range(S) if A[ll, n]]
        sig[yf[ll]] = sum(  # (6.4.4)
            sp["N"][n] * xf[n](t - _share(fwd[ll, n]) * rttf[n](t)) for n in users
        )
    for n in range(S):
        links = [ll for ll in range(L) if A[ll, n]]
        delayed = [mf[ll](t - _share(1 - fwd[ll, n]) * rttf[n](t)) for ll in links]
        if marking == "sum":
            sig[pf[n]] = sum(delayed)  # (6.4.3)
        else:
            sig[pf[n]] = 1 - sympy.Mul(*[1 - v for v in delayed])

    rhs: dict[Any, Any] = {}
    for n in range(S):
        rhs[Wf[n]] = (  # (6.4.2)
            sp["kappa"][n] * (sp["w"][n] * rttf[n](t) / Wf[n](t) - pf[n](t)) * xf[n](t - rttf[n](t))
        )
    for ll in range(L):
        rhs[bf[ll]] = yf[ll](t) - lp["c"][ll]  # (6.4.6)
    return Model(rhs=rhs, params=pdefs, signals=sig, nonnegative=bf, name="sbrm_network")


def _share(v: float) -> sympy.Expr:
    """A delay share as an exact sympy number (1/2 stays 1/2, so equal delays merge)."""
    return sympy.nsimplify(float(v), rational=True) if math.isfinite(v) else sympy.nan


def _check_positive(**vals: float) -> None:
    for k, v in vals.items():
        if not (isinstance(v, (int, float, np.floating, np.integer)) and math.isfinite(v)):
            raise ParameterError(f"{k} = {v!r} must be a finite number")
        if k not in ("b0", "d") and v <= 0:
            raise ParameterError(f"{k} = {v!r} must be > 0")
        if v < 0:
            raise ParameterError(f"{k} = {v!r} must be >= 0")


def sbrm_steady_state(
    N: float,
    c: float,
    d: float,
    *,
    w: float = 20.0,
    gamma: float = 0.006,
    b0: float = 50.0,
) -> dict[str, float]:
    """Table 5.5.1 (SBRM column) for N identical sources on one link, plus (6.4.5) and (5.5.8).

    ``p* = N w / c`` (5.5.6), ``b* = b0 - ln(1 - p*)/gamma`` (5.5.7), ``RTT* = d + b*/c``,
    ``x* = c/N`` (5.5.5) and ``cwnd* = RTT* x*`` (5.5.8, with ``RTT*_n`` for the printed
    ``RTT*_m``).

    Returns
    -------
    dict
        ``p``, ``b`` [pkts], ``rtt`` [s], ``x`` [pkts/s], ``W`` [pkts].

    Raises
    ------
    ParameterError
        For non-positive N, c, w or gamma, negative d or b0, or ``N w >= c`` (no equilibrium
        with a marking probability below 1).
    """
    _check_positive(N=N, c=c, d=d, w=w, gamma=gamma, b0=b0)
    p = N * w / c
    if p >= 1:
        raise ParameterError(
            f"N w / c = {p:g} >= 1: the sources' willingness to pay exceeds the capacity "
            f"c = {c:g} pkts/s (5.5.6 needs sum w < c)"
        )
    b = b0 - math.log1p(-p) / gamma
    rtt = d + b / c
    return {"p": p, "b": b, "rtt": rtt, "x": c / N, "W": c * rtt / N}


def sbrm_printed_loop_gain(
    N: float,
    c: float,
    d: float,
    *,
    kappa: float = 0.2,
    w: float = 20.0,
    gamma: float = 0.006,
    b0: float = 50.0,
    form: str = "printed",
    split: float = 0.5,
) -> DelayTF:
    """The homogeneous SBRM loop gain (6.5.21) as a :class:`~fluidnet.DelayTF`.

    ``L(s) = N (kb W* e^{-RTT* s} - kb (w/c) e^{-2 tau^f s}) / (RTT*^2 (s + kb w/W*))
    * P_aqm / (s + (N/c)(W*/RTT*^2) e^{-tau^f s})`` at the Table 5.5.1 steady state,
    with ``tau^f = split RTT*``.

    Parameters
    ----------
    form : {"printed", "corrected"}
        ``"printed"``: as printed, ``P_aqm = gamma e^{-gamma (b* - b0)}`` multiplies both
        numerator terms. ``"corrected"``: it multiplies only the marking term (misprint M1: the
        RTT-increase term ``kb w/c`` is dimensionless while ``kb W*`` is in packets;
        (6.5.16)-(6.5.19) put ``P_aqm`` on the marking path only). The printed form is the one
        that reproduces Table 6.6.2.

    Raises
    ------
    ParameterError
        For an unknown ``form`` or invalid parameters (see :func:`sbrm_steady_state`).
    """
    if form not in ("printed", "corrected"):
        raise ParameterError(f"form must be 'printed' or 'corrected', got {form!r}")
    if not 0 <= split <= 1:
        raise ParameterError(f"split = {split!r} must lie in [0, 1]")
    _check_positive(kappa=kappa)
    ss = sbrm_steady_state(N, c, d, w=w, gamma=gamma, b0=b0)
    R, Wst = ss["rtt"], ss["W"]
    tf = split * R
    paqm = gamma * math.exp(-gamma * max(ss["b"] - b0, 0.0))  # (6.5.19)
    k_delay = paqm if form == "printed" else 1.0
    num = QuasiPolynomial([(R, [N * kappa * Wst * paqm]), (2 * tf, [-N * kappa * w / c * k_delay])])
    source = QuasiPolynomial([R**2, R**2 * kappa * w / Wst])  # RTT*^2 (s + kb w / W*)
    buffer = QuasiPolynomial({0.0: [1.0, 0.0], tf: [N / c * Wst / R**2]})
    return DelayTF(num, source * buffer)


def sbrm_printed_loop_gain_network(
    N: Sequence[float],
    d: Sequence[float],
    c: float,
    *,
    w: float | Sequence[float] = 20.0,
    kappa: float | Sequence[float] = 0.2,
    gamma: float = 0.006,
    b0: float = 50.0,
    form: str = "printed",
    split: float = 0.5,
) -> DelayTF:
    """The single-link loop gain with heterogeneous sources, (6.5.20), as a DelayTF.

    Source class ``n`` has ``N[n]`` identical flows with propagation delay ``d[n]``, willingness
    to pay ``w[n]`` and gain ``kappa[n]``; (6.5.20) sums over flows, so each class term is
    multiplied by ``N[n]``. Steady state (Table 5.5.1): ``p* = sum N_n w_n / c``,
    ``b* = b0 - ln(1 - p*)/gamma``, ``RTT*_n = d_n + b*/c``, ``x*_n = w_n / p*``,
    ``cwnd*_n = x*_n RTT*_n``. ``form`` as in :func:`sbrm_printed_loop_gain` (misprint M1); the
    buffer term uses ``RTT*_i^2`` (misprint M8).

    Raises
    ------
    ParameterError
        For mismatched lengths, an unknown ``form`` or ``sum N w >= c``.
    """
    if form not in ("printed", "corrected"):
        raise ParameterError(f"form must be 'printed' or 'corrected', got {form!r}")
    S = len(N)
    Nv, dv = per_element("N", N, S, "class"), per_element("d", d, S, "class")
    wv, kv = per_element("w", w, S, "class"), per_element("kappa", kappa, S, "class")
    _check_positive(c=c, gamma=gamma, b0=b0)
    p = sum(n * x for n, x in zip(Nv, wv, strict=True)) / c
    if p >= 1:
        raise ParameterError(f"sum N w / c = {p:g} >= 1: no equilibrium below full marking")
    b = b0 - math.log1p(-p) / gamma
    paqm = gamma * (1 - p)
    k_delay = paqm if form == "printed" else 1.0
    buffer = QuasiPolynomial([(0.0, [1.0, 0.0])])
    terms = []
    for n in range(S):
        R = dv[n] + b / c
        Wn = wv[n] / p * R
        buffer = buffer + QuasiPolynomial([(split * R, [Nv[n] * Wn / (c * R**2)])])
        num = QuasiPolynomial(
            [
                (R, [Nv[n] * kv[n] * Wn * paqm]),
                (2 * split * R, [-Nv[n] * kv[n] * wv[n] / c * k_delay]),
            ]
        )
        terms.append(DelayTF(num, QuasiPolynomial([R**2, R**2 * kv[n] * wv[n] / Wn])))
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total / DelayTF(buffer)


def sbrm_printed_linear(form: str = "printed", **values: float) -> Model:
    """A linear delay model of Section 6.5 whose loops are exactly the printed (6.5.21).

    States ``dW`` and ``db`` (deviations of window and queue) with the Table 5.5.1 steady state
    written in the parameters, so :func:`fluidnet.critical_value` can sweep ``d`` (or any other
    parameter) through the *printed* loop gain. Signals: ``q = db`` (the queue as the sources see
    it, through marking and RTT) and ``p = P_aqm q(t - tau^b)`` (the linearized marking):

    ``dW' = -kb (w/W*) dW - kb (W*/RTT*) p + kb (w/(c RTT*)) k q(t - tau^f)``
    ``db' = (N/RTT*) dW(t - tau^f) - (N W*/(c RTT*^2)) db(t - tau^f)``

    with ``k = P_aqm`` for ``form="printed"`` and ``k = 1`` for ``"corrected"`` (misprint M1).
    ``loop_gain("q")`` is (6.5.21) as printed (or corrected); ``loop_gain("p")`` is the same loop
    cut where :func:`sbrm`'s ``loop_gain("p")`` cuts it, for a like-for-like comparison.

    Parameters
    ----------
    form : {"printed", "corrected"}
    **values
        Overrides of :data:`PAPER_DEFAULTS` (``N``, ``c``, ``d``, ``kappa``, ``w``, ``gamma``,
        ``b0``, ``split``).

    Raises
    ------
    ParameterError
        For an unknown ``form``.
    """
    if form not in ("printed", "corrected"):
        raise ParameterError(f"form must be 'printed' or 'corrected', got {form!r}")
    dW, db = states("dW db")
    q, p_sig = signals("q p")
    N, c, d, kappa, w, gamma, b0, split = params("N c d kappa w gamma b0 split")
    p = N * w / c
    bst = b0 - sympy.log(1 - p) / gamma
    R = d + bst / c
    Wst = c * R / N
    paqm = gamma * (1 - p)  # gamma e^{-gamma (b* - b0)} with (5.5.7)
    k = paqm if form == "printed" else 1
    tf, tb = split * R, (1 - split) * R
    meta = {**_source_params(), **_link_params()}
    pdefs: dict[Any, Param] = {
        sym: _param(meta[sym.name], PAPER_DEFAULTS[sym.name])
        for sym in (N, c, d, kappa, w, gamma, b0)
    }
    pdefs[split] = Param(0.5, unit="1", doc="forward share of the RTT, tau^f/RTT", bounds=(0, 1))
    model = Model(
        rhs={
            dW: -kappa * w / Wst * dW(t)
            - kappa * Wst / R * p_sig(t)
            + kappa * w / (c * R) * k * q(t - tf),
            db: N / R * dW(t - tf) - N * Wst / (c * R**2) * db(t - tf),
        },
        params=pdefs,
        signals={q: db(t), p_sig: paqm * q(t - tb)},
        name=f"sbrm_printed_linear_{form}",
    )
    return model.with_params(**values) if values else model
