"""``fn.explore``: the entry point of the explorer, light enough to import with ``fluidnet``.

The function shares its name with its package (:mod:`fluidnet.explore`), so ``fluidnet``
binds it eagerly (see :mod:`fluidnet._lazy`); this module therefore imports nothing but the
standard library, and the widgets, numpy and matplotlib are loaded when it is called.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..symbolic.model import Model
    from .explorer import Explorer

__all__ = ["explore"]


def explore(
    model: Model,
    sliders: Sequence[str] | Mapping[str, Any] | None = None,
    *,
    params: Mapping[str, float] | None = None,
    cut: str | None = None,
    chart: Sequence[str] | Mapping[str, ArrayLike] | Literal[False] | None = None,
    t_end: float | None = None,
    history: Mapping[str, Any] | None = None,
    states: Sequence[str] | None = None,
    k: int = 6,
    n_points: int = 400,
    interval: float = 0.1,
) -> Explorer:
    """Explore a model with sliders: equilibrium, roots, Nyquist, chart and response, live.

    An ipywidgets application (JupyterLab, Jupyter Notebook, VS Code, or a Voila page): a
    slider per parameter, with its unit, range and meaning from the model's
    :class:`~fluidnet.Param`; a table of numbers (the equilibrium, the rightmost characteristic
    roots, the gain, phase and delay margins, the linear and Nyquist verdicts); and four
    panels: the rightmost roots, the Nyquist curve of the loop gain with its crossovers, the
    current point on a stability chart, and the nonlinear response. Moving a slider updates
    everything, at most every ``interval`` seconds while it moves and once when it stops.

    Every number comes from the analysis stages (:meth:`fluidnet.Model.equilibrium`,
    :meth:`fluidnet.LinearDDE.roots`, :func:`fluidnet.margins`, :func:`fluidnet.nyquist`,
    :func:`fluidnet.stability_chart`, :func:`fluidnet.simulate`); the explorer computes
    nothing of its own. Where a stage has no answer (no equilibrium, a diverging simulation),
    its panel shows the stage's message instead: the application never stops on an error.

    Parameters
    ----------
    model : fluidnet.Model
        The model to explore.
    sliders : sequence of str or dict, optional
        The parameters with a slider: names, or ``{name: (lo, hi)}`` with the slider's range
        (``None`` for the default). Default: every parameter. A range not given runs from a
        quarter to four times the starting value, within the parameter's bounds.
    params : dict, optional
        Starting values ``{name: value}`` other than the model's defaults (of slider
        parameters or of fixed ones).
    cut : str, optional
        The state or signal where the loop is cut for the Nyquist panel and the margins
        (:meth:`fluidnet.Model.loop_gain`); default: the first state. The closed-loop
        verdict does not depend on the cut, the margins do.
    chart : sequence of str, dict, None or False
        The stability chart: one or two slider names (over their sliders' ranges, 41 or
        15 x 15 points), or a grid ``{name: values}`` for :func:`fluidnet.stability_chart`.
        Default: the first two sliders. ``False``: no chart. It is computed once, at the
        other parameters' starting values; a button computes it again at their current ones.
    t_end : float, optional
        End of the nonlinear response (s). Default: five decay times of the rightmost root
        at the start, between 20 and 100 times the longest delay.
    history : dict, optional
        The response's initial history (see :func:`fluidnet.simulate`). Default: every state
        at 0.9 times its equilibrium value, at each point's own equilibrium.
    states : sequence of str, optional
        The states drawn in the response panel (default: the first four).
    k : int, default 6
        How many rightmost roots are computed and drawn.
    n_points : int, default 400
        Output samples of the response.
    interval : float, default 0.1
        Least time (s) between two updates while a slider moves.

    Returns
    -------
    Explorer
        Displays as the application. Its state is readable and settable without a browser:
        ``ex.set(alpha=0.6)``, then ``ex.margins``, ``ex.roots``, ``ex.equilibrium``,
        ``ex.solution``, ``ex.stable``, ``ex.message``.

    Raises
    ------
    ParameterError
        For an unknown parameter, cut or state, a parameter without a value, or a slider range
        outside the parameter's bounds.

    See Also
    --------
    fluidnet.stability_chart : the chart the point moves on.
    fluidnet.margins, fluidnet.nyquist : the loop panel's numbers and curve.

    Notes
    -----
    Installing the ``notebooks`` extra (``pip install 'fluidnet[notebooks]'``) brings
    JupyterLab, ipywidgets and Voila. An update takes 80-130 ms of CPU for most of the
    library's laws, two thirds of it drawing (``benchmarks/bench_explore.py``); a model whose
    equilibrium needs a numeric search from many starts is slower (DCQCN: 0.6 s).

    Examples
    --------
    >>> import fluidnet as fn
    >>> ex = fn.explore(fn.models.rcp(), ["alpha", "beta"], chart=False)
    >>> ex.stable
    True
    >>> ex.set(alpha=0.1, beta=1.0).stable  # outside RCP's stable region
    False
    >>> ex.margins.closed_loop_stable
    False
    """
    from .explorer import Explorer

    return Explorer(
        model,
        sliders,
        params=params,
        cut=cut,
        chart=chart,
        t_end=t_end,
        history=history,
        states=states,
        k=k,
        n_points=n_points,
        interval=interval,
    )
