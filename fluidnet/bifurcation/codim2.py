"""Codimension-two points on Hopf curves and fold curves: Bautin, Hopf-Hopf, zero-Hopf,
Bogdanov-Takens, cusp.

Each is located on a curve of Hopf points (:func:`fluidnet.continue_hopf`) where a test
function changes sign, and characterized by its normal form on the center manifold
(:mod:`fluidnet.bifurcation.normalform`), in the conventions of Kuznetsov (*Elements of
Applied Bifurcation Theory*, 3rd ed., 2004, Ch. 8; "Numerical normalization techniques for all
codim 2 bifurcations of equilibria in ODE's", SIAM J. Numer. Anal. 36, 1999), carried over to
delay equations with the characteristic matrix (Janssens 2010; Bosschaert, Janssens &
Kuznetsov, SIAM J. Appl. Dyn. Syst. 19, 2020):

* **Bautin** (generalized Hopf): the first Lyapunov coefficient ``l1`` vanishes. Normal form
  ``z' = i omega z + c1 z|z|^2 + c2 z|z|^4``; the second Lyapunov coefficient
  ``l2 = Re c2 / omega`` decides the unfolding: for ``l2 < 0`` the Hopf curve's subcritical side
  (``l1 > 0``) is bounded by a curve of folds of cycles, where a stable large cycle coexists
  with the stable equilibrium (bistability); for ``l2 > 0`` the same with time reversed.
* **Hopf-Hopf**: a second pair ``+- i omega2`` on the axis. Normal form
  ``w1' = i omega1 w1 + g2100 w1|w1|^2 + g1011 w1|w2|^2``,
  ``w2' = i omega2 w2 + g1110 w2|w1|^2 + g0021 w2|w2|^2``; with
  ``p11 = Re g2100, p12 = Re g1011, p21 = Re g1110, p22 = Re g0021``: the *simple* case
  ``p11 p22 > 0`` (types I-V by ``theta = p12 / p22`` and ``delta = p21 / p11``) and the
  *difficult* case ``p11 p22 < 0``.
* **zero-Hopf** (fold-Hopf): a real root at 0 next to the pair. Normal form
  ``w0' = g200 w0^2 + g011 |w1|^2 + g300 w0^3 + g111 w0 |w1|^2``,
  ``w1' = i omega w1 + g110 w0 w1 + g210 w0^2 w1 + g021 w1 |w1|^2``; ``s = g200 g011`` and
  ``theta = Re g110 / g200`` select the unfolding.
* **Bogdanov-Takens**: the frequency reaches 0 (a double root at 0); the Hopf curve ends there.
* **cusp** (on a curve of folds of equilibria, :func:`fluidnet.continue_equilibrium_folds`):
  the fold's quadratic coefficient ``a`` vanishes; normal form ``w' = c w^3``: two fold curves
  meet, and three equilibria merge.

All are returned as objects with ``.plot()`` (the rightmost characteristic roots at the point,
the critical ones marked) and ``.to_xarray()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .normalform import Mode, normal_form

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

__all__ = [
    "Codim2Point",
    "BautinPoint",
    "HopfHopfPoint",
    "ZeroHopfPoint",
    "BogdanovTakensPoint",
    "CuspPoint",
]


@dataclass(frozen=True, kw_only=True)
class Codim2Point:
    """A codimension-two point in the plane of two parameters.

    Attributes
    ----------
    kind : str
        ``"bautin"``, ``"hopf-hopf"``, ``"zero-hopf"``, ``"bogdanov-takens"`` or ``"cusp"``.
    x_name, y_name : str
        The two parameters.
    x, y : float
        Their values at the point.
    params : dict
        Every parameter value there.
    equilibrium : dict
        The equilibrium there.
    roots : ndarray of complex
        The rightmost characteristic roots there (upper half-plane).
    index : int
        Index of the curve point just before it (on its :class:`HopfCurve`).
    """

    kind: str
    x_name: str
    y_name: str
    x: float
    y: float
    params: dict = field(repr=False)
    equilibrium: dict = field(repr=False)
    roots: np.ndarray = field(repr=False)
    index: int = field(default=-1, repr=False)
    model: Any = field(default=None, repr=False)

    #: Marker on :meth:`HopfCurve.plot`.
    marker = "o"

    def critical(self) -> list[complex]:  # pragma: no cover - overridden
        return []

    def _scalars(self) -> dict:
        return {}

    def to_xarray(self) -> xr.Dataset:
        """The point as an :class:`xarray.Dataset` of scalars."""
        import xarray as xr

        data = {self.x_name: self.x, self.y_name: self.y, **self._scalars()}
        out = {}
        for k, v in data.items():
            if isinstance(v, complex):
                out[k] = ((), v)
            elif isinstance(v, (int, float, np.floating, np.integer, str, bool)):
                out[k] = ((), v)
        return xr.Dataset(out, attrs={"kind": self.kind})

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The rightmost characteristic roots at the point; the critical ones in red."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        r = np.asarray(self.roots)
        allr = np.concatenate([r, r.conj()])
        ax.plot(
            np.real(allr), np.imag(allr), "o", mfc="none", color=kwargs.pop("color", "C0"), **kwargs
        )
        crit = np.array(self.critical(), dtype=complex)
        crit = np.concatenate([crit, crit.conj()])
        ax.plot(np.real(crit), np.imag(crit), "o", color="C3", label="critical roots")
        ax.axvline(0.0, color="k", lw=0.8)
        ax.set(
            xlabel="Re lambda",
            ylabel="Im lambda",
            title=f"{self.kind} at {self.x_name}={self.x:.8g}, {self.y_name}={self.y:.8g}",
        )
        ax.legend(fontsize=8)
        return ax


@dataclass(frozen=True, kw_only=True)
class BautinPoint(Codim2Point):
    """A Bautin (generalized Hopf) point: ``l1 = 0``.

    Attributes
    ----------
    omega : float
    c1, c2 : complex
        Normal-form coefficients (``Re c1 = 0`` to rounding).
    l2 : float
        Second Lyapunov coefficient ``Re c2 / omega``.
    """

    omega: float
    c1: complex
    c2: complex
    l2: float
    marker = "s"

    @property
    def unfolding(self) -> str:
        """What coexists near the point."""
        if self.l2 < 0:
            return (
                "l2 < 0: on the subcritical side of the Hopf curve a fold of cycles bounds a "
                "region where a stable cycle coexists with the stable equilibrium (bistability)"
            )
        return (
            "l2 > 0: on the supercritical side of the Hopf curve a fold of cycles bounds a "
            "region where an unstable cycle surrounds the stable small cycle"
        )

    def critical(self) -> list[complex]:
        return [1j * self.omega]

    def _scalars(self):
        return {"omega": self.omega, "c1": self.c1, "c2": self.c2, "l2": self.l2}

    def __repr__(self):
        return (
            f"BautinPoint({self.x_name}={self.x:.10g}, {self.y_name}={self.y:.10g}, "
            f"omega={self.omega:.8g}, l2={self.l2:.6g})"
        )


@dataclass(frozen=True, kw_only=True)
class HopfHopfPoint(Codim2Point):
    """A Hopf-Hopf (double Hopf) point: two pairs ``+- i omega1``, ``+- i omega2``.

    Attributes
    ----------
    omega1, omega2 : float
        ``omega1`` is the frequency of the Hopf curve the point was found on.
    g2100, g1011, g1110, g0021 : complex
        Third-order normal-form coefficients (eigenvectors of unit norm,
        ``p_j Delta'(i omega_j) q_j = 1``).
    resonance : float
        The smallest ``sigma_min(Delta(mu)) / (1 + |mu|)`` met at the non-resonant exponents
        of the normal form (small: near a strong resonance ``omega1 : omega2 = 1:1, 1:2, 1:3``,
        where this normal form does not apply).
    """

    omega1: float
    omega2: float
    g2100: complex
    g1011: complex
    g1110: complex
    g0021: complex
    resonance: float = math.inf
    marker = "D"

    @property
    def theta(self) -> float:
        return self.g1011.real / self.g0021.real

    @property
    def delta(self) -> float:
        return self.g1110.real / self.g2100.real

    @property
    def unfolding(self) -> str:
        """Kuznetsov's case: ``"simple, type I"``..``"V"`` or ``"difficult"``."""
        p11, p22 = self.g2100.real, self.g0021.real
        if abs(self.omega1 - self.omega2) <= 1e-6 * max(self.omega1, self.omega2):
            return "degenerate: 1:1 resonance (the two pairs coincide; not a Hopf-Hopf point)"
        if self.resonance < 1e-6:
            return "near a strong resonance (the third-order normal form does not apply)"
        th, de = self.theta, self.delta
        if p11 * p22 < 0:
            return "difficult"
        if th > 0 and de > 0:
            kind = "I" if th * de > 1 else "II"
        elif th * de < 0:
            kind = "III"
        else:
            kind = "IV" if th * de < 1 else "V"
        return f"simple, type {kind}"

    def critical(self) -> list[complex]:
        return [1j * self.omega1, 1j * self.omega2]

    def _scalars(self):
        return {
            "omega1": self.omega1, "omega2": self.omega2, "g2100": self.g2100,
            "g1011": self.g1011, "g1110": self.g1110, "g0021": self.g0021,
            "theta": self.theta, "delta": self.delta, "unfolding": self.unfolding,
        }  # fmt: skip

    def __repr__(self):
        return (
            f"HopfHopfPoint({self.x_name}={self.x:.10g}, {self.y_name}={self.y:.10g}, "
            f"omega1={self.omega1:.8g}, omega2={self.omega2:.8g}, theta={self.theta:.5g}, "
            f"delta={self.delta:.5g}, {self.unfolding})"
        )


@dataclass(frozen=True, kw_only=True)
class ZeroHopfPoint(Codim2Point):
    """A zero-Hopf (fold-Hopf) point: a root at 0 and a pair ``+- i omega``.

    Attributes
    ----------
    omega : float
    g200, g011, g110, g300, g111, g210, g021 : complex
        Normal-form coefficients (``g200``, ``g011``, ``g300``, ``g111`` real to rounding).
    """

    omega: float
    g200: complex
    g011: complex
    g110: complex
    g300: complex
    g111: complex
    g210: complex
    g021: complex
    marker = "^"

    @property
    def s(self) -> float:
        """``g200 g011``: its sign separates the two families of unfoldings."""
        return (self.g200 * self.g011).real

    @property
    def theta(self) -> float:
        return self.g110.real / self.g200.real

    def critical(self) -> list[complex]:
        return [0.0, 1j * self.omega]

    def _scalars(self):
        return {
            "omega": self.omega, "g200": self.g200, "g011": self.g011, "g110": self.g110,
            "g300": self.g300, "g111": self.g111, "g210": self.g210, "g021": self.g021,
            "s": self.s, "theta": self.theta,
        }  # fmt: skip

    def __repr__(self):
        return (
            f"ZeroHopfPoint({self.x_name}={self.x:.10g}, {self.y_name}={self.y:.10g}, "
            f"omega={self.omega:.8g}, s={self.s:.5g}, theta={self.theta:.5g})"
        )


@dataclass(frozen=True, kw_only=True)
class BogdanovTakensPoint(Codim2Point):
    """A Bogdanov-Takens point: the Hopf frequency reaches 0 (a double root at 0).

    Attributes
    ----------
    jordan : bool
        True when the double root is not semisimple (a Jordan block: ``Delta(0)`` has a
        one-dimensional kernel), as at a generic Bogdanov-Takens point; False for a
        semisimple double root (two independent null vectors, as forced by a symmetry).
    """

    jordan: bool = True
    marker = "v"

    def critical(self) -> list[complex]:
        return [0.0]

    def _scalars(self):
        return {"jordan": self.jordan}

    def __repr__(self):
        kind = "" if self.jordan else ", semisimple (not generic)"
        return (
            f"BogdanovTakensPoint({self.x_name}={self.x:.10g}, {self.y_name}={self.y:.10g}{kind})"
        )


@dataclass(frozen=True, kw_only=True)
class CuspPoint(Codim2Point):
    """A cusp point on a curve of folds of equilibria: the fold's quadratic coefficient
    vanishes.

    Attributes
    ----------
    c : float
        The cubic coefficient of the normal form ``w' = c w^3`` on the center manifold (``q``
        of unit length, ``p Delta'(0) q = 1``): ``c < 0`` gives three equilibria (one stable
        when the others' roots are stable) inside the wedge of the two fold curves, ``c > 0``
        the same with time reversed.
    """

    c: float
    marker = "<"

    def critical(self) -> list[complex]:
        return [0.0]

    def _scalars(self):
        return {"c": self.c}

    def __repr__(self):
        return (
            f"CuspPoint({self.x_name}={self.x:.10g}, {self.y_name}={self.y:.10g}, c={self.c:.6g})"
        )


# ------------------------------------------------------------------------------ builders
def _null(D: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    U, sv, Vh = np.linalg.svd(D)
    return Vh[-1].conj(), U[:, -1].conj(), float(sv[-1] / max(sv[0], 1e-300))


def mode(lin, lam: complex) -> Mode:
    """The :class:`Mode` of the root ``lam`` of ``lin`` (``|q| = 1``, largest entry real,
    ``p Delta'(lam) q = 1``)."""
    q, p, _ = _null(lin.delta(lam))
    j = int(np.argmax(np.abs(q)))
    q = q * (abs(q[j]) / q[j])
    q = q / np.linalg.norm(q)
    p = p / (p @ lin.ddelta(lam) @ q)
    return Mode(complex(lam), q, p)


def _conj(md: Mode) -> Mode:
    return Mode(md.lam.conjugate(), md.q.conj(), md.p.conj())


def bautin(model, x, P, lin, omega: float, common: dict) -> BautinPoint:
    md = mode(lin, 1j * omega)
    nf = normal_form(model, x, P, lin, [md, _conj(md)], 5)
    c1, c2 = nf.g(0, (2, 1)), nf.g(0, (3, 2))
    return BautinPoint(**common, omega=float(omega), c1=c1, c2=c2, l2=c2.real / omega)


def hopf_hopf(model, x, P, lin, omega1: float, omega2: float, common: dict) -> HopfHopfPoint:
    m1, m2 = mode(lin, 1j * omega1), mode(lin, 1j * omega2)
    nf = normal_form(model, x, P, lin, [m1, _conj(m1), m2, _conj(m2)], 3)
    return HopfHopfPoint(
        **common, omega1=float(omega1), omega2=float(omega2),
        g2100=nf.g(0, (2, 1, 0, 0)), g1011=nf.g(0, (1, 0, 1, 1)),
        g1110=nf.g(2, (1, 1, 1, 0)), g0021=nf.g(2, (0, 0, 2, 1)),
        resonance=nf.conditioning,
    )  # fmt: skip


def zero_hopf(model, x, P, lin, omega: float, common: dict) -> ZeroHopfPoint:
    m0 = mode(lin, 0.0)
    # a real eigenvector: rotate q to be real (the system is real)
    j = int(np.argmax(np.abs(m0.q)))
    phase = m0.q[j] / abs(m0.q[j])
    m0 = Mode(0.0, m0.q / phase, m0.p * phase)
    m1 = mode(lin, 1j * omega)
    nf = normal_form(model, x, P, lin, [m0, m1, _conj(m1)], 3)
    return ZeroHopfPoint(
        **common, omega=float(omega),
        g200=nf.g(0, (2, 0, 0)), g011=nf.g(0, (0, 1, 1)), g110=nf.g(1, (1, 1, 0)),
        g300=nf.g(0, (3, 0, 0)), g111=nf.g(0, (1, 1, 1)), g210=nf.g(1, (2, 1, 0)),
        g021=nf.g(1, (0, 2, 1)),
    )  # fmt: skip


def bogdanov_takens(lin, common: dict) -> BogdanovTakensPoint:
    sv = np.linalg.svd(lin.delta(0.0), compute_uv=False)
    semisimple = len(sv) > 1 and sv[-2] <= 1e-8 * max(sv[0], 1e-300)
    return BogdanovTakensPoint(**common, jordan=not semisimple)
