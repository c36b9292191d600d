"""Bifurcation analysis of fluid models: Hopf points and their normal forms, periodic orbits by
collocation, Floquet multipliers, continuation of orbit branches and of Hopf curves.

* :func:`hopf_point` (:class:`HopfPoint`): where a root pair crosses the imaginary axis, the
  crossing frequency, the root speed (transversality), the first Lyapunov coefficient
  (criticality) and the normal form's prediction of the orbit's amplitude and period;
* :func:`periodic_orbit` (:class:`PeriodicOrbit`): a periodic solution by piecewise-polynomial
  collocation of the delay equation, from a Hopf point, a simulated cycle or another orbit,
  with its Floquet multipliers;
* :func:`continue_orbits` (:class:`OrbitBranch`): a branch of orbits in one parameter by
  pseudo-arclength continuation (amplitude and period against the parameter, folds of cycles,
  stability changes);
* :func:`continue_hopf` (:class:`HopfCurve`): a curve of Hopf points in two parameters, with
  the criticality along it and its codimension-two points (:class:`BautinPoint`,
  :class:`HopfHopfPoint`, :class:`ZeroHopfPoint`, :class:`BogdanovTakensPoint`) with their
  normal forms;
* :func:`continue_equilibria` (:class:`EquilibriumCurve`): a branch of equilibria through its
  folds (:class:`EquilibriumFold`), with its stability and Hopf points, and
  :func:`continue_equilibrium_folds` (:class:`EquilibriumFoldCurve`): a fold in two parameters,
  with its cusp, Bogdanov-Takens and zero-Hopf points;
* on orbit branches, folds of cycles, period doublings (with branch switching) and
  Neimark-Sacker points (:class:`CycleBifurcation`), and :func:`continue_cycle_folds`
  (:class:`CycleFoldCurve`): a fold of cycles in two parameters, the edge of bistability.

:func:`criticality_table` and :func:`onset_map` (:mod:`.onset`) put these together: the
criticality at many critical values, and where in a parameter plane cycles are born and where
they coexist with the stable equilibrium.

Every curve and branch is followed by the one continuation engine of
:mod:`fluidnet.continuation`; the defining systems are evaluated from the model's compiled
symbolic derivatives (:mod:`.steady`, :mod:`._system`).

The theory is that of smooth vector fields. Fluid models are not smooth where a projected
state (a queue) sits at 0 or a switching term changes branch: every result checks this and
raises :class:`NonSmoothError` (an :class:`~fluidnet.errors.AnalysisError`) instead of returning
the numbers of a different, smooth model.
"""

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())
