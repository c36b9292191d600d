"""The periodic orbit of a model from a Hopf point, a simulated cycle or another orbit.

:func:`periodic_orbit` is the one entry point. From a Hopf point it tries Newton's method from
the normal form's prediction, then the branch continued from the Hopf point
(:func:`~fluidnet.bifurcation.continuation.continue_orbits`), then a long simulation; so it sits
above the continuation of branches, which itself re-solves orbits with
:func:`~fluidnet.bifurcation.orbit.collocated_orbit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..errors import AnalysisError, OptionError
from ..options import number_option
from ..overrides import merge_params, parameter_value
from .collocation import Mesh
from .continuation import continue_orbits
from .orbit import PeriodicOrbit, collocated_orbit, direct_orbit
from .smoothness import NonSmoothError

if TYPE_CHECKING:
    from ..dde.solution import Solution
    from .hopf import HopfPoint

__all__ = ["periodic_orbit"]


def _from_hopf(hp, value: float, params: dict, **kw) -> PeriodicOrbit:
    """The orbit at ``value`` of the Hopf point's branch: Newton's method from the normal
    form's prediction, else the branch continued from the Hopf point to ``value``, else a long
    simulation at ``value`` started near the predicted orbit. Each failure is reported."""
    tried = []
    try:
        return direct_orbit(hp, value, params, **kw)
    except NonSmoothError:
        raise
    except AnalysisError as exc:
        tried.append(f"Newton from the normal form's prediction: {exc}")
    if params:
        tried.append("continuation from the Hopf point: not tried (other parameters differ)")
    else:
        try:
            gap = abs(value - hp.value)
            br = continue_orbits(
                hp, n_orbits=400, intervals=kw["intervals"], degree=kw["degree"],
                floquet=kw["floquet"], check_smooth=kw["check_smooth"], target=value,
                max_step=0.5, tol=kw["tol"], lo=hp.value - 3 * gap, hi=hp.value + 3 * gap,
            )  # fmt: skip
            last = br.orbits[-1]
            if abs(last.params[hp.name] - value) <= 1e-9 * max(1.0, abs(value)):
                return last
            tried.append(
                f"continuation from the Hopf point: the branch did not reach {hp.name}={value:g} "
                f"(it covers [{br.x.min():.6g}, {br.x.max():.6g}]; stopped: "
                f"{br.stop_reason})"
            )
        except NonSmoothError:
            raise
        except AnalysisError as exc:
            tried.append(f"continuation from the Hopf point: {exc}")
    try:
        return _from_simulation_near(hp, value, params, kw)
    except NonSmoothError:
        raise
    except AnalysisError as exc:
        tried.append(f"a simulation at {hp.name}={value:g}: {exc}")
    raise AnalysisError(
        f"no periodic orbit at {hp.name}={value:g} from the Hopf point at {hp.name}="
        f"{hp.value:.6g}; tried: " + "; ".join(f"({i + 1}) {t}" for i, t in enumerate(tried))
    )


def _from_simulation_near(hp, value: float, params: dict, kw) -> PeriodicOrbit:
    """A long run at ``value`` from a history near the equilibrium, then its cycle."""
    from ..dde import simulate

    model = hp.model
    values = {**{k: v for k, v in hp.params.items()}, **params, hp.name: value}
    x0 = np.array([hp.equilibrium[s] for s in model.state_names])
    scale = np.maximum(np.abs(x0), 1e-3 * max(float(np.max(np.abs(x0))), 1.0))
    kick = x0 + 0.05 * scale * np.real(hp.eigenvector / np.max(np.abs(hp.eigenvector)))
    T0 = hp.period
    t_end = 200.0 * T0 + 20.0 * max(float(hp.params.get(hp.name, 0.0)), 0.0)
    sol = simulate(
        model, t_end, params=values, history=dict(zip(model.state_names, kick, strict=True)),
        rtol=1e-8, atol=1e-10,
    )  # fmt: skip
    return collocated_orbit(
        sol, intervals=kw["intervals"], degree=kw["degree"], floquet=kw["floquet"],
        check_smooth=kw["check_smooth"], tol=kw["tol"], after=0.75 * t_end,
    )  # fmt: skip


def periodic_orbit(
    start: HopfPoint | Solution | PeriodicOrbit,
    value: float | None = None,
    *,
    intervals: int = 40,
    degree: int = 4,
    state: str | None = None,
    after: float | None = None,
    floquet: bool = True,
    check_smooth: bool = True,
    tol: float = 1e-10,
    params: Mapping[str, float] | None = None,
    **fixed: float,
) -> PeriodicOrbit:
    """A periodic orbit by collocation, from a Hopf point, a simulated cycle or another orbit.

    Parameters
    ----------
    start : HopfPoint, Solution or PeriodicOrbit
        * a :class:`HopfPoint`: the orbit at ``value`` of its parameter: Newton's method from
          the normal form's prediction; where that fails (far from onset), the branch
          continued from the Hopf point up to ``value``; where that fails too, a long
          simulation at ``value``. The error says which was tried and why each failed;
        * a :class:`fluidnet.dde.Solution` of :func:`fluidnet.simulate` that has settled on a
          cycle: the last full period of its tail (after ``after``) is the initial profile;
        * a :class:`PeriodicOrbit`: re-solved at the parameter overrides ``params`` (small
          changes) or on another mesh.
    value : float, optional
        The bifurcation parameter's value (with a Hopf point).
    intervals, degree : int
        Collocation mesh: equal intervals and polynomial degree (order ``h^degree``).
    state : str, optional
        With a simulation: the state used to detect the period (default: the one that varies
        most, relative to its size).
    after : float, optional
        With a simulation: start of the tail searched for the cycle (default: mid-run).
    floquet : bool
        Compute the Floquet multipliers.
    check_smooth : bool
        Raise :class:`NonSmoothError` when the orbit reaches a projected state's 0 or a
        switching surface (default). Turning this off returns the orbit of the *smooth*
        right-hand side (unprojected, one branch of each switch), which is not the model's.
    tol : float
        Newton tolerance on the scaled correction.
    params : dict, optional
        Parameter overrides ``{name: value}`` (with a simulation: must be empty; its
        parameters are used).
    **fixed
        The same as keywords (a name given both ways is an error).

    Returns
    -------
    PeriodicOrbit

    Raises
    ------
    AnalysisError
        When Newton fails, or converges to the equilibrium.
    NonSmoothError
        When the orbit touches a non-smooth surface of the model.

    See Also
    --------
    hopf_point : where the cycles are born
    continue_orbits : the branch of cycles
    oscillation : the cycle as a simulation shows it

    Examples
    --------
    >>> import math, fluidnet as fn
    >>> x, = (fn.states("x"),)
    >>> a, = (fn.params("a"),)
    >>> wright = fn.Model({x: -a * x(fn.t - 1) * (1 + x(fn.t))}, {a: 1.0})
    >>> hp = fn.hopf_point(wright, "a", 1.0, 2.0)
    >>> orb = fn.periodic_orbit(hp, math.pi / 2 + 0.01)
    >>> round(orb.period, 3), orb.stable
    (4.007, True)
    """
    from .hopf import HopfPoint

    params = merge_params(params, fixed, "periodic_orbit")
    if not isinstance(start, HopfPoint):
        return collocated_orbit(
            start, value, intervals=intervals, degree=degree, state=state, after=after,
            floquet=floquet, check_smooth=check_smooth, tol=tol, **params,
        )  # fmt: skip
    Mesh(intervals, degree)  # checked here too: the Hopf path builds its meshes later
    tol = number_option("tol", tol, positive=True, where="periodic_orbit")
    if after is not None:
        number_option("after", after, where="periodic_orbit")
    if value is None:
        raise OptionError(f"give the value of {start.name!r} at which to compute the orbit")
    value = parameter_value(f"value of {start.name!r}", value)
    return _from_hopf(
        start, value, params, intervals=intervals, degree=degree, floquet=floquet,
        check_smooth=check_smooth, tol=tol,
    )  # fmt: skip
