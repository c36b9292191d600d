"""Time responses (step, impulse) of delay systems, with exact delays: the result object and the
computation for a transfer function (:func:`tf_response`).

The responses are computed by the method of steps (:mod:`fluidnet.linear.steps`) on a state-space
form of the system (:mod:`fluidnet.linear.realization`); no delay is replaced by a Padé
approximation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, OptionError
from .realization import DelaySystem, realize
from .steps import response_values

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .delaytf import DelayTF

__all__ = ["TimeResponse", "default_horizon", "response", "tf_response"]

#: Output samples when no times are given.
DEFAULT_POINTS = 1000
#: At most this many segments of the method of steps (smallest delay each) in a default horizon.
MAX_SEGMENTS = 2000


@dataclass(kw_only=True)
class TimeResponse:
    """The response of a delay system to a unit step or a unit impulse of its input, from rest.

    Attributes
    ----------
    t : numpy.ndarray
        Times (s).
    y : numpy.ndarray
        The output at ``t``. It is right-continuous: at a jump (a delayed direct feedthrough)
        the value after the jump. For an impulse response, the regular part: the Dirac impulses
        are in ``diracs``. For a model's input (:func:`fluidnet.step_response` with ``input=``)
        the deviation from the equilibrium per unit change of the input parameter.
    kind : str
        ``"step"`` or ``"impulse"``.
    diracs : tuple of (float, float)
        ``(time, weight)`` of each Dirac impulse in an impulse response (a proper transfer
        function's direct feedthrough, delayed by ``time``); empty otherwise.
    input, output : str
        What the input and the output are (for a model: a parameter and a state or signal).
    rtol : float
        Relative tolerance of the integration of each segment of the method of steps.
    system : DelaySystem or None
        The state-space form the response was computed from.

    Examples
    --------
    >>> import fluidnet as fn
    >>> r = fn.step_response("exp(-s)/(s + 1)", [0.5, 1.0, 2.0])   # 1 - e^{-(t-1)} after t = 1
    >>> [round(float(v), 12) for v in r.y]
    [0.0, 0.0, 0.632120558829]
    """

    t: np.ndarray
    y: np.ndarray
    kind: str
    diracs: tuple[tuple[float, float], ...] = ()
    input: str = "u"
    output: str = "y"
    rtol: float = 1e-12
    system: DelaySystem | None = field(default=None, repr=False, compare=False)

    def to_xarray(self) -> Any:
        """The response as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``y`` along ``t`` (s); attributes ``kind``, ``input``, ``output``, ``rtol``, and for
            an impulse response the Dirac impulses' times and weights (``dirac_times``,
            ``dirac_weights``).
        """
        import xarray as xr

        attrs: dict[str, Any] = {
            "kind": self.kind,
            "input": self.input,
            "output": self.output,
            "rtol": self.rtol,
        }
        if self.diracs:
            attrs["dirac_times"] = [float(a) for a, _ in self.diracs]
            attrs["dirac_weights"] = [float(w) for _, w in self.diracs]
        return xr.Dataset(
            {"y": ("t", self.y, {"long_name": self.output})},
            coords={"t": ("t", self.t, {"units": "s"})},
            attrs=attrs,
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The output against time; Dirac impulses of an impulse response drawn as arrows.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            Line properties (``color``, ``label``, ...).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.subplots()[1]
        order = np.argsort(self.t)
        line = ax.plot(self.t[order], self.y[order], **kwargs)[0]
        for when, weight in self.diracs:
            ax.annotate(
                "",
                xy=(when, weight),
                xytext=(when, 0.0),
                arrowprops={"arrowstyle": "->", "color": line.get_color()},
            )
        ax.axhline(0.0, color="0.6", lw=0.6)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(self.output)
        ax.set_title(f"{self.kind} response, {self.input} -> {self.output}", fontsize="small")
        return ax

    def __repr__(self) -> str:
        if self.t.size:
            span = f"t in [{float(np.min(self.t)):g}, {float(np.max(self.t)):g}] s"
            last = f", y(end)={float(self.y[np.argmax(self.t)]):.6g}"
        else:
            span, last = "no times", ""
        extra = f", {len(self.diracs)} Dirac impulse(s)" if self.diracs else ""
        return (
            f"TimeResponse({self.kind} {self.input} -> {self.output}, {span}, "
            f"{self.t.size} points{last}{extra})"
        )


def default_horizon(system: DelaySystem) -> float:
    """A time span that shows the response settle (or grow): seven time constants of the
    slowest mode when the system is stable, twenty delays otherwise.

    Parameters
    ----------
    system : DelaySystem

    Returns
    -------
    float
        Seconds, at most :data:`MAX_SEGMENTS` times the smallest state delay.
    """
    delays = system.delays
    longest = max(delays, default=0.0)
    if system.dynamics is None:
        return max(1.5 * longest, 1.0)
    lin = system.dynamics
    try:
        roots = lin.roots(k=2)
        sigma = float(np.max(np.real(roots.values)))
        dominant = complex(roots.values[int(np.argmax(np.real(roots.values)))])
    except (AnalysisError, ValueError):
        sigma, dominant = math.inf, 0j
    if sigma < 0:
        horizon = 7.0 / -sigma + 2.0 * longest
    else:
        period = 2 * math.pi / abs(dominant.imag) if dominant.imag else 0.0
        horizon = 20.0 * max(longest, period, 1.0 / max(abs(dominant), 1e-3))
    if lin.delays:
        horizon = min(horizon, MAX_SEGMENTS * min(lin.delays))
    return float(horizon)


def response(
    system: DelaySystem,
    t: Any,
    *,
    kind: str,
    t_end: float | None,
    n_points: int,
    rtol: float,
    input: str,
    output: str,
) -> TimeResponse:
    """Check the options, choose the times and compute the response of ``system`` (the common
    part of :func:`fluidnet.step_response` and :func:`fluidnet.impulse_response`).

    Parameters
    ----------
    system : DelaySystem
    t : array_like or None
        Times; default ``n_points`` times over ``[0, t_end]``.
    kind : str
        ``"step"`` or ``"impulse"``.
    t_end : float or None
        End of the default times; default :func:`default_horizon`.
    n_points : int
        Number of default times.
    rtol : float
        Relative tolerance of the method of steps.
    input, output : str
        Names for the result.

    Returns
    -------
    TimeResponse

    Raises
    ------
    OptionError
        For both ``t`` and ``t_end``, a ``t_end`` that is not a positive number, or an invalid
        ``n_points``.
    """
    if t is not None and t_end is not None:
        raise OptionError("give either t (the times) or t_end (with n_points), not both")
    if t is None:
        if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)):
            raise OptionError(f"n_points must be an integer >= 2, got {n_points!r}")
        if n_points < 2:
            raise OptionError(f"n_points must be an integer >= 2, got {n_points!r}")
        if t_end is None:
            t_end = default_horizon(system)
        elif isinstance(t_end, bool) or not isinstance(t_end, (int, float, np.number)):
            raise OptionError(f"t_end must be a positive number of seconds, got {t_end!r}")
        if not (math.isfinite(t_end) and t_end > 0):
            raise OptionError(f"t_end must be a positive number of seconds, got {t_end!r}")
        times = np.linspace(0.0, float(t_end), int(n_points))
    else:
        try:
            times = np.array(t, dtype=float).reshape(-1)
        except (TypeError, ValueError) as exc:
            raise OptionError(f"t must be an array of times (s), got {t!r}") from exc
    y, diracs = response_values(system, times, impulse=kind == "impulse", rtol=rtol)
    return TimeResponse(
        t=times,
        y=y,
        kind=kind,
        diracs=diracs,
        input=input,
        output=output,
        rtol=rtol,
        system=system,
    )


def tf_response(
    tf: DelayTF,
    t: Any = None,
    *,
    kind: str = "step",
    t_end: float | None = None,
    n_points: int = DEFAULT_POINTS,
    rtol: float = 1e-12,
) -> TimeResponse:
    """The step or impulse response of a transfer function with exact delays.

    Parameters
    ----------
    tf : DelayTF
        Proper, with a retarded denominator (see :func:`~fluidnet.linear.realization.realize`).
    t : array_like, optional
        Times (s); default ``n_points`` times over ``[0, t_end]``.
    kind : {"step", "impulse"}
        Which response.
    t_end : float, optional
        End of the default times (default: :func:`default_horizon`).
    n_points : int, default 1000
        Number of default times.
    rtol : float, default 1e-12
        Relative tolerance of the method of steps.

    Returns
    -------
    TimeResponse

    Raises
    ------
    ImproperSystemError, NeutralSystemError
        See :func:`~fluidnet.linear.realization.realize`.
    """
    return response(
        realize(tf),
        t,
        kind=kind,
        t_end=t_end,
        n_points=n_points,
        rtol=rtol,
        input="u",
        output="y",
    )
