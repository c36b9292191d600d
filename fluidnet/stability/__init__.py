"""Stability analysis of linearized fluid models, with exact delays.

* characteristic roots: :func:`fluidnet.linear.roots.characteristic_roots` (also
  ``LinearDDE.roots``, ``LinearDDE.spectral_abscissa``, ``LinearDDE.is_stable``);
* frequency domain: :func:`bode`, :func:`nyquist`, :func:`margins`;
* parameter planes: :func:`stability_chart`, :func:`stability_boundary`;
* one parameter: :func:`critical_value`, :func:`stability_switches`;
* the nonlinear picture: :func:`phase_portrait`, :func:`nonlinear_chart`.
"""

from .bode import BodeResponse, bode
from .boundary import BoundaryCurve, StabilityBoundary, stability_boundary
from .chart import StabilityAccessor, stability_chart
from .critical import CriticalValue, Crossing, StabilitySwitches, critical_value, stability_switches
from .margins import Margins, margins
from .nyquist import NyquistResponse, nyquist
from .phaseplane import PhasePortrait, nonlinear_chart, phase_portrait

__all__ = [
    # the public functions (re-exported lazily as fluidnet.<name>)
    "bode",
    "nyquist",
    "margins",
    "stability_chart",
    "stability_boundary",
    "critical_value",
    "stability_switches",
    "phase_portrait",
    "nonlinear_chart",
    # their result classes
    "BodeResponse",
    "NyquistResponse",
    "Margins",
    "StabilityAccessor",
    "StabilityBoundary",
    "BoundaryCurve",
    "CriticalValue",
    "Crossing",
    "StabilitySwitches",
    "PhasePortrait",
]
