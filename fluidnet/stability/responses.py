"""Step and impulse responses with exact delays, of a transfer function or of a linearized model
with an input: python-control's ``step_response`` and ``impulse_response`` for delay systems.

The responses are computed by the method of steps (:mod:`fluidnet.linear.steps`), never with a
Padé approximation of a delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import OptionError
from ..linear.delaytf import as_delay_tf
from ..linear.realization import realize
from ..linear.timeresponse import DEFAULT_POINTS, TimeResponse, response

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["impulse_response", "step_response"]


def _system(sys: Any, input: str | None, output: str | None, params, where: str):
    from ..symbolic.model import Model

    if isinstance(sys, Model):
        if input is None or output is None:
            raise OptionError(
                f"{where} of a model needs input= (a parameter, or a state whose derivative "
                f"receives the input) and output= (a state or signal) of model {sys.name!r}"
            )
        from ..symbolic.inputoutput import input_output_system

        system, _ = input_output_system(sys, input, output, params=params)
        return system, str(input), str(output)
    if input is not None or output is not None or params is not None:
        raise OptionError(
            f"input=, output= and params= select a model's input and output; a transfer "
            f"function has one of each ({where} of {type(sys).__name__})"
        )
    return realize(as_delay_tf(sys)), "u", "y"


def step_response(
    sys: Any,
    t: ArrayLike | None = None,
    *,
    input: str | None = None,
    output: str | None = None,
    params: Mapping[str, Any] | None = None,
    t_end: float | None = None,
    n_points: int = DEFAULT_POINTS,
    rtol: float = 1e-12,
) -> TimeResponse:
    """The response to a unit step of the input at ``t = 0``, from rest, with exact delays.

    Computed by the method of steps: the system is integrated one delay at a time, each piece
    an ordinary differential equation solved to the relative tolerance ``rtol`` (DOP853), so
    the delays are exact (no Padé approximation).

    Parameters
    ----------
    sys : DelayTF, control.TransferFunction, sympy expression, str or fluidnet.Model
        A transfer function (proper, with a retarded denominator), e.g. a closed loop
        ``L.feedback()``; or a model, linearized at its equilibrium, with ``input`` and
        ``output``.
    t : array_like, optional
        Times (s) at which to return the response; default ``n_points`` times over
        ``[0, t_end]``.
    input : str, optional
        For a model: a parameter (its value steps by one unit at ``t = 0``, everywhere at once)
        or a state (a unit input is added to its derivative). See
        :mod:`fluidnet.symbolic.inputoutput`.
    output : str, optional
        For a model: the state or signal observed (its deviation from the equilibrium).
    params : dict, optional
        For a model: parameter values other than its own.
    t_end : float, optional
        End of the default times. Default: seven time constants of the slowest mode of a
        stable system (twenty delays for an unstable one).
    n_points : int, default 1000
        Number of output samples when ``t`` is not given.
    rtol : float, default 1e-12
        Relative tolerance of the integration of each piece (between 1e-13 and 1e-3).

    Returns
    -------
    TimeResponse
        ``t`` and ``y`` (right-continuous at a jump), ``.plot()`` and ``.to_xarray()``. For a
        model, ``y`` is the output's deviation per unit step of the input: multiply by the size
        of a small step.

    Raises
    ------
    ImproperSystemError
        For a transfer function with more zeros than poles.
    NeutralSystemError
        For a neutral denominator (e.g. the closed loop of ``k e^{-s tau}``).
    OptionError
        For a model without ``input``/``output``, those given with a transfer function, both
        ``t`` and ``t_end``, or an invalid ``rtol`` or ``n_points``.
    ParameterError, ModelError
        For an unknown input or output of a model.
    AnalysisError
        When the response overflows (an unstable system over a long time).

    See Also
    --------
    impulse_response : the response to a unit impulse.
    fluidnet.DelayTF.feedback : the closed loop whose step response is usually wanted.
    fluidnet.bode, fluidnet.margins : the frequency-domain view of the same loop.

    Examples
    --------
    A first-order lag with a delay in a unit feedback loop: the closed loop
    ``e^{-0.3 s}/(0.7 s + 1 + e^{-0.3 s})``; between ``0.3`` and ``0.6`` s its step response is
    ``1 - e^{-(t - 0.3)/0.7}``:

    >>> import numpy as np, fluidnet as fn
    >>> L = fn.DelayTF.from_expr("exp(-0.3*s)/(0.7*s + 1)")
    >>> r = fn.step_response(L.feedback(), [0.2, 0.5])
    >>> bool(abs(r.y[1] - (1 - np.exp(-0.2 / 0.7))) < 1e-10), float(r.y[0])
    (True, 0.0)

    The queue of RCP after the capacity grows by one packet per second (a parameter step):

    >>> r = fn.step_response(fn.models.rcp(), input="C", output="R", t_end=5.0)
    >>> r.input, r.output
    ('C', 'R')
    """
    system, name_in, name_out = _system(sys, input, output, params, "step_response")
    return response(
        system,
        t,
        kind="step",
        t_end=t_end,
        n_points=n_points,
        rtol=rtol,
        input=name_in,
        output=name_out,
    )


def impulse_response(
    sys: Any,
    t: ArrayLike | None = None,
    *,
    input: str | None = None,
    output: str | None = None,
    params: Mapping[str, Any] | None = None,
    t_end: float | None = None,
    n_points: int = DEFAULT_POINTS,
    rtol: float = 1e-12,
) -> TimeResponse:
    """The response to a unit impulse of the input at ``t = 0``, from rest, with exact delays.

    The derivative of :func:`step_response`, computed the same way (method of steps, exact
    delays). A proper transfer function's direct feedthrough makes Dirac impulses in the
    output; they are returned apart, in ``diracs``, and ``y`` is the regular part.

    Parameters
    ----------
    sys : DelayTF, control.TransferFunction, sympy expression, str or fluidnet.Model
        A transfer function (proper, with a retarded denominator), or a model with ``input``
        and ``output``.
    t : array_like, optional
        Times (s); default ``n_points`` times over ``[0, t_end]``.
    input : str, optional
        For a model: a parameter or a state (see :func:`step_response`).
    output : str, optional
        For a model: a state or a signal.
    params : dict, optional
        For a model: parameter values other than its own.
    t_end : float, optional
        End of the default times (default as in :func:`step_response`).
    n_points : int, default 1000
        Number of output samples when ``t`` is not given.
    rtol : float, default 1e-12
        Relative tolerance of the integration of each piece.

    Returns
    -------
    TimeResponse
        With ``diracs``, the ``(time, weight)`` of each Dirac impulse of the output.

    Raises
    ------
    ImproperSystemError, NeutralSystemError, OptionError, ParameterError, ModelError
        As :func:`step_response`.

    See Also
    --------
    step_response : the response to a unit step.

    Examples
    --------
    ``e^{-s}/(s + 1)``: nothing before ``t = 1``, then ``e^{-(t - 1)}``:

    >>> import fluidnet as fn
    >>> r = fn.impulse_response("exp(-s)/(s + 1)", [0.5, 2.0])
    >>> [round(float(v), 12) for v in r.y]
    [0.0, 0.367879441171]

    ``(s + 2)/(s + 1) = 1 + 1/(s + 1)`` has a Dirac impulse of weight 1 at ``t = 0``:

    >>> fn.impulse_response("(s + 2)/(s + 1)", [1.0]).diracs
    ((0.0, 1.0),)
    """
    system, name_in, name_out = _system(sys, input, output, params, "impulse_response")
    return response(
        system,
        t,
        kind="impulse",
        t_end=t_end,
        n_points=n_points,
        rtol=rtol,
        input=name_in,
        output=name_out,
    )
