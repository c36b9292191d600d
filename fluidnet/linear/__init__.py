"""Linear delay systems with exact delays: the numerical layer every stability analysis uses.

* :class:`LinearDDE` — ``x'(t) = A0 x(t) + sum_k A_k x(t - tau_k)``, its characteristic matrix
  and roots (:mod:`fluidnet.linear.roots`);
* :class:`QuasiPolynomial` — ``sum_k p_k(s) exp(-s tau_k)``;
* :class:`DelayTF` — SISO transfer functions ``N(s)/D(s)`` of quasi-polynomials.

This stage imports nothing from the rest of fluidnet but :mod:`fluidnet.errors`.
"""

from __future__ import annotations

from .._lazy import lazy_attributes

# Public names imported on first access (see fluidnet._lazy).
_LAZY = {
    "DelayTF": ".delaytf",
    "PoleCensus": ".delaytf",
    "as_delay_tf": ".delaytf",
    "LinearDDE": ".lineardde",
    "LAPLACE": ".quasipoly",
    "QuasiPolynomial": ".quasipoly",
    "as_quasipolynomial": ".quasipoly",
    "CharacteristicRoot": ".rootset",
    "Roots": ".rootset",
    "characteristic_roots": ".roots",
    "spectral_abscissa": ".roots",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "LAPLACE",
    "CharacteristicRoot",
    "DelayTF",
    "LinearDDE",
    "PoleCensus",
    "QuasiPolynomial",
    "Roots",
    "as_delay_tf",
    "as_quasipolynomial",
    "characteristic_roots",
    "spectral_abscissa",
]
