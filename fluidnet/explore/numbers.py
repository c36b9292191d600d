"""The explorer's numbers as HTML: equilibrium, rightmost roots, margins, messages.

Each value sits in an element with a class named for it (``fn-at-alpha``, ``fn-phase-margin``,
``fn-eq-q``, ``fn-root-0``, ``fn-verdict``, ``fn-message``) so that a browser test can read it.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .point import Snapshot

__all__ = ["numbers_html"]


def _num(x: float, unit: str = "") -> str:
    if not math.isfinite(x):
        return "none" if math.isinf(x) else "n/a"
    return f"{x:.5g}" + (f" {unit}" if unit else "")


def _root(z: complex) -> str:
    return f"{z.real:.5g} {'+' if z.imag >= 0 else '-'} {abs(z.imag):.5g}j"


def _row(label: str, value: str, cls: str) -> str:
    return (
        f'<tr><td style="padding-right:1em">{html.escape(label)}</td>'
        f'<td class="{cls}">{html.escape(value)}</td></tr>'
    )


def numbers_html(snap: Snapshot, names: Sequence[str] = ()) -> str:
    """The numbers of a snapshot, as an HTML fragment.

    Parameters
    ----------
    snap : Snapshot
    names : sequence of str, optional
        Parameters whose values are shown first (the sliders': the point these numbers are
        of, which lags the sliders while an update is under way).

    Returns
    -------
    str
    """
    rows = [_row(f"at {k}", f"{snap.values[k]:.6g}", f"fn-at-{k}") for k in names]
    stable = snap.stable
    verdict = {None: "undecided", True: "stable", False: "unstable"}[stable]
    colour = {None: "#777", True: "#2a7d2a", False: "#c0392b"}[stable]
    rows.append(
        f'<tr><td>linearization</td><td class="fn-verdict" style="color:{colour};'
        f'font-weight:bold">{verdict}</td></tr>'
    )
    if snap.equilibrium is not None:
        for k, v in snap.equilibrium.items():
            rows.append(_row(f"equilibrium {k}", _num(float(v)), f"fn-eq-{k}"))
    if snap.roots is not None:
        for i, z in enumerate(snap.roots.values[:4]):
            rows.append(_row(f"root {i + 1}", _root(complex(z)), f"fn-root-{i}"))
    mg = snap.margins
    if mg is not None:
        rows.append(_row("gain margin", _num(mg.gain_margin), "fn-gain-margin"))
        rows.append(_row("phase margin", _num(mg.phase_margin, "deg"), "fn-phase-margin"))
        rows.append(_row("delay margin", _num(mg.delay_margin, "s"), "fn-delay-margin"))
        rows.append(_row("gain crossover", _num(mg.gain_crossover, "rad/s"), "fn-crossover"))
        closed = mg.closed_loop_stable
        rows.append(
            _row(
                "Nyquist",
                "undecided" if closed is None else ("stable" if closed else "unstable"),
                "fn-nyquist",
            )
        )
    table = "<table style='font-family:monospace;font-size:90%'>" + "".join(rows) + "</table>"
    msgs = "".join(
        f'<div class="fn-message" style="color:#a04000">{html.escape(k)}: {html.escape(v)}</div>'
        for k, v in snap.messages.items()
    )
    return f'<div class="fn-explore-numbers">{table}{msgs}</div>'
