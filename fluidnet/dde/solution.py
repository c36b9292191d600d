"""The result of :func:`fluidnet.simulate`: output values, dense output and counters."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError, OptionError, ParameterError
from ..overrides import parameter_values

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..codegen.compiled import SavedModel
    from ..symbolic.model import Model

__all__ = ["Solution", "Counters"]


@dataclass(frozen=True, kw_only=True)
class Counters:
    """Work done by the integrator.

    Attributes
    ----------
    steps : int
        Accepted steps.
    rejected : int
        Rejected step attempts (error too large, or a failed evaluation).
    rhs_evaluations : int
        Evaluations of the right-hand side (each corner field of a Filippov combination counts).
    discontinuities : int
        Derivative discontinuity points the steps landed on (propagated from ``t0`` and events).
    events : int
        Mode changes: a projected state reaching or leaving 0, a switching surface crossed,
        sliding started or ended.
    iterations : int
        Extra fixed-point iterations for lags that fell inside the step being taken.
    sliding_entries : int
        Times a switching surface started a Filippov sliding motion.
    time_on_boundary : dict of str to float
        Per projected state, the total time it was held at 0.
    time_sliding : dict of str to float
        Per switching surface (keyed by its switching function ``s``, surface ``s = 0``), the
        total time the solution slid on it.
    mean_sliding_weight : dict of str to float
        Per switching surface, the Filippov weight (the equivalent control: the fraction of
        time the side ``s > 0`` acts) averaged over the time spent sliding on it; NaN for a
        surface never slid on.
    """

    steps: int
    rejected: int
    rhs_evaluations: int
    discontinuities: int
    events: int
    iterations: int
    sliding_entries: int
    time_on_boundary: dict[str, float] = field(default_factory=dict)
    time_sliding: dict[str, float] = field(default_factory=dict)
    mean_sliding_weight: dict[str, float] = field(default_factory=dict)


class Solution:
    """A trajectory of a fluid model.

    Attributes
    ----------
    t : ndarray
        Output times: ``t_eval`` (or ``n_points`` equally spaced) if given, else the accepted
        step points with at least ``REFINE - 1 = 3`` equally spaced times inside each step,
        spaced at most 1/1000 of the run (``t0`` first; :attr:`mesh` has the step points).
    y : ndarray, shape (n_states, len(t))
        State values at ``t``.
    state_names : tuple of str
    params : dict of str to float
        Parameter values of the run.
    t0, t_end : float
    method : str
    rtol : float
    atol : ndarray
    counters : Counters
    model : fluidnet.Model
    dense : bool
        Whether the dense output was kept (``simulate(..., dense=False)`` keeps only ``t, y``).

    Other Parameters
    ----------------
    mesh_t, mesh_c : ndarray
        The integrator's mesh and the coefficients of its dense output, the history's pieces
        first (made by :func:`fluidnet.simulate`; a Solution is not built by hand).
    hist_start : ndarray
        The state at ``t0``.
    n_hist_pieces : int
        How many pieces of the dense output are the initial history.

    Notes
    -----
    ``sol["q"]`` is the row of ``y`` for state ``q``; ``sol(t)`` evaluates the dense output
    (the integrator's continuous extension, and the initial history before ``t0``) anywhere in
    the run. Projected states are evaluated clipped at 0.
    """

    def __init__(
        self,
        *,
        model: Model | SavedModel,
        t: ArrayLike,
        y: ArrayLike,
        mesh_t: ArrayLike,
        mesh_c: ArrayLike,
        hist_start: ArrayLike,
        n_hist_pieces: int,
        params: Mapping[str, float],
        t0: float,
        t_end: float,
        method: str,
        rtol: float,
        atol: ArrayLike,
        counters: Counters,
        dense: bool = True,
    ) -> None:
        self.model = model
        self.state_names = tuple(model.state_names)
        self.t = np.asarray(t, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self._mt = np.asarray(mesh_t, dtype=float)
        self._mc = np.asarray(mesh_c, dtype=float)
        self._start = np.asarray(hist_start, dtype=float)
        self._nh = int(n_hist_pieces)
        self.params = dict(params)
        self.t0 = float(t0)
        self.t_end = float(t_end)
        self.method = method
        self.rtol = float(rtol)
        self.atol = np.asarray(atol, dtype=float)
        self.counters = counters
        self.dense = bool(dense)
        self._nonneg = np.array([n in model.nonnegative for n in self.state_names])

    # ------------------------------------------------------------------ access
    def _index(self, state: str) -> int:
        # the model's names are identifiers as Python reads them (NFKC-normalized)
        name = state
        if isinstance(state, str) and not state.isascii():
            name = unicodedata.normalize("NFKC", state)
        try:
            return self.state_names.index(name)
        except ValueError:
            raise ModelError(
                f"{state!r} is not a state of model {self.model.name!r} "
                f"(states: {', '.join(self.state_names)})"
            ) from None

    def __getitem__(self, state: str) -> np.ndarray:
        return self.y[self._index(state)]

    def _require_dense(self, what: str) -> None:
        if not self.dense:
            raise OptionError(
                f"{what} needs the dense output, which this run did not keep (dense=False); "
                "use sol.t and sol.y, or run with dense=True"
            )

    @property
    def mesh(self) -> np.ndarray:
        """The accepted step points from ``t0`` to ``t_end``."""
        self._require_dense("Solution.mesh")
        return self._mt[self._nh :].copy()

    @property
    def history_start(self) -> float:
        """Earliest time ``sol(t)`` can evaluate every state (``-inf`` for constant histories)."""
        return float(np.max(self._start)) if self._start.size else -np.inf

    def __call__(self, t, state: str | Sequence[str] | None = None) -> np.ndarray:
        """Dense evaluation at ``t`` (scalar or array).

        Parameters
        ----------
        t : float or array_like
            Times in ``[history_start, t_end]``.
        state : str or sequence of str, optional
            Only these states.

        Returns
        -------
        ndarray
            Shape ``(n_states,)`` for scalar ``t``, ``(n_states, len(t))`` otherwise; the state
            axis is dropped when ``state`` is a single name.

        Raises
        ------
        ParameterError
            For a time outside the run (or before the history of a state), or a ``t`` that is
            not a real number (text is not read as one, see :mod:`fluidnet.overrides`).
        """
        self._require_dense("evaluating a Solution at arbitrary times")
        tq = parameter_values("Solution evaluated at t", t, finite=False)
        scalar = tq.ndim == 0
        tq = np.atleast_1d(tq).ravel()
        if isinstance(state, str):
            idx = [self._index(state)]
        elif state is None:
            idx = list(range(len(self.state_names)))
        else:
            idx = [self._index(s) for s in state]
        if np.any(~np.isfinite(tq)):
            raise ParameterError("Solution evaluated at a non-finite time")
        tol = 1e-12 * max(1.0, abs(self.t_end))
        if np.any(tq > self.t_end + tol):
            raise ParameterError(
                f"t = {tq.max():g} is after the end of the run (t_end = {self.t_end:g})"
            )
        mt, mc = self._mt, self._mc
        j = np.clip(np.searchsorted(mt, tq, side="right") - 1, 0, mc.shape[0] - 1)
        th = (tq - mt[j]) / (mt[j + 1] - mt[j])
        out = np.empty((len(idx), tq.size))
        for r, i in enumerate(idx):
            early = tq < self._start[i]
            if np.any(early):
                raise ParameterError(
                    f"t = {tq[early].min():g} is before the history of {self.state_names[i]!r} "
                    f"(defined from t = {self._start[i]:g})"
                )
            c = mc[j, i, :]
            v = c[:, -1].copy()
            for k in range(c.shape[1] - 2, -1, -1):
                v = v * th + c[:, k]
            before = tq < mt[0]
            v[before] = mc[0, i, 0]
            if self._nonneg[i]:
                np.maximum(v, 0.0, out=v)
            out[r] = v
        if isinstance(state, str):
            return out[0, 0] if scalar else out[0]
        return out[:, 0] if scalar else out

    # ------------------------------------------------------------------ export
    def to_xarray(self) -> xr.Dataset:
        """The output as an :class:`xarray.Dataset` (dimension ``time``, one variable per state).

        Parameters and counters are stored in ``attrs``.
        """
        import xarray as xr

        data = {s: ("time", self.y[i]) for i, s in enumerate(self.state_names)}
        attrs: dict[str, Any] = {f"param_{k}": v for k, v in self.params.items()}
        attrs.update(
            model=self.model.name,
            method=self.method,
            rtol=self.rtol,
            steps=self.counters.steps,
            rejected=self.counters.rejected,
            rhs_evaluations=self.counters.rhs_evaluations,
        )
        return xr.Dataset(data, coords={"time": self.t}, attrs=attrs)

    def plot(
        self,
        ax: Axes | np.ndarray | None = None,
        *,
        states: Sequence[str] | None = None,
        n_points: int = 2000,
        **kwargs: Any,
    ) -> np.ndarray:
        """Plot states against time from the dense output (one axes per state).

        Parameters
        ----------
        ax : matplotlib Axes or array of Axes, optional
        states : sequence of str, optional
            Default: all states.
        n_points : int
            Evaluation points of the dense output.
        **kwargs
            Passed to ``Axes.plot``.

        Returns
        -------
        array of matplotlib Axes
        """
        import matplotlib.pyplot as plt

        states = list(states) if states is not None else list(self.state_names)
        if ax is None:
            _, ax = plt.subplots(
                len(states), 1, sharex=True, squeeze=False, figsize=(6.4, 1.8 + 1.6 * len(states))
            )
            ax = ax[:, 0]
        axes = np.atleast_1d(np.asarray(ax, dtype=object))
        if axes.size != len(states):
            raise ParameterError(f"{axes.size} axes given for {len(states)} states")
        tt = np.union1d(np.linspace(self.t0, self.t_end, n_points), self.mesh)
        vals = self(tt, states)
        for a, s, v in zip(axes, states, np.atleast_2d(vals), strict=True):
            a.plot(tt, v, **kwargs)
            a.set_ylabel(s)
        axes[-1].set_xlabel("t")
        axes[0].set_title(f"{self.model.name}")
        return axes

    def __repr__(self) -> str:
        c = self.counters
        return (
            f"Solution({self.model.name!r}, t = [{self.t0:g}, {self.t_end:g}], "
            f"method={self.method}, steps={c.steps}, rejected={c.rejected}, "
            f"rhs_evaluations={c.rhs_evaluations}, events={c.events})"
        )


def counters_from(
    counts: Mapping[str, int],
    btime: np.ndarray,
    names: Sequence[str],
    nonneg: Mapping[int, bool] | np.ndarray,
    surfaces: Sequence[str] = (),
    slide_time: np.ndarray | None = None,
    slide_weight: np.ndarray | None = None,
) -> Counters:
    """:class:`Counters` from the kernel's counters (by field name), held and sliding times
    (``surfaces``: the switching functions, in the order of the kernel's switches)."""
    slid: dict[str, float] = {}
    mean: dict[str, float] = {}
    if surfaces:
        assert slide_time is not None and slide_weight is not None  # given with the surfaces
        slid = {s: float(slide_time[j]) for j, s in enumerate(surfaces)}
        mean = {
            s: float(slide_weight[j] / slide_time[j]) if slide_time[j] > 0 else float("nan")
            for j, s in enumerate(surfaces)
        }
    return Counters(
        **{k: int(v) for k, v in counts.items()},
        time_on_boundary={names[i]: float(btime[i]) for i in range(len(names)) if nonneg[i]},
        time_sliding=slid,
        mean_sliding_weight=mean,
    )
