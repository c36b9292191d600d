"""The result of a region proof and its file: :class:`RegionCertificate`.

A certificate is plain JSON (``cert.save(path)``), every number a decimal string read as the
exact rational it spells (or ``"p/q"``):

``format``, ``version``, ``precision_bits``
    ``"fluidnet-region-certificate"``, 1, and the arb precision of the proof (53 bits).
``model``
    The model as :class:`~fluidnet.proof.problem.ModelRecord` stores it (right-hand sides and
    delays at rest as expression trees, see :mod:`fluidnet.proof.expressions`) and its
    ``digest``.
``box``
    ``[[name, lo, hi], ...]``: the swept parameters, exactly.
``fixed``
    ``{name: [lo, hi]}``: every other parameter's interval.
``depth``
    The deepest bisection level searched.
``leaves``
    The cells of the tree, in order: ``path`` (one hexadecimal digit per level; bit ``d`` of a
    digit picks the upper half of swept parameter ``d``), ``status`` (``"proved"`` or
    ``"undecided"``); a proved cell has ``equilibrium`` (the box of states of Krawczyk's test),
    ``omega_max`` (the root bound) and ``omega_tree`` (the bisection tree of
    ``[0, omega_max]``: ``"1"`` bisect, ``"0"`` a piece, in preorder); an undecided one a
    ``reason``.
``components``
    The joined sets of proved cells: ``leaves`` (indices), ``edges`` (index pairs: touching
    cells whose equilibria are one branch), ``anchor`` (the cell holding the counting point),
    ``point`` (exact), ``equilibrium`` (its box at the point), ``radius`` and ``tree`` (the
    half-disc and the bisection tree of ``[0, radius]`` of the argument principle) and
    ``count`` (roots in the open right half-plane).
``verdict``, ``count``, ``caveats``, ``work``
    What was proved, caveats (conventions the proof relies on), effort spent.
``digest``
    ``"sha256:..."`` of all of the above (canonical JSON): any edit of the file shows.

:func:`fluidnet.check_certificate` re-verifies every claim from the file alone.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..errors import AnalysisError, FluidnetError
from .exact import Interval, interval_strings, read_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "FORMAT",
    "VERSION",
    "CertificateError",
    "Leaf",
    "RegionCertificate",
    "cell_box",
    "decimal_text",
    "interval_texts",
]

FORMAT = "fluidnet-region-certificate"
VERSION = 1


class CertificateError(FluidnetError, ValueError):
    """A certificate that does not check: edited, malformed, or a claim that fails."""


def decimal_text(q: Fraction) -> str:
    """``q`` exactly: a decimal string when it terminates (within 60 digits), else ``"p/q"``."""
    den = q.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1 or max(twos, fives) > 60:
        return f"{q.numerator}/{q.denominator}"
    places = max(twos, fives)
    scaled = abs(q.numerator) * 10**places // q.denominator
    sign = "-" if q < 0 else ""
    if places == 0:
        return f"{sign}{scaled}"
    digits = str(scaled).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
    return sign + text


def interval_texts(iv: Interval) -> list[str]:
    """An interval as ``[lo, hi]`` strings: exact when the ends are short decimals, else
    rounded outward."""
    lo, hi = iv
    texts = [decimal_text(lo), decimal_text(hi)]
    if all(len(t) <= 24 and "/" not in t for t in texts):
        return texts
    return interval_strings(iv)


@dataclass
class Leaf:
    """One cell of a certificate.

    Attributes
    ----------
    path : str
        Its place in the tree (one hexadecimal digit per level).
    box : dict of str to (float, float)
        Its ranges of the swept parameters (rounded to floats for display; the certificate
        holds them exactly).
    verdict : str
        ``"stable"``, ``"unstable"`` or ``"undecided"``.
    count : int or None
        Roots in the open right half-plane (None when undecided).
    reason : str
        Why an undecided cell is (empty otherwise).
    """

    path: str
    box: dict[str, tuple[float, float]]
    verdict: str
    count: int | None
    reason: str = ""

    @property
    def depth(self) -> int:
        return len(self.path)


@dataclass
class RegionCertificate:
    """A proof (or a partial one) that a model's linearization is stable or unstable on a box.

    Made by :func:`fluidnet.certify_region` and :func:`fluidnet.certified_chart`, read back
    and re-verified by :func:`fluidnet.check_certificate`.

    Attributes
    ----------
    verdict : str
        ``"stable"`` (every cell proved, no root in the closed right half-plane),
        ``"unstable"`` (every cell proved with roots there) or ``"undecided"``.
    count : int or None
        Roots in the open right half-plane when the verdict is decided (None otherwise, or
        when parts differ).
    names : tuple of str
        The swept parameters.
    box : dict of str to (float, float)
        Their ranges.
    fixed : dict of str to (float, float)
        The other parameters' intervals.
    leaves : list of Leaf
        Every cell.
    caveats : list of str
        Conventions the proof relies on (e.g. a projected state at 0, frozen delays).
    work : dict
        ``cells`` tried, ``evaluations`` of the characteristic function, ``cpu_seconds``.
    model_name, model_digest : str
    checked : bool
        True for a certificate re-verified by :func:`fluidnet.check_certificate`.
    data : dict
        The certificate's JSON content (what :meth:`save` writes).
    model : fluidnet.Model or None
        The model, when known (to draw the exact boundary).
    """

    verdict: str
    count: int | None
    names: tuple[str, ...]
    box: dict[str, tuple[float, float]]
    fixed: dict[str, tuple[float, float]]
    leaves: list[Leaf]
    caveats: list[str]
    work: dict[str, Any]
    model_name: str
    model_digest: str
    checked: bool = False
    data: dict[str, Any] = field(default_factory=dict, repr=False)
    model: Any = field(default=None, repr=False)

    @classmethod
    def from_data(cls, data: dict[str, Any], *, model: Any = None, checked: bool = False):
        """The certificate of a JSON dict (as :meth:`save` writes it)."""
        names = tuple(str(b[0]) for b in data["box"])
        root = [(read_number(b[1]), read_number(b[2])) for b in data["box"]]
        counts: dict[int, int] = {}
        for comp in data["components"]:
            for i in comp["leaves"]:
                counts[int(i)] = int(comp["count"])
        leaves = []
        for i, leaf in enumerate(data["leaves"]):
            box = cell_box(root, leaf["path"], len(names))
            c = counts.get(i) if leaf["status"] == "proved" else None
            verdict = "undecided" if c is None else ("stable" if c == 0 else "unstable")
            leaves.append(
                Leaf(
                    path=leaf["path"],
                    box={n: (float(lo), float(hi)) for n, (lo, hi) in zip(names, box, strict=True)},
                    verdict=verdict,
                    count=c,
                    reason=leaf.get("reason", ""),
                )
            )
        return cls(
            verdict=data["verdict"],
            count=data["count"],
            names=names,
            box={n: (float(lo), float(hi)) for n, (lo, hi) in zip(names, root, strict=True)},
            fixed={
                p: (float(read_number(v[0])), float(read_number(v[1])))
                for p, v in data["fixed"].items()
            },
            leaves=leaves,
            caveats=list(data["caveats"]),
            work=dict(data["work"]),
            model_name=data["model"]["name"],
            model_digest=data["model"]["digest"],
            checked=checked,
            data=data,
            model=model,
        )

    # ------------------------------------------------------------------ summaries
    @property
    def x_name(self) -> str:
        """The first swept parameter."""
        return self.names[0]

    @property
    def y_name(self) -> str | None:
        """The second swept parameter (None for a 1-D box)."""
        return self.names[1] if len(self.names) > 1 else None

    @property
    def undecided(self) -> list[dict[str, tuple[float, float]]]:
        """The boxes left undecided."""
        return [leaf.box for leaf in self.leaves if leaf.verdict == "undecided"]

    def fraction(self, verdict: str | None = None) -> float:
        """The fraction of the box's volume (in its own scale) proved, or with a verdict.

        Parameters
        ----------
        verdict : {"stable", "unstable", "undecided"}, optional
            Default: every proved cell (stable or unstable).

        Returns
        -------
        float
        """
        k = len(self.names)
        total = 0.0
        for leaf in self.leaves:
            ok = leaf.verdict != "undecided" if verdict is None else leaf.verdict == verdict
            if ok:
                total += 2.0 ** (-k * leaf.depth)
        return total

    @property
    def fraction_proved(self) -> float:
        """The fraction of the box proved stable or unstable."""
        return self.fraction()

    def save(self, path: str | os.PathLike) -> None:
        """Write the certificate as JSON (see the module notes for the format).

        Parameters
        ----------
        path : str or path-like
        """
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.data, fh, indent=1)
            fh.write("\n")

    def to_xarray(self) -> Any:
        """The cells as an :class:`xarray.Dataset` along ``cell``.

        Returns
        -------
        xarray.Dataset
            ``<name>_lo`` and ``<name>_hi`` per swept parameter, ``verdict`` (str), ``count``
            (-1 where undecided), ``depth``, ``reason``; the verdict, model and fixed values as
            attributes.
        """
        import numpy as np
        import xarray as xr

        dim = "cell"
        data: dict[str, Any] = {}
        for n in self.names:
            data[f"{n}_lo"] = (dim, np.array([leaf.box[n][0] for leaf in self.leaves]))
            data[f"{n}_hi"] = (dim, np.array([leaf.box[n][1] for leaf in self.leaves]))
        data["verdict"] = (dim, np.array([leaf.verdict for leaf in self.leaves], dtype=str))
        data["count"] = (
            dim,
            np.array([-1 if leaf.count is None else leaf.count for leaf in self.leaves]),
        )
        data["depth"] = (dim, np.array([leaf.depth for leaf in self.leaves]))
        data["reason"] = (dim, np.array([leaf.reason for leaf in self.leaves], dtype=str))
        return xr.Dataset(
            data,
            attrs={
                "verdict": self.verdict,
                "count": -1 if self.count is None else self.count,
                "model": self.model_name,
                "model_digest": self.model_digest,
                "fraction_proved": self.fraction_proved,
                **{f"fixed_{k}": v[0] for k, v in self.fixed.items()},
            },
        )

    def plot(self, ax: Axes | None = None, *, boundary: bool | None = None) -> Axes:
        """Draw the cells: proved stable (green), proved unstable (red, darker with more roots),
        undecided (grey); for a 2-D box, the exact boundary of
        :func:`fluidnet.stability_boundary` on top.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        boundary : bool, optional
            Draw the exact boundary (default: when the model is known and the box is 2-D).

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Patch, Rectangle

        if ax is None:
            _, ax = plt.subplots()
        two = len(self.names) >= 2
        xn = self.names[0]
        yn = self.names[1] if two else None
        patches, colors = [], []
        for leaf in self.leaves:
            x0, x1 = leaf.box[xn]
            y0, y1 = leaf.box[yn] if yn else (0.0, 1.0)
            patches.append(Rectangle((x0, y0), x1 - x0, y1 - y0))
            colors.append(_colour(leaf))
        ax.add_collection(
            PatchCollection(patches, facecolors=colors, edgecolors="white", linewidths=0.3)
        )
        ax.set_xlim(*self.box[xn])
        ax.set_ylim(*(self.box[yn] if yn else (0.0, 1.0)))
        ax.set_xlabel(xn)
        if yn:
            ax.set_ylabel(yn)
        else:
            ax.set_yticks([])
        handles = [
            Patch(color=_colour(Leaf("", {}, "stable", 0)), label="proved stable"),
            Patch(color=_colour(Leaf("", {}, "unstable", 2)), label="proved unstable"),
            Patch(color=_colour(Leaf("", {}, "undecided", None)), label="undecided"),
        ]
        if boundary is None:
            boundary = two and self.model is not None
        if boundary:
            if self.model is None or not two:
                raise AnalysisError(
                    "the exact boundary needs the model and a 2-D box: pass model= to "
                    "check_certificate, or plot(boundary=False)"
                )
            from ..stability.boundary import stability_boundary

            b = stability_boundary(
                self.model,
                xn,
                yn,  # type: ignore[arg-type]
                x_range=self.box[xn],
                y_range=self.box[yn],  # type: ignore[index]
                params={k: 0.5 * (lo + hi) for k, (lo, hi) in self.fixed.items()},
                progress=False,
            )
            b.plot(ax, all_curves=False, color="k", lw=1.2)
        ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize="small")
        ax.set_title(
            f"{self.model_name}: {self.verdict}; {100 * self.fraction_proved:.1f}% proved",
            fontsize="small",
        )
        return ax

    def __repr__(self) -> str:
        rng = ", ".join(f"{n} in {self.box[n]}" for n in self.names)
        count = "" if self.count is None else f", count={self.count}"
        return (
            f"RegionCertificate({self.verdict!r}{count}; {rng}; {len(self.leaves)} cells, "
            f"{100 * self.fraction_proved:.1f}% proved{', checked' if self.checked else ''})"
        )


def _colour(leaf: Leaf) -> tuple[float, float, float]:
    if leaf.verdict == "stable":
        return (0.45, 0.75, 0.45)
    if leaf.verdict == "unstable":
        shade = min(1.0, 0.25 * (leaf.count or 1))
        return (0.95 - 0.3 * shade, 0.55 - 0.35 * shade, 0.5 - 0.3 * shade)
    return (0.82, 0.82, 0.82)


def cell_box(root: list[Interval], path: str, k: int) -> list[Interval]:
    """The exact box of the cell at ``path`` in the box ``root`` of ``k`` swept parameters."""
    box = list(root)
    for ch in path:
        digit = int(ch, 16)
        for d in range(k):
            lo, hi = box[d]
            mid = (lo + hi) / 2
            box[d] = (mid, hi) if digit >> d & 1 else (lo, mid)
    return box
