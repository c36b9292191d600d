"""What the solvers of a window chain check of their input.

The solvers (:mod:`~fluidnet.stochastic.pdmp`, :mod:`~fluidnet.stochastic.montecarlo`) sit
below :mod:`~fluidnet.stochastic.chain`, whose :class:`~fluidnet.stochastic.WindowChain` calls
them (``chain.stationary()``, ``chain.monte_carlo()``): they recognise a chain by what it
offers, not by importing its class back.
"""

from __future__ import annotations

from typing import Any

from ..errors import ModelError

__all__ = ["require_chain"]

#: The methods of a window chain that the solvers call.
CHAIN_METHODS = ("evaluate", "zero_drift", "marking_onset", "decrease_factor", "with_params")


def require_chain(obj: Any) -> None:
    """Raise unless ``obj`` is a window chain (it has every method of :data:`CHAIN_METHODS`).

    Raises
    ------
    ModelError
        Naming the type of ``obj``.
    """
    if not all(callable(getattr(obj, name, None)) for name in CHAIN_METHODS):
        raise ModelError(f"expected a WindowChain, got {type(obj).__name__}")
