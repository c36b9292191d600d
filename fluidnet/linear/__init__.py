"""Linear delay systems with exact delays: the numerical layer every stability analysis uses.

* :class:`LinearDDE` — ``x'(t) = A0 x(t) + sum_k A_k x(t - tau_k)``, its characteristic matrix
  and roots (:mod:`fluidnet.linear.roots`);
* :class:`QuasiPolynomial` — ``sum_k p_k(s) exp(-s tau_k)``;
* :class:`DelayTF` — SISO transfer functions ``N(s)/D(s)`` of quasi-polynomials.

This stage imports nothing from the rest of fluidnet but :mod:`fluidnet.errors`.
"""

from __future__ import annotations

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())
