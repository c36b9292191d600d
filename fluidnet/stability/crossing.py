"""Imaginary-axis crossings of characteristic roots as one parameter varies: shared numerics.

A *crossing* is a parameter value where a characteristic root of a linear delay system lies on
the imaginary axis and the number ``N`` of roots in the open right half-plane changes.
:mod:`fluidnet.stability.delaysweep` (exact, for delays) and :mod:`fluidnet.stability.rootpaths`
(root continuation, for any parameter) find them; this module holds what both use: the sampled
system, its certified right-half-plane count, Newton's method on ``det Delta`` and the
:class:`Crossing` record.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import AnalysisError, ParameterError
from ..linear.large import LARGE_STATES
from ..linear.lineardde import LinearDDE
from ..linear.roots import CharacteristicRoot, Roots, certified_roots, characteristic_roots
from ..linear.stacked import dense_kernel

__all__ = [
    "Crossing",
    "Sweep",
    "anchor_value",
    "local_scale",
    "newton_roots",
    "on_axis",
    "rate_scale",
    "size_unit",
]

#: A root with ``|Re| <= AXIS_TOL * max(unit, |lambda|)`` is on the imaginary axis (not counted),
#: ``unit`` being the system's :func:`size_unit`.
AXIS_TOL = 1e-9
#: A root with ``|Im| <= REAL_TOL * (unit + |lambda|)`` is real.
REAL_TOL = 1e-9
#: :func:`newton_roots` with ``give_up`` leaves a start whose step is still longer than this
#: times ``unit + |lambda|`` unconverged (a start in a root's basin is far below it by then).
WANDER_STEP = 1e-3
#: A system whose :func:`rate_scale` is below this is *slow*: its tolerances are relative to its
#: own rates (:func:`size_unit`), and its roots are solved in a unit of time where its rates are
#: of order one (:func:`unit_time_roots`).
SLOW_RATES = 2.0**-10


def on_axis(lam: complex, unit: float = 1.0) -> bool:
    """Whether ``lam`` lies on the imaginary axis: ``|Re| <= AXIS_TOL * max(unit, |lam|)``.

    Pass the system's :func:`size_unit`; the default 1 suits systems whose rates are of order
    one or larger.
    """
    return abs(lam.real) <= AXIS_TOL * max(unit, abs(lam))


# the rate scale of a system, computed once per system
_SCALES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def rate_scale(lin: LinearDDE) -> float:
    """The size of a delay system's rates (1/s): the larger of ``1 / tau_max`` and
    ``||A0|| + sum_k ||A_k||`` (2-norms) of the balanced system; 1 for a system without delays.

    The norm bounds ``|lambda|`` for every root with ``Re lambda >= 0``, in any similar
    realization; ``1 / tau_max`` is the scale of the delays, which stays when the gains vanish
    (where a root crosses at 0). Together they set what "small" means for the roots: a system
    whose rates are all about 1e-12 (RCP with a delay of 1e12 s) has roots of that size, none
    of them "at 0" for being small. A system without delays has no scale of its own that
    survives a root crossing at 0, and keeps the unit one.
    """
    if not lin.delays:
        return 1.0
    got = _SCALES.get(lin)
    if got is None:
        from ..linear.roots import balanced

        bal = balanced(lin, mild=1.0)
        norm = float(np.linalg.norm(bal.A0, 2)) + sum(float(np.linalg.norm(a, 2)) for a in bal.A)
        got = _SCALES[lin] = max(norm, 1.0 / lin.max_delay)
    return got


def size_unit(lin: LinearDDE) -> float:
    """The floor of the size against which roots of ``lin`` are compared (relative
    tolerances ``tol * (unit + |lambda|)``): 1, fit for rates of order one, unless the system
    is slow (:func:`rate_scale` below :data:`SLOW_RATES`, about 1e-3), whose tolerances are
    then relative to its own rate scale. (Systems that are not slow keep the arithmetic they
    always had.)"""
    if not lin.delays or 1.0 / lin.max_delay >= SLOW_RATES:
        return 1.0  # rate_scale(lin) >= 1 / tau_max: not slow, without balancing the system
    scale = rate_scale(lin)
    return scale if scale < SLOW_RATES else 1.0


@dataclass(frozen=True, kw_only=True)
class Crossing:
    """One crossing of the imaginary axis by characteristic roots.

    Attributes
    ----------
    value : float
        The parameter value.
    omega : float
        Crossing frequency ``|Im lambda|`` (rad/s); 0 for a real root crossing at the origin.
    change : int
        Change of the number of right-half-plane roots (counted with multiplicity) as the
        parameter increases through ``value``: ``+2`` for a complex pair of a real system
        entering the right half-plane, ``-1`` for a real root leaving it, ...
    count_before, count_after : int
        The number of right-half-plane roots just below and just above ``value``.
    root : complex
        The root on the axis (``Im >= 0`` for a real system).
    """

    value: float
    omega: float
    change: int
    count_before: int
    count_after: int
    root: complex

    @property
    def direction(self) -> str:
        """``"destabilizing"`` when roots enter the right half-plane, else ``"stabilizing"``."""
        return "destabilizing" if self.change > 0 else "stabilizing"

    @property
    def is_switch(self) -> bool:
        """True when stability changes here (the count goes from 0 or to 0)."""
        return (self.count_before == 0) != (self.count_after == 0)

    @property
    def frequency(self) -> float:
        """Crossing frequency in Hz."""
        return self.omega / (2.0 * math.pi)


@dataclass(frozen=True)
class Count:
    """The certified number of right-half-plane roots at one parameter value."""

    value: float
    count: int
    roots: Roots

    @property
    def abscissa(self) -> float:
        return self.roots.abscissa


#: Rightmost roots a full count asks for first (more for a small system: ``2 n``); it doubles
#: them until the leftmost is stable (:meth:`Sweep.count`).
FIRST_ROOTS = 6


class Sweep:
    """The linear system along one parameter, with cached systems and counts.

    Parameters
    ----------
    factory : SystemFactory
    name : str
        The swept parameter.
    root_options : dict
        Keyword arguments for :func:`~fluidnet.linear.roots.characteristic_roots`.
    continued : bool, default True
        A model's equilibrium at each new value is continued from the nearest value solved
        (:class:`~fluidnet.stability.system.ContinuedSystems`): the full equilibrium search
        runs at the first value only (and where the continuation cannot settle a value).
        :meth:`same_branch` checks a result's value against the full search.
    anchor : float, optional
        With ``continued``: the value where the full search runs first, whatever value is
        asked for first; every other value is continued from it (or from values continued
        since). A value where the equilibrium is known already (the model's own value of the
        parameter, kept by the equilibrium search: see :func:`anchor_value`) costs a recall
        instead of a search.
    """

    #: Whether :meth:`lin` is the whole system (not a part of its factored determinant,
    #: :class:`~fluidnet.stability.factoredpaths.PartSweep`): its counts are the system's.
    whole_system = True

    def __init__(
        self,
        factory,
        name: str,
        root_options: dict[str, Any],
        continued: bool = True,
        anchor: float | None = None,
    ):
        from .system import ContinuedSystems

        self.factory = factory
        self.name = name
        self.root_options = dict(root_options)
        self._lins: dict[float, LinearDDE] = {}
        self.n_systems = 0
        self.n_counts = 0
        self.continued = continued and bool(getattr(factory, "is_model", False))
        self._systems = ContinuedSystems(factory) if self.continued else factory
        self._anchor = float(anchor) if self.continued and anchor is not None else None
        #: the anchor given (kept after the full search there has run)
        self.anchor = self._anchor

    def lin(self, p: float) -> LinearDDE:
        p = float(p)
        lin = self._lins.get(p)
        if lin is None and self._anchor is not None:
            anchor, self._anchor = self._anchor, None
            if anchor != p and not self._lins:
                try:  # the full search at the anchor: the start of every continued value
                    self.lin(anchor)
                except (AnalysisError, ParameterError):
                    pass  # p gets the full search instead
        if lin is None:
            try:
                lin = self._systems(**{self.name: p})
            except (AnalysisError, ParameterError) as exc:
                raise type(exc)(f"at {self.name}={p:.12g}: {exc}") from exc
            self.n_systems += 1
            if len(self._lins) > 256:
                self._lins.clear()
            self._lins[p] = lin
        return lin

    def same_branch(self, p: float) -> bool:
        """Whether the system used at ``p`` is the one the full equilibrium search gives there
        (what a per-value :meth:`Model.linearize` returns): the continuation followed the
        branch the full search ranks first. Compared by the characteristic function at a few
        points (relative ``1e-7``). Always true without continuation."""
        if not self.continued:
            return True
        ours = self.lin(p)
        try:  # the full search stopped once its first equilibrium is known
            full = self.factory.first_found(**{self.name: float(p)})
        except (AnalysisError, ParameterError):
            return False
        scale = 1.0 / ours.max_delay if ours.delays else 1.0
        s = scale * np.array([0.5, 1.0 + 1.0j, 0.3 + 3.0j, 10.0j])
        a, b = ours.characteristic(s), full.characteristic(s)
        return bool(np.all(np.abs(a - b) <= 1e-7 * np.maximum(np.abs(a), np.abs(b))))

    @property
    def real(self) -> bool:
        return is_real(next(iter(self._lins.values())))

    def count(self, p: float, k: int | None = None, rhp_only: bool = False) -> Count:
        """Right-half-plane roots at ``p`` (with multiplicity), from the rightmost roots.

        At least ``k`` rightmost roots are computed, and more until the leftmost of them lies in
        the open left half-plane: every right-half-plane root is then among them
        (:func:`~fluidnet.linear.roots.characteristic_roots` resolves every root right of the
        ones it returns). With ``rhp_only``, only the roots in the closed right half-plane
        (``region=0``).
        """
        closed = self.closed_count(p, k)
        if closed is not None:
            return closed
        lin = self.lin(p)
        if rhp_only:
            self.n_counts += 1
            roots = certified_roots(lin, region=0.0, solve=unit_time_roots, **self.root_options)
            return Count(float(p), rhp_count(roots, size_unit(lin)), self._certified(p, roots))
        # 2 n rightmost roots to start with, but not for a system the rectangles of
        # fluidnet.linear.large solve (200 roots of a 100-state network exhausted their budget):
        # the loop asks for more until the leftmost root is in the left half-plane
        k = max(k or 0, FIRST_ROOTS, 2 * lin.n if lin.n < LARGE_STATES else 0)
        while True:
            self.n_counts += 1
            roots = certified_roots(lin, k, solve=unit_time_roots, **self.root_options)
            if len(roots) < k or roots[-1].real < 0 or k >= 512:
                break
            k *= 2
        return Count(float(p), rhp_count(roots, size_unit(lin)), self._certified(p, roots))

    def closed_count(self, p: float, k: int | None = None) -> Count | None:
        """The count at ``p`` from a closed form of the roots, when the system has one whose
        theorem covers it (at least ``k`` roots, every root right of the line of its
        certificate; counted in :attr:`n_counts`); ``None`` here, and wherever a subclass's
        closed form does not apply: :meth:`count` then computes the roots in general."""
        return None

    def _certified(self, p: float, roots: Roots) -> Roots:
        """``roots``, or an :class:`AnalysisError` when the argument principle does not confirm
        them (a root may be missing, so the count would not be one)."""
        with np.errstate(over="ignore", invalid="ignore"):
            certified = roots.certified
        if certified is False:
            fixed = self.root_options.get("n_nodes")
            if roots.n_nodes == 0 and roots.reason:
                # a large system: rectangles and the argument principle, no discretization
                # (root_options do not apply to it)
                advice = (
                    f"the search of this large system by rectangles gave up: {roots.reason} "
                    "(root_options, which size a discretization, do not apply to it)"
                )
            elif fixed is not None:
                advice = (
                    f"root_options fixes n_nodes={fixed}: pass a larger one, e.g. "
                    f"{{'n_nodes': {2 * int(fixed)}}}, or leave it out (the discretization then "
                    "grows until the count is certified)"
                )
            else:
                top = self.root_options.get("max_nodes", 400)
                advice = (
                    f"the discretization grew to {roots.n_nodes} nodes (max_nodes={top}) without "
                    f"it: pass root_options={{'max_nodes': {2 * int(top)}}}, or split the "
                    "interval at this value"
                )
            line = f"on Re s = {roots.certificate:.6g} " if math.isfinite(roots.certificate) else ""
            raise AnalysisError(
                f"the number of right-half-plane roots at {self.name}={p:.12g} is not "
                f"certified: the argument principle {line}does not confirm the roots found; "
                f"{advice}"
            )
        return roots

    def count_edge(self, p: float, span: float, *, end: bool = False, k: int | None = None):
        """The count at an end ``p`` of a swept range of length ``span`` (its start, or with
        ``end`` its end), every root on the imaginary axis there placed on its side.

        :meth:`count` leaves out roots within ``AXIS_TOL`` of the axis: between crossings they
        do not occur, but a range may start ``1e-7`` past a crossing, where the root that
        crossed has a real part of 1e-9 and is as unstable as any. Each such root is followed
        a little way into the range (its velocity ``d lambda / d p``) to the value ``p*``
        where it is on the axis: when ``p*`` is not ``p`` (to ``1e-12`` of the parameter's
        scale) the root is on the side of its real part; when it is, the crossing is at ``p``
        itself, one of the range, and the root is placed outside the range's side of it: on
        the side it comes from at the start, the side it goes to at the end (its real part
        set to the smallest normal number of that sign). A root that does not move off the
        axis (a root at 0 for every value) is left out, as by :meth:`count`.
        """
        got = self.count(p, k)
        lin = self.lin(p)
        unit = size_unit(lin)
        axis = [i for i, r in enumerate(got.roots) if on_axis(r.value, unit)]
        if not axis:
            return got
        local = local_scale(p, span)
        dp = (-1e-7 if end else 1e-7) * local
        lam = np.array([got.roots[i].value for i in axis], dtype=complex)
        moved, ok = newton_roots(self.lin(p + dp), lam)
        speed = np.where(ok, np.real(moved - lam) / dp, 0.0)
        roots = list(got.roots)
        n = got.count
        for i, lam0, v in zip(axis, lam, speed, strict=True):
            if not abs(v) * local > 1e-6 * max(unit, abs(lam0)):
                continue  # does not leave the axis (or could not be followed): left out
            if abs(lam0.real / v) <= 1e-12 * local:
                side = math.copysign(np.finfo(float).tiny, v if end else -v)
                roots[i] = replace(roots[i], value=complex(side, lam0.imag))
            if roots[i].real > 0:
                n += roots[i].multiplicity
        return Count(got.value, n, Roots(roots, got.roots.n_nodes, check=got.roots._certificate))


def anchor_value(factory, name: str, lo: float, hi: float) -> float | None:
    """The model's own value of the swept parameter ``name`` when it lies in ``[lo, hi]``
    (where an analysis of the model at its defaults has found the equilibrium already), else
    ``None``: the :class:`Sweep`'s ``anchor``."""
    source = getattr(factory, "source", None)
    if not getattr(factory, "is_model", False) or source is None:
        return None
    try:
        value = float(source.params[name].value)
    except (KeyError, AttributeError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) and lo <= value <= hi else None


def local_scale(p: float, span: float) -> float:
    """The scale of a swept parameter near ``p``: ``|p|`` where it is small beside the range
    (below ``1e-3 span``, but not 0 to rounding), else ``span``. A range of many decades (a
    delay from 0.1 to 1e12) is followed in steps relative to the value reached, not to the
    whole range."""
    p = abs(p)
    return p if 1e-15 * span < p < 1e-3 * span else span


def unit_time_roots(lin: LinearDDE, k: int = 6, region=None, **options) -> Roots:
    """:func:`~fluidnet.linear.roots.characteristic_roots` of ``lin``, computed in a unit of
    time where its rates are of order one when they are slow (:data:`SLOW_RATES`).

    The root finder's tolerances have absolute floors fit for rates of order one; a system
    whose rates are all about 1e-12 (a delay of 1e12 s) would have its roots merged or snapped
    onto the real axis by them. Time is rescaled by a power of two ``c`` (``A_k -> c A_k``,
    ``tau_k -> tau_k / c``, exact in floating point), so the roots are exactly ``1/c`` times
    those of the rescaled system, and so is the certificate line.

    Floating-point overflow in the evaluation of far-left candidates (``|exp(-lambda tau)|``
    beyond the double range when many roots are asked for) is expected there and handled (such
    candidates have an infinite residual and are dropped): numpy's warnings about it are not
    passed on.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _unit_time_roots(lin, k, region, **options)


def _unit_time_roots(lin: LinearDDE, k: int, region, **options) -> Roots:
    scale = rate_scale(lin)
    if not (0.0 < scale < SLOW_RATES):
        return characteristic_roots(lin, k, region, **options)
    c = 2.0 ** round(-math.log2(scale))
    fast = LinearDDE(
        lin.A0 * c,
        [(tau / c, a * c) for tau, a in zip(lin.delays, lin.A, strict=True)],
        state_names=lin.state_names,
    )
    if region is not None:
        region = c * np.asarray(region, dtype=float) if np.ndim(region) else c * float(region)
    got = characteristic_roots(fast, k, region, **options)
    back = [
        CharacteristicRoot(value=r.value / c, residual=r.residual, multiplicity=r.multiplicity)
        for r in got
    ]
    return Roots(back, got.n_nodes, check=lambda: (got.certified, got.certificate / c))


def rhp_count(roots, unit: float) -> int:
    """Roots right of the imaginary axis (off it), with multiplicity."""
    return int(sum(r.multiplicity for r in roots if r.real > 0 and not on_axis(r.value, unit)))


def is_real(lin: LinearDDE) -> bool:
    return not (np.iscomplexobj(lin.A0) or any(np.iscomplexobj(a) for a in lin.A))


# 2-norms of a system's matrices, computed once per system (Newton's method checks residuals
# on the same system many times)
_NORMS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _norms(lin: LinearDDE) -> tuple[float, np.ndarray]:
    got = _NORMS.get(lin)
    if got is None:
        mats = np.stack((lin.A0, *lin.A))
        got = _NORMS[lin] = (
            float(np.linalg.norm(lin.A0, 2)),
            np.linalg.svd(mats[1:], compute_uv=False)[:, 0] if lin.A else np.zeros(0),
        )
    return got


def relative_residual(lin: LinearDDE, lam: np.ndarray) -> np.ndarray:
    """Smallest singular value of ``Delta(lambda)`` relative to the size of its terms, that
    size taken as at least the rounding unit times :func:`size_unit`: a root of a system whose
    matrices all vanish (``x' = b x(t - 1)`` at ``b = 0``) is 0, and Newton's method lands
    within rounding of it (1.5e-33), where the size of the terms is ``|lambda|`` alone and the
    residual would be 1."""
    lam = np.atleast_1d(np.asarray(lam, dtype=complex))
    out = np.full(lam.shape, np.inf)
    with np.errstate(all="ignore"):
        D = lin.characteristic_matrix(lam)
        finite = np.all(np.isfinite(D), axis=(-2, -1))
        if not finite.any():
            return out
        sv = np.linalg.svd(D[finite], compute_uv=False)[..., -1]
        x = lam[finite]
        norm0, norms = _norms(lin)
        scale = np.abs(x) + norm0
        if lin.delays:
            taus = np.asarray(lin.delays)
            scale = scale + np.abs(np.exp(-np.multiply.outer(x, taus))) @ norms
    out[finite] = sv / np.maximum(scale, np.finfo(float).eps * size_unit(lin))
    return out


# a system's matrices stacked for Newton's method: ``(eye, A0, taus, A_k flattened)``, and
# its compiled kernel where it applies (None otherwise)
_STACKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _stacked(lin: LinearDDE) -> tuple:
    got = _STACKED.get(lin)
    if got is None:
        n = lin.n
        flat = np.array([a.reshape(n * n) for a in lin.A]).reshape(len(lin.A), n * n)
        got = _STACKED[lin] = (
            np.eye(n),
            lin.A0,
            np.array(lin.delays, dtype=float),
            flat,
            dense_kernel(lin),
        )
    return got


def _newton_steps(lin: LinearDDE, x: np.ndarray) -> np.ndarray:
    """``1 / trace(Delta(x)^{-1} Delta'(x))`` at each point of ``x`` (the Newton step on
    ``det Delta``), the delayed terms of all points as one matrix product."""
    eye, A0, taus, flat, _ = _stacked(lin)
    n = eye.shape[0]
    D = x[:, None, None] * eye - A0
    if taus.size:
        E = np.exp(-np.multiply.outer(x, taus))
        D = D - (E @ flat).reshape(D.shape)
        dD = ((E * taus) @ flat).reshape(D.shape) + eye
    else:
        dD = np.broadcast_to(eye, D.shape).astype(complex)
    if n == 1:
        g = dD[:, 0, 0] / D[:, 0, 0]
    else:
        try:
            g = np.trace(np.linalg.solve(D, dD), axis1=-2, axis2=-1)
        except np.linalg.LinAlgError:
            g = np.array([_trace_solve(Di, dDi) for Di, dDi in zip(D, dD, strict=True)])
    return 1.0 / g


def newton_roots(
    lin: LinearDDE,
    lam,
    *,
    maxiter: int = 40,
    residual_tol: float = 1e-8,
    give_up: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method on ``det Delta`` from each start; ``(roots, converged)``.

    The step is ``1 / trace(Delta^{-1} Delta')``. A start converges when its step falls below
    ``1e-13 (unit + |lambda|)`` (or stalls at the rounding floor; ``unit`` is the system's
    :func:`size_unit`) and its relative residual is below ``residual_tol``. For a real system,
    a root within ``1e-9 (unit + |lambda|)`` of the real axis is snapped onto it.

    With ``give_up``, a start still taking steps longer than ``WANDER_STEP (unit + |lambda|)``
    after that many iterations is left unconverged: Newton's method has found no basin but
    wanders (a real start of a real system, whose iterates stay real, when the root it followed
    has met another and left the real axis as a complex pair). For a caller that rejects a
    start that wanders as it rejects one that converges far from where it was predicted.
    """
    lam = np.array(lam, dtype=complex, ndmin=1)
    unit = size_unit(lin)
    kernel = _stacked(lin)[4]
    with np.errstate(all="ignore"):  # overflows of far iterates: not finite, so done
        if kernel is not None:  # the same iteration, compiled (from 2 states, where built)
            lam, active = kernel.follow(
                lam, unit, maxiter, give_up, MULTIPLICITY_TOL, MAX_MULTIPLICITY, WANDER_STEP
            )
        else:
            lam, active = _newton_loop(lin, lam, unit, maxiter, give_up)
    ok = np.isfinite(lam)
    if is_real(lin):
        near = ok & (np.abs(np.imag(lam)) <= REAL_TOL * (unit + np.abs(lam)))
        lam[near] = np.real(lam[near])
    res = np.full(lam.shape, np.inf)
    res[ok] = relative_residual(lin, lam[ok])
    return lam, ok & (res <= residual_tol) & ~active


def _newton_loop(
    lin: LinearDDE, lam: np.ndarray, unit: float, maxiter: int, give_up: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """The iterations of :func:`newton_roots`: ``(lam, still active)``.

    Near a root of multiplicity ``m`` (a semisimple multiple root of a symmetric network:
    alike flows' differences), Newton's steps shrink only by ``(m - 1) / m`` an iteration
    (``1 / trace(Delta^{-1} Delta')`` is ``(lambda - r) / m`` there): 80 iterations from
    ``1e-3`` to ``1e-13`` at ``m = 4``. Where two successive ratios of a start's steps
    both give the same ``m`` of 2 to :data:`MAX_MULTIPLICITY` (ratio real and within
    :data:`MULTIPLICITY_TOL` of ``(m - 1) / m``), its steps are taken ``m`` times longer from
    then on (Schroeder's modified Newton method, quadratic at an ``m``-fold root), until a
    step fails to shrink by half (a simple root: the longer step jumps across it); the result
    is judged as any other (step size and residual)."""
    active = np.ones(lam.shape, dtype=bool)
    prev = np.full(lam.shape, np.inf)
    plain = np.full(lam.shape, np.nan, dtype=complex)  # each start's last Newton step
    guess = np.ones(lam.shape, dtype=int)  # the multiplicity its last two steps' ratio gave
    mult = np.ones(lam.shape)
    idx = np.arange(lam.size)
    for it in range(maxiter):
        if idx.size == 0:
            break
        x = lam[idx]
        step = _newton_steps(lin, x)
        step[~np.isfinite(step)] = 0.0
        if it >= 1:
            ratio = step / plain[idx]
            m_now = _multiplicity_of_ratio(ratio)
            # a longer step that did not converge fast (a simple root taken for a multiple
            # one: the iterate jumps across it) is given up
            wrong = (mult[idx] > 1.0) & ~(np.abs(ratio) < 0.5)
            mult[idx[wrong]] = 1.0
            m_now[wrong] = 1
            fixed = (m_now >= 2) & (m_now == guess[idx]) & (mult[idx] == 1.0)
            mult[idx[fixed]] = m_now[fixed]
            guess[idx] = m_now
        plain[idx] = step
        step = step * mult[idx]
        lam[idx] = x - step
        size = np.abs(step)
        scale = unit + np.abs(lam[idx])
        done = (size <= 1e-13 * scale) | ((size >= 0.9 * prev[idx]) & (size <= 1e-9 * scale))
        done |= ~np.isfinite(lam[idx])
        prev[idx] = size
        active[idx[done]] = False
        if give_up is not None and it + 1 >= give_up:  # left active: not converged
            done |= size > WANDER_STEP * scale
        idx = idx[~done]
    return lam, active


#: Largest root multiplicity :func:`_newton_loop` recognizes from its steps' ratios.
MAX_MULTIPLICITY = 8
#: How close a ratio of successive Newton steps must be to ``(m - 1) / m`` (and to the real
#: axis) to stand for a root of multiplicity ``m``.
MULTIPLICITY_TOL = 0.02


def _multiplicity_of_ratio(ratio: np.ndarray) -> np.ndarray:
    """The multiplicity ``m`` (2 to :data:`MAX_MULTIPLICITY`) whose linear rate ``(m - 1) / m``
    a ratio of successive Newton steps matches to :data:`MULTIPLICITY_TOL`; 1 otherwise."""
    if not np.any(np.abs(ratio) >= 0.5 - MULTIPLICITY_TOL):
        # no real part reaches the smallest rate's 1/2 within the tolerance (the steps of
        # simple roots shrink much faster): every one 1, without the tests below
        return np.ones(ratio.shape, dtype=int)
    with np.errstate(all="ignore"):
        re = np.real(ratio)
        m = np.rint(1.0 / (1.0 - re))
        ok = (
            np.isfinite(m)
            & (m >= 2)
            & (m <= MAX_MULTIPLICITY)
            & (np.abs(np.imag(ratio)) <= MULTIPLICITY_TOL)
            & (np.abs(re - (m - 1.0) / m) <= MULTIPLICITY_TOL)
        )
    return np.where(ok, m, 1).astype(int)


def _trace_solve(D: np.ndarray, dD: np.ndarray) -> complex:
    try:
        return complex(np.trace(np.linalg.solve(D, dD)))
    except np.linalg.LinAlgError:
        return complex(np.inf)


def null_vectors(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Left and right singular vectors of the smallest singular value of ``M``."""
    U, _, Vh = np.linalg.svd(M)
    return U[:, -1], Vh[-1].conj()


def count_change(root: complex, sign: float, real_system: bool, unit: float = 1.0) -> int:
    """Change of the right-half-plane count when ``root`` crosses in direction ``sign``
    (``unit``: the system's :func:`size_unit`)."""
    real_root = abs(root.imag) <= REAL_TOL * (unit + abs(root))
    weight = 1 if (real_root or not real_system) else 2
    return int(math.copysign(weight, sign))
