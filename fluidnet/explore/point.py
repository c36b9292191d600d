"""One point of the explorer: every panel's result at one set of parameter values.

:func:`snapshot` asks the analysis stages, and only them, for the equilibrium
(:meth:`fluidnet.Model.equilibrium`), the rightmost characteristic roots
(:meth:`fluidnet.LinearDDE.roots`), the loop gain's margins and Nyquist count
(:func:`fluidnet.margins`, :func:`fluidnet.nyquist`) and the nonlinear response
(:func:`fluidnet.simulate`). A stage that has no answer at this point (no equilibrium, a
diverging simulation, ...) leaves its panel empty with the stage's message; the other panels
are still filled where they can be. Warnings the stages give are kept as notes. Nothing here
raises for a parameter region: the explorer shows a message, never a traceback.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import FluidnetError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..dde.solution import Solution
    from ..linear.rootset import Roots
    from ..stability.margins import Margins
    from ..stability.nyquist import NyquistResponse
    from ..symbolic.equilibrium import Equilibrium
    from ..symbolic.model import Model

__all__ = ["Snapshot", "snapshot", "PANELS", "relative_history"]

#: The panels of the explorer, in the order their messages are shown.
PANELS = ("equilibrium", "roots", "loop", "response")

#: Default relative offset of the response's initial history from the equilibrium.
PERTURBATION = 0.1


@dataclass
class Snapshot:
    """The explorer's results at one set of parameter values.

    Attributes
    ----------
    values : dict of str to float
        Every parameter's value at this point.
    equilibrium : Equilibrium or None
        ``{state: value}`` (:meth:`fluidnet.Model.equilibrium`); None where there is none.
    roots : Roots or None
        The rightmost characteristic roots of the linearization at the equilibrium.
    margins : Margins or None
        Gain, phase and delay margins of the loop gain cut at ``cut``.
    nyquist : NyquistResponse or None
        The loop gain's Nyquist curve and its encirclement count.
    solution : Solution or None
        The nonlinear response (:func:`fluidnet.simulate`) from the explorer's history.
    cut : str
        Where the loop is cut for the margins and the Nyquist curve.
    messages : dict of str to str
        For a panel (``"equilibrium"``, ``"roots"``, ``"loop"``, ``"response"``) without a
        result: why; for one with a warning: the warning.
    cpu_time : float
        CPU seconds the stages took for this point.
    """

    values: dict[str, float]
    cut: str
    equilibrium: Equilibrium | None = None
    roots: Roots | None = None
    margins: Margins | None = None
    nyquist: NyquistResponse | None = None
    solution: Solution | None = None
    messages: dict[str, str] = field(default_factory=dict)
    cpu_time: float = math.nan

    @property
    def stable(self) -> bool | None:
        """The linear verdict: True when the rightmost root, certified, has ``Re < 0``.

        None when there are no roots or they are not certified (a root may be missing).
        """
        if self.roots is None or len(self.roots) == 0 or not self.roots.certified:
            return None
        return bool(self.roots.abscissa < 0.0)

    @property
    def message(self) -> str:
        """Every panel's message, one line each (empty when all went well)."""
        return "\n".join(f"{k}: {v}" for k, v in self.messages.items())

    def to_xarray(self) -> Any:
        """The numbers of this point as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            The parameter values and the equilibrium (one scalar per parameter and state,
            the states as ``equilibrium_<state>``), ``roots`` (complex, along ``root``), the
            margins (``gain_margin``, ``phase_margin`` in degrees, ``delay_margin`` in s,
            ``gain_crossover`` in rad/s), ``stable`` (1, 0, or NaN when undecided); a panel
            without a result has no variables, and its message is in the attributes.
        """
        import xarray as xr

        data: dict[str, Any] = {k: ((), v) for k, v in self.values.items()}
        if self.equilibrium is not None:
            for k, v in self.equilibrium.items():
                data[f"equilibrium_{k}"] = ((), float(v))
        if self.roots is not None:
            data["roots"] = ("root", self.roots.values)
        if self.margins is not None:
            for k in ("gain_margin", "phase_margin", "delay_margin", "gain_crossover"):
                data[k] = ((), float(getattr(self.margins, k)))
        stable = self.stable
        data["stable"] = ((), math.nan if stable is None else float(stable))
        attrs = {"cut": self.cut, **{f"message_{k}": v for k, v in self.messages.items()}}
        return xr.Dataset(data, attrs=attrs)

    def plot(self, states: Sequence[str] | None = None) -> Figure:
        """The explorer's panels for this point (roots, Nyquist, response), in a new figure.

        Parameters
        ----------
        states : sequence of str, optional
            The states of the response panel (default: the first four).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from .figure import PanelsFigure

        fig = PanelsFigure(self._state_names(states))
        fig.draw(self)
        return fig.figure

    def _state_names(self, states: Sequence[str] | None) -> list[str]:
        if states is not None:
            return list(states)
        if self.solution is not None:
            return list(self.solution.state_names)[:4]
        return list(self.equilibrium or {})[:4]


def relative_history(equilibrium: Mapping[str, float], offset: float = PERTURBATION) -> dict:
    """The default initial history of the response: each state at ``(1 - offset)`` times its
    equilibrium value (a state at 0 stays at 0)."""
    return {k: (1.0 - offset) * float(v) for k, v in equilibrium.items()}


def _message(exc: BaseException) -> str:
    if isinstance(exc, FluidnetError):
        return str(exc)
    # not an error of the parameter region: a defect, reported without a traceback all the same
    return f"unexpected {type(exc).__name__}: {exc} (please report this as a fluidnet bug)"


def _note(messages: dict[str, str], panel: str, caught: list[warnings.WarningMessage]) -> None:
    text = "; ".join(dict.fromkeys(str(w.message) for w in caught))
    if text and panel not in messages:
        messages[panel] = f"warning: {text}"


def snapshot(
    model: Model,
    values: Mapping[str, float],
    *,
    cut: str,
    t_end: float,
    history: Mapping[str, Any] | None = None,
    k: int = 6,
    n_points: int = 400,
    max_steps: int = 50_000,
) -> Snapshot:
    """Every panel's result at one set of parameter values.

    Parameters
    ----------
    model : fluidnet.Model
    values : dict
        ``{name: value}`` for the parameters that differ from the model's defaults.
    cut : str
        The state or signal where the loop is cut (:meth:`fluidnet.Model.loop_gain`).
    t_end : float
        End of the nonlinear response (s).
    history : dict, optional
        The response's initial history (:func:`fluidnet.simulate`); default: every state at
        0.9 times its equilibrium value at these parameters.
    k : int, default 6
        How many rightmost roots.
    n_points : int, default 400
        Output samples of the response.
    max_steps : int, default 50000
        Step limit of the response (an update stays short; a run that needs more is a message).

    Returns
    -------
    Snapshot
        Panels without a result carry the stage's message in :attr:`Snapshot.messages`.

    Examples
    --------
    >>> import fluidnet as fn
    >>> from fluidnet.explore.point import snapshot
    >>> snap = snapshot(fn.models.rcp(), {"alpha": 0.1, "beta": 1.0}, cut="R", t_end=10.0)
    >>> snap.stable, snap.margins.closed_loop_stable
    (False, False)
    """
    from ..dde.simulation import simulate
    from ..stability.margins import margins
    from ..stability.nyquist import nyquist

    start = time.process_time()
    params = dict(values)
    full = {k_: v for k_, v in model.values.items() if v is not None}
    full.update(params)
    snap = Snapshot(values={k_: float(v) for k_, v in full.items()}, cut=cut)
    msgs = snap.messages
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            snap.equilibrium = model.equilibrium(params=params)
        except Exception as exc:
            msgs["equilibrium"] = _message(exc)
        _note(msgs, "equilibrium", caught)
        caught.clear()
        eq = snap.equilibrium
        if eq is not None:
            try:
                lin = model.linearize(equilibrium=eq, params=params)
                snap.roots = lin.roots(k=k)
                if snap.roots.certified is False:
                    msgs["roots"] = (
                        "not certified: a root right of Re s = "
                        f"{snap.roots.certificate:.4g} may be missing"
                    )
            except Exception as exc:
                msgs["roots"] = _message(exc)
            _note(msgs, "roots", caught)
            caught.clear()
            try:
                L = model.loop_gain(cut, equilibrium=eq, params=params)
                snap.nyquist = nyquist(L)
                snap.margins = margins(L)
            except Exception as exc:
                msgs["loop"] = _message(exc)
            _note(msgs, "loop", caught)
            caught.clear()
        else:
            msgs.setdefault("roots", "no equilibrium to linearize at")
            msgs.setdefault("loop", "no equilibrium to linearize at")
        hist = history if history is not None else None if eq is None else relative_history(eq)
        if hist is None:
            msgs["response"] = "no equilibrium to start near: give the explorer a history"
        else:
            try:
                snap.solution = simulate(
                    model,
                    t_end,
                    params=params,
                    history=hist,
                    t_eval=np.linspace(0.0, t_end, n_points),
                    dense=False,
                    max_steps=max_steps,
                )
            except Exception as exc:
                msgs["response"] = _message(exc)
            _note(msgs, "response", caught)
    snap.cpu_time = time.process_time() - start
    return snap
