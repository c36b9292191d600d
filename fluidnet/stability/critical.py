"""Critical parameter values: where a characteristic root crosses the imaginary axis."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq

from ..errors import AnalysisError, OptionError, ParameterError
from ..linear.roots import characteristic_roots
from .system import SystemFactory

__all__ = ["CriticalValue", "critical_value"]


@dataclass(frozen=True, kw_only=True)
class CriticalValue:
    """A parameter value where the spectral abscissa changes sign.

    Attributes
    ----------
    name : str
        The swept parameter.
    value : float
        Its critical value.
    omega : float
        Crossing frequency ``|Im lambda|`` of the root on the imaginary axis (rad/s); 0 for a
        real root crossing at the origin.
    direction : str
        ``"destabilizing"`` when the system is stable below ``value`` and unstable above,
        ``"stabilizing"`` otherwise.
    bracket : (float, float)
        The scan interval that contained the crossing.
    root : complex
        The rightmost root at ``value`` (real part ~ 0).
    """

    name: str
    value: float
    omega: float
    direction: str
    bracket: tuple[float, float]
    root: complex

    @property
    def frequency(self) -> float:
        """Crossing frequency in Hz (``omega / 2 pi``)."""
        return self.omega / (2.0 * math.pi)

    @property
    def period(self) -> float:
        """Period of the oscillation that sets in (s); ``inf`` for a real crossing."""
        return 2.0 * math.pi / self.omega if self.omega > 0 else math.inf

    def __repr__(self) -> str:
        return (
            f"CriticalValue({self.name}={self.value:.12g}, omega={self.omega:.12g} rad/s "
            f"({self.frequency:.6g} Hz), {self.direction})"
        )


def _rightmost(factory: SystemFactory, name: str, value: float, root_kw) -> complex:
    try:
        lin = factory(**{name: value})
    except (AnalysisError, ParameterError) as exc:
        raise type(exc)(f"critical_value: at {name}={value:g}: {exc}") from exc
    roots = characteristic_roots(lin, k=2, multiplicity=False, **root_kw)
    return roots[0].value


def critical_value(
    model_or_factory,
    name: str,
    lo: float,
    hi: float,
    *,
    n_scan: int = 16,
    rtol: float = 1e-13,
    root_options: dict[str, Any] | None = None,
    **fixed: float,
) -> CriticalValue:
    """The value of ``name`` in ``[lo, hi]`` where a root first crosses the imaginary axis.

    The spectral abscissa (real part of the rightmost, Newton-refined root) is evaluated at
    ``n_scan + 1`` evenly spaced points; the first sign change from ``lo`` is then located by
    Brent's method on the abscissa itself, to ``rtol`` relative (the abscissa is a smooth
    function of the parameter near a simple crossing and is computed to rounding accuracy, so
    the value and the crossing frequency are accurate to about 1e-12).

    Parameters
    ----------
    model_or_factory : Model or callable
        See :mod:`fluidnet.stability.system`.
    name : str
        The parameter to vary (e.g. a delay).
    lo, hi : float
        The interval searched, ``lo < hi``.
    n_scan : int, default 16
        Scan intervals; a crossing pair closer than ``(hi - lo) / n_scan`` can be missed.
    rtol : float, default 1e-13
        Relative tolerance on the value.
    root_options : dict, optional
        Keyword arguments for :func:`~fluidnet.linear.roots.characteristic_roots`.
    **fixed
        Values of the other parameters.

    Returns
    -------
    CriticalValue
        ``.value``, ``.omega`` (rad/s), ``.frequency`` (Hz), ``.direction``.

    Raises
    ------
    AnalysisError
        When ``[lo, hi]`` holds no crossing (the message gives the abscissa at both ends), or
        for a bad interval.
    ParameterError
        For an unknown parameter name (models).

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> k, T = fn.params("k T")
    >>> m = fn.Model({x: -k * x(fn.t - T)}, {k: 2.0, T: 0.1})
    >>> cv = fn.critical_value(m, "T", 0.1, 2.0)       # stable iff k T < pi/2
    >>> abs(cv.value - math.pi / 4) < 1e-12, abs(cv.omega - 2.0) < 1e-12
    (True, True)
    """
    if isinstance(n_scan, bool) or not isinstance(n_scan, (int, np.integer)) or n_scan < 1:
        raise OptionError(f"n_scan = {n_scan!r} must be a positive integer")
    try:
        lo, hi = float(lo), float(hi)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"lo = {lo!r}, hi = {hi!r} must be numbers") from exc
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise OptionError(f"need finite lo < hi for {name!r}, got [{lo!r}, {hi!r}]")
    if name in fixed:
        raise OptionError(f"{name!r} is the swept parameter: do not also fix it")
    factory = SystemFactory(model_or_factory, fixed)
    factory.check_names([name])
    root_kw = dict(root_options or {})

    grid = np.linspace(lo, hi, n_scan + 1)
    cache: dict[float, complex] = {}

    def top(p: float) -> complex:
        if p not in cache:
            cache[p] = _rightmost(factory, name, p, root_kw)
        return cache[p]

    # stable means abscissa < 0; a root at exactly 0 counts as not stable
    stable_prev = top(grid[0]).real < 0
    bracket = None
    for p_prev, p in zip(grid[:-1], grid[1:], strict=True):
        stable = top(p).real < 0
        if stable != stable_prev:
            bracket = (float(p_prev), float(p))
            break
    if bracket is None:
        end_lo, end_hi = top(grid[0]).real, top(grid[-1]).real
        state = "stable" if stable_prev else "not stable"
        raise AnalysisError(
            f"no crossing of the imaginary axis for {name} in [{lo:g}, {hi:g}]: the "
            f"spectral abscissa is {end_lo:.4g} at {name}={lo:g} and {end_hi:.4g} at "
            f"{name}={hi:g} ({state} at all {n_scan + 1} scanned points)"
        )
    a, b = bracket
    fa, fb = top(a).real, top(b).real
    if fb == 0.0:
        value = b
    elif fa == 0.0:
        value = a
    else:
        value = brentq(
            lambda p: top(p).real,
            a,
            b,
            xtol=1e-300,
            rtol=max(rtol, 4 * np.finfo(float).eps),
            maxiter=200,
        )
    root = top(value)
    direction = "destabilizing" if fa < 0 else "stabilizing"
    return CriticalValue(
        name=name,
        value=float(value),
        omega=abs(root.imag),
        direction=direction,
        bracket=bracket,
        root=complex(root),
    )
