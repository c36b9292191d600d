"""The explorer's pictures: matplotlib figures whose artists are updated in place.

:class:`PanelsFigure` holds three panels: the rightmost characteristic roots, the Nyquist
curve of the loop gain with its gain and phase crossovers, and the nonlinear response (one row
per state, the equilibrium dashed). Its axes and lines are made once; an update replaces the
lines' data, titles and limits and renders the figure to PNG (``matplotlib`` Agg). Clearing
and redrawing axes would rebuild every tick and cost twice as much; the labels are plain text,
since mathtext is parsed again at every rendering (about 20 ms each); tick labels are most of
what is left, so the axes have few.

:class:`ChartFigure` is the stability chart, drawn once by
:meth:`fluidnet.stability.StabilityAccessor.plot` and kept as a bitmap: an update restores it
and draws only the current point on it (blitting), a few milliseconds instead of a third of
the rendering. A panel without a result shows its message instead.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import xarray as xr

    from .point import Snapshot

__all__ = ["PanelsFigure", "ChartFigure", "DPI"]

#: Resolution of the pictures (pixels per inch).
DPI = 72

_STABLE, _UNSTABLE, _UNKNOWN = "tab:green", "tab:red", "0.5"


def _verdict_colour(stable: bool | None) -> str:
    return _UNKNOWN if stable is None else (_STABLE if stable else _UNSTABLE)


def _wrap(text: str, width: int = 48) -> str:
    return "\n".join(textwrap.wrap(text, width)[:6])


def _placeholder(ax: Any) -> Any:
    return ax.text(
        0.5,
        0.5,
        "",
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize="small",
        bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "0.8"},
        zorder=10,
    )


def _png(figure: Any) -> bytes:
    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


class PanelsFigure:
    """Roots, Nyquist and response panels, drawn from
    :class:`~fluidnet.explore.point.Snapshot` objects.

    Parameters
    ----------
    states : sequence of str
        The states drawn in the response panel (one row each).
    """

    def __init__(self, states: Sequence[str]) -> None:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        self.states = list(states)
        n = max(len(self.states), 1)
        fig = Figure(figsize=(10.0, 4.6 + 0.9 * n), dpi=DPI)
        outer = fig.add_gridspec(
            2,
            1,
            height_ratios=[3.4, 1.1 * n],
            left=0.08,
            right=0.98,
            bottom=0.07,
            top=0.96,
            hspace=0.32,
        )
        top = outer[0].subgridspec(1, 2, wspace=0.22)
        rows = outer[1].subgridspec(n, 1, hspace=0.12)
        self.figure = fig
        self.ax_roots = fig.add_subplot(top[0, 0])
        self.ax_nyquist = fig.add_subplot(top[0, 1])
        self.ax_states = [fig.add_subplot(rows[i]) for i in range(n)]
        self._roots_setup()
        self._nyquist_setup()
        self._response_setup()
        for ax in (self.ax_roots, self.ax_nyquist):
            ax.xaxis.set_major_locator(MaxNLocator(5))
            ax.yaxis.set_major_locator(MaxNLocator(5))
        for ax in self.ax_states:
            ax.xaxis.set_major_locator(MaxNLocator(8))
            ax.yaxis.set_major_locator(MaxNLocator(3))

    # -------------------------------------------------------------------------- setup
    def _roots_setup(self) -> None:
        ax = self.ax_roots
        ax.axvline(0.0, color="0.6", lw=0.8)
        ax.axhline(0.0, color="0.85", lw=0.8)
        (self._roots,) = ax.plot([], [], "x", ms=8, mew=2)
        ax.set_xlabel("Re λ (1/s)")
        ax.set_ylabel("Im λ (rad/s)")
        self._roots_msg = _placeholder(ax)

    def _nyquist_setup(self) -> None:
        ax = self.ax_nyquist
        ax.axhline(0.0, color="0.85", lw=0.8)
        ax.axvline(0.0, color="0.85", lw=0.8)
        circle = np.exp(1j * np.linspace(0.0, 2.0 * np.pi, 181))
        ax.plot(np.real(circle), np.imag(circle), color="0.7", lw=0.6, ls="--")
        ax.plot([-1.0], [0.0], "r+", ms=12, mew=2)
        (self._ny,) = ax.plot([], [], color="C0", lw=1.4)
        (self._ny_mirror,) = ax.plot([], [], color="C0", lw=0.8, ls="--", alpha=0.6)
        (self._gain_x,) = ax.plot([], [], "o", color="C1", ms=6)
        (self._phase_x,) = ax.plot([], [], "s", color="C2", ms=6)
        # no legend (drawn again at every rendering): the markers are named in the label
        ax.set_xlabel("Re L(jω)    (● gain, ■ phase crossovers)")
        ax.set_ylabel("Im L(jω)")
        self._ny_msg = _placeholder(ax)

    def _response_setup(self) -> None:
        self._lines, self._eq_lines = [], []
        for i, ax in enumerate(self.ax_states):
            (line,) = ax.plot([], [], color=f"C{i}", lw=1.4)
            eq = ax.axhline(math.nan, color="0.4", lw=0.8, ls="--")
            self._lines.append(line)
            self._eq_lines.append(eq)
            ax.set_ylabel(self.states[i] if i < len(self.states) else "")
            if i < len(self.ax_states) - 1:
                ax.tick_params(labelbottom=False)
        self.ax_states[-1].set_xlabel("t (s)")
        self.ax_states[0].set_title("nonlinear response (dashed: equilibrium)", fontsize="small")
        self._resp_msg = _placeholder(self.ax_states[0])

    # -------------------------------------------------------------------------- updates
    def draw(self, snap: Snapshot) -> None:
        """Show a snapshot: every panel's data, titles and limits, or its message.

        Parameters
        ----------
        snap : Snapshot
        """
        self._draw_roots(snap)
        self._draw_nyquist(snap)
        self._draw_response(snap)

    def _draw_roots(self, snap: Snapshot) -> None:
        ax, roots = self.ax_roots, snap.roots
        msg = snap.messages.get("roots", "")
        if roots is None or len(roots) == 0:
            self._roots.set_data([], [])
            self._roots_msg.set_text(_wrap(msg or "no roots"))
            ax.set_title("characteristic roots", fontsize="small")
            return
        v = roots.values
        self._roots.set_data(np.real(v), np.imag(v))
        self._roots.set_color(_verdict_colour(snap.stable))
        self._roots_msg.set_text(_wrap(msg) if msg.startswith("not certified") else "")
        verdict = {None: "undecided", True: "stable", False: "UNSTABLE"}[snap.stable]
        ax.set_title(f"rightmost roots: {verdict}", fontsize="small")
        re = np.append(np.real(v), 0.0)
        im = np.append(np.imag(v), 0.0)
        pad_re = 0.1 * max(np.ptp(re), 1e-3)
        pad_im = 0.1 * max(np.ptp(im), 1e-3)
        ax.set_xlim(re.min() - pad_re, re.max() + pad_re)
        ax.set_ylim(im.min() - pad_im, im.max() + pad_im)

    def _draw_nyquist(self, snap: Snapshot) -> None:
        ax, ny, mg = self.ax_nyquist, snap.nyquist, snap.margins
        if ny is None or mg is None:
            for line in (self._ny, self._ny_mirror, self._gain_x, self._phase_x):
                line.set_data([], [])
            self._ny_msg.set_text(_wrap(snap.messages.get("loop", "no loop gain")))
            ax.set_title(f"Nyquist, loop cut at {snap.cut}", fontsize="small")
            return
        self._ny_msg.set_text("")
        z = np.asarray(ny.response, dtype=complex)
        self._ny.set_data(np.real(z), np.imag(z))
        self._ny_mirror.set_data(np.real(z), -np.imag(z))
        loop = mg.loop
        marks = ((self._gain_x, mg.gain_crossovers), (self._phase_x, mg.phase_crossovers))
        for line, freqs in marks:
            f = np.asarray(freqs, dtype=float)
            pts = (
                np.asarray(loop.freqresp(f), dtype=complex)
                if loop is not None and f.size
                else np.zeros(0, complex)
            )
            line.set_data(np.real(pts), np.imag(pts))
        finite = np.abs(z[np.isfinite(z)])
        r = float(np.clip(1.15 * (finite.max() if finite.size else 1.0), 1.5, 4.0))
        ax.set_xlim(-r, r)
        ax.set_ylim(-0.75 * r, 0.75 * r)
        verdict = "marginal" if ny.marginal else ("stable" if ny.stable else "UNSTABLE")
        ax.set_title(
            f"Nyquist, loop cut at {snap.cut}: N = {ny.encirclements}, "
            f"P = {ny.open_loop_rhp_poles}, Z = {ny.closed_loop_rhp_roots} ({verdict})",
            fontsize="small",
        )

    def _draw_response(self, snap: Snapshot) -> None:
        sol, eq = snap.solution, snap.equilibrium
        msg = snap.messages.get("response", "")
        self._resp_msg.set_text(_wrap(msg, 110) if sol is None else "")
        for i, (ax, line, eq_line) in enumerate(
            zip(self.ax_states, self._lines, self._eq_lines, strict=True)
        ):
            name = self.states[i] if i < len(self.states) else None
            level = math.nan if eq is None or name not in eq else float(eq[name])
            eq_line.set_ydata([level, level])
            if sol is None or name is None:
                line.set_data([], [])
                continue
            y = np.asarray(sol[name], dtype=float)
            line.set_data(sol.t, y)
            ends = y[np.isfinite(y)]
            if math.isfinite(level):
                ends = np.append(ends, level)
            lo, hi = (float(ends.min()), float(ends.max())) if ends.size else (0.0, 1.0)
            scale = max(abs(lo), abs(hi))
            if hi - lo <= 1e-9 * scale or hi == lo:  # a flat line: a window around it
                pad = 0.05 * scale if scale > 0 else 1.0
            else:
                pad = 0.08 * (hi - lo)
            ax.set_xlim(float(sol.t[0]), float(sol.t[-1]))
            ax.set_ylim(lo - pad, hi + pad)

    def png(self) -> bytes:
        """The figure rendered as PNG.

        Returns
        -------
        bytes
        """
        return _png(self.figure)


class ChartFigure:
    """A stability chart drawn once, with the current point moved on it.

    Parameters
    ----------
    chart : xarray.Dataset or None
        A :func:`fluidnet.stability_chart` over one or two parameters (None: a figure that
        says there is no chart).
    names : sequence of str
        The chart's parameters, horizontal axis first.
    """

    def __init__(self, chart: xr.Dataset | None, names: Sequence[str]) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.names = tuple(names)
        fig = Figure(figsize=(4.8, 3.6), dpi=DPI)
        self.canvas = FigureCanvasAgg(fig)
        self.figure = fig
        ax = self.ax = fig.add_axes((0.16, 0.14, 0.8, 0.74))
        self._note = ""
        self._point: Any = None
        self._background: Any = None
        if chart is None or not self.names:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no stability chart", ha="center", va="center")
            self._title = ""
            return
        chart.stability.plot(ax)
        if len(self.names) == 2:
            x, y = self.names
            missing = chart["abscissa"].transpose(y, x).isnull().values
            if missing.any():  # points without an answer (no equilibrium there): grey
                ax.contourf(
                    chart[x].values,
                    chart[y].values,
                    missing.astype(float),
                    levels=[0.5, 1.5],
                    colors=["0.6"],
                    alpha=0.5,
                )
            (self._point,) = ax.plot([], [], "o", ms=11, mec="k", mew=1.5, animated=True)
        else:
            self._point = ax.axvline(math.nan, color="k", lw=1.5, animated=True)
        self._title = ax.get_title()

    def draw(self, snap: Snapshot, note: str = "") -> None:
        """Move the point to a snapshot's values, coloured by its verdict.

        Parameters
        ----------
        snap : Snapshot
        note : str, optional
            A line under the chart's title (e.g. where it was computed); a new note renders
            the whole chart again.
        """
        if self._point is None:
            return
        if self._background is None or note != self._note:
            self._note = note
            title = self._title + ("\n" + _wrap(note, 60) if note else "")
            self.ax.set_title(title, fontsize="small")
            self.canvas.draw()
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
        if len(self.names) == 2:
            self._point.set_data([snap.values[self.names[0]]], [snap.values[self.names[1]]])
            self._point.set_markerfacecolor(_verdict_colour(snap.stable))
        else:
            self._point.set_xdata([snap.values[self.names[0]]] * 2)
            self._point.set_color(_verdict_colour(snap.stable))

    def png(self) -> bytes:
        """The chart with its point, as PNG.

        Returns
        -------
        bytes
        """
        from matplotlib.image import imsave

        if self._point is None or self._background is None:
            return _png(self.figure)
        self.canvas.restore_region(self._background)
        self.ax.draw_artist(self._point)
        buf = io.BytesIO()
        imsave(buf, np.asarray(self.canvas.buffer_rgba()), format="png")
        return buf.getvalue()
