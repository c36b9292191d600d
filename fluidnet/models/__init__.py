"""Library models, one module per law family, each citing its paper and equation numbers.

=====================  =====================================================================
``rcp``                RCP fluid model, Dukkipati & McKeown (seed 004) eqs (4)-(7)
``rcp_dimensionless``  the same in (alpha, beta, T/d0) only
``rcp_heterogeneous``  RCP with flows of different RTTs, y = sum_i N_i R(t - d_i)
``sbrm``               SBRM window/queue model, Zimmermann (seed 002) (6.4.1)-(6.4.7)
``sbrm_network``       the multi-link form with a routing matrix
``reno_red``           TCP Reno + RED comparison model (seed 002, after Low et al.)
``kelly_primal``       Kelly primal rate ODE (seed 002 (3.2.16)) on a routing matrix
``kelly_dual``         dual price ODE (seed 002 (3.2.20)) on a routing matrix
=====================  =====================================================================
"""

from __future__ import annotations

import importlib

from .rcp import rcp, rcp_dimensionless

_LAZY = {
    "rcp_heterogeneous": "fluidnet.models.rcp",
    "sbrm": "fluidnet.models.sbrm",
    "sbrm_network": "fluidnet.models.sbrm",
    "reno_red": "fluidnet.models.reno_red",
    "kelly_primal": "fluidnet.models.kelly",
    "kelly_dual": "fluidnet.models.kelly",
}

__all__ = ["rcp", "rcp_dimensionless", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fluidnet.models' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
