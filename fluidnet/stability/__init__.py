"""Stability analysis of linearized fluid models, with exact delays.

* characteristic roots: :func:`fluidnet.linear.roots.characteristic_roots` (also
  ``LinearDDE.roots``, ``LinearDDE.spectral_abscissa``, ``LinearDDE.is_stable``);
* frequency domain: :func:`bode`, :func:`nyquist`, :func:`margins`, :func:`nichols`;
* time domain and gains: :func:`step_response`, :func:`impulse_response`, :func:`root_locus`;
* parameter planes: :func:`stability_chart`, :func:`stability_boundary`;
* one parameter: :func:`critical_value`, :func:`stability_switches`;
* the nonlinear picture: :func:`phase_portrait`, :func:`nonlinear_chart`.
"""

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())
