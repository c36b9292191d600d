"""Stability analysis of linearized fluid models, with exact delays.

* characteristic roots: :func:`fluidnet.linear.roots.characteristic_roots` (also
  ``LinearDDE.roots``, ``LinearDDE.spectral_abscissa``, ``LinearDDE.is_stable``);
* frequency domain: :func:`bode`, :func:`nyquist`, :func:`margins`;
* parameter planes: :func:`stability_chart`, :func:`stability_boundary`;
* one parameter: :func:`critical_value`, :func:`stability_switches`;
* the nonlinear picture: :func:`phase_portrait`, :func:`nonlinear_chart`.
"""

from .._lazy import lazy_attributes
from .bode import BodeResponse, bode  # a submodule named like its function: bound eagerly
from .margins import Margins, margins  # a submodule named like its function: bound eagerly
from .nyquist import NyquistResponse, nyquist  # a submodule named like its function: bound eagerly

# Public names imported on first access (see fluidnet._lazy).
_LAZY = {
    "BoundaryCurve": ".boundary",
    "StabilityBoundary": ".boundary",
    "stability_boundary": ".boundary",
    "StabilityAccessor": ".chart",
    "stability_chart": ".chart",
    "CriticalValue": ".critical",
    "Crossing": ".critical",
    "StabilitySwitches": ".critical",
    "critical_value": ".critical",
    "stability_switches": ".critical",
    "PhasePortrait": ".phaseplane",
    "nonlinear_chart": ".phaseplane",
    "phase_portrait": ".phaseplane",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

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
