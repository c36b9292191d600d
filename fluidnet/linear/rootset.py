"""Characteristic roots as results: :class:`CharacteristicRoot` and :class:`Roots`.

The result types of :func:`fluidnet.linear.roots.characteristic_roots` and of the large-system
solver (:mod:`fluidnet.linear.large`), below both of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CharacteristicRoot", "Roots", "select_roots"]


@dataclass(frozen=True, kw_only=True)
class CharacteristicRoot:
    """One characteristic root, verified by the argument principle.

    Attributes
    ----------
    value : complex
        The root ``lambda`` (1/s); for a cluster of ``multiplicity`` roots, their mean.
    residual : float
        Relative residual at ``value``: the smallest singular value of ``Delta(lambda)`` divided
        by ``|lambda| + ||A0|| + sum_k ||A_k|| |exp(-lambda tau_k)|`` (for a scalar system this
        is ``|det Delta(lambda)|`` relative to the size of its terms).
    multiplicity : int
        Algebraic multiplicity, counted by the argument principle on the smallest circle
        that encloses the root (a double root, which rounding splits by about 1e-8, counts
        twice; roots too close together to be enclosed apart count as one root).
    error : float
        The ``multiplicity`` roots lie within this distance of ``value``: the radius of the
        smallest sampled circle around ``value`` along which ``det Delta`` winds exactly
        ``multiplicity`` times (:mod:`fluidnet.linear.inclusion`). NaN when not computed.
    """

    value: complex
    residual: float
    multiplicity: int = 1
    error: float = math.nan

    @property
    def real(self) -> float:
        return self.value.real

    @property
    def imag(self) -> float:
        return self.value.imag

    def __complex__(self) -> complex:
        return complex(self.value)

    def __repr__(self) -> str:
        m = f", multiplicity={self.multiplicity}" if self.multiplicity != 1 else ""
        e = f", error={self.error:.1e}" if math.isfinite(self.error) else ""
        return f"CharacteristicRoot({self.value:.10g}, residual={self.residual:.1e}{m}{e})"


class Roots(tuple):
    """Characteristic roots sorted by real part, descending.

    A tuple of :class:`CharacteristicRoot`.

    Attributes
    ----------
    values : numpy.ndarray
        The roots as a complex array.
    n_nodes : int
        The Chebyshev discretization size ``N`` that was used (0 for a delay-free system or
        without a dense discretization).
    certified : bool or None
        True when the argument principle on the line ``Re s = certificate`` counted exactly the
        roots found right of it (so none is missing there, and the first root is the rightmost
        one; see :mod:`fluidnet.linear.certificate`); False when the count differs or could not
        be made; None when not checked (a rectangular ``region``).
    certificate : float
        The abscissa of that line (``-inf`` for a delay-free system, whose roots are the
        eigenvalues of ``A0``).
    reason : str
        Why the roots are not certified, when a method says more than the line's count (the
        rectangles of a large system, :mod:`fluidnet.linear.large`); empty otherwise.
    """

    n_nodes: int
    reason: str
    _check: Callable[[], tuple[bool | None, float]] | None
    _cert: tuple[bool | None, float] | None

    def __new__(
        cls,
        roots: Sequence[CharacteristicRoot],
        n_nodes: int = 0,
        certified: bool | None = None,
        certificate: float = math.nan,
        *,
        check: Callable[[], tuple[bool | None, float]] | None = None,
        reason: str = "",
    ) -> Roots:
        obj = super().__new__(cls, roots)
        obj.n_nodes = int(n_nodes)
        obj.reason = str(reason)
        # the certificate costs a few dozen evaluations of det Delta: computed on first use
        obj._check = check
        obj._cert = None if check is not None else (certified, float(certificate))
        return obj

    def _certificate(self) -> tuple[bool | None, float]:
        if self._cert is None:
            assert self._check is not None  # set whenever the certificate is deferred
            self._cert = self._check()
        return self._cert

    @property
    def certified(self) -> bool | None:
        return self._certificate()[0]

    @property
    def certificate(self) -> float:
        return self._certificate()[1]

    def _with(self, roots: Sequence[CharacteristicRoot]) -> Roots:
        return Roots(roots, self.n_nodes, check=self._certificate, reason=self.reason)

    def __reduce__(self):
        certified, line = self._certificate()
        return (_rebuild_roots, (tuple(self), self.n_nodes, certified, line, self.reason))

    def require_certified(self, what: str = "this result") -> Roots:
        """Return ``self``, or raise :class:`~fluidnet.errors.AnalysisError` when the roots are
        not certified complete right of :attr:`certificate`."""
        if self.certified is False:
            if self.reason:
                raise AnalysisError(f"{what} is not certified: {self.reason}")
            raise AnalysisError(
                f"{what} is not certified: the argument principle on Re s = "
                f"{self.certificate:.6g} does not confirm the roots found right of that line "
                f"(the discretization of {self.n_nodes} nodes may have missed a root); "
                f"compute them on a finer one: n_nodes={max(2 * self.n_nodes, 24)} (in an "
                f"analysis, root_options={{'n_nodes': {max(2 * self.n_nodes, 24)}}})"
            )
        return self

    @property
    def values(self) -> np.ndarray:
        return np.array([r.value for r in self], dtype=complex)

    @property
    def abscissa(self) -> float:
        """Largest real part (``-inf`` when empty)."""
        return max((r.real for r in self), default=-math.inf)

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """Scatter the roots in the complex plane, with the imaginary axis drawn."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        v = self.values
        kwargs.setdefault("marker", "x")
        kwargs.setdefault("linestyle", "none")
        ax.plot(np.real(v), np.imag(v), **kwargs)
        ax.axvline(0.0, color="0.6", lw=0.8)
        ax.axhline(0.0, color="0.85", lw=0.8)
        ax.set_xlabel(r"Re $\lambda$ (1/s)")
        ax.set_ylabel(r"Im $\lambda$ (rad/s)")
        ax.set_title("characteristic roots")
        return ax

    def __repr__(self) -> str:
        inner = ",\n ".join(repr(r) for r in self)
        cert = "" if self.certified is None else f", certified={self.certified}"
        return f"Roots([\n {inner}\n], n_nodes={self.n_nodes}{cert})"


def _rebuild_roots(roots, n_nodes, certified, line, reason) -> Roots:
    return Roots(roots, n_nodes, certified, line, reason=reason)


def select_roots(roots: Roots, k: int, region) -> Roots:
    """The first ``k`` roots, or (``region``: ``(lo_re, hi_re, lo_im, hi_im)``) those inside it."""
    if region is None:
        return roots._with(roots[:k])
    lo_re, hi_re, lo_im, hi_im = region
    kept = [r for r in roots if lo_re <= r.real <= hi_re and lo_im <= r.imag <= hi_im]
    return roots._with(kept)
