"""Hopf points: crossing, transversality, first Lyapunov coefficient and the predicted orbit.

At a Hopf point a simple pair of characteristic roots ``+- i omega`` of the linearization
``Delta(lambda) v = 0``, ``Delta(lambda) = lambda I - A0 - sum_k A_k exp(-lambda tau_k)``, crosses
the imaginary axis as a parameter ``p`` passes ``p0``. On the two-dimensional center manifold
the dynamics reduce to the normal form

``z' = lambda(p) z + c1 z |z|^2 + ...``,   ``x(t) ~ x* + 2 Re(z(t) q)``,

whose first Lyapunov coefficient ``l1 = Re c1 / omega`` decides the criticality: ``l1 < 0``
supercritical (a stable orbit grows from the equilibrium as it loses stability), ``l1 > 0``
subcritical (an unstable orbit shrinks onto it: a jump to large oscillations, bistability).

``c1`` is computed with the characteristic-matrix formulation of the center-manifold
reduction for delay equations (Faria & Magalhaes 1995; in this form Janssens 2010 and
Kuznetsov's ODE formula with ``A`` replaced by ``Delta``), which needs no adjoint
bilinear form:

* ``Delta(i omega) q = 0``, ``p Delta(i omega) = 0``, ``p Delta'(i omega) q = 1``;
* ``h20(theta) = exp(2 i omega theta) Delta(2 i omega)^-1 B(phi, phi)``,
  ``h11 = Delta(0)^-1 B(phi, conj phi)`` with ``phi(theta) = exp(i omega theta) q``;
* ``c1 = p [C(phi, phi, conj phi) + B(conj phi, h20) + 2 B(phi, h11)] / 2``,

with ``B``, ``C`` the second and third derivatives of the right-hand side as functionals of
the history (:mod:`fluidnet.bifurcation.jets`). The root's speed is
``lambda'(p0) = -p (d Delta / d p) q``. Near onset the orbit has
``|z|^2 = -Re lambda'(p0) (p - p0) / Re c1``, a peak-to-peak amplitude ``4 |z| |q_j|`` in state
``j`` and angular frequency ``omega + (Im lambda' - Re lambda' Im c1 / Re c1) (p - p0)``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, OptionError, ParameterError
from ..options import option_dict
from ..overrides import merge_params
from .jets import multilinear_terms
from .smoothness import (
    NonSmoothError,
    NonSmoothWarning,
    _switches,
    check_equilibrium_smooth,
    crossed_surfaces,
)
from .steady import EquilibriumBranch

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..symbolic.model import Model

__all__ = ["HopfPoint", "hopf_point", "hopf_at"]

#: |l1| below this fraction of its scale counts as degenerate (a Bautin point nearby).
DEGENERATE_TOL = 1e-10


@dataclass(frozen=True, kw_only=True)
class HopfPoint:
    """A Hopf bifurcation of a model's equilibrium in one parameter.

    Attributes
    ----------
    model : fluidnet.Model
        The model (its other parameters at the values in ``params``).
    name : str
        The bifurcation parameter.
    value : float
        Its critical value ``p0``.
    omega : float
        Crossing frequency (rad/s) of the root pair ``+- i omega``.
    params : dict of str to float
        Every parameter value at the Hopf point.
    equilibrium : dict of str to float
        The equilibrium there.
    eigenvector : ndarray of complex
        ``q`` with ``Delta(i omega) q = 0`` (unit norm, largest entry real).
    adjoint : ndarray of complex
        ``p`` with ``p Delta(i omega) = 0`` and ``p Delta'(i omega) q = 1``.
    root_speed : complex
        ``d lambda / d p`` of the critical root at ``p0`` (transversality: ``Re != 0``).
    direction : str
        ``"destabilizing"`` when the pair moves to the right as ``p`` grows, else
        ``"stabilizing"``.
    smooth_c1 : complex
        Normal-form coefficient ``c1`` of the smooth right-hand side (for a model with a
        projected state at 0, that of the unprojected model; see :attr:`applies`).
    c1_scale : float
        The size ``c1`` would have for a nonlinearity of relative size one (``omega / |x*|^2``,
        or the sum of the magnitudes of its terms when larger or when ``x* = 0``): ``c1`` is
        zero (to rounding) when far below it.
    other_roots : ndarray of complex
        The next rightmost roots at ``p0`` (to see how close another crossing is).
    nonsmooth : str
        Empty when the smooth theory applies; otherwise why it does not (a projected state
        sits at 0 at the equilibrium).
    """

    model: Any = field(repr=False)
    name: str
    value: float
    omega: float
    params: dict = field(repr=False)
    equilibrium: dict = field(repr=False)
    eigenvector: np.ndarray = field(repr=False)
    adjoint: np.ndarray = field(repr=False)
    root_speed: complex
    direction: str
    smooth_c1: complex = field(repr=False)
    c1_scale: float = field(repr=False)
    other_roots: np.ndarray = field(repr=False)
    nonsmooth: str = ""

    # ------------------------------------------------------------------ derived numbers
    @property
    def period(self) -> float:
        """Period ``2 pi / omega`` (s) of the oscillation at onset."""
        return 2.0 * math.pi / self.omega

    @property
    def applies(self) -> bool:
        """Whether the smooth normal form describes the model (no projected state at 0)."""
        return not self.nonsmooth

    def _require_smooth(self) -> None:
        if self.nonsmooth:
            raise NonSmoothError(self.nonsmooth, surface="projection")

    @property
    def c1(self) -> complex:
        """Normal-form coefficient ``c1`` (raises :class:`NonSmoothError` when the smooth
        theory does not apply)."""
        self._require_smooth()
        return self.smooth_c1

    @property
    def lyapunov(self) -> float:
        """First Lyapunov coefficient ``l1 = Re c1 / omega``."""
        return self.c1.real / self.omega

    @property
    def criticality(self) -> str:
        """``"supercritical"`` (``l1 < 0``), ``"subcritical"`` (``l1 > 0``) or
        ``"degenerate"`` (``l1`` zero to rounding)."""
        c1 = self.c1
        if abs(c1.real) <= DEGENERATE_TOL * self.c1_scale or c1.real == 0.0:
            return "degenerate"
        return "supercritical" if c1.real < 0 else "subcritical"

    @property
    def amplitude_coefficient(self) -> dict[str, float]:
        """``K_j`` with predicted peak-to-peak amplitude ``K_j sqrt(|p - p0|)`` per state."""
        c1, mu = self.c1, self.root_speed
        self._require_nondegenerate()
        z1 = math.sqrt(abs(mu.real / c1.real))
        return {
            s: 4.0 * z1 * abs(self.eigenvector[i]) for i, s in enumerate(self.model.state_names)
        }

    @property
    def orbit_side(self) -> int:
        """``+1`` when the orbits exist for ``p > p0``, ``-1`` for ``p < p0``."""
        self._require_nondegenerate()
        return 1 if -self.root_speed.real / self.c1.real > 0 else -1

    def _require_nondegenerate(self) -> None:
        if self.criticality == "degenerate":
            raise AnalysisError(
                f"the Hopf point at {self.name}={self.value:.6g} is degenerate (Re c1 = "
                f"{self.c1.real:.3g}, zero to rounding; terms of size {self.c1_scale:.3g}): the "
                "cubic normal form does not fix the amplitude (a linear law, or a Bautin point)"
            )

    def predict(self, value: float) -> dict[str, Any]:
        """The normal form's orbit at parameter ``value`` near ``p0``.

        Parameters
        ----------
        value : float
            Value of the bifurcation parameter, on the side of the Hopf point where the small
            orbit exists (:attr:`orbit_side`). The prediction is first order in
            ``value - p0``: good only near the Hopf point.

        Returns
        -------
        dict
            ``{"amplitude": {state: peak-to-peak}, "period": T, "z": |z|, "smooth": bool,
            "crosses": [surface, ...]}``. The amplitude of a state is its **peak-to-peak**
            excursion ``4 |z| |q_j|`` (twice the distance from the equilibrium to a peak).
            ``smooth`` is False when the predicted orbit ``x* + 2 Re(z q e^{i theta})``
            leaves the region where the model is smooth: a projected state below 0 (a queue
            that would have to go negative) or a switching surface crossed, each named in
            ``crosses``. The prediction is then not the model's orbit (the projected model
            clips it), and a :class:`~fluidnet.bifurcation.smoothness.NonSmoothWarning`
            says so.

        Raises
        ------
        AnalysisError
            When no small orbit exists on that side of ``p0``, or the Hopf point is degenerate.
        NonSmoothError
            When the smooth theory does not apply (a projected state at 0 at the equilibrium).

        Warns
        -----
        NonSmoothWarning
            When the predicted orbit leaves the smooth region (``smooth`` False).
        """
        return self._predict(value, check=True)

    def _predict(self, value: float, check: bool) -> dict[str, Any]:
        """:meth:`predict`; without ``check``, the smoothness of the predicted orbit is not
        examined (a starting guess, which the orbit solver checks itself)."""
        c1, mu = self.c1, self.root_speed
        self._require_nondegenerate()
        dp = float(value) - self.value
        z2 = -mu.real * dp / c1.real
        if z2 < 0:
            raise AnalysisError(
                f"no small periodic orbit at {self.name}={value:g}: the {self.criticality} "
                f"Hopf branch at {self.name}={self.value:.6g} lies on the "
                f"{'>' if self.orbit_side > 0 else '<'} side"
            )
        z = math.sqrt(z2)
        w = self.omega + mu.imag * dp + c1.imag * z2
        amp = {s: 4.0 * z * abs(self.eigenvector[i]) for i, s in enumerate(self.model.state_names)}
        crosses = self._crossed(float(value), z, w) if check else []
        if crosses:
            names = self.model.state_names
            x0 = [self.equilibrium[n] for n in names]
            spans = ", ".join(
                f"{n} {x0[i] - amp[n] / 2:.4g} to {x0[i] + amp[n] / 2:.4g}"
                for i, n in enumerate(names)
            )
            warnings.warn(
                NonSmoothWarning(
                    f"the normal form's orbit at {self.name}={float(value):g} ({spans}, "
                    f"peak-to-peak amplitudes {', '.join(f'{n} {amp[n]:.4g}' for n in names)}) "
                    f"crosses {' and '.join(crosses)}, where the model is not smooth: it is "
                    "not the model's orbit there (the prediction holds only closer to "
                    f"{self.name}={self.value:.6g}); simulate, or compute the orbit with "
                    "fn.periodic_orbit(sol) from a simulation"
                ),
                stacklevel=3,
            )
        return {
            "amplitude": amp,
            "period": 2.0 * math.pi / w,
            "z": z,
            "smooth": not crosses if check else None,
            "crosses": crosses,
        }

    def _crossed(self, value: float, z: float, w: float) -> list[str]:
        """The non-smooth surfaces the predicted orbit ``x* + 2 Re(z q e^{i theta})`` reaches
        (its delayed values turned back by ``w tau``), sampled at 256 phases."""
        model = self.model
        if not model.nonnegative and _switches(model) is None:
            return []
        from ._system import orbit_system

        system = orbit_system(model)
        values = model.resolve_params({**self.params, self.name: value})
        P = np.array([values[k] for k in model.param_names], dtype=float)
        x0 = np.array([self.equilibrium[n] for n in model.state_names], dtype=float)
        q = np.asarray(self.eigenvector, dtype=complex)
        theta = np.linspace(0.0, 2.0 * math.pi, 256, endpoint=False)
        X = x0[None, :] + 2.0 * np.real(z * q[None, :] * np.exp(1j * theta)[:, None])

        def profile(k, tau):
            j = system.lag_state[k]
            return x0[j] + 2.0 * np.real(z * q[j] * np.exp(1j * (theta - w * np.asarray(tau))))

        _, Z = system.lags_at(X, P, profile)
        return crossed_surfaces(model, X, Z, P)

    def guess(self, value: float, s: np.ndarray) -> tuple[np.ndarray, float]:
        """Profile ``x(s T)`` at scaled times ``s`` and period predicted at ``value``.

        The starting guess of the periodic-orbit solver: the equilibrium plus the critical
        eigenvector turning at the predicted amplitude (see :meth:`predict`).

        Parameters
        ----------
        value : float
            Value of the bifurcation parameter.
        s : array_like
            Scaled times in ``[0, 1]`` (fractions of the period), 1-D.

        Returns
        -------
        profile : numpy.ndarray
            States at the scaled times, shape ``(len(s), n_states)``.
        period : float
            Predicted period.

        Raises
        ------
        AnalysisError, NonSmoothError
            As :meth:`predict`.
        """
        pr = self._predict(value, check=False)
        x0 = np.array([self.equilibrium[n] for n in self.model.state_names])
        ph = np.exp(2j * math.pi * np.asarray(s))[:, None]
        return x0 + 2.0 * np.real(pr["z"] * self.eigenvector * ph), pr["period"]

    def __repr__(self) -> str:
        crit = self.criticality if self.applies else "smooth theory does not apply"
        lyap = f", l1={self.lyapunov:.6g}" if self.applies else ""
        return (
            f"HopfPoint({self.name}={self.value:.10g}, omega={self.omega:.10g} rad/s, "
            f"dRe(lambda)/d{self.name}={self.root_speed.real:.6g}{lyap}, {crit})"
        )

    def to_xarray(self) -> Any:
        """The Hopf point as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            Scalars ``value`` (of the parameter named by the attribute ``parameter``),
            ``omega``, ``period``, ``root_speed`` (complex) and, where the smooth normal form
            applies, ``lyapunov`` (the first Lyapunov coefficient; the attribute ``nonsmooth``
            says why it is absent); ``equilibrium`` and the critical ``eigenvector`` along
            ``state``.
        """
        import xarray as xr

        states = list(self.model.state_names)
        data: dict[str, Any] = {
            "value": ((), self.value),
            "omega": ((), self.omega, {"units": "rad/s"}),
            "period": ((), self.period),
            "root_speed": ((), complex(self.root_speed)),
            "equilibrium": ("state", [float(self.equilibrium[s]) for s in states]),
            "eigenvector": ("state", np.asarray(self.eigenvector, dtype=complex)),
        }
        if self.applies:
            data["lyapunov"] = ((), self.lyapunov)
        return xr.Dataset(
            data,
            coords={"state": states},
            attrs={
                "parameter": self.name,
                "direction": self.direction,
                "nonsmooth": self.nonsmooth,
            },
        )

    def plot(
        self,
        ax: Axes | None = None,
        *,
        state: str | None = None,
        span: float | None = None,
        **kwargs: Any,
    ) -> Axes:
        """Predicted amplitude of ``state`` against the parameter near onset (the normal form's
        bifurcation diagram: a parabola opening to the side where the orbits exist).

        Parameters
        ----------
        ax : matplotlib Axes, optional
        state : str, optional
            Default: the state with the largest amplitude coefficient.
        span : float, optional
            Parameter range shown beyond ``p0`` (default 5 % of ``|p0|``).
        **kwargs
            Passed to ``ax.plot``.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        K = self.amplitude_coefficient
        state = state or max(K, key=lambda s: K[s])
        span = span or 0.05 * max(abs(self.value), 1e-12)
        side = self.orbit_side
        dp = np.linspace(0.0, span, 200)
        ls = "-" if self.criticality == "supercritical" else "--"  # stable orbits solid
        ax.plot(self.value + side * dp, K[state] * np.sqrt(dp), ls=ls, **kwargs)
        up = 1.0 if self.root_speed.real > 0 else -1.0  # the equilibrium is unstable there
        ax.plot([self.value - up * span, self.value], [0, 0], "k-", lw=0.8)
        ax.plot([self.value, self.value + up * span], [0, 0], "k:", lw=0.8)
        ax.plot([self.value], [0], "ko")
        ax.set(xlabel=self.name, ylabel=f"{state} peak-to-peak", title=f"{self.criticality} Hopf")
        return ax


# ---------------------------------------------------------------------------------- compute
def _null_vectors(D: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    U, sv, Vh = np.linalg.svd(D)
    q = Vh[-1].conj()
    p = U[:, -1].conj()
    gap = sv[-2] if len(sv) > 1 else 1.0
    return q, p, float(sv[-1] / max(gap, 1e-300))


def hopf_at(
    model: Model,
    name: str,
    value: float,
    omega: float,
    *,
    other_roots: ArrayLike | None = None,
    branch: EquilibriumBranch | None = None,
    equilibrium: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    **fixed: float,
) -> HopfPoint:
    """The :class:`HopfPoint` at a known crossing ``(value, omega)`` (no search).

    Parameters
    ----------
    model : fluidnet.Model
    name : str
        Bifurcation parameter.
    value : float
        Its critical value.
    omega : float
        Crossing frequency (> 0).
    other_roots : array_like, optional
        The next rightmost roots, when known (default: computed).
    branch : EquilibriumBranch, optional
        The equilibrium branch in ``name`` (default: a new one, from the model's equilibrium
        at ``value``, or the one Newton's method finds from ``equilibrium``).
    equilibrium : dict, optional
        ``{state: value}``: a guess of the equilibrium (for models with several).
    params : dict, optional
        ``{name: value}``: values of the other parameters (real numbers), the convention shared
        by every entry point.
    **fixed
        Other parameter values, as keywords (each name given once, here or in ``params``).

    See Also
    --------
    hopf_point : the crossing located in an interval
    """
    if not omega > 0:
        raise AnalysisError(
            f"the root crossing at {name}={value:g} is real (omega = {omega:g}): a fold or "
            "transcritical point of equilibria, not a Hopf bifurcation"
        )
    fixed = merge_params(params, fixed, "hopf_at")
    params = model.resolve_params({**fixed, name: value})
    if branch is None:
        others = {k: v for k, v in params.items() if k != name}
        branch = EquilibriumBranch(model, name, others, guess=equilibrium)
    x, _, lin = branch.steady(value)
    eqd = {s: float(v) for s, v in zip(model.state_names, x, strict=True)}
    lam = 1j * omega
    D = lin.delta(lam)
    q, p, rel = _null_vectors(D)
    if rel > 1e-6:
        raise AnalysisError(
            f"at {name}={value:.12g}, i*{omega:.12g} is not a characteristic root "
            f"(smallest/next singular value of Delta = {rel:.3g})"
        )
    j = int(np.argmax(np.abs(q)))
    q = q * (abs(q[j]) / q[j])
    q = q / np.linalg.norm(q)
    p = p / (p @ lin.ddelta(lam) @ q)
    # transversality: d lambda / dp = -p (dDelta/dp) q, dDelta/dp by central differences
    # along the equilibrium branch
    h = 1e-6 * max(abs(value), 1e-3)
    Dp = (branch.steady(value + h)[2].delta(lam) - branch.steady(value - h)[2].delta(lam)) / (2 * h)
    speed = complex(-(p @ Dp @ q))
    nonsmooth = ""
    try:
        check_equilibrium_smooth(model, eqd, f"the Hopf point {name}={value:.6g}")
    except NonSmoothError as exc:
        nonsmooth = str(exc)
    c1, c1_scale = _first_coefficient(model, lin, eqd, params, omega, q, p)
    if other_roots is None:
        roots = branch(**{name: value}).roots(k=4).values
        keep = np.abs(roots - lam) > 1e-6 * max(1.0, omega)
        keep &= np.abs(roots + lam) > 1e-6 * max(1.0, omega)
        other_roots = roots[keep]
    return HopfPoint(
        model=model,
        name=name,
        value=float(value),
        omega=float(omega),
        params=params,
        equilibrium=eqd,
        eigenvector=q,
        adjoint=p,
        root_speed=speed,
        direction="destabilizing" if speed.real > 0 else "stabilizing",
        smooth_c1=c1,
        c1_scale=c1_scale,
        other_roots=np.asarray(other_roots),
        nonsmooth=nonsmooth,
    )


def _first_coefficient(
    model, lin, eqd, params, omega, q, p, *, state_scale: bool = True
) -> tuple[complex, float]:
    form = model.form
    eq = [eqd[s] for s in model.state_names]
    P = [params[k] for k in model.param_names]
    lam = 1j * omega
    qb = q.conj()
    first = multilinear_terms(form, eq, P, [(lam, q), (lam, q), (-lam, qb)])
    B_qq, B_qqb, C_qqqb = first[3], first[5], first[7]
    w20 = np.linalg.solve(lin.characteristic_matrix(2 * lam), B_qq)
    w11 = np.linalg.solve(lin.characteristic_matrix(0.0), B_qqb)
    B_qb_h20 = multilinear_terms(form, eq, P, [(-lam, qb), (2 * lam, w20)])[3]
    B_q_h11 = multilinear_terms(form, eq, P, [(lam, q), (0.0, w11)])[3]
    terms = (C_qqqb, B_qb_h20, 2.0 * B_q_h11)
    # the size c1 would have with O(1) relative nonlinearity: omega / |x*|^2 (c1 scales as
    # 1/state^2); for x* = 0, the magnitude of its terms
    norm2 = float(np.dot(eq, eq))
    scale = omega / norm2 if norm2 > 0 and state_scale else 0.0
    scale = max(scale, 0.5 * sum(float(np.abs(p) @ np.abs(t)) for t in terms))
    return complex(0.5 * p @ sum(terms)), scale


def hopf_point(
    model: Model,
    name: str,
    lo: float,
    hi: float,
    *,
    critical_options: Mapping[str, Any] | None = None,
    equilibrium: Mapping[str, float] | None = None,
    params: Mapping[str, Any] | None = None,
    **fixed: float,
) -> HopfPoint:
    """The first Hopf bifurcation of ``model``'s equilibrium for ``name`` in ``[lo, hi]``.

    The crossing is located by :func:`fluidnet.critical_value` (the first change of stability
    from ``lo``, certified) on the equilibrium branch in ``name`` (the model's equilibrium at
    ``lo``, continued by Newton's method: :class:`~fluidnet.bifurcation.steady.EquilibriumBranch`),
    then the critical eigenvectors, the root speed and the first Lyapunov coefficient are
    computed there.

    Parameters
    ----------
    model : fluidnet.Model
    name : str
        The bifurcation parameter.
    lo, hi : float
        The interval searched.
    critical_options : dict, optional
        Options of :func:`fluidnet.critical_value`: ``method``, ``root_options`` (any other
        name is an :class:`~fluidnet.errors.OptionError` listing these).
    equilibrium : dict, optional
        ``{state: value}``: a guess of the equilibrium at ``lo`` (for models with several;
        default :meth:`fluidnet.Model.equilibrium`).
    params : dict, optional
        ``{name: value}``: values of the other parameters (real numbers), the convention shared
        by every entry point.
    **fixed
        Values of the other parameters, as keywords (each name given once, here or in
        ``params``).

    Returns
    -------
    HopfPoint
        ``.value``, ``.omega``, ``.root_speed``, ``.lyapunov``, ``.criticality``,
        ``.predict(p)``, ``.plot()``.

    Raises
    ------
    AnalysisError
        When ``[lo, hi]`` holds no crossing, or the crossing is a real root (not a Hopf
        point).
    NonSmoothError
        Not here: a Hopf point whose equilibrium has a projected state at 0 is returned with
        :attr:`HopfPoint.nonsmooth` set, and its normal-form properties raise.

    See Also
    --------
    hopf_at : the normal form at a known crossing
    periodic_orbit : the cycle born there, at a parameter value
    continue_orbits : the branch of cycles from it
    continue_hopf : the Hopf point followed in a second parameter
    critical_value : the crossing alone

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> a, = (fn.params("a"),)
    >>> wright = fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0})
    >>> hp = fn.hopf_point(wright, "a", 1.0, 2.0)
    >>> abs(hp.value - math.pi / 2) < 1e-10, hp.criticality
    (True, 'supercritical')
    """
    from ..stability import critical_value

    fixed = merge_params(params, fixed, "hopf_point")
    if name in fixed:
        raise OptionError(f"{name!r} is the bifurcation parameter: do not also fix it")
    if name not in model.param_names:
        raise ParameterError(
            f"unknown parameter {name!r} for model {model.name!r} "
            f"(parameters: {', '.join(model.param_names)})"
        )
    options = option_dict(
        "critical_options", critical_options, ("method", "root_options"), where="hopf_point"
    )
    others = {k: v for k, v in model.resolve_params(fixed).items() if k != name}
    branch = EquilibriumBranch(model, name, others, guess=equilibrium)
    cv = critical_value(branch, name, lo, hi, **options)
    return hopf_at(model, name, cv.value, cv.omega, branch=branch, params=fixed)
