"""Library models, one module per law family, each citing its paper and equation numbers."""

from __future__ import annotations

from .rcp import rcp, rcp_dimensionless

__all__ = ["rcp", "rcp_dimensionless"]
