"""Linear multi-delay systems ``x'(t) = A0 x(t) + sum_k A_k x(t - tau_k)``."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelError
from ..options import number_option
from .delays import merge_delays
from .roots import Roots, characteristic_roots, spectral_abscissa

__all__ = ["LinearDDE"]


def _as_matrix(a, name: str, n: int | None = None) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    elif arr.ndim == 1 and arr.size == 1:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ModelError(f"{name} must be a square matrix, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ModelError(f"{name} is empty (shape {arr.shape}): a system needs at least one state")
    if not np.issubdtype(arr.dtype, np.number):
        raise ModelError(f"{name} must hold numbers, got dtype {arr.dtype}")
    arr = arr.astype(complex if np.iscomplexobj(arr) else float)
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ModelError(f"{name} has a non-finite entry {arr[bad]} at index {bad}")
    if n is not None and arr.shape != (n, n):
        raise ModelError(f"{name} has shape {arr.shape}, expected ({n}, {n}) like A0")
    return arr


class LinearDDE:
    """A linear retarded delay-differential system with constant delays.

    ``x'(t) = A0 x(t) + sum_k A[k] x(t - delays[k])``

    Parameters
    ----------
    A0 : array_like or float
        The undelayed matrix (a scalar means a 1x1 system).
    delayed : iterable of ``(tau, A_k)`` or mapping ``{tau: A_k}``
        Delays in seconds (``tau >= 0``) and their matrices. Equal delays are merged (their
        matrices added), a zero delay is added to ``A0``, and all-zero matrices are dropped.
    state_names : sequence of str, optional
    equilibrium : dict, optional
        The equilibrium the system was linearized at (set by :meth:`fluidnet.Model.linearize`).
    jacobians : dict or callable, optional
        Symbolic Jacobians ``{delay expression: sympy.Matrix}`` at the equilibrium, or a function
        returning them (evaluated on first access).
    params : dict, optional
        The parameter values used.

    Examples
    --------
    >>> import fluidnet as fn
    >>> lin = fn.LinearDDE(0.0, [(1.0, -1.2)])      # x' = -1.2 x(t - 1)
    >>> lin.delays
    (1.0,)
    >>> bool(abs(lin.characteristic(0.5j)) > 0)
    True
    """

    def __init__(
        self,
        A0: ArrayLike,
        delayed: Iterable[tuple[float, Any]] | Mapping[float, Any] = (),
        *,
        state_names: Iterable[str] | None = None,
        equilibrium: Mapping[str, float] | None = None,
        jacobians: Mapping[Any, Any] | Callable[[], Mapping[Any, Any]] | None = None,
        params: Mapping[str, float] | None = None,
    ) -> None:
        a0 = _as_matrix(A0, "A0")
        n = a0.shape[0]
        # each item is checked to be a (tau, A_k) pair below
        pairs: list[Any] = list(delayed.items()) if isinstance(delayed, Mapping) else list(delayed)
        clean = []
        for k, pair in enumerate(pairs):
            try:
                tau, Ak = pair
            except (TypeError, ValueError) as exc:
                raise ModelError(f"delayed[{k}] must be a (tau, A_k) pair, got {pair!r}") from exc
            tau = float(tau)
            if not np.isfinite(tau) or tau < 0:
                raise ModelError(f"delay tau_{k} = {tau!r} must be finite and >= 0")
            clean.append((tau, _as_matrix(Ak, f"A_{k} (delay {tau:g})", n)))
        merged = merge_delays(clean, lambda a, b: a + b)
        delays, mats = [], []
        for tau, Ak in merged:
            if tau == 0.0:
                a0 = a0 + Ak
            elif np.any(Ak != 0):
                delays.append(tau)
                mats.append(Ak)
        self.A0: np.ndarray = a0
        self.delays: tuple[float, ...] = tuple(delays)
        self.A: tuple[np.ndarray, ...] = tuple(mats)
        names = list(state_names) if state_names is not None else [f"x{i}" for i in range(n)]
        if len(names) != n:
            raise ModelError(f"{len(names)} state names given for a {n}-state system")
        self.state_names: tuple[str, ...] = tuple(names)
        self.equilibrium: dict[str, float] | None = dict(equilibrium) if equilibrium else None
        self._jacobians = jacobians
        self.params: dict[str, float] = dict(params) if params else {}

    # ------------------------------------------------------------------ basics
    @property
    def jacobians(self) -> dict[Any, Any]:
        """Symbolic Jacobians ``{delay expression: sympy.Matrix}`` (empty if not linearized
        from a model); computed on first access."""
        if callable(self._jacobians):
            self._jacobians = dict(self._jacobians())
        return dict(self._jacobians) if self._jacobians else {}

    @property
    def n(self) -> int:
        """Number of states."""
        return self.A0.shape[0]

    @property
    def max_delay(self) -> float:
        return max(self.delays, default=0.0)

    def characteristic_matrix(self, s: ArrayLike) -> np.ndarray:
        """``Delta(s) = s I - A0 - sum_k A_k exp(-s tau_k)``, shape ``s.shape + (n, n)``.

        Parameters
        ----------
        s : complex or array_like of complex
            Points of the complex plane (any shape).

        Returns
        -------
        numpy.ndarray of complex
            ``Delta(s)`` for each point, shape ``s.shape + (n, n)``.
        """
        s = np.asarray(s, dtype=complex)
        eye = np.eye(self.n)
        out = s[..., None, None] * eye - self.A0
        for tau, Ak in zip(self.delays, self.A, strict=True):
            out = out - np.exp(-s * tau)[..., None, None] * Ak
        return out

    def characteristic(self, s: ArrayLike) -> np.ndarray:
        """``det Delta(s)``, vectorized over ``s``.

        Parameters
        ----------
        s : complex or array_like of complex
            Points of the complex plane (any shape).

        Returns
        -------
        numpy.ndarray of complex
            The characteristic function at each point, the shape of ``s``.
        """
        return np.linalg.det(self.characteristic_matrix(s))

    def characteristic_derivative(self, s: ArrayLike) -> np.ndarray:
        """``d/ds Delta(s) = I + sum_k tau_k A_k exp(-s tau_k)``, shape ``s.shape + (n, n)``.

        Parameters
        ----------
        s : complex or array_like of complex
            Points of the complex plane (any shape).

        Returns
        -------
        numpy.ndarray of complex
            The derivative of the characteristic matrix at each point, shape ``s.shape + (n, n)``.
        """
        s = np.asarray(s, dtype=complex)
        out = np.broadcast_to(np.eye(self.n, dtype=complex), s.shape + (self.n, self.n)).copy()
        for tau, Ak in zip(self.delays, self.A, strict=True):
            out = out + (tau * np.exp(-s * tau))[..., None, None] * Ak
        return out

    # ------------------------------------------------------------------ stability
    def roots(
        self,
        k: int = 6,
        region: ArrayLike | None = None,
        **kwargs: Any,
    ) -> Roots:
        """The ``k`` rightmost characteristic roots.

        See :func:`fluidnet.linear.roots.characteristic_roots` for the method and options
        (an unknown option is an :class:`~fluidnet.errors.OptionError` listing the valid ones).

        Parameters
        ----------
        k : int, default 6
            How many distinct rightmost roots to return (a complex pair counts as two) when no
            ``region`` is given.
        region : float or (re_min, re_max, im_min, im_max), optional
            Return every root with ``Re(lambda) >= region``, or every root in the rectangle,
            instead of the ``k`` rightmost.
        **kwargs
            Root-finder options ``max_nodes`` and ``n_nodes`` (the discretization size), passed to
            :func:`fluidnet.linear.roots.characteristic_roots`.

        Returns
        -------
        Roots
            Sorted by real part, descending.

        Raises
        ------
        OptionError
            For an unknown option, or an invalid ``k``, ``region`` or discretization size.

        Warns
        -----
        RuntimeWarning
            When fewer than ``k`` roots of a delayed system are returned: the others lie in
            chains far to the left that the discretization (grown to about 96 nodes to find
            them, no further) does not resolve; the warning says how many were found.
        """
        from ..options import ROOT_OPTIONS, option_dict

        kwargs = option_dict("options", kwargs, ROOT_OPTIONS, where="roots")
        with np.errstate(over="ignore", invalid="ignore"):  # far-left candidates: exp overflows
            got = characteristic_roots(self, k=k, region=region, **kwargs)
        if region is None and self.delays and len(got) < k:
            warnings.warn(
                f"roots(k={k}) of {self!r}: only {len(got)} roots returned (discretization of "
                f"{got.n_nodes} nodes); the others lie far left, in chains it does not resolve "
                "(a retarded system has infinitely many roots, their real parts going to "
                "-infinity): ask for fewer, or for a region (roots(region=...))",
                RuntimeWarning,
                stacklevel=2,
            )
        return got

    def spectral_abscissa(self, **kwargs: Any) -> float:
        """The largest real part of the characteristic roots.

        Parameters
        ----------
        **kwargs
            Root-finder options (``max_nodes``, ``n_nodes``), see
            :func:`fluidnet.linear.roots.spectral_abscissa`.

        Returns
        -------
        float

        Raises
        ------
        AnalysisError
            When the rightmost root found is not certified, so a root may have been missed.
        """
        return spectral_abscissa(self, **kwargs)

    def is_stable(self, margin: float = 0.0, **kwargs: Any) -> bool:
        """True when every characteristic root has real part ``< -margin``.

        Parameters
        ----------
        margin : float, default 0.0
            Required decay rate: with ``margin > 0`` the system must be stable with at least that
            margin, with ``margin < 0`` a slowly growing mode is accepted.
        **kwargs
            Root-finder options (``max_nodes``, ``n_nodes``), see :meth:`spectral_abscissa`.

        Returns
        -------
        bool

        Raises
        ------
        AnalysisError
            When the rightmost root is not certified (no verdict is given rather than a wrong one).
        OptionError
            For a ``margin`` that is not a finite real number (NaN compared False with every
            abscissa: every system was "not stable").
        """
        margin = number_option("margin", margin, where="is_stable")
        return self.spectral_abscissa(**kwargs) < -margin

    def __repr__(self) -> str:
        shown = self.delays if len(self.delays) <= 6 else (*self.delays[:3], *self.delays[-2:])
        d = ", ".join(f"{tau:g}" for tau in shown)
        if len(self.delays) > 6:
            parts = d.split(", ")
            d = ", ".join(parts[:3]) + f", ... ({len(self.delays)} delays), " + ", ".join(parts[3:])
        return f"LinearDDE(n={self.n}, delays=({d}))"
