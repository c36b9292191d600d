"""Stability analysis of linearized fluid models, with exact delays.

* characteristic roots: :func:`fluidnet.stability.roots.characteristic_roots` (also
  ``LinearDDE.roots``, ``LinearDDE.spectral_abscissa``, ``LinearDDE.is_stable``);
* frequency domain: :func:`bode`, :func:`nyquist`, :func:`margins`;
* parameter planes: :func:`stability_chart`, :func:`stability_boundary`, :func:`critical_value`;
* the nonlinear picture: :func:`phase_portrait`, :func:`nonlinear_chart`.
"""

from .boundary import BoundaryCurve, StabilityBoundary, stability_boundary
from .chart import StabilityAccessor, stability_chart
from .critical import CriticalValue, critical_value
from .frequency import BodeResponse, Margins, NyquistResponse, bode, margins, nyquist

__all__ = [
    "BodeResponse",
    "Margins",
    "NyquistResponse",
    "bode",
    "margins",
    "nyquist",
    "stability_chart",
    "critical_value",
    "stability_boundary",
    "StabilityBoundary",
    "BoundaryCurve",
    "CriticalValue",
    "StabilityAccessor",
]
