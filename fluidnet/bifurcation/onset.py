"""Where oscillations are born, and where bistability begins: criticality tables and onset maps.

Two questions a control theorist asks of a law at its stability boundary:

* **how** does the oscillation start at each critical value? A supercritical Hopf bifurcation
  (``l1 < 0``) starts a small stable cycle that grows like ``sqrt(p - p_c)``: the loss of
  stability is gentle and reversible. A subcritical one (``l1 > 0``) throws the system onto a
  large cycle (or away): before the critical value a stable large cycle may already coexist
  with the stable equilibrium. :func:`criticality_table` computes the Hopf point and its first
  Lyapunov coefficient for many parameter sets (e.g. every printed critical delay of a table),
  saying where the smooth theory does not apply.
* **where**, in a plane of two parameters, are cycles born, and where do stable cycles coexist
  with the stable equilibrium? :func:`onset_map` continues the Hopf curve (with its
  criticality and codimension-two points), follows the branch of cycles from it and from every
  Bautin point, and continues every fold of cycles found in the second parameter: the folds of
  cycles and the subcritical part of the Hopf curve bound the region of bistability.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, FluidnetError, OptionError
from ..threads import blas_bound

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from ..symbolic.model import Model
    from .hopf import HopfPoint

__all__ = ["CriticalityTable", "criticality_table", "OnsetMap", "onset_map"]


@dataclass(frozen=True)
class CriticalityTable:
    """Hopf points of one parameter over many parameter sets.

    Attributes
    ----------
    x_name : str
        The bifurcation parameter.
    rows : list of dict
        One per set: its parameter values, ``value`` (the critical value), ``omega``, ``l1``,
        ``criticality`` (``"supercritical"``, ``"subcritical"``, ``"degenerate"``, or
        ``"not smooth"``), ``why`` (why not smooth, or the error), and ``hopf`` (the
        :class:`HopfPoint`, or ``None``).
    """

    x_name: str
    rows: list = field(repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r["criticality"]] = out.get(r["criticality"], 0) + 1
        return out

    def __repr__(self) -> str:
        c = ", ".join(f"{k} {v}" for k, v in sorted(self.counts().items()))
        return f"CriticalityTable({self.x_name}: {len(self)} sets; {c})"

    def to_xarray(self) -> xr.Dataset:
        """The table as an :class:`xarray.Dataset` along ``case`` (the HopfPoints dropped)."""
        import xarray as xr

        keys = [k for k in self.rows[0] if k != "hopf"] if self.rows else []
        data = {k: ("case", [r[k] for r in self.rows]) for k in keys}
        return xr.Dataset(data, coords={"case": np.arange(len(self))})

    def plot(self, ax: Axes | None = None, *, x: str | None = None, **kwargs: Any) -> Axes:
        """``l1`` against the critical value (or against the set's parameter ``x``):
        supercritical blue, subcritical red, not smooth grey crosses."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        colors = {"supercritical": "C0", "subcritical": "C3", "degenerate": "k"}
        for kind, color in colors.items():
            sel = [r for r in self.rows if r["criticality"] == kind]
            if sel:
                xs = [r[x] if x else r["value"] for r in sel]
                ax.plot(xs, [r["l1"] for r in sel], "o", color=color, label=kind, **kwargs)
        bad = [r for r in self.rows if r["criticality"] == "not smooth"]
        if bad:
            xs = [r[x] if x else r["value"] for r in bad]
            ax.plot(xs, np.zeros(len(bad)), "x", color="0.5", label="smooth theory n/a")
        ax.axhline(0.0, color="k", lw=0.6)
        ax.set(xlabel=x or f"critical {self.x_name}", ylabel="first Lyapunov coefficient l1")
        ax.legend(fontsize=8)
        return ax


@blas_bound
def criticality_table(
    model: Model,
    name: str,
    lo: float | Sequence[float],
    hi: float | Sequence[float],
    cases: Sequence[Mapping[str, float]],
    *,
    equilibrium: dict | None = None,
) -> CriticalityTable:
    """The Hopf point in ``name`` and its criticality for each parameter set of ``cases``.

    Parameters
    ----------
    model : fluidnet.Model
    name : str
        The bifurcation parameter (e.g. a delay).
    lo, hi : float or sequence of float
        The interval searched (one per set, or one for all).
    cases : sequence of dict
        Values of the other parameters, one dict per set.
    equilibrium : dict, optional
        A guess of the equilibrium (models with several).

    Returns
    -------
    CriticalityTable
        A set whose search fails keeps its error in ``why`` (criticality ``"error"``).
    """
    from .hopf import hopf_point

    n = len(cases)
    los = np.broadcast_to(np.asarray(lo, dtype=float), (n,))
    his = np.broadcast_to(np.asarray(hi, dtype=float), (n,))
    rows = []
    for case, a, b in zip(cases, los, his, strict=True):
        row: dict[str, Any] = dict(case)
        try:
            hp = hopf_point(model, name, float(a), float(b), equilibrium=equilibrium, params=case)
        except FluidnetError as exc:
            row.update(value=math.nan, omega=math.nan, l1=math.nan, criticality="error")
            row.update(why=str(exc), hopf=None)
            rows.append(row)
            continue
        row.update(value=hp.value, omega=hp.omega, hopf=hp)
        if hp.applies:
            row.update(l1=hp.lyapunov, criticality=hp.criticality, why="")
        else:
            row.update(l1=math.nan, criticality="not smooth", why=hp.nonsmooth)
        rows.append(row)
    return CriticalityTable(name, rows)


@dataclass(frozen=True)
class OnsetMap:
    """Where cycles are born and where they coexist with the stable equilibrium.

    Attributes
    ----------
    x_name, y_name : str
    hopf : HopfCurve
        The Hopf curve (criticality and codimension-two points along it).
    branches : list of OrbitBranch
        The branches of cycles followed from the start and from each Bautin point.
    folds : list of CycleFoldCurve
        Every fold of cycles found on them, continued in the second parameter.
    notes : list of str
        What could not be computed, and why.
    """

    x_name: str
    y_name: str
    hopf: Any = field(repr=False)
    branches: list = field(default_factory=list, repr=False)
    folds: list = field(default_factory=list, repr=False)
    notes: list = field(default_factory=list, repr=False)

    def __repr__(self) -> str:
        sp = ", ".join(p.kind for p in self.hopf.special) or "none"
        return (
            f"OnsetMap({self.x_name}-{self.y_name}: Hopf curve of {len(self.hopf)} points "
            f"(special points: {sp}), {len(self.branches)} branches of cycles, "
            f"{len(self.folds)} fold-of-cycles curves)"
        )

    def to_xarray(self) -> xr.Dataset:
        """The Hopf curve and the fold curves (``fold_<i>_<x>``, ``fold_<i>_<y>``) in one
        :class:`xarray.Dataset`."""
        ds = self.hopf.to_xarray()
        for i, f in enumerate(self.folds):
            ds[f"fold_{i}_{self.x_name}"] = (f"fold_{i}", f.x)
            ds[f"fold_{i}_{self.y_name}"] = (f"fold_{i}", f.y)
        return ds

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The Hopf curve (supercritical solid, subcritical dashed; codimension-two points
        marked) and the folds of cycles (dash-dotted)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        self.hopf.plot(ax=ax, **kwargs)
        for i, f in enumerate(self.folds):
            f.plot(ax=ax, label="fold of cycles" if i == 0 else None)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            uniq = dict(zip(labels, handles, strict=True))
            ax.legend(uniq.values(), uniq.keys(), fontsize=8)
        ax.set(title=f"onset of oscillation in ({self.x_name}, {self.y_name})")
        return ax


@blas_bound
def onset_map(
    hopf: HopfPoint,
    y: str,
    *,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    n_points: int = 60,
    n_orbits: int = 40,
    fold_points: int = 30,
    intervals: int = 20,
    degree: int = 4,
) -> OnsetMap:
    """The onset map of a Hopf point in the plane of its parameter and ``y``.

    The Hopf curve is continued both ways (:func:`fluidnet.continue_hopf`); the branch of cycles
    born at ``hopf``, and the branch born next to each Bautin point on its subcritical side,
    are followed (:func:`fluidnet.continue_orbits`, stopping at non-smooth surfaces); each fold
    of cycles found is continued in ``y`` (:func:`fluidnet.continue_cycle_folds`) both ways.

    Parameters
    ----------
    hopf : HopfPoint
    y : str
        The second parameter.
    x_range, y_range : (float, float), optional
        The box (the curves stop at its edges).
    n_points, n_orbits, fold_points : int
        Points of the Hopf curve (each way), orbits per branch, points per fold curve (each
        way).
    intervals, degree : int
        Collocation mesh of the cycles.

    Returns
    -------
    OnsetMap
    """
    from .continuation import FoldOfCycles, continue_orbits
    from .cycle_folds import continue_cycle_folds
    from .hopf import hopf_at
    from .hopf_curve import continue_hopf

    if y == hopf.name:
        raise OptionError(f"the second parameter must differ from {hopf.name!r}")
    curve = continue_hopf(hopf, y, n_points=n_points, direction=0, x_range=x_range, y_range=y_range)
    notes: list[str] = []
    starts = [hopf]
    eq = dict(hopf.equilibrium)
    for p in curve.special:
        if p.kind != "bautin":
            continue
        i = p.index
        # the neighbouring curve point on the subcritical side (l1 > 0)
        assert curve.lyapunov is not None  # a Bautin point was found from it
        j = i if curve.lyapunov[i] > 0 else i + 1
        if not 0 <= j < len(curve) or not curve.lyapunov[j] > 0:
            notes.append(f"no subcritical point next to the Bautin point at {p.x:.6g}, {p.y:.6g}")
            continue
        try:
            starts.append(
                hopf_at(
                    hopf.model, hopf.name, float(curve.x[j]), float(curve.omega[j]),
                    equilibrium=eq, **{**_others(hopf), y: float(curve.y[j])},
                )
            )  # fmt: skip
        except FluidnetError as exc:
            notes.append(f"Hopf point next to the Bautin point at ({p.x:.6g}, {p.y:.6g}): {exc}")
    branches, folds = [], []
    lo, hi = x_range if x_range is not None else (None, None)
    for hp in starts:
        try:
            br = continue_orbits(
                hp, lo=lo, hi=hi, n_orbits=n_orbits, intervals=intervals, degree=degree,
                max_step=0.3,
            )  # fmt: skip
        except (FluidnetError, AnalysisError) as exc:
            notes.append(f"cycles from the Hopf point at {hp.name}={hp.value:.6g}: {exc}")
            continue
        branches.append(br)
        for f in br.special:
            if not isinstance(f, FoldOfCycles):
                continue
            for direction in (1, -1):
                try:
                    folds.append(
                        continue_cycle_folds(
                            f, y, n_points=fold_points, direction=direction, x_range=x_range,
                            y_range=y_range,
                        )
                    )  # fmt: skip
                except (FluidnetError, AnalysisError) as exc:
                    notes.append(f"fold of cycles at {f.x_name}={f.x:.6g}: {exc}")
    return OnsetMap(hopf.name, y, curve, branches, folds, notes)


def _others(hopf) -> dict:
    return {k: v for k, v in hopf.params.items() if k != hopf.name}
