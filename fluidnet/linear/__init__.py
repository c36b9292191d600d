"""Linear delay systems with exact delays: the numerical layer every stability analysis uses.

* :class:`LinearDDE` — ``x'(t) = A0 x(t) + sum_k A_k x(t - tau_k)``, its characteristic matrix
  and roots (:mod:`fluidnet.linear.roots`);
* :class:`QuasiPolynomial` — ``sum_k p_k(s) exp(-s tau_k)``;
* :class:`DelayTF` — SISO transfer functions ``N(s)/D(s)`` of quasi-polynomials.

This stage imports nothing from the rest of fluidnet but :mod:`fluidnet.errors`.
"""

from __future__ import annotations

from .delaytf import DelayTF, PoleCensus, as_delay_tf
from .lineardde import LinearDDE
from .quasipoly import LAPLACE, QuasiPolynomial, as_quasipolynomial
from .roots import CharacteristicRoot, Roots, characteristic_roots, spectral_abscissa

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
